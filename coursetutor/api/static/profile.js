// The student page's "My profile" panel: what the tutor stores about the student in the
// chosen course; correct it, download it as JSON, or erase it.

import {
  $, chosenCourse as course, describeError, el, enc, pageApi, storedKey, when,
} from "./common.js";

const api = pageApi("student");
const STYLES = ["", "examples first", "theory first", "step by step"];

function path(suffix) {
  return `/v1/courses/${enc(course())}/students/me/${suffix}`;
}

function say(text) {
  $("profile-status").textContent = text;
}

function render(data) {
  const p = data.profile;
  $("profile-level").value = String(p.level || 0);
  $("profile-style").value = p.style || "";
  $("profile-goals").value = p.goals || "";
  const mastery = Object.fromEntries(data.mastery.map((m) => [m.topic, m]));
  $("profile-topics").replaceChildren(...p.topics.map((topic) => {
    const m = mastery[topic.topic];
    const shown = m ? ` · ${Math.round(m.estimate * 100)}%${m.mastered ? " ✓" : ""}` : "";
    return el("li", { title: topic.turn_ids.join(", ") },
      `${topic.topic} (${topic.turns}, ${when(topic.last_seen)})${shown}`);
  }));
  $("profile-weak").replaceChildren(...data.weak_areas.map((w) => el("li", {},
    `${w.topic}: ${w.misconception} `,
    el("button", { type: "button", class: "secondary", "data-area": w.id }, "✕"))));
}

async function load() {
  if (!course() || !storedKey("student")) return;
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
      level: Number($("profile-level").value), style: $("profile-style").value,
      goals: $("profile-goals").value,
    }));
    say("✓");
  } catch (err) {
    say(describeError(err));
  }
}

async function resolve(event) {
  const id = event.target.getAttribute("data-area");
  if (!id) return;
  try {
    render(await api.patch(path("profile"), { resolve_weak_areas: [id] }));
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
  if (!window.confirm($("profile-forget").getAttribute("data-confirm"))) return;
  try {
    const gone = await api.del(path("data"));
    say(`${Object.values(gone.rows).reduce((a, b) => a + b, 0)} ✓`);
    await load();
  } catch (err) {
    say(describeError(err));
  }
}

function setup() {
  const style = $("profile-style");
  style.replaceChildren(...STYLES.map((s) => el("option", { value: s }, s || "—")));
  $("profile-form").addEventListener("submit", save);
  $("profile-weak").addEventListener("click", resolve);
  $("profile-export").addEventListener("click", download);
  $("profile-forget").addEventListener("click", forget);
  $("profile").addEventListener("toggle", () => { if ($("profile").open) load(); });
  $("course-select").addEventListener("change", () => { if ($("profile").open) load(); });
}

setup();
