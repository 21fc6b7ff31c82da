// LTI 1.3: what the pages do when an LMS opened them. Loaded before the page's own modules and
// importing none statically, so that what it sets up is in place when they run.
//
// Inside an LMS's frame the browser may deny this site its storage (third-party storage
// blocked): reading sessionStorage or localStorage then throws. The page keeps its key and
// choices in memory instead, for as long as it is open (the LMS launches it afresh next time).
//
// A launch answers with the student or teacher page and a short-lived key in the URL's
// fragment (#lti_key=...&course=...): the fragment never reaches a server. The key becomes this
// tab's key of the page (as a typed key would: common.js reads it under the same name), the
// course the chosen one, and the fragment leaves the address bar and the history.
//
// The deep linking pages the server renders (data-page="lti-...") get their strings translated
// where i18n.js has them (the server's English stays otherwise), and the answer to the LMS is
// posted back at once. At the end of a dynamic registration the platform is told to close the
// window it opened the registration in.

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

function takeLaunchKey() {
  const params = new URLSearchParams(location.hash.slice(1));
  const key = params.get("lti_key");
  if (!key) return;
  const slot = location.pathname.startsWith("/teacher") ? "teacher" : "student";
  sessionStorage.setItem(`coursetutor.key.${slot}`, key); // common.js's storeKey(slot, key)
  const course = params.get("course");
  if (course) localStorage.setItem(`coursetutor.${slot}.course`, course); // remember()
  // the link's document or live class, if it names one (focus.js); a new launch replaces it
  const focus = { course, document: params.get("document") || "",
                  live_class: params.get("live_class") || "", title: params.get("title") || "" };
  if (course && (focus.document || focus.live_class)) {
    sessionStorage.setItem(`coursetutor.${slot}.focus`, JSON.stringify(focus));
  } else {
    sessionStorage.removeItem(`coursetutor.${slot}.focus`);
  }
  history.replaceState(null, "", location.pathname + location.search);
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

async function ltiPage() {
  const { has, t } = await import("./i18n.js");
  for (const el of document.querySelectorAll("[data-i18n]")) {
    if (has(el.dataset.i18n)) el.textContent = t(el.dataset.i18n);
  }
  document.querySelector("form#lti-autopost")?.submit();
  const chooser = document.querySelector('form[action="/lti/deep-link"]');
  if (chooser) offerChosenCourse(chooser);
  if (document.body.dataset.page === "lti-registered") {
    // LTI Dynamic Registration: the platform closes the window it opened the tool in
    (window.opener || window.parent).postMessage({ subject: "org.imsglobal.lti.close" }, "*");
  }
}

if (document.body?.dataset.page?.startsWith("lti-")) {
  ltiPage();
} else if (location.hash.includes("lti_key=")) {
  takeLaunchKey();
}
