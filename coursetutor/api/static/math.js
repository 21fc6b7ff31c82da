// Formulas typeset by the vendored KaTeX (static/katex/, loaded as classic scripts before the
// page's modules): $…$, $$…$$, \(…\) and \[…\] in answers and sources. A formula KaTeX cannot
// read stays as its source text. Without KaTeX (a page that did not load it) nothing changes.

const DELIMITERS = [
  { left: "$$", right: "$$", display: true },
  { left: "\\[", right: "\\]", display: true },
  { left: "\\(", right: "\\)", display: false },
  { left: "$", right: "$", display: false },
];

/** Typeset the formulas in the text under `node`. */
export function renderMath(node) {
  const render = window.renderMathInElement;
  if (typeof render !== "function") return;
  render(node, {
    delimiters: DELIMITERS,
    ignoredTags: ["script", "noscript", "style", "textarea", "pre", "code", "button"],
    throwOnError: true,
    errorCallback: () => {}, // an unreadable formula keeps its source text, quietly
  });
}
