// Shared by the student and the teacher page: the stored key, API calls, errors, DOM helpers.

// first: a reload in an LMS frame gets its key back from the platform before a page asks
import "./lti.js";
import { has, lang, t } from "./i18n.js";

const KEY_PREFIX = "coursetutor.key.";

// API keys live in this tab's sessionStorage: gone when the tab closes, never shared with other
// tabs or kept on disk. A key an earlier version kept in localStorage is removed on first read.
export function storedKey(slot) {
  try {
    localStorage.removeItem(KEY_PREFIX + slot);
  } catch {
    /* nothing stored */
  }
  try {
    return sessionStorage.getItem(KEY_PREFIX + slot) || "";
  } catch {
    return "";
  }
}

export function storeKey(slot, key) {
  try {
    sessionStorage.setItem(KEY_PREFIX + slot, key);
  } catch {
    /* private mode: the key lives for this page only */
  }
}

export function forgetKey(slot) {
  try {
    sessionStorage.removeItem(KEY_PREFIX + slot);
  } catch {
    /* nothing stored */
  }
}

export function remember(name, value) {
  try {
    if (value === null || value === undefined || value === "") localStorage.removeItem("coursetutor." + name);
    else localStorage.setItem("coursetutor." + name, String(value));
  } catch {
    /* ignore */
  }
}

export function recall(name) {
  try {
    return localStorage.getItem("coursetutor." + name) || "";
  } catch {
    return "";
  }
}

/**
 * An error reply of the API, or a network failure (status 0): `code` and `params` name the
 * message in words the page translates (see codeText); `message` is the server's English.
 */
export class ApiError extends Error {
  constructor(status, type, message, retryAfter = null, code = "", params = {}) {
    super(message);
    this.status = status;
    this.type = type;
    this.retryAfter = retryAfter;
    this.code = code || type;
    this.params = params || {};
  }
}

const NUMBER = new Intl.NumberFormat(lang);

/**
 * The page's sentence for a code the server sent (an error's or a report line's), filled
 * from its params (numbers in the page's format), or "" for a code it has no sentence for.
 */
export function codeText(code, params = {}) {
  const key = `error.${code}`;
  if (!code || !has(key)) return "";
  const shown = {};
  for (const [name, value] of Object.entries(params || {})) {
    shown[name] = typeof value === "number" ? NUMBER.format(value) : value;
  }
  return t(key, shown);
}

/** Read `{"error": {...}}` (or FastAPI's `{"detail": ...}`) from a failed response. */
export async function errorFrom(response) {
  let type = "error";
  let message = response.statusText || "";
  let code = "";
  let params = {};
  try {
    const data = await response.json();
    if (data && data.error) {
      type = data.error.type || type;
      message = data.error.message || message;
      code = data.error.code || "";
      params = data.error.params || {};
    } else if (data && data.detail !== undefined) {
      message = Array.isArray(data.detail)
        ? data.detail.map((d) => [(d.loc || []).slice(1).join("."), d.msg].filter(Boolean).join(": ")).join("; ")
        : String(data.detail);
    }
  } catch {
    /* not JSON */
  }
  const retry = response.headers.get("Retry-After");
  return new ApiError(response.status, type, message, retry ? Number(retry) : null, code, params);
}

/**
 * One line for the user about an error: the page's sentence for its code, the server's
 * English only for a code the page does not know.
 */
export function describeError(err) {
  if (err instanceof ApiError) {
    if (err.status === 0) return t("error.network");
    if (err.status === 429 && err.retryAfter) {
      return t("error.retry_after", { seconds: Math.ceil(err.retryAfter) });
    }
    return codeText(err.code, err.params) || t("error.status", { status: err.status, message: err.message });
  }
  if (err && err.name === "TypeError") return t("error.network");
  return String((err && err.message) || err);
}

/** API calls with the key of `slot` in the Authorization header. */
export function makeApi(getKey) {
  async function request(method, path, { json, body, headers = {}, signal } = {}) {
    const init = { method, headers: { ...headers }, signal };
    const key = getKey();
    if (key) init.headers.Authorization = "Bearer " + key;
    if (json !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(json);
    } else if (body !== undefined) {
      init.body = body;
    }
    if (!init.headers.Accept) init.headers.Accept = "application/json";
    let response;
    try {
      response = await fetch(path, init);
    } catch (err) {
      if (err && err.name === "AbortError") throw err;
      throw new ApiError(0, "network", t("error.network"));
    }
    if (!response.ok) throw await errorFrom(response);
    return response;
  }
  async function data(method, path, options) {
    const response = await request(method, path, options);
    if (response.status === 204) return null;
    const text = await response.text();
    return text ? JSON.parse(text) : null;
  }
  return {
    request,
    get: (path, options) => data("GET", path, options),
    post: (path, json, options = {}) => data("POST", path, { ...options, json }),
    put: (path, json, options = {}) => data("PUT", path, { ...options, json }),
    patch: (path, json, options = {}) => data("PATCH", path, { ...options, json }),
    del: (path, options) => data("DELETE", path, options),
  };
}

/** API calls with the key stored for `slot` ("student" or "teacher"). */
export function pageApi(slot) {
  return makeApi(() => storedKey(slot));
}

/** The list in a reply that is either a bare array or `{name: [...]}`. */
export function listOf(data, name) {
  if (Array.isArray(data)) return data;
  if (data && Array.isArray(data[name])) return data[name];
  if (data && Array.isArray(data.items)) return data.items;
  if (data && Array.isArray(data.data)) return data.data;
  return [];
}

export function enc(part) {
  return encodeURIComponent(part);
}

export const $ = (id) => document.getElementById(id);

/**
 * Show `err` in an error box (the element or its id): an ApiError or an exception as one
 * line (see describeError), a string as it is; no error empties and hides the box. The
 * server's own words stay on hover, for a teacher to quote.
 */
export function showError(box, err) {
  const node = typeof box === "string" ? $(box) : box;
  node.textContent = err ? describeError(err) : "";
  node.dataset.code = err instanceof ApiError ? err.code : "";
  if (err instanceof ApiError && err.message) node.title = err.message;
  else node.removeAttribute("title");
  node.hidden = !err;
}

/**
 * A file input in the page's language: the browser writes "Choose files" and "No file chosen"
 * in its own, so the input is hidden (still focusable, and its label still opens it) and a
 * button and the names chosen stand in for it.
 */
export function localFilePicker(input) {
  const button = el("button", { type: "button", class: "secondary file-button", tabindex: "-1",
    "aria-hidden": "true" }, t(input.multiple ? "file.choose_many" : "file.choose_one"));
  const chosen = el("span", { class: "file-chosen", "data-testid": `${input.id}-chosen` });
  const show = () => {
    const names = [...(input.files || [])].map((file) => file.name);
    chosen.textContent = names.length ? names.join(", ") : t("file.none");
  };
  button.addEventListener("click", () => input.click());
  input.addEventListener("change", show);
  input.form?.addEventListener("reset", () => setTimeout(show));
  input.classList.add("file-native");
  input.after(el("span", { class: "file-pick" }, button, chosen));
  show();
  return show;
}

/** Create an element: el("button", {class: "x", onclick: fn}, "text", child). */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") {
      node.addEventListener(name.slice(2), value);
    } else if (name === "class") {
      node.className = value;
    } else if (name === "dataset") {
      Object.assign(node.dataset, value);
    } else if (name === "text") {
      node.textContent = value;
    } else if (value === true) {
      node.setAttribute(name, "");
    } else {
      node.setAttribute(name, String(value));
    }
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** mm:ss (or h:mm:ss) for a time in seconds. */
export function clock(seconds) {
  const whole = Math.max(0, Math.floor(Number(seconds) || 0));
  const h = Math.floor(whole / 3600);
  const m = Math.floor((whole % 3600) / 60);
  const s = whole % 60;
  const pad = (n) => String(n).padStart(2, "0");
  return h ? `${h}:${pad(m)}:${pad(s)}` : `${pad(m)}:${pad(s)}`;
}

const DATE_TIME = new Intl.DateTimeFormat(lang, { dateStyle: "medium", timeStyle: "short" });
const DATE = new Intl.DateTimeFormat(lang, { dateStyle: "medium" });

/** A short date and time in the page's language: one format per language on every page. */
export function when(epochSeconds) {
  return epochSeconds ? DATE_TIME.format(new Date(epochSeconds * 1000)) : "";
}

/** A date in the page's language. */
export function day(epochSeconds) {
  return epochSeconds ? DATE.format(new Date(epochSeconds * 1000)) : "";
}

/** A course's id in a course list (an object, or a bare id). */
export function courseId(course) {
  return course.id || course.course || String(course);
}

/** The courses the key may see. */
export async function fetchCourses(api) {
  return listOf(await api.get("/v1/courses"), "courses");
}

/**
 * Fill a course menu: one option per course ("Title (id)", or the id alone), or a disabled
 * option saying why there is none (`none`). Returns the course it shows: `wanted` when
 * listed, else the first ("" for no course).
 */
export function fillCourseMenu(select, courses, wanted, none = t("course.none")) {
  select.replaceChildren();
  if (!courses.length) {
    select.append(el("option", { value: "" }, none));
    select.disabled = true;
    return "";
  }
  select.disabled = false;
  for (const course of courses) {
    const id = courseId(course);
    select.append(el("option", { value: id }, course.title && course.title !== id ? `${course.title} (${id})` : id));
  }
  const pick = courses.some((c) => courseId(c) === wanted) ? wanted : courseId(courses[0]);
  select.value = pick;
  return pick;
}

/** The course chosen in the student page's course menu, for its panels. */
export function chosenCourse() {
  return $("course-select").value;
}

/** The running class of a course (the first, should there be several), or undefined. */
export async function runningClass(api, course) {
  if (!course) return undefined;
  return listOf(await api.get(`/v1/courses/${enc(course)}/classes`), "classes").find((c) => c.running);
}

/**
 * The `onKey` of a page's key box (see setupKeyBox) for a page built on its courses: `setKey`
 * keeps the key; no key empties the page (`clear`); a key is asked about at /v1/me, refused
 * when `refuse(me)` says why the page is not for it, and `load()` then reads the courses.
 */
export function courseKeyHandler(api, { setKey, clear, load, refuse = () => "" }) {
  return async function onKey(key) {
    setKey(key);
    if (!key) {
      clear();
      return null;
    }
    const me = await api.get("/v1/me");
    const why = refuse(me);
    if (why) {
      clear();
      throw new ApiError(403, "forbidden", why);
    }
    await load();
    return me;
  };
}

/**
 * The key box of a page: a form while no key is stored, "Signed in as ..." and a
 * "Forget key" button once one is. `onKey(key)` runs with the key (or "" when forgotten);
 * it returns the /v1/me reply or throws an ApiError for a key the API refuses.
 */
export function setupKeyBox(slot, onKey) {
  const form = document.getElementById("key-form");
  const input = document.getElementById("key-input");
  const status = document.getElementById("key-status");
  const who = document.getElementById("key-who");
  const message = document.getElementById("key-message");
  const forget = document.getElementById("key-forget");
  const toggle = document.getElementById("key-toggle");

  function showForm(note = t("key.none")) {
    form.hidden = false;
    status.hidden = true;
    message.textContent = note;
  }

  async function use(key, fromForm) {
    if (!key) {
      showForm();
      await onKey("");
      return;
    }
    try {
      const me = await onKey(key);
      form.hidden = true;
      status.hidden = false;
      message.textContent = "";
      who.textContent = t("key.saved_as", { who: describeMe(me) });
      if (fromForm) forget.focus();
    } catch (err) {
      // only a refused key is forgotten; a server that is down keeps it for a retry
      const refused = err instanceof ApiError && (err.status === 401 || err.status === 403);
      if (refused) forgetKey(slot);
      showForm(refused ? t("key.bad", { message: codeText(err.code, err.params) || err.message })
        : describeError(err));
      if (fromForm) input.focus();
    }
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const key = input.value.trim();
    if (!key) {
      input.focus();
      return;
    }
    storeKey(slot, key);
    input.value = "";
    use(key, true);
  });
  forget.addEventListener("click", () => {
    forgetKey(slot);
    use("", false);
    input.focus();
  });
  if (toggle) {
    toggle.addEventListener("click", () => {
      const shown = input.type === "text";
      input.type = shown ? "password" : "text";
      toggle.textContent = t(shown ? "key.show" : "key.hide");
      toggle.setAttribute("aria-pressed", String(!shown));
    });
  }
  use(storedKey(slot), false);
}

function describeMe(me) {
  if (!me) return "";
  const role = me.role || "";
  if (role === "student") return t("role.student", { student: me.student || me.name || "" });
  if (role === "teacher") return t("role.teacher", { tenant: me.tenant || "" });
  if (role === "admin") return t("role.admin", { tenant: me.tenant || "" });
  return me.name || me.id || role;
}
