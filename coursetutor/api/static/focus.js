// What an LMS link opened the student page on, besides its course: one document or one live
// class (lti.js keeps it for the tab from the launch's fragment). The page says so, lists that
// document's passages first among an answer's sources, and asks about that class first.

import { t } from "./i18n.js";

const NAME = "coursetutor.student.focus";

/** The link's focus in `course`: { document, live_class, title }, or null. */
export function linkFocus(course) {
  let focus = null;
  try {
    focus = JSON.parse(sessionStorage.getItem(NAME) || "null");
  } catch {
    return null;
  }
  return focus && course && focus.course === course ? focus : null;
}

/** The line that says what the link opens, shown only for its course. */
export function showFocus(line, course) {
  const focus = linkFocus(course);
  const key = focus && (focus.document ? "lti.focus_document" : focus.live_class ? "lti.focus_class" : "");
  line.textContent = key ? t(key, { title: focus.title || focus.document || focus.live_class }) : "";
  line.hidden = !key;
}

/** `sources` with those of the link's document first (each keeps its number). */
export function focusFirst(sources, course) {
  const focus = linkFocus(course);
  if (!focus || !focus.document) return sources;
  const mine = `${course}:${focus.document}`;
  return [...sources.filter((s) => s.document === mine), ...sources.filter((s) => s.document !== mine)];
}
