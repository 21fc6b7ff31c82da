// An answer's text on the page: its inline Markdown (**bold**, *italic*, `code`, formulas left
// for math.js), and its citation markers as buttons that open the cited passage.

import { appendInline } from "./markdown.js";

// The tutor's own rule for a marker, for a reply the server sent no markers for (a stream
// the student stopped): sources count from 1, and a bracket inside code or a formula is part
// of the text.
const MARKER = /(?<![`$\\])\[([1-9]\d{0,2}(?:\s*[,;]\s*[1-9]\d{0,2})*)\](?!`)/g;

/** The markers of `text` by the tutor's rule, as [start, end] offsets in characters. */
export function markerSpans(text) {
  const spans = [];
  for (const match of text.matchAll(MARKER)) {
    const start = Array.from(text.slice(0, match.index)).length;
    spans.push([start, start + Array.from(match[0]).length]);
  }
  return spans;
}

/**
 * Render `text` into `box`. `markers` are the server's [start, end] character offsets of the
 * citation markers (a bracket outside them, such as an interval or a source's own "[1, 2]",
 * stays text); without them the tutor's rule finds them. `cite(n, source)` makes the button
 * of source n; a marker naming a source not in `sources` stays text.
 */
export function renderAnswer(box, text, sources, markers, cite) {
  const byNumber = new Map();
  (sources || []).forEach((source, i) => byNumber.set(Number(source.number ?? i + 1), source));
  const chars = Array.from(text);
  const spans = markers ?? markerSpans(text);
  box.replaceChildren();
  let last = 0;
  for (const [start, end] of spans) {
    if (start < last || end > chars.length) continue;
    appendInline(box, chars.slice(last, start).join(""));
    const token = chars.slice(start, end).join("");
    const numbers = token.slice(1, -1).split(/\s*[,;]\s*/).map(Number);
    if (numbers.every((n) => byNumber.has(n))) {
      box.append("[");
      numbers.forEach((n, i) => {
        if (i) box.append(", ");
        box.append(cite(n, byNumber.get(n)));
      });
      box.append("]");
    } else {
      box.append(token);
    }
    last = end;
  }
  appendInline(box, chars.slice(last).join(""));
}
