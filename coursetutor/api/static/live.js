// The teacher page's live class: start one (with a slide deck), see where it is, feed it a
// recorded transcript (.json, .vtt, .srt) in batches, end it.

import { t } from "./i18n.js";
import { $, enc, listOf, runningClass, showError } from "./common.js";

const POLL_MS = 5000;
const BATCH = 100;

/** The file's events as request bodies of at most BATCH events, with their content type. */
function batches(name, text) {
  const lower = name.toLowerCase();
  if (lower.endsWith(".json")) {
    const data = JSON.parse(text);
    const items = listOf(data, "segments").length ? listOf(data, "segments") : listOf(data, "events");
    const events = items.map((e) => ({
      start: e.start, end: e.end, text: String(e.text || ""), speaker: e.speaker || "",
    })).filter((e) => e.text.trim());
    const out = [];
    for (let i = 0; i < events.length; i += BATCH) {
      out.push({ type: "application/json", body: JSON.stringify({ events: events.slice(i, i + BATCH) }),
                 count: Math.min(BATCH, events.length - i) });
    }
    return out;
  }
  const type = lower.endsWith(".vtt") ? "text/vtt" : "application/x-subrip";
  const cues = text.replace(/\r/g, "").split(/\n\s*\n/).filter((b) => b.includes("-->"));
  const out = [];
  for (let i = 0; i < cues.length; i += BATCH) {
    out.push({ type, body: cues.slice(i, i + BATCH).join("\n\n") + "\n",
               count: Math.min(BATCH, cues.length - i) });
  }
  return out;
}

export function setupLive(api, currentCourse) {
  const state = { course: "", live: null, timer: null };
  const error = $("live-error");

  const fail = (err) => showError(error, err);

  function path(suffix = "") {
    return `/v1/courses/${enc(state.course)}/classes${suffix}`;
  }

  function show(live) {
    state.live = live && live.running ? live : null;
    $("live-start-form").hidden = Boolean(state.live);
    $("live-running").hidden = !state.live;
    clearInterval(state.timer);
    if (!state.live) return;
    const parts = [t("live.running", { title: live.title }),
      live.slide_page ? t("live.slide", { page: live.slide_page, how: t(`live.source_${live.slide_source}`) })
        : t("live.slide_unknown")];
    // a deck without a readable page, or no tracker: say what the slide follows instead
    if (live.slide_following === "time") parts.push(t("live.following_time"));
    else if (live.slide_following === "teacher" && live.slides) parts.push(t("live.following_teacher"));
    if (live.events !== undefined) parts.push(t("live.counts", { events: live.events, chunks: live.chunks }));
    if (live.last_event) parts.push(t("live.last", { text: live.last_event.text }));
    $("live-state").textContent = parts.join(" · ");
    state.timer = setInterval(refresh, POLL_MS);
  }

  async function refresh() {
    if (!state.course) return;
    try {
      if (state.live) {
        show(await api.get(path(`/${enc(state.live.id)}`)));
        return;
      }
      const running = await runningClass(api, state.course);
      show(running ? await api.get(path(`/${enc(running.id)}`)) : null);
    } catch (err) {
      fail(err);
    }
  }

  async function fillSlides() {
    const select = $("live-slides");
    select.replaceChildren(new Option(t("live.no_slides"), ""));
    const docs = listOf(await api.get(`/v1/courses/${enc(state.course)}/documents`), "documents");
    for (const d of docs.filter((d) => d.type === "slides" || d.type === "lecture")) {
      select.append(new Option(d.title, d.document));
    }
  }

  $("live-start-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    error.hidden = true;
    try {
      const body = { title: $("live-title").value.trim() };
      if ($("live-slides").value) body.slides = $("live-slides").value;
      show(await api.post(path(), body));
    } catch (err) {
      fail(err);
    }
  });

  $("live-end").addEventListener("click", async () => {
    error.hidden = true;
    try {
      show(await api.post(path(`/${enc(state.live.id)}/end`)));
    } catch (err) {
      fail(err);
    }
  });

  $("live-feed").addEventListener("click", async () => {
    const file = $("live-file").files[0];
    if (!file || !state.live) return;
    error.hidden = true;
    const progress = $("live-progress");
    try {
      const parts = batches(file.name, await file.text());
      const total = parts.reduce((n, p) => n + p.count, 0);
      let done = 0;
      for (const part of parts) {
        await api.request("POST", path(`/${enc(state.live.id)}/events`),
                          { body: part.body, headers: { "Content-Type": part.type } });
        done += part.count;
        progress.textContent = t("live.fed", { done, total });
      }
      await refresh();
    } catch (err) {
      fail(err);
    }
  });

  return async function courseChanged() {
    const course = currentCourse();
    if (course === state.course) return;
    state.course = course;
    state.live = null;
    show(null);
    error.hidden = true;
    if (!course) return;
    try {
      await fillSlides();
    } catch (err) {
      fail(err);
    }
    await refresh();
  };
}
