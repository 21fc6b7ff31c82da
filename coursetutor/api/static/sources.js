// The student page's sources: a clean label per cited passage (title, section, page or time,
// never a slug), duplicates merged, and what the side panel shows of them (the passage,
// whole on demand, and the original at the cited page, section or second).

import { label, t } from "./i18n.js";
import { clock, describeError, el, enc } from "./common.js";
import { renderMarkdown, slugify } from "./markdown.js";
import { renderMath } from "./math.js";

function given(value) {
  return value !== null && value !== undefined && value !== "";
}

export function locatorOf(source) {
  const loc = source.locator || {};
  return {
    page: source.page ?? loc.page ?? null,
    start: source.start ?? loc.start ?? null,
    end: source.end ?? loc.end ?? null,
    anchor: source.anchor ?? loc.anchor ?? null,
  };
}

/** "How the bisection method works" for the anchor "22-how-the-bisection-method-works". */
function headingOf(anchor) {
  const words = String(anchor).replace(/^[\d-]+(?=[^\d-])/, "").replace(/-+/g, " ").trim();
  return words ? words[0].toUpperCase() + words.slice(1) : "";
}

/** The section a source cites, as its heading reads. */
export function sectionOf(source) {
  if (Array.isArray(source.section)) return source.section.filter(Boolean).join(" › ");
  if (source.section) return String(source.section);
  const { anchor } = locatorOf(source);
  if (!anchor || /^slide-\d+$/.test(anchor)) return "";
  return headingOf(anchor);
}

/** Where in its document a source sits: "p. 3", "12:30–13:10, slide 4" or "". */
export function whereOf(source) {
  const { page, start, end, anchor } = locatorOf(source);
  if (given(page)) return t("sources.page", { page });
  if (!given(start)) return "";
  const span = given(end) ? `${clock(start)}–${clock(end)}` : clock(start);
  const slide = /^slide-(\d+)$/.exec(anchor || "");
  return slide ? `${span}, ${t("sources.slide", { page: slide[1] })}` : span;
}

/** "from today's class, 10:23" in the page's language (the server sends a code). */
export function tierOf(source) {
  if (source.tier_code) return t(`tier.${source.tier_code}`, source.tier_params || {});
  return source.tier_label || "";
}

/** A source's label: "Lecture 1 · How the bisection method works · p. 3". */
export function sourceLabel(source) {
  const title = source.title || t("panel.title");
  const section = sectionOf(source);
  return [title, section && section !== title ? section : "", whereOf(source)]
    .filter(Boolean).join(" · ");
}

/** Sources grouped by what they cite: one entry for [1] and [3] when both cite one place. */
export function groupSources(sources) {
  const groups = new Map();
  (sources || []).forEach((source, i) => {
    const key = `${source.document || source.title}\u0000${sourceLabel(source)}`;
    const number = Number(source.number ?? i + 1);
    if (!groups.has(key)) groups.set(key, { label: sourceLabel(source), numbers: [], sources: [] });
    const group = groups.get(key);
    group.numbers.push(number);
    group.sources.push(source);
  });
  return [...groups.values()];
}

/** Markdown and formulas of course text into `box`. */
export function showText(box, text, idPrefix = "") {
  renderMarkdown(box, text, { idPrefix });
  renderMath(box);
  return box;
}

/**
 * The list under an answer: one button per group (`open(group, button)` opens the panel);
 * with `inline` (an answer without the model's text) the passages are shown under each.
 */
export function renderSourceList(box, sources, open, { inline = false } = {}) {
  box.replaceChildren();
  const groups = groupSources(sources);
  box.hidden = !groups.length;
  if (!groups.length) return;
  const list = el("ol", { class: "source-list" });
  for (const group of groups) {
    const first = group.sources[0];
    const tier = tierOf(first);
    const item = el("li", { value: String(group.numbers[0]) },
      el("button", {
        type: "button", class: "source-link", "data-testid": "source-link",
        dataset: { n: String(group.numbers[0]) }, "aria-controls": "source-panel",
        onclick: (event) => open(group, event.currentTarget),
      }, el("span", { class: "source-number", "aria-hidden": "true" }, `[${group.numbers.join(", ")}]`),
      " ", el("span", { class: "source-label" }, group.label)),
      el("span", { class: "source-type" }, [label("type", first.type || first.doc_type || ""), tier]
        .filter(Boolean).join(" · ")));
    if (inline && first.snippet) {
      item.append(showText(el("div", { class: "source-excerpt", "data-testid": "source-excerpt" }),
        first.snippet));
    }
    list.append(item);
  }
  box.append(el("h3", {}, t("sources.title")), list);
}

/** Open the course file at `source`'s place, rendered in `box` (Markdown, or a transcript's cues). */
async function showOriginal(box, source) {
  box.replaceChildren(el("p", { class: "muted" }, t("loading")));
  const response = await fetch(source.url.split("#")[0]);
  if (!response.ok) throw new Error(t("error.status", { status: response.status, message: "" }));
  const text = await response.text();
  const { start, anchor } = locatorOf(source);
  box.replaceChildren();
  let target = null;
  if (/-->/.test(text)) {
    const list = el("ol", { class: "cues" });
    for (const cue of cuesOf(text)) {
      const item = el("li", { dataset: { start: String(cue.start) } },
        el("span", { class: "cue-time" }, clock(cue.start)), " ", cue.text);
      if (given(start) && !target && cue.end > Number(start)) target = item;
      list.append(item);
    }
    box.append(list);
  } else {
    showText(box, text, "doc-");
    const section = sectionOf(source);
    const wanted = anchor ? `doc-${anchor}` : section ? `doc-${slugify(section)}` : "";
    target = wanted ? document.getElementById(wanted) : null;
  }
  if (target) {
    target.classList.add("cited");
    target.scrollIntoView({ block: "start" });
  }
}

function seconds(stamp) {
  const parts = stamp.replace(",", ".").split(":").map(Number);
  return parts.reduce((total, part) => total * 60 + part, 0);
}

/** The cues of an SRT or WebVTT file: {start, end, text}. */
function cuesOf(text) {
  const cues = [];
  for (const block of text.replace(/\r/g, "").split(/\n\s*\n/)) {
    const lines = block.split("\n");
    const at = lines.findIndex((line) => line.includes("-->"));
    if (at < 0) continue;
    const [from, to] = lines[at].split("-->").map((s) => s.trim().split(/\s+/)[0]);
    cues.push({ start: seconds(from), end: seconds(to), text: lines.slice(at + 1).join(" ") });
  }
  return cues;
}

const MEDIA_FILE = /\.(mp4|webm|ogv|m4v|mov|mp3|m4a|ogg|oga|wav|opus)(?:[?#]|$)/i;

/** The lecture recording at the cited second: a player for a media file, always a link. */
function mediaParts(media, start) {
  let href = "";
  try {
    const parsed = new URL(media, window.location.href);
    if (parsed.protocol === "http:" || parsed.protocol === "https:") href = parsed.href;
  } catch {
    href = "";
  }
  if (!href) return [];
  const parts = [];
  const path = new URL(href).pathname;
  if (MEDIA_FILE.test(path)) {
    const audio = /\.(mp3|m4a|ogg|oga|wav|opus)$/i.test(path);
    const src = href.includes("#") ? href : `${href}#t=${Math.floor(Number(start) || 0)}`;
    parts.push(el(audio ? "audio" : "video", {
      class: "media-player", "data-testid": "source-media", controls: true, preload: "metadata", src,
    }));
  }
  parts.push(el("p", {}, el("a", { href, target: "_blank", rel: "noopener", "data-testid": "panel-media" },
    t("panel.watch", { time: clock(start) }))));
  return parts;
}

/** The PDF page in a frame of this server's own. */
function pdfParts(source, page) {
  const url = source.url || "";
  const src = url && !url.includes("#") ? `${url}#page=${page}` : url;
  if (!src) return [];
  return [
    el("iframe", { class: "pdf-frame", "data-testid": "source-frame", src,
                   title: `${source.title || ""} ${t("panel.page", { page })}`.trim() }),
    el("p", {}, el("a", { href: src, target: "_blank", rel: "noopener", "data-testid": "panel-open-file" },
      t("panel.open_page", { page }))),
  ];
}

/** One cited passage: its excerpt, the whole passage on demand. */
function passagePart(source, api, course) {
  const box = showText(el("div", { class: "snippet", "data-testid": "panel-snippet" }), source.snippet || "");
  const part = el("section", { class: "passage" }, box);
  if (source.chunk && course) {
    const more = el("button", { type: "button", class: "secondary small", "data-testid": "panel-whole" },
      t("panel.whole"));
    more.addEventListener("click", async () => {
      more.disabled = true;
      try {
        const passage = await api.get(`/v1/courses/${enc(course)}/passages/${enc(source.chunk)}`);
        showText(box, passage.text);
        box.dataset.whole = "true";
        more.remove();
      } catch (err) {
        more.disabled = false;
        more.replaceWith(el("p", { class: "muted" }, describeError(err)));
      }
    });
    part.append(more);
  }
  return part;
}

/** What the panel shows of a group of sources; `context` = {api, course}. */
export function panelParts(group, { api, course }) {
  const source = group.sources[0];
  const { page, start } = locatorOf(source);
  const parts = [];
  const tier = tierOf(source); // the heading already names the title, section and place
  if (tier) parts.push(el("p", { class: "panel-where", "data-testid": "panel-where" }, tier));
  let kind = "text";
  if (given(page)) {
    kind = "pdf";
    parts.push(...pdfParts(source, page));
  } else if (given(start)) {
    kind = "transcript";
    if (source.media) parts.push(...mediaParts(source.media, start));
  }
  const passages = group.sources.filter((s) => s.snippet);
  if (passages.length) {
    parts.push(el("h3", {}, t(passages.length > 1 ? "panel.passages" : "panel.passage")));
    for (const s of passages) parts.push(passagePart(s, api, course));
  }
  if (kind !== "pdf" && source.url) {
    const original = el("div", { class: "original", "data-testid": "panel-original" });
    const open = el("button", { type: "button", class: "secondary", "data-testid": "panel-open-file" },
      t(kind === "transcript" ? "panel.open_transcript" : "panel.open_section"));
    open.addEventListener("click", async () => {
      open.remove();
      try {
        await showOriginal(original, source);
      } catch (err) {
        original.replaceChildren(el("p", { class: "muted" }, describeError(err)));
      }
    });
    parts.push(el("h3", {}, t("panel.original")), open, original);
  }
  if (!parts.length) parts.push(el("p", { class: "muted" }, t("panel.no_preview")));
  return { kind, parts };
}
