// The teacher page: courses, uploads with their ingest progress, documents and enrolments.

import { applyI18n, label, lang, t } from "./i18n.js";
import {
  $, ApiError, codeText, courseId, courseKeyHandler, describeError, el, enc, errorFrom, fetchCourses,
  fillCourseMenu, listOf, localFilePicker, pageApi, recall, remember, setupKeyBox, showError, storedKey,
} from "./common.js";
import { setupCheck } from "./check.js";
import { setupLive } from "./live.js";
import { setupClass } from "./class.js";
import { setupLms } from "./lms.js";

const SLOT = "teacher";
const api = pageApi(SLOT);
const POLL_MS = 500;
const FINISHED = new Set(["done", "failed", "cancelled"]);
const TENTHS = new Intl.NumberFormat(lang, { minimumFractionDigits: 1, maximumFractionDigits: 1 });

const message = $("teacher-message");
const coursesList = $("courses");
const courseForm = $("course-form");
const manageSelect = $("manage-course");
const manageBody = $("manage-body");
const manageHeading = $("manage-heading");
const uploadForm = $("upload-form");
const uploadFiles = $("upload-files");
const uploadProgress = $("upload-progress");
const jobsList = $("jobs");
const docsBody = $("docs-body");
const studentsList = $("students");

const state = { key: "", courses: [], course: "", jobs: new Map() };
const showCheck = setupCheck(api, () => state.course);
const showLive = setupLive(api, () => state.course);
const showClass = setupClass(api, () => state.course);
const showLms = setupLms(api); // admins: the tenant's LMS platforms

function flash(text) {
  message.textContent = text;
}

// ---------------------------------------------------------------- key and courses

const onKey = courseKeyHandler(api, {
  setKey: (key) => {
    state.key = key;
  },
  clear: () => fillCourses([], null, t("courses.signed_out")),
  load: () => loadCourses(),
  refuse: (me) => (me && me.role === "student" ? t("key.not_teacher") : ""),
});

async function loadCourses(select = null) {
  let courses;
  try {
    courses = await fetchCourses(api);
  } catch (err) {
    coursesList.replaceChildren(el("li", { class: "muted" }, describeError(err)));
    if (err instanceof ApiError && err.status === 401) throw err;
    return;
  }
  fillCourses(courses, select);
}

function fillCourses(courses, select = null, none = t("courses.none")) {
  state.courses = courses;
  coursesList.replaceChildren();
  if (!courses.length) coursesList.append(el("li", { class: "muted" }, none));
  for (const course of courses) {
    const id = courseId(course);
    const counts = [
      course.language ? course.language.toUpperCase() : "",
      course.documents !== undefined ? t("courses.documents", { n: course.documents }) : "",
      course.chunks !== undefined ? t("courses.chunks", { n: course.chunks }) : "",
    ].filter(Boolean).join(" · ");
    coursesList.append(el("li", { "data-testid": "course", dataset: { course: id } },
      el("span", { class: "course-name" }, el("strong", {}, course.title || id), " ",
        el("code", {}, id)),
      el("span", { class: "course-meta" }, counts),
      el("button", {
        type: "button", class: "secondary", dataset: { course: id },
        "aria-label": `${t("courses.select")}: ${course.title || id}`,
        onclick: () => {
          manageSelect.value = id;
          chooseCourse(id);
          manageSelect.focus();
        },
      }, t("courses.select"))));
  }
  const pick = fillCourseMenu(manageSelect, courses, select || state.course || recall("teacher.course"),
    state.key ? t("course.none") : t("course.signed_out"));
  chooseCourse(pick, pick === state.course);
}

function chooseCourse(id, keepJobs = false) {
  const changed = id !== state.course;
  state.course = id;
  remember("teacher.course", id);
  for (const item of coursesList.querySelectorAll("li[data-course]")) {
    item.classList.toggle("selected", item.dataset.course === id);
  }
  if (!id) {
    manageBody.hidden = true;
    manageHeading.textContent = t("manage.none");
    return;
  }
  const course = state.courses.find((c) => courseId(c) === id);
  manageHeading.textContent = t("manage.title", { course: (course && course.title) || id });
  manageBody.hidden = false;
  if (changed && !keepJobs) {
    for (const item of jobsList.querySelectorAll("li[data-course]")) item.hidden = item.dataset.course !== id;
  }
  showJobsEmpty();
  loadDocuments();
  loadStudents();
  loadActivity();
  showCheck(id);
  showLive();
  showClass();
}

manageSelect.addEventListener("change", () => chooseCourse(manageSelect.value));
$("courses-refresh").addEventListener("click", () => loadCourses());

courseForm.addEventListener("submit", async (event) => {
  event.preventDefault();
  showError("course-error", null);
  const body = {
    id: $("course-id").value.trim(),
    title: $("course-title").value.trim(),
    language: $("course-language").value.trim() || "en",
    allow_solutions: $("course-solutions").checked,
  };
  const button = $("course-create");
  button.disabled = true;
  try {
    const created = await api.post("/v1/courses", body);
    const id = (created && (created.id || (created.course && created.course.id))) || body.id;
    courseForm.reset();
    $("course-language").value = lang;
    flash(t("courses.created", { id }));
    await loadCourses(id);
  } catch (err) {
    showError("course-error", err);
  } finally {
    button.disabled = false;
  }
});

// ---------------------------------------------------------------- upload and ingest jobs

uploadForm.addEventListener("submit", (event) => {
  event.preventDefault();
  showError("upload-error", null);
  const files = [...uploadFiles.files];
  if (!files.length) {
    showError("upload-error", t("upload.need_files"));
    uploadFiles.focus();
    return;
  }
  const form = new FormData();
  for (const file of files) form.append("files", file, file.name);
  form.append("type", $("upload-type").value);
  const topic = $("upload-topic").value.trim();
  if (topic) form.append("topic", topic);
  const difficulty = $("upload-difficulty").value;
  if (difficulty) form.append("difficulty", difficulty);
  const media = $("upload-media").value.trim();
  if (media) form.append("media_url", media);
  upload(state.course, files.map((f) => f.name), form);
});

/** POST the form with XMLHttpRequest, for the upload's own progress; then follow the job. */
function upload(course, names, form) {
  const button = $("upload-submit");
  button.disabled = true;
  const xhr = new XMLHttpRequest();
  xhr.open("POST", `/v1/courses/${enc(course)}/documents`);
  xhr.setRequestHeader("Authorization", "Bearer " + storedKey(SLOT));
  xhr.setRequestHeader("Accept", "application/json");
  xhr.upload.addEventListener("progress", (e) => {
    if (e.lengthComputable) {
      uploadProgress.textContent = t("upload.sending", { percent: Math.round((100 * e.loaded) / e.total) });
    }
  });
  const finish = () => {
    button.disabled = false;
    uploadProgress.textContent = "";
  };
  xhr.addEventListener("error", () => {
    finish();
    showError("upload-error", new ApiError(0, "network", t("error.network")));
  });
  xhr.addEventListener("load", async () => {
    finish();
    if (xhr.status < 200 || xhr.status >= 300) {
      const response = new Response(xhr.responseText || "{}", {
        status: xhr.status,
        statusText: xhr.statusText,
        headers: { "Retry-After": xhr.getResponseHeader("Retry-After") || "" },
      });
      showError("upload-error", await errorFrom(response));
      return;
    }
    let data = {};
    try {
      data = JSON.parse(xhr.responseText || "{}");
    } catch {
      /* keep {} */
    }
    const job = data.job && typeof data.job === "object" ? data.job : data;
    uploadForm.reset();
    followJob(course, job, names);
  });
  xhr.send(form);
}

function followJob(course, job, names) {
  const id = job.id || job.job;
  const status = el("span", { class: "job-status", "data-testid": "job-status" }, label("job", job.status || "queued"));
  const files = el("progress", { class: "job-files", "data-testid": "job-files", max: "1", value: "0" });
  const embed = el("progress", { class: "job-embed", "data-testid": "job-embed", max: "1", value: "0", hidden: true });
  const details = el("p", { class: "job-details", "data-testid": "job-details" });
  const report = el("div", { class: "job-report", "data-testid": "job-report" });
  const filesLabel = el("span", { class: "visually-hidden" }, t("upload.files"));
  const cancel = el("button", { type: "button", class: "job-cancel", "data-testid": "job-cancel" },
    t("job.cancel"));
  const item = el("li", {
    class: "job", "data-testid": "job",
    dataset: { job: id || "", course, status: job.status || "queued" },
  },
  el("div", { class: "job-head" }, el("span", { class: "job-names" }, names.join(", ")), status,
    cancel),
  el("label", { class: "job-bar" }, filesLabel, files), embed, details, report);
  const live = el("div", { class: "visually-hidden", role: "status" });
  item.append(live);
  jobsList.prepend(item);
  showJobsEmpty();
  const view = { item, status, files, embed, details, report, live, names, cancel, lastStatus: "" };
  showJob(view, job);
  if (!id) return;
  cancel.addEventListener("click", async () => {
    cancel.disabled = true;
    try {
      showJob(view, await api.del(`/v1/jobs/${enc(id)}`));
    } catch (err) {
      // 409: it finished meanwhile; the next poll shows how
      if (!(err instanceof ApiError && err.status === 409)) view.details.textContent = describeError(err);
      cancel.disabled = false;
    }
  });
  state.jobs.set(id, view);
  let failures = 0;
  const poll = async () => {
    let current;
    try {
      current = await api.get(`/v1/jobs/${enc(id)}`);
      failures = 0;
    } catch (err) {
      failures += 1;
      if (failures > 20 || (err instanceof ApiError && err.status === 404)) {
        view.details.textContent = describeError(err);
        item.dataset.status = "failed";
        view.status.textContent = label("job", "failed");
        return;
      }
      setTimeout(poll, POLL_MS * Math.min(failures + 1, 6));
      return;
    }
    showJob(view, current);
    if (FINISHED.has(current.status)) {
      state.jobs.delete(id);
      if (course === state.course) loadDocuments();
      loadCourses();
      return;
    }
    setTimeout(poll, POLL_MS);
  };
  setTimeout(poll, FINISHED.has(job.status) ? 0 : POLL_MS);
}

function showJob(view, job) {
  const status = job.status || "queued";
  view.item.dataset.status = status;
  view.status.textContent = label("job", status);
  view.status.className = `job-status job-${status}`;
  view.cancel.hidden = FINISHED.has(status);
  const total = Number(job.files_total || view.names.length || 0);
  const done = Number(job.files_done || 0);
  view.files.max = Math.max(total, 1);
  view.files.value = status === "done" ? Math.max(total, 1) : Math.min(done, total);
  const toEmbed = Number(job.to_embed || 0);
  const embedded = Number(job.embedded || 0);
  view.embed.hidden = !(toEmbed > 0) || status === "done";
  if (toEmbed > 0) {
    view.embed.max = toEmbed;
    view.embed.value = Math.min(embedded, toEmbed);
  }
  const parts = [t("job.files", { done, total })];
  if (status === "running" && job.stage) parts.push(t("job.stage", { stage: label("stage", job.stage) }));
  if (status === "running" && job.current) parts.push(t("job.current", { name: job.current }));
  if (toEmbed > 0) parts.push(t("job.embedded", { done: embedded, total: toEmbed }));
  view.details.textContent = parts.join(" · ");
  if ((status === "failed" || status === "cancelled") && job.error) {
    view.details.textContent += ` · ${codeText(job.error_code) || job.error}`;
  }
  if (status !== view.lastStatus) {
    view.live.textContent = `${view.names.join(", ")}: ${label("job", status)}`;
    view.lastStatus = status;
  }
  if (job.report) showReport(view.report, job.report);
}

/** A report line's notes in the page's language, or "" when one has a code it does not know. */
function codedNotes(notes) {
  const said = listOf(notes, "notes").map((n) => codeText(n.code, n.params));
  return said.length && said.every(Boolean) ? said.join(" ") : "";
}

function showReport(box, report) {
  const files = listOf(report.files, "files");
  const ok = files.filter((f) => f.status !== "failed").length;
  const summary = [t("report.summary", { ok, total: files.length })];
  if (report.seconds !== undefined) summary.push(t("job.seconds", { seconds: TENTHS.format(Number(report.seconds)) }));
  const rows = files.map((f) => {
    const notes = [];
    const noText = listOf(f.no_text_pages, "pages");
    const ocr = listOf(f.ocr_pages, "pages");
    if (noText.length) notes.push(t("report.no_text", { pages: noText.join(", ") }));
    if (ocr.length) notes.push(t("report.ocr", { pages: ocr.join(", ") }));
    const dropped = listOf(f.dropped_pages, "pages");
    if (dropped.length) notes.push(t("report.dropped", { pages: dropped.join(", ") }));
    // the page's sentences for the line's code or its notes' codes; the server's words on hover
    if (f.message) notes.push(codeText(f.code, f.params) || codedNotes(f.notes) || f.message);
    return el("tr", { class: `file-${f.status}`, "data-testid": "report-row", dataset: { status: f.status || "" } },
      el("th", { scope: "row" }, f.name || f.document || ""),
      el("td", { "data-label": t("report.status") },
        el("span", { class: `pill pill-${f.status}` }, label("file", f.status))),
      el("td", { class: "num", "data-label": t("report.pages") }, f.pages ? f.pages : "–"),
      el("td", { class: "num", "data-label": t("report.chunks") }, f.chunks ?? "–"),
      el("td", { class: "notes", "data-label": t("report.notes"), "data-testid": "report-notes",
        title: f.message || null, dataset: { code: f.code || "" } }, notes.join("; ")));
  });
  box.replaceChildren(
    el("p", { class: "report-summary", "data-testid": "report-summary" }, summary.join(" ")),
    el("div", { class: "table-wrap" }, el("table", { class: "report stack" },
      el("thead", {}, el("tr", {},
        ...["report.file", "report.status", "report.pages", "report.chunks", "report.notes"].map((key) =>
          el("th", { scope: "col", class: key === "report.pages" || key === "report.chunks" ? "num" : null }, t(key))))),
      el("tbody", {}, ...rows))));
}

function showJobsEmpty() {
  $("jobs-empty").hidden = [...jobsList.children].some((item) => !item.hidden);
}

// ---------------------------------------------------------------- documents

function docPathId(doc) {
  if (doc.document) return String(doc.document);
  const id = String(doc.id || "");
  const prefix = `${state.course}:`;
  return id.startsWith(prefix) ? id.slice(prefix.length) : id;
}

async function loadDocuments() {
  const course = state.course;
  showError("docs-error", null);
  if (!course) return;
  let docs;
  try {
    docs = listOf(await api.get(`/v1/courses/${enc(course)}/documents`), "documents");
  } catch (err) {
    showError("docs-error", err);
    return;
  }
  if (course !== state.course) return;
  docsBody.replaceChildren();
  if (!docs.length) {
    docsBody.append(el("tr", {}, el("td", { colspan: "5", class: "muted" }, t("docs.none"))));
    return;
  }
  for (const doc of docs) {
    const name = doc.title || doc.filename || doc.name || doc.id;
    const source = doc.filename || doc.name || doc.source || "";
    const pages = doc.pages ?? doc.page_count;
    const actions = el("td", { class: "actions", "data-label": t("docs.actions") });
    const row = el("tr", { "data-testid": "document", dataset: { document: doc.id || "" } },
      el("th", { scope: "row" }, el("span", {}, name),
        source && source !== name ? el("span", { class: "doc-file" }, source) : null),
      el("td", { "data-label": t("docs.type") }, label("type", doc.type || doc.doc_type || "")),
      el("td", { class: "num", "data-label": t("docs.pages") },
        pages === null || pages === undefined || pages === 0 ? "–" : pages),
      el("td", { class: "num", "data-label": t("docs.chunks") }, doc.chunks ?? doc.chunk_count ?? "–"),
      actions);
    fillDeleteCell(actions, doc, name);
    docsBody.append(row);
  }
}

/** Delete in two steps (Delete, then Confirm), keyboard friendly and with no dialog. */
function fillDeleteCell(cell, doc, name) {
  const remove = el("button", {
    type: "button", class: "danger-outline", "data-testid": "document-delete",
    "aria-label": `${t("docs.delete")}: ${name}`,
  }, t("docs.delete"));
  remove.addEventListener("click", () => {
    const confirm = el("button", {
      type: "button", class: "danger", "data-testid": "document-confirm",
      "aria-label": `${t("docs.confirm")}: ${name}`,
    }, t("docs.confirm"));
    const cancel = el("button", { type: "button", class: "secondary" }, t("docs.cancel"));
    cancel.addEventListener("click", () => {
      fillDeleteCell(cell, doc, name);
      cell.querySelector("button").focus();
    });
    confirm.addEventListener("click", async () => {
      confirm.disabled = true;
      try {
        await api.del(`/v1/courses/${enc(state.course)}/documents/${enc(docPathId(doc))}`);
        flash(t("docs.deleted", { name }));
        await loadDocuments();
        loadCourses();
        $("docs-heading").focus();
      } catch (err) {
        showError("docs-error", err);
        confirm.disabled = false;
      }
    });
    cell.replaceChildren(confirm, " ", cancel);
    confirm.focus();
  });
  cell.replaceChildren(remove);
}

$("docs-refresh").addEventListener("click", () => loadDocuments());

// ---------------------------------------------------------------- students

async function loadStudents() {
  const course = state.course;
  showError("students-error", null);
  if (!course) return;
  let students;
  try {
    students = listOf(await api.get(`/v1/courses/${enc(course)}/students`), "students");
  } catch (err) {
    showError("students-error", err);
    return;
  }
  if (course !== state.course) return;
  studentsList.replaceChildren();
  if (!students.length) {
    studentsList.append(el("li", { class: "muted" }, t("students.none")));
    return;
  }
  for (const entry of students) {
    const student = typeof entry === "string" ? entry : entry.student || entry.id || "";
    studentsList.append(el("li", { "data-testid": "student", dataset: { student } },
      el("span", {}, student),
      el("button", {
        type: "button", class: "secondary", "aria-label": `${t("students.remove")}: ${student}`,
        onclick: async () => {
          try {
            await api.del(`/v1/courses/${enc(course)}/students/${enc(student)}`);
            flash(t("students.removed", { student }));
            loadStudents();
          } catch (err) {
            showError("students-error", err);
          }
        },
      }, t("students.remove"))));
  }
}

$("enrol-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  showError("students-error", null);
  const input = $("student-id");
  const student = input.value.trim();
  if (!student || !state.course) return;
  try {
    await api.put(`/v1/courses/${enc(state.course)}/students/${enc(student)}`, {});
    input.value = "";
    flash(t("students.enrolled", { student }));
    await loadStudents();
  } catch (err) {
    showError("students-error", err);
  }
});

// ---------------------------------------------------------------- activity

async function loadActivity() {
  const course = state.course;
  showError("activity-error", null);
  if (!course) return;
  let a;
  try {
    a = await api.get(`/v1/courses/${enc(course)}/analytics?days=30`);
  } catch (err) {
    showError("activity-error", err);
    return;
  }
  if (course !== state.course) return;
  const grades = a.grades || {};
  const totals = [
    ["activity.students", a.students], ["activity.sessions", a.sessions],
    ["activity.turns", a.turns], ["activity.covered", grades.correct || 0],
    ["activity.uncovered", grades.incorrect || 0],
  ];
  $("activity-totals").replaceChildren(...totals.map(([name, value]) => el("div", {},
    el("dt", {}, t(name)), el("dd", {}, String(value)))));
  const gaps = $("activity-gaps");
  gaps.replaceChildren(...(a.not_covered.length
    ? a.not_covered.map((q) => el("li", {}, q))
    : [el("li", { class: "muted" }, t("activity.none"))]));
  const exercises = $("activity-exercises");
  exercises.replaceChildren(...(a.exercises.length
    ? a.exercises.map((e) => el("li", {},
      t("activity.exercise", { exercise: e.exercise, turns: e.turns, students: e.students })))
    : [el("li", { class: "muted" }, t("activity.none"))]));
}

$("activity-refresh").addEventListener("click", () => loadActivity());

// ---------------------------------------------------------------- start

applyI18n();
localFilePicker(uploadFiles);
localFilePicker($("live-file"));
$("course-language").value = lang;
setupKeyBox(SLOT, async (key) => {
  showLms(null);
  const me = await onKey(key);
  showLms(me);
  return me;
});
