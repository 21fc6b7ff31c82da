// Course text as a reader sees it: a small Markdown renderer that builds DOM nodes (never
// HTML strings), so nothing in a course file can inject markup. Formulas ($…$, $$…$$, \(…\))
// stay as text nodes for math.js to typeset; [n] stays text for the caller to turn into
// citations.

import { el } from "./common.js";

// inline: formulas first (nothing inside them is Markdown), then code, bold, italic, links
const INLINE = new RegExp([
  String.raw`\$\$[\s\S]+?\$\$`,
  String.raw`\\\([\s\S]+?\\\)`,
  String.raw`\\\[[\s\S]+?\\\]`,
  String.raw`(?<![\w$\\])\$(?=\S)[^$\n]+?(?<=\S)\$(?![\w$])`,
  "`[^`\\n]+`",
  String.raw`\*\*[^*\n]+\*\*`,
  String.raw`__[^_\n]+__`,
  String.raw`(?<![\w*])\*(?=\S)[^*\n]+?(?<=\S)\*(?![\w*])`,
  String.raw`(?<![\w_])_(?=\S)[^_\n]+?(?<=\S)_(?![\w_])`,
  String.raw`\[[^\]\n]+\]\(https?:\/\/[^\s)]+\)`,
].join("|"), "g");

/** Append `text` to `box` with its inline Markdown as elements. */
export function appendInline(box, text) {
  let last = 0;
  for (const match of text.matchAll(INLINE)) {
    if (match.index > last) box.append(text.slice(last, match.index));
    box.append(inlineNode(match[0]));
    last = match.index + match[0].length;
  }
  if (last < text.length) box.append(text.slice(last));
}

function inlineNode(token) {
  if (token.startsWith("$") || token.startsWith("\\")) return document.createTextNode(token);
  if (token.startsWith("`")) return el("code", {}, token.slice(1, -1));
  if (token.startsWith("**") || token.startsWith("__")) {
    const strong = el("strong");
    appendInline(strong, token.slice(2, -2));
    return strong;
  }
  if (token.startsWith("[")) {
    const cut = token.indexOf("](");
    const link = el("a", { href: token.slice(cut + 2, -1), target: "_blank", rel: "noopener noreferrer" });
    appendInline(link, token.slice(1, cut));
    return link;
  }
  const em = el("em");
  appendInline(em, token.slice(1, -1));
  return em;
}

/** The anchor a heading gets at ingestion (ingest/markdown.py: GitHub style). */
export function slugify(text) {
  return text.trim().toLowerCase().replace(/[^\p{L}\p{N}_\s-]/gu, "").replace(/\s+/g, "-");
}

const HEADING = /^(#{1,6})\s+(.*?)\s*#*\s*$/;
const BULLET = /^\s*[-*+]\s+(.*)$/;
const NUMBERED = /^\s*(\d+)[.)]\s+(.*)$/;
const FENCE = /^\s*(```|~~~)/;

/**
 * Render Markdown `text` as block elements into `box` (emptied first). Headings get the
 * ingestion's anchors as ids, prefixed with `idPrefix` so two renderings never clash.
 */
export function renderMarkdown(box, text, { idPrefix = "" } = {}) {
  box.replaceChildren();
  const lines = String(text || "").replace(/\r\n?/g, "\n").split("\n");
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (!line.trim()) {
      i += 1;
    } else if (FENCE.test(line)) {
      const fence = line.trim().slice(0, 3);
      const body = [];
      i += 1;
      while (i < lines.length && !lines[i].trim().startsWith(fence)) body.push(lines[i++]);
      i += 1;
      box.append(el("pre", {}, el("code", {}, body.join("\n"))));
    } else if (HEADING.test(line)) {
      const [, marks, title] = line.match(HEADING);
      const level = Math.min(6, marks.length + 2); // below the panel's own headings
      const heading = el(`h${level}`, { class: "md-heading", id: idPrefix + slugify(title) });
      appendInline(heading, title);
      box.append(heading);
      i += 1;
    } else if (BULLET.test(line) || NUMBERED.test(line)) {
      const numbered = !BULLET.test(line);
      const list = el(numbered ? "ol" : "ul");
      const pattern = numbered ? NUMBERED : BULLET;
      while (i < lines.length && pattern.test(lines[i])) {
        const match = lines[i].match(pattern);
        const item = el("li");
        appendInline(item, numbered ? match[2] : match[1]);
        list.append(item);
        i += 1;
      }
      box.append(list);
    } else if (line.trimStart().startsWith(">")) {
      const quoted = [];
      while (i < lines.length && lines[i].trimStart().startsWith(">")) {
        quoted.push(lines[i++].trimStart().slice(1).trimStart());
      }
      const quote = el("blockquote");
      renderMarkdown(quote, quoted.join("\n"), { idPrefix });
      box.append(quote);
    } else {
      const para = [];
      while (i < lines.length && lines[i].trim() && !HEADING.test(lines[i]) && !FENCE.test(lines[i])
             && !BULLET.test(lines[i]) && !NUMBERED.test(lines[i])) {
        para.push(lines[i++].trim());
      }
      const p = el("p");
      appendInline(p, para.join("\n"));
      box.append(p);
    }
  }
  return box;
}
