// The teacher page's course check: start one, follow its progress, show the report with a
// labelled bar per section (longer the higher search ranked it).

import { t } from "./i18n.js";
import { codeText, el, enc, listOf, showError as showErrorIn } from "./common.js";

const POLL_MS = 1000;
// the report's problems and page reasons are fixed English phrases (health/course.py,
// tutor/garble.py): shown in the page's language
const PHRASES = {
  "the tutor did not answer it": "check.problem_unanswered",
  "private-use glyphs": "check.reason_private",
  "replacement or control characters": "check.reason_replacement",
  "formula gaps": "check.reason_gaps",
  "few letters": "check.reason_letters",
  "its own question does not find it": "check.problem_not_found",
};
const REMOVED = /^the answer check removed (\d+) statements?$/;

/** A problem or reason of the report in the page's language (unknown ones as sent). */
export function phrase(text) {
  if (PHRASES[text]) return t(PHRASES[text]);
  const removed = REMOVED.exec(text);
  if (removed) return t("check.problem_removed", { n: removed[1] });
  return text;
}

function percent(share) {
  return share === null || share === undefined ? "–" : `${Math.round(share * 100)}%`;
}

/** A section's state: ok (found, answer passed or not asked), weak (found, answer failed),
 * missed (its own question does not find it). */
function verdict(section) {
  if (!section.found) return "missed";
  return section.passed === false ? "weak" : "ok";
}

/** One labelled bar per section: length from its rank (rank 1 is full), colour from its
 * verdict, the section's name and rank written beside it. */
function chart(doc, k) {
  const summary = t("check.chart_label", {
    title: doc.title, found: percent(doc.found_share), passed: percent(doc.passed_share),
  });
  const rows = doc.sections.map((s) => {
    const share = s.found ? (k - s.rank + 1) / k : 0;
    // a page says where; a heading anchor (a slug) only repeats the name
    const where = s.locator && !s.locator.startsWith("#") && !s.name.includes(s.locator)
      ? ` (${s.locator})` : "";
    const rank = s.found ? t("check.rank", { rank: s.rank }) : t("check.not_found");
    const verdictText = t(`check.verdict_${verdict(s)}`);
    const fill = el("span", { class: `check-fill bar-${verdict(s)}` });
    fill.style.width = `${Math.max(4, Math.round(share * 100))}%`; // a property: no inline style attribute
    return el("li", { class: "check-row", "data-testid": "check-bar", dataset: { verdict: verdict(s) },
                      title: `${t("check.asked")}: ${s.question}` },
      el("span", { class: "check-name" }, `${s.name}${where}`),
      el("span", { class: "check-track", "aria-hidden": "true" }, fill),
      el("span", { class: "check-rank" }, s.found ? `${rank} · ${verdictText}` : rank));
  });
  return el("ol", { class: "check-chart", "aria-label": summary }, rows);
}

function pages(doc) {
  const parts = [];
  if (doc.no_text_pages.length) {
    parts.push(t("check.no_text", { pages: doc.no_text_pages.join(", ") }));
  }
  for (const g of doc.garbled_pages) {
    parts.push(t("check.garbled", { page: g.page, reasons: g.reasons.map(phrase).join(", ") }));
  }
  return parts;
}

function documentBlock(doc, report) {
  const numbers = [
    t("check.found", { share: percent(doc.found_share) }),
    report.answered ? t("check.passed", { share: percent(doc.passed_share) }) : "",
    t("check.flagged", { n: doc.pages_flagged }),
  ].filter(Boolean).join(" · ");
  const weak = doc.sections.filter((s) => s.problems.length);
  const list = el("ul", { class: "check-weak" }, weak.map((s) => el("li", {},
    el("strong", {}, s.name), ` — ${s.problems.map(phrase).join("; ")} `,
    el("span", { class: "muted" }, `(${t("check.asked")}: ${s.question})`))));
  return el("li", { class: "check-doc", "data-testid": "check-doc", dataset: { document: doc.id } },
    el("div", { class: "check-doc-head" }, el("strong", {}, doc.title), " ",
      el("span", { class: "muted" }, numbers)),
    chart(doc, report.k),
    pages(doc).map((line) => el("p", { class: "hint check-pages" }, line)),
    weak.length ? el("details", {}, el("summary", {},
      t("check.weak", { n: weak.length })), list) : null);
}

/** Wire the check section of the teacher page; returns show(course) for course changes. */
export function setupCheck(api, currentCourse) {
  const button = document.getElementById("check-run");
  const status = document.getElementById("check-status");
  const errorBox = document.getElementById("check-error");
  const reportBox = document.getElementById("check-report");
  let timer = null;

  const showError = (err) => showErrorIn(errorBox, err);

  function render(run) {
    if (run.status === "queued" || run.status === "running") {
      status.textContent = t("check.running", { done: run.sections_done, total: run.sections_total || "…" });
      button.disabled = true;
      return;
    }
    button.disabled = false;
    if (run.status === "failed") {
      status.textContent = "";
      showError(codeText(run.error_code, run.error_params) || run.error || t("check.failed"));
      return;
    }
    const report = run.report;
    status.textContent = t(report.answered ? "check.done_answered" : "check.done_searched", {
      seconds: report.seconds, k: report.k,
    });
    reportBox.replaceChildren(el("ul", { class: "check-docs" },
      report.documents.map((doc) => documentBlock(doc, report))),
    el("p", { class: "hint check-legend" }, t("check.legend")));
  }

  async function follow(course, id) {
    clearTimeout(timer);
    let run;
    try {
      run = await api.get(`/v1/courses/${enc(course)}/check/${enc(id)}`);
    } catch (err) {
      button.disabled = false;
      showError(err);
      return;
    }
    if (course !== currentCourse()) return;
    render(run);
    if (run.status === "queued" || run.status === "running") {
      timer = setTimeout(() => follow(course, id), POLL_MS);
    }
  }

  async function show(course) {
    clearTimeout(timer);
    showError(null);
    reportBox.replaceChildren();
    status.textContent = "";
    button.disabled = !course;
    if (!course) return;
    try {
      const [run] = listOf(await api.get(`/v1/courses/${enc(course)}/checks`), "checks");
      if (course !== currentCourse()) return;
      if (!run) {
        status.textContent = t("check.none");
        return;
      }
      render(run);
      if (run.status === "queued" || run.status === "running") follow(course, run.id);
    } catch (err) {
      showError(err);
    }
  }

  button.addEventListener("click", async () => {
    const course = currentCourse();
    if (!course) return;
    showError(null);
    button.disabled = true;
    try {
      const run = await api.post(`/v1/courses/${enc(course)}/check`, {});
      render(run);
      follow(course, run.id);
    } catch (err) {
      button.disabled = false;
      showError(err);
    }
  });

  return show;
}
