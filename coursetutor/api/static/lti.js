// LTI 1.3: what the pages do when an LMS opened them. Loaded before the page's own modules
// (common.js imports it, so they wait for what it does on a reload in the frame), importing
// only platform_storage.js statically.
//
// Inside an LMS's frame the browser may deny this site its storage (third-party storage
// blocked): reading sessionStorage or localStorage then throws. The page keeps its key and
// choices in memory instead, for as long as it is open.
//
// A launch answers with the student or teacher page and a short-lived key in the URL's
// fragment (#lti_key=...&course=...): the fragment never reaches a server. The key becomes this
// tab's key of the page (as a typed key would: common.js reads it under the same name), the
// course the chosen one, and the key leaves the address bar and the history: the address
// keeps only `?lti_session=` (this launch's id) and where the platform's storage is, if the
// platform offers one (LTI Client Side postMessages). The page then keeps the launch there too
// (lti.put_data), and a reload in the frame that finds no key in the browser's storage reads it
// back (lti.get_data) before the page asks for anything; with neither storage, the page says
// to open the tutor again from the LMS.
//
// With the platform's storage, the login's page (data-page="lti-login") puts the login's state
// and nonce there before going on to the platform, and the launch's pages (lti-check,
// lti-deep-link) find them there, the same as the launch's, before they open anything.
//
// The deep linking pages the server renders (data-page="lti-...") get their strings translated
// where i18n.js has them (the server's English stays otherwise), and the answer to the LMS is
// posted back at once. At the end of a dynamic registration the platform is told to close the
// window it opened the registration in.

import { PlatformStorage } from "./platform_storage.js";

class MemoryStorage {
  #items = new Map();
  get length() { return this.#items.size; }
  key(index) { return [...this.#items.keys()][index] ?? null; }
  getItem(name) { return this.#items.has(name) ? this.#items.get(name) : null; }
  setItem(name, value) { this.#items.set(name, String(value)); }
  removeItem(name) { this.#items.delete(name); }
  clear() { this.#items.clear(); }
}

for (const name of ["sessionStorage", "localStorage"]) {
  try {
    window[name].getItem("coursetutor.probe");
  } catch {
    Object.defineProperty(window, name, { value: new MemoryStorage(), configurable: true });
  }
}

const SLOT = location.pathname.startsWith("/teacher") ? "teacher" : "student";
const STORAGE_FIELDS = ["lti_storage_target", "lti_storage_origin", "lti_origins"];

/** The platform's storage the launch's fields name, or null. */
function platformStorage(params) {
  const target = params.get("lti_storage_target");
  const origin = params.get("lti_storage_origin");
  if (!target || !origin) return null;
  const origins = (params.get("lti_origins") || "").split(" ").filter(Boolean);
  return new PlatformStorage({ target, origin, origins });
}

function launchName(session) {
  return `coursetutor.launch.${session}`;
}

/** Keep a launch's key, course and focus as the page's own. */
function useLaunch(params) {
  sessionStorage.setItem(`coursetutor.key.${SLOT}`, params.get("lti_key")); // storeKey(slot, key)
  const course = params.get("course");
  if (course) localStorage.setItem(`coursetutor.${SLOT}.course`, course); // remember()
  // the link's document or live class, if it names one (focus.js); a new launch replaces it
  const focus = { course, document: params.get("document") || "",
                  live_class: params.get("live_class") || "", title: params.get("title") || "" };
  if (course && (focus.document || focus.live_class)) {
    sessionStorage.setItem(`coursetutor.${SLOT}.focus`, JSON.stringify(focus));
  } else {
    sessionStorage.removeItem(`coursetutor.${SLOT}.focus`);
  }
}

function takeLaunchKey(params) {
  useLaunch(params);
  // in the query, not the fragment: a link to a part of the page (#question) keeps it
  const kept = new URLSearchParams(location.search);
  kept.set("lti_session", crypto.randomUUID());
  for (const name of STORAGE_FIELDS) {
    if (params.get(name)) kept.set(name, params.get(name));
    else kept.delete(name);
  }
  history.replaceState(null, "", `${location.pathname}?${kept}`);
  const storage = platformStorage(params);
  if (!storage) return;
  const launch = new URLSearchParams([...params].filter(([name]) => !STORAGE_FIELDS.includes(name)));
  storage.put(launchName(kept.get("lti_session")), launch.toString()).catch((err) => {
    console.warn(`coursetutor: the platform's storage did not keep the launch (${err.code || err})`);
  });
}

/** A reload in the frame: the key from the browser's storage, else the platform's. */
async function restoreLaunch(params) {
  if (sessionStorage.getItem(`coursetutor.key.${SLOT}`)) return;
  const storage = platformStorage(params);
  if (storage) {
    try {
      const launch = new URLSearchParams(await storage.get(launchName(params.get("lti_session"))) || "");
      if (launch.get("lti_key")) {
        useLaunch(launch);
        return;
      }
    } catch (err) {
      console.warn(`coursetutor: the platform's storage did not answer (${err.code || err})`);
    }
  }
  showRelaunch();
}

async function showRelaunch() {
  const { t } = await import("./i18n.js");
  const notice = document.createElement("p");
  notice.id = "lti-relaunch";
  notice.className = "notice notice-error";
  notice.dataset.testid = "lti-relaunch";
  notice.setAttribute("role", "alert");
  notice.textContent = t("lti.relaunch");
  (document.getElementById("main") || document.body.firstChild)?.before(notice);
}

/** The login's state and nonce, from the body's data-lti-storage: put there (`keep`) or found
 * there the same; false when the storage does not answer or holds something else. */
async function loginStorage(body, keep) {
  const spec = JSON.parse(body.dataset.ltiStorage);
  const storage = new PlatformStorage(spec);
  try {
    for (const [key, value] of Object.entries(spec.items)) {
      if (keep) await storage.put(key, value);
      else if ((await storage.get(key)) !== value) return false;
    }
    return true;
  } catch (err) {
    console.warn(`coursetutor: the platform's storage did not answer (${err.code || err})`);
    return false;
  }
}

async function checkLogin(body) {
  if (await loginStorage(body, false)) return true;
  for (const main of document.querySelectorAll("main")) main.hidden = main.id !== "lti-unbound";
  return false;
}

// The deep linking page offers the documents and live classes of the chosen course only, and
// one of them at most (the server checks both either way).
function offerChosenCourse(form) {
  const selects = [...form.querySelectorAll("select")];
  const show = () => {
    const course = form.querySelector('input[name="course"]:checked')?.value || "";
    for (const select of selects) {
      for (const option of select.options) {
        if (option.dataset.course) option.hidden = option.disabled = option.dataset.course !== course;
      }
      if (select.selectedOptions[0]?.disabled) select.value = "";
    }
  };
  form.addEventListener("change", (event) => {
    if (event.target.name === "course") show();
    if (event.target.tagName === "SELECT" && event.target.value) {
      for (const other of selects) if (other !== event.target) other.value = "";
    }
  });
  show();
}

async function ltiPage(body) {
  const { has, t } = await import("./i18n.js");
  for (const el of document.querySelectorAll("[data-i18n]")) {
    if (has(el.dataset.i18n)) el.textContent = t(el.dataset.i18n);
  }
  const page = body.dataset.page;
  if (page === "lti-login") {
    const kept = await loginStorage(body, true);
    if (!kept) console.warn("coursetutor: the login goes on with its signed state alone");
    location.replace(kept ? body.dataset.next : body.dataset.fallback);
  } else if (page === "lti-check") {
    if (await checkLogin(body)) location.replace(body.dataset.next);
  } else if (body.dataset.ltiStorage && await checkLogin(body)) {
    document.querySelector("main").hidden = false;
  }
  document.querySelector("form#lti-autopost")?.submit();
  const chooser = document.querySelector('form[action="/lti/deep-link"]');
  if (chooser) offerChosenCourse(chooser);
  if (page === "lti-registered") {
    // LTI Dynamic Registration: the platform closes the window it opened the tool in
    (window.opener || window.parent).postMessage({ subject: "org.imsglobal.lti.close" }, "*");
  }
}

const launched = new URLSearchParams(location.hash.slice(1));
const kept = new URLSearchParams(location.search);
if (document.body?.dataset.page?.startsWith("lti-")) {
  ltiPage(document.body);
} else if (launched.get("lti_key")) {
  takeLaunchKey(launched);
} else if (kept.get("lti_session")) {
  await restoreLaunch(kept);
}
