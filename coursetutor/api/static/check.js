// The teacher page's course check: start one, follow its progress, show the report with a bar
// chart per document (inline SVG: one bar per section, taller the higher search ranked it).

import { t } from "./i18n.js";
import { ApiError, el, enc, showError as showErrorIn } from "./common.js";

const POLL_MS = 1000;
const SVG = "http://www.w3.org/2000/svg";
const BAR_W = 14;
const GAP = 4;
const HEIGHT = 64;

function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
  for (const child of children) node.append(child);
  return node;
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

/** One bar per section: height from its rank (rank 1 is full), colour from its verdict. */
function chart(doc, k) {
  const width = Math.max(doc.sections.length, 1) * (BAR_W + GAP);
  const summary = t("check.chart_label", {
    title: doc.title, found: percent(doc.found_share), passed: percent(doc.passed_share),
  });
  const root = svg("svg", {
    class: "check-chart", width, height: HEIGHT, viewBox: `0 0 ${width} ${HEIGHT}`,
    role: "img", "aria-label": summary,
  });
  doc.sections.forEach((s, i) => {
    const height = s.found ? Math.round(((k - s.rank + 1) / k) * (HEIGHT - 6)) + 6 : 6;
    const where = s.locator && !s.name.includes(s.locator) ? ` (${s.locator})` : "";
    const rank = s.found ? t("check.rank", { rank: s.rank }) : t("check.not_found");
    const tip = `${s.name}${where}: ${rank}\n${t("check.asked")}: ${s.question}` +
      (s.problems.length ? `\n${s.problems.join("; ")}` : "");
    root.append(svg("rect", {
      x: i * (BAR_W + GAP), y: HEIGHT - height, width: BAR_W, height,
      class: `bar bar-${verdict(s)}`, "data-testid": "check-bar",
    }, svg("title", {}, tip)));
  });
  return root;
}

function pages(doc) {
  const parts = [];
  if (doc.no_text_pages.length) {
    parts.push(t("check.no_text", { pages: doc.no_text_pages.join(", ") }));
  }
  for (const g of doc.garbled_pages) {
    parts.push(t("check.garbled", { page: g.page, reasons: g.reasons.join(", ") }));
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
    el("strong", {}, s.name), ` — ${s.problems.join("; ")} `,
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
      showError(run.error || t("check.failed"));
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
      const run = await api.get(`/v1/courses/${enc(course)}/check`);
      if (course === currentCourse()) {
        render(run);
        if (run.status === "queued" || run.status === "running") follow(course, run.id);
      }
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 404)) showError(err);
      else status.textContent = t("check.none");
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
