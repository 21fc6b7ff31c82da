// The teacher page's class view: students with their profiles and last visit, the weak
// areas most students share and mastery per topic, as tables with CSS bars (no chart library).

import { $, describeError, el, enc, when } from "./common.js";

function bar(share, text) {
  const width = `${Math.round(Math.max(0, Math.min(1, share)) * 100)}%`;
  const fill = el("span", { class: "bar-fill" });
  fill.style.width = width; // a property, not a style attribute: the page's policy allows no inline style
  return el("div", { class: "bar", title: text }, fill, el("span", {}, text));
}

function table(head, rows) {
  return el("table", { class: "class-table" },
    el("thead", {}, el("tr", {}, ...head.map((h) => el("th", {}, h)))),
    el("tbody", {}, ...rows.map((cells) => el("tr", {}, ...cells.map((c) => el("td", {}, c))))));
}

function students(view) {
  return table(["Student", "Last seen", "Level", "Style", "Topics", "Weak areas", "Mastered"],
    view.profiles.map((r) => [
      r.student + (r.idle ? " ⚠" : ""), r.last_seen ? when(r.last_seen) : "never",
      String(r.level || ""), r.style, String(r.topics), String(r.weak_areas),
      String(r.mastered)]));
}

function weakAreas(found, total) {
  return table(["Topic", "Students", "Misconceptions", "Example questions"],
    found.weak_areas.map((w) => [
      w.topic, bar(total ? w.students / total : 0, String(w.students)),
      w.misconceptions.join(" · "), w.questions.join(" · ")]));
}

function mastery(found) {
  return table(["Topic", "Mean mastery", "Mastered", "Students"],
    found.mastery.map((m) => [
      m.topic, bar(m.mean, `${Math.round(m.mean * 100)}%`), String(m.mastered),
      String(m.students)]));
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
        el("h4", {}, `Students (${view.idle.length} not seen for ${days} days)`), students(view),
        el("h4", {}, "Weak areas most students share"), weakAreas(found, total),
        el("h4", {}, "Mastery per topic"), mastery(found));
    } catch (err) {
      box.replaceChildren(el("p", { class: "notice notice-error" }, describeError(err)));
    }
  }
  $("class-refresh").addEventListener("click", load);
  return load;
}
