// The teacher page's class view: students with their profiles and last visit, the weak
// areas most students share and mastery per topic, as tables with CSS bars (no chart library).

import { label, t } from "./i18n.js";
import { $, describeError, el, enc, when } from "./common.js";

function bar(share, text) {
  const width = `${Math.round(Math.max(0, Math.min(1, share)) * 100)}%`;
  const fill = el("span", { class: "bar-fill" });
  fill.style.width = width; // a property, not a style attribute: the page's policy allows no inline style
  return el("div", { class: "bar" }, fill, el("span", { class: "bar-text" }, text));
}

/** A table that stacks into labelled rows on a phone (each cell carries its heading). */
function table(keys, rows, none) {
  const head = keys.map((key) => t(key));
  if (!rows.length) return el("p", { class: "muted empty-state" }, t(none));
  return el("div", { class: "table-wrap" }, el("table", { class: "class-table stack" },
    el("thead", {}, el("tr", {}, ...head.map((h) => el("th", { scope: "col" }, h)))),
    el("tbody", {}, ...rows.map((cells) => el("tr", {},
      ...cells.map((c, i) => el("td", { dataset: { label: head[i] } }, c)))))));
}

function students(view, days) {
  return table(["class.student", "class.last_seen", "class.level", "class.style", "class.topics",
    "class.weak", "class.mastered"],
  view.profiles.map((r) => [
    r.idle ? el("span", {}, r.student, " ", el("span", { class: "idle-flag", title: t("class.idle_flag", { days }) },
      "⚠ ", r.last_seen ? t("class.idle", { days }) : t("class.idle_never"))) : r.student,
    r.last_seen ? when(r.last_seen) : t("class.never"),
    r.level ? label("level", r.level) : "–", r.style ? t(styleKey(r.style)) : "–",
    String(r.topics), String(r.weak_areas), String(r.mastered)]), "class.students_none");
}

function styleKey(style) {
  return { "examples first": "profile.style_examples", "theory first": "profile.style_theory",
           "step by step": "profile.style_steps" }[style] || "profile.style_none";
}

function weakAreas(found, total) {
  return table(["class.topic", "class.students", "class.misconceptions", "class.questions"],
    found.weak_areas.map((w) => [
      w.topic, bar(total ? w.students / total : 0, t("class.of_students", { n: w.students, total })),
      w.misconceptions.join(" · "), w.questions.join(" · ")]), "class.weak_none");
}

function mastery(found) {
  return table(["class.topic", "class.mean_mastery", "class.mastered", "class.students"],
    found.mastery.map((m) => [
      m.topic, bar(m.mean, `${Math.round(m.mean * 100)}%`), String(m.mastered),
      String(m.students)]), "class.mastery_none");
}

/** Wire the class view's refresh button; `getCourse` names the course being managed. */
export function setupClass(api, getCourse) {
  const box = $("class-view");
  async function load() {
    const course = getCourse();
    if (!course) return;
    try {
      const days = Number($("class-idle-days").value) || 14;
      const view = await api.get(`/v1/courses/${enc(course)}/students?idle_days=${days}`);
      const found = await api.get(`/v1/courses/${enc(course)}/insights`);
      const total = Math.max(view.profiles.length, found.students);
      box.replaceChildren(
        el("h4", {}, t("class.students_heading", { n: view.idle.length, days })), students(view, days),
        el("h4", {}, t("class.weak_heading")), weakAreas(found, total),
        el("h4", {}, t("class.mastery_heading")), mastery(found));
    } catch (err) {
      box.replaceChildren(el("p", { class: "notice notice-error" }, describeError(err)));
    }
  }
  $("class-refresh").addEventListener("click", load);
  return load;
}
