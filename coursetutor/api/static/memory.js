// The student page's "Last session: ..." line: the summary of the student's last session in
// the chosen course, as the tutor remembers it. "New session" ends the session on screen, so
// its summary is written at once (the server also does it once a session has gone idle).

import { t } from "./i18n.js";
import { $, chosenCourse as course, el, enc, pageApi, storedKey, when } from "./common.js";

const api = pageApi("student");

async function load() {
  const box = $("last-summary");
  if (!course() || !storedKey("student")) {
    box.hidden = true;
    return;
  }
  try {
    const data = await api.get(`/v1/courses/${enc(course())}/students/me/memory?limit=1`);
    const last = data.sessions[0];
    box.hidden = !last;
    if (last) {
      box.replaceChildren(el("strong", {}, t("memory.last", { date: when(last.updated) })), " ",
        last.text);
    }
  } catch {
    box.hidden = true;  // a courtesy line: without a memory to read, none is shown
  }
}

async function endShown(event) {
  if (!event.target.closest("#new-session")) return;
  const shown = $("sessions").querySelector(".session-button[aria-current]");
  if (!shown || !course()) return;
  try {
    await api.post(`/v1/courses/${enc(course())}/sessions/${enc(shown.dataset.session)}/end`);
  } catch {
    return;
  }
  load();
}

let pending = 0;
// the sessions list is redrawn when the course changes or a session starts: read again then
new MutationObserver(() => {
  clearTimeout(pending);
  pending = setTimeout(load, 200);
}).observe($("sessions"), { childList: true });
// capture: runs before the page's own handler forgets which session was on screen
document.addEventListener("click", endShown, true);
