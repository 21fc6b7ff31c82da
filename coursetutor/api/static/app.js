// The student page: pick a course, ask, read the streamed answer, open the cited passages.

import { applyI18n, label, t } from "./i18n.js";
import {
  $, ApiError, codeText, courseKeyHandler, describeError, el, enc, fetchCourses, fillCourseMenu,
  listOf, pageApi, recall, remember, runningClass, setupKeyBox, when,
} from "./common.js";
import { markerSpans, renderAnswer } from "./answer.js";
import { renderMath } from "./math.js";
import { groupSources, panelParts, renderSourceList, sourceLabel } from "./sources.js";
import { focusFirst, linkFocus, showFocus } from "./focus.js";

const SLOT = "student";
const api = pageApi(SLOT);

const courseSelect = $("course-select");
const levelSelect = $("level-select");
const sessionsList = $("sessions");
const conversation = $("conversation");
const emptyNote = $("chat-empty");
const askForm = $("ask-form");
const question = $("question");
const askSubmit = $("ask-submit");
const askStop = $("ask-stop");
const askStatus = $("ask-status");
const askError = $("ask-error");
const panel = $("source-panel");
const panelBody = $("panel-body");
const panelHeading = $("panel-heading");
const layout = $("main");

const state = {
  key: "",
  course: "",
  sessionId: null,
  sessionEnded: false,
  classId: null, // the course's running class, asked about first (tutor/tiers.py)
  classTimer: null,
  controller: null,
  opener: null,
};

// ---------------------------------------------------------------- key and courses

const onKey = courseKeyHandler(api, {
  setKey: (key) => {
    state.key = key;
  },
  clear: () => fillCourses([], t("course.signed_out")),
  load: async () => fillCourses(await fetchCourses(api)),
});

function fillCourses(courses, none = t("course.none_student")) {
  selectCourse(fillCourseMenu(courseSelect, courses, recall("student.course"), none));
}

function selectCourse(course) {
  state.course = course;
  remember("student.course", course);
  showFocus($("link-focus"), course);
  newSession();
  loadSessions();
  followClass();
}

// ---------------------------------------------------------------- the class in progress

const classNow = $("class-now");
// one small read of the class's state: cheap enough to follow the slides every few seconds
const CLASS_POLL_MS = 5000;

/** "now: slide 5 — Kernel functions" in the page's language. */
function classLine(progress) {
  const slide = progress.slide || {};
  if (slide.page === null || slide.page === undefined) return (progress.summary || "").slice(0, 120);
  return slide.title ? t("class.now_titled", { page: slide.page, title: slide.title })
    : t("class.now", { page: slide.page });
}

async function followClass() {
  clearTimeout(state.classTimer);
  const course = state.course;
  let line = "";
  if (!course || !state.key) {
    state.classId = null;
    if (classNow) classNow.hidden = true;
    return;
  }
  try {
    const pinned = linkFocus(course)?.live_class; // an LMS link to one class: that one
    const running = pinned ? { id: pinned } : await runningClass(api, course);
    state.classId = running ? running.id : null;
    if (state.classId) {
      const p = await api.get(`/v1/courses/${enc(course)}/classes/${enc(state.classId)}/progress`);
      line = classLine(p);
    }
  } catch {
    state.classId = null; // no live classes on this server, or none the key may see
  }
  if (course !== state.course) return;
  if (classNow) {
    classNow.textContent = line;
    classNow.hidden = !line;
  }
  if (state.classId) state.classTimer = setTimeout(followClass, CLASS_POLL_MS);
}

courseSelect.addEventListener("change", () => selectCourse(courseSelect.value));

// the one level control: kept in this browser and in the student's profile (profile.js)
levelSelect.value = recall("student.level") || "3";
levelSelect.addEventListener("change", () => remember("student.level", levelSelect.value));

// ---------------------------------------------------------------- sessions

function newSession() {
  stopStreaming();
  state.sessionId = null;
  state.sessionEnded = false;
  conversation.replaceChildren(emptyNote);
  emptyNote.hidden = false;
  closePanel(false);
  hideAskError();
  markCurrentSession();
}

$("new-session").addEventListener("click", () => {
  newSession();
  question.focus();
});

async function loadSessions() {
  sessionsList.replaceChildren();
  if (!state.key) {
    sessionsList.append(el("li", { class: "muted" }, t("sessions.signed_out")));
    return;
  }
  if (!state.course) return;
  let sessions;
  try {
    sessions = listOf(await api.get(`/v1/courses/${enc(state.course)}/sessions`), "sessions");
  } catch (err) {
    sessionsList.append(el("li", { class: "muted" }, describeError(err)));
    return;
  }
  if (!sessions.length) {
    sessionsList.append(el("li", { class: "muted" }, t("sessions.none")));
    return;
  }
  for (const session of sessions) {
    const turns = Number(session.turns ?? session.turn_count ?? 0);
    const heading = session.title || session.first_question || t("sessions.untitled");
    const details = [
      when(session.updated || session.created),
      turns === 1 ? t("sessions.turn1") : t("sessions.turns", { n: turns }),
      session.ended ? t("sessions.ended") : "",
    ].filter(Boolean).join(" · ");
    const button = el("button", {
      type: "button",
      class: "session-button",
      "data-testid": "session",
      dataset: { session: session.id },
      onclick: () => openSession(session.id),
    }, el("span", { class: "session-title" }, heading), el("span", { class: "session-meta" }, details));
    sessionsList.append(el("li", {}, button));
  }
  markCurrentSession();
}

function markCurrentSession() {
  for (const button of sessionsList.querySelectorAll(".session-button")) {
    if (button.dataset.session === state.sessionId) button.setAttribute("aria-current", "true");
    else button.removeAttribute("aria-current");
  }
}

async function openSession(id) {
  stopStreaming();
  hideAskError();
  closePanel(false);
  let session;
  try {
    session = await api.get(`/v1/courses/${enc(state.course)}/sessions/${enc(id)}`);
  } catch (err) {
    showAskError(describeError(err));
    return;
  }
  const inner = session.session && typeof session.session === "object" ? session.session : session;
  state.sessionId = inner.id || id;
  state.sessionEnded = Boolean(inner.ended);
  conversation.replaceChildren();
  const turns = listOf(session.turns ?? inner.turns, "turns");
  emptyNote.hidden = turns.length > 0;
  if (!turns.length) conversation.append(emptyNote);
  for (const turn of turns) {
    const view = addTurn(turn.question || "");
    view.setMeta({ intent: turn.intent, level: turn.level });
    view.finish({
      text: turn.answer ?? turn.text ?? "",
      sources: turn.sources || [],
      covered: turn.covered,
      complete: turn.complete,
    });
  }
  if (state.sessionEnded) state.sessionId = null; // an ended session is read only
  markCurrentSession();
  for (const button of sessionsList.querySelectorAll(".session-button")) {
    if (button.dataset.session === (inner.id || id)) button.setAttribute("aria-current", "true");
  }
  scrollToEnd(true);
  question.focus();
}

// ---------------------------------------------------------------- one turn in the conversation

/** Append a question and an (empty) answer; returns the handle that fills the answer. */
function addTurn(text) {
  emptyNote.hidden = true;
  if (emptyNote.parentNode) emptyNote.remove();
  const answer = el("div", {
    class: "answer",
    "data-testid": "answer",
    "aria-live": "polite",
    "aria-busy": "true",
  });
  const badges = el("span", { class: "badges" });
  const notice = el("div", { class: "notice-slot" });
  const sourcesBox = el("section", { class: "sources", "data-testid": "sources", hidden: true });
  const status = el("p", { class: "turn-status", "data-testid": "turn-status" });
  const error = el("div", { class: "notice notice-error", "data-testid": "error", role: "alert", hidden: true });
  const article = el("article", { class: "turn", "data-testid": "turn" },
    el("div", { class: "bubble bubble-question" },
      el("p", { class: "who" }, t("chat.you")),
      el("p", { class: "question-text", "data-testid": "question-text" }, text)),
    el("div", { class: "bubble bubble-answer" },
      el("p", { class: "who" }, el("span", {}, t("chat.tutor")), badges),
      notice, answer, status, error, sourcesBox));
  conversation.append(article);
  scrollToEnd(true);

  let streamed = null; // the text node tokens are appended to
  let sources = [];

  return {
    article,
    answer,
    setMeta(meta) {
      badges.replaceChildren();
      const level = meta.level ? String(meta.level) : "";
      if (level && !/^\d+$/.test(level)) {
        badges.append(el("span", { class: `badge badge-${level}`, "data-testid": "level-badge" },
          label("badge", level)));
      }
      if (meta.intent) {
        badges.append(el("span", { class: "badge badge-intent", "data-testid": "intent-badge" },
          label("intent", meta.intent)));
      }
    },
    status(message) {
      status.textContent = message || "";
    },
    token(piece) {
      if (!streamed) {
        streamed = document.createTextNode("");
        answer.append(streamed);
      }
      streamed.appendData(piece);
      scrollToEnd(false);
    },
    sources(list) {
      sources = list || [];
    },
    finish(done) {
      const text = done.text ?? (streamed ? streamed.data : "");
      const cited = done.sources && done.sources.length ? done.sources : sources;
      renderAnswer(answer, text, cited, done.markers, (n, source) => citeButton(n, source, cited));
      renderMath(answer);
      // an answer that cites nothing in its text (the model is off) shows the passages inline
      const inline = cited.length > 0 && !(done.markers ?? markerSpans(text)).length;
      renderSourceList(sourcesBox, focusFirst(cited, state.course), openGroup, { inline });
      if (done.covered === false) notice.replaceChildren(notCoveredNotice());
      status.textContent = done.complete === false ? t("ask.incomplete") : "";
      const removed = (done.removed || []).length;
      if (removed) {
        notice.append(el("p", { class: "checked-note", "data-testid": "removed-note", role: "note" },
          removed === 1 ? t("ask.removed_one") : t("ask.removed_many", { n: removed })));
      }
      answer.setAttribute("aria-busy", "false");
      article.dataset.state = done.covered === false ? "not-covered" : "done";
    },
    fail(message) {
      error.textContent = message;
      error.hidden = false;
      status.textContent = "";
      answer.setAttribute("aria-busy", "false");
      article.dataset.state = "error";
      if (!answer.textContent) answer.hidden = true;
    },
    stopped() {
      status.textContent = t("ask.stopped");
      answer.setAttribute("aria-busy", "false");
      article.dataset.state = "stopped";
      if (streamed || sources.length) {
        renderAnswer(answer, streamed ? streamed.data : "", sources, null,
          (n, source) => citeButton(n, source, sources));
        renderMath(answer);
      }
    },
  };
}

function notCoveredNotice() {
  return el("div", { class: "notice notice-uncovered", "data-testid": "not-covered", role: "status" },
    el("p", { class: "notice-title" }, el("span", { class: "notice-icon", "aria-hidden": "true" }, "!"),
      t("not_covered.title")),
    el("p", {}, t("not_covered.next")));
}

function citeButton(n, source, all) {
  return el("button", {
    type: "button",
    class: "cite",
    "data-testid": "citation",
    dataset: { n: String(n) },
    "aria-label": t("sources.open", { n, label: sourceLabel(source) }),
    "aria-controls": "source-panel",
    onclick: (event) => openSource(source, event.currentTarget, all),
  }, String(n));
}

/** Open the panel on the group of `all` (a turn's sources) that `source` belongs to. */
function openSource(source, opener, all) {
  const group = groupSources(all).find((g) => g.sources.includes(source))
    || { label: sourceLabel(source), numbers: [source.number], sources: [source] };
  openGroup(group, opener);
}

// ---------------------------------------------------------------- the side panel

function openGroup(group, opener) {
  state.opener = opener || null;
  const numbers = group.numbers.filter((n) => n !== undefined && n !== null);
  panelHeading.textContent = numbers.length ? `[${numbers.join(", ")}] ${group.label}` : group.label;
  const { kind, parts } = panelParts(group, { api, course: state.course });
  panel.dataset.kind = kind;
  panelBody.replaceChildren(...parts);
  panel.hidden = false;
  layout.classList.add("panel-open");
  for (const button of document.querySelectorAll(".cite, .source-link")) button.removeAttribute("aria-expanded");
  if (opener) opener.setAttribute("aria-expanded", "true");
  panel.focus();
}

function closePanel(restoreFocus = true) {
  if (panel.hidden) return;
  panel.hidden = true;
  layout.classList.remove("panel-open");
  panelBody.replaceChildren();
  if (state.opener) {
    state.opener.removeAttribute("aria-expanded");
    if (restoreFocus && state.opener.isConnected) state.opener.focus();
  }
  state.opener = null;
}

$("panel-close").addEventListener("click", () => closePanel());
document.addEventListener("keydown", (event) => {
  if (event.key === "Escape" && !panel.hidden) {
    event.preventDefault();
    closePanel();
  }
});

// ---------------------------------------------------------------- asking

function showAskError(message) {
  askError.textContent = message;
  askError.hidden = false;
}

function hideAskError() {
  askError.hidden = true;
  askError.textContent = "";
}

function setBusy(busy) {
  askSubmit.disabled = busy;
  askStop.hidden = !busy;
  askForm.setAttribute("aria-busy", String(busy));
  if (!busy) askStatus.textContent = "";
}

function stopStreaming() {
  if (state.controller) state.controller.abort();
  state.controller = null;
}

askStop.addEventListener("click", () => {
  stopStreaming();
  question.focus();
});

question.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    askForm.requestSubmit();
  }
});

askForm.addEventListener("submit", async (event) => {
  event.preventDefault();
  hideAskError();
  const text = question.value.trim();
  if (!state.key) return showAskError(t("ask.need_key"));
  if (!state.course) return showAskError(t("ask.need_course"));
  if (!text) {
    question.focus();
    return showAskError(t("ask.empty"));
  }
  if (state.controller) return;
  question.value = "";
  await ask(text);
});

async function ask(text) {
  const view = addTurn(text);
  const controller = new AbortController();
  state.controller = controller;
  setBusy(true);
  askStatus.textContent = t("ask.thinking");
  view.status(t("ask.thinking"));
  const body = { question: text, session_id: state.sessionId, level: Number(levelSelect.value) || 3 };
  if (state.classId) body.class_id = state.classId;
  let finished = false;
  try {
    const response = await api.request("POST", `/v1/courses/${enc(state.course)}/ask`, {
      json: body,
      headers: { Accept: "text/event-stream" },
      signal: controller.signal,
    });
    const type = response.headers.get("Content-Type") || "";
    if (!type.includes("text/event-stream")) {
      const answer = await response.json(); // a server that answered in one piece
      adoptSession(answer.session_id);
      view.setMeta(answer);
      view.finish(answer);
      finished = true;
    } else {
      for await (const { event: name, data } of readEvents(response, controller.signal)) {
        if (name === "meta") {
          adoptSession(data.session_id);
          view.setMeta(data);
          view.status(t("ask.writing"));
          askStatus.textContent = t("ask.writing");
        } else if (name === "token") {
          view.token(data.text || "");
        } else if (name === "sources") {
          view.sources(data.sources || []);
        } else if (name === "done") {
          adoptSession(data.session_id);
          view.finish(data);
          finished = true;
          break;
        } else if (name === "error") {
          view.fail(t("error.stream", {
            message: codeText(data.code, data.params) || data.message || data.type || "" }));
          finished = true;
          break;
        }
      }
      if (!finished) view.fail(t("error.stream", { message: t("error.network") }));
    }
  } catch (err) {
    if (err && err.name === "AbortError") {
      view.stopped();
    } else {
      view.fail(describeError(err));
      if (err instanceof ApiError && err.status >= 400 && err.status < 500 && !question.value) {
        question.value = text; // let the student fix the question
      }
    }
  } finally {
    if (state.controller === controller) state.controller = null;
    setBusy(false);
    loadSessions();
  }
}

function adoptSession(id) {
  if (id && id !== state.sessionId) {
    state.sessionId = id;
    state.sessionEnded = false;
    markCurrentSession();
  }
}

/** Server-Sent Events from a fetch response: yields {event, data} with data parsed as JSON. */
async function* readEvents(response, signal) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  const onAbort = () => reader.cancel().catch(() => {});
  signal.addEventListener("abort", onAbort);
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (signal.aborted) throw new DOMException("aborted", "AbortError");
      if (done) break;
      // normalise CRLF; a lone CR at the end may still be followed by its LF
      buffer = (buffer + decoder.decode(value, { stream: true })).replace(/\r\n|\r(?!$)/g, "\n");
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const parsed = parseEvent(block);
        if (parsed) yield parsed;
      }
    }
    const rest = parseEvent(buffer.replace(/\r$/, ""));
    if (rest) yield rest;
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
}

function parseEvent(block) {
  let name = "message";
  const data = [];
  for (const line of block.split("\n")) {
    if (!line || line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") name = value;
    else if (field === "data") data.push(value);
  }
  if (!data.length) return null;
  const raw = data.join("\n");
  try {
    return { event: name, data: JSON.parse(raw) };
  } catch {
    return { event: name, data: { text: raw } };
  }
}

// ---------------------------------------------------------------- scrolling

function scrollToEnd(force) {
  const scroller = conversation.scrollHeight > conversation.clientHeight ? conversation : document.scrollingElement;
  const near = scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 120;
  if (force || near) scroller.scrollTop = scroller.scrollHeight;
}

// ---------------------------------------------------------------- start

applyI18n();
setupKeyBox(SLOT, onKey);
