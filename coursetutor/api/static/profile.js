// The student page's "My profile" panel: what the tutor stores about the student in the
// chosen course; correct it, download it as JSON, or erase it. The level is the page's one
// "Explain for" control, kept in the profile too.

import { t } from "./i18n.js";
import {
  $, chosenCourse as course, day, describeError, el, enc, pageApi, remember, storedKey,
} from "./common.js";

const api = pageApi("student");
// the values the API stores; the page shows them translated
const STYLES = ["", "examples first", "theory first", "step by step"];
const STYLE_KEYS = { "": "profile.style_none", "examples first": "profile.style_examples",
                     "theory first": "profile.style_theory", "step by step": "profile.style_steps" };

function path(suffix) {
  return `/v1/courses/${enc(course())}/students/me/${suffix}`;
}

function say(text) {
  $("profile-status").textContent = text;
}

function empty(key) {
  return el("li", { class: "muted empty-item" }, t(key));
}

function topicLine(topic, mastery) {
  const asked = topic.turns === 1 ? t("profile.asked_once") : t("profile.asked", { n: topic.turns });
  const parts = [asked, t("profile.last_seen", { date: day(topic.last_seen) })];
  if (mastery) {
    parts.push(t(mastery.mastered ? "profile.mastered" : "profile.mastery",
      { share: `${Math.round(mastery.estimate * 100)}%` }));
  }
  return el("li", {}, el("strong", {}, topic.topic), ` — ${parts.join(" · ")}`);
}

function render(data) {
  const p = data.profile;
  $("profile-style").value = p.style || "";
  $("profile-goals").value = p.goals || "";
  if (p.level) {
    $("level-select").value = String(p.level);
    remember("student.level", p.level);
  }
  const mastery = Object.fromEntries(data.mastery.map((m) => [m.topic, m]));
  const topics = p.topics.map((topic) => topicLine(topic, mastery[topic.topic]));
  $("profile-topics").replaceChildren(...(topics.length ? topics : [empty("profile.topics_none")]));
  const weak = data.weak_areas.map((w) => el("li", {},
    el("strong", {}, w.topic), `: ${w.misconception} `,
    el("button", {
      type: "button", class: "secondary small", "data-area": w.id,
      "aria-label": t("profile.resolve_label", { topic: w.topic }),
    }, t("profile.resolve"))));
  $("profile-weak").replaceChildren(...(weak.length ? weak : [empty("profile.weak_none")]));
}

async function load() {
  if (!course() || !storedKey("student")) {
    say(t("profile.signed_out"));
    return;
  }
  try {
    render(await api.get(path("profile")));
    say("");
  } catch (err) {
    say(describeError(err));
  }
}

async function save(event) {
  event.preventDefault();
  try {
    render(await api.patch(path("profile"), {
      style: $("profile-style").value, goals: $("profile-goals").value,
    }));
    say(t("profile.saved"));
  } catch (err) {
    say(describeError(err));
  }
}

async function saveLevel() {
  if (!course() || !storedKey("student")) return;
  try {
    await api.patch(path("profile"), { level: Number($("level-select").value) });
  } catch {
    /* the page keeps the level for its questions; the profile catches up next time */
  }
}

async function resolve(event) {
  const id = event.target.getAttribute("data-area");
  if (!id) return;
  try {
    render(await api.patch(path("profile"), { resolve_weak_areas: [id] }));
    say(t("profile.resolved"));
  } catch (err) {
    say(describeError(err));
  }
}

async function download() {
  try {
    const data = await api.get(path("export"));
    const link = el("a", {
      href: URL.createObjectURL(new Blob([JSON.stringify(data, null, 2)],
        { type: "application/json" })),
      download: `my-data-${course()}.json`,
    });
    link.click();
    URL.revokeObjectURL(link.href);
  } catch (err) {
    say(describeError(err));
  }
}

async function forget() {
  if (!window.confirm(t("profile.forget_confirm"))) return;
  try {
    const gone = await api.del(path("data"));
    say(t("profile.erased", { n: Object.values(gone.rows).reduce((a, b) => a + b, 0) }));
    await load();
  } catch (err) {
    say(describeError(err));
  }
}

function setup() {
  $("profile-style").replaceChildren(...STYLES.map((s) => el("option", { value: s }, t(STYLE_KEYS[s]))));
  $("profile-form").addEventListener("submit", save);
  $("profile-weak").addEventListener("click", resolve);
  $("profile-export").addEventListener("click", download);
  $("profile-forget").addEventListener("click", forget);
  $("level-select").addEventListener("change", saveLevel);
  $("profile").addEventListener("toggle", () => { if ($("profile").open) load(); });
  $("course-select").addEventListener("change", () => { if ($("profile").open) load(); });
}

setup();
