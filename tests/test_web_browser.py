"""The student and teacher pages in a real headless Chromium, against a live server.

One server per module (uvicorn on a free port, the small SmolLM2 model answering); the
teacher page builds the course once, then the student page asks in it. Skipped when Python
Playwright or the system Chromium is missing: no browser is ever downloaded.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import re
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from coursetutor.api.access import mint_key
from coursetutor.config import load_settings

from .support import SAMPLE_DIR, TENANT

pytestmark = pytest.mark.slow

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]
COURSE = "numerics-web"
STUDENT = "ana"
# one upload per document type, as a teacher would do it in the page
UPLOADS = [
    ("lecture", ["lecture-01-root-finding.md", "lecture-02-convergence.pdf"]),
    ("transcript", ["lecture-01-video.srt"]),
    ("exercise", ["exercises-01.md"]),
]
# only lecture-02-convergence.pdf covers the contraction mapping theorem, on its page 2
PDF_QUESTION = "What does the contraction mapping theorem say about fixed-point iteration?"
OFF_COURSE = "Who won the 2018 football world cup?"
INGEST_TIMEOUT_MS = 120_000
ANSWER_TIMEOUT_MS = 90_000

# the length of the streaming answer's text each time the page changes it
RECORD_LENGTHS = """() => {
  window.__lengths = [];
  const conversation = document.getElementById("conversation");
  new MutationObserver(() => {
    const answers = conversation.querySelectorAll("[data-testid=answer]");
    const answer = answers[answers.length - 1];
    if (answer && answer.getAttribute("aria-busy") === "true") {
      window.__lengths.push(answer.textContent.length);
    }
  }).observe(conversation, {subtree: true, childList: true, characterData: true});
}"""


@dataclasses.dataclass(frozen=True)
class Server:
    url: str
    teacher_key: str
    student_key: str


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def playwright_api() -> Any:
    if importlib.util.find_spec("playwright") is None:
        pytest.skip("Python Playwright is not installed")
    if not CHROMIUM.is_file():
        pytest.skip(f"no system Chromium at {CHROMIUM}")
    from playwright import sync_api

    return sync_api


@pytest.fixture(scope="module")
def browser(playwright_api: Any) -> Iterator[Any]:
    with playwright_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, smollm_path: Path,
           playwright_api: Any) -> Iterator[Server]:
    uvicorn = pytest.importorskip("uvicorn")
    from coursetutor.api import create_app

    # short prompts and replies keep the small model quick on a busy CPU; prose answers
    # stream token by token, which the page's streaming is checked on (statements arrive one
    # checked statement at a time, and the small model's one quote in a single piece)
    settings = load_settings(env={}, data_dir=tmp_path_factory.mktemp("web"),
                             llm_model=str(smollm_path), llm_max_tokens=48,
                             context_budget_tokens=600, llm_context_tokens=2048,
                             answer_style="prose")
    app = create_app(settings)
    store = app.state.coursetutor.workspace.store
    store.ensure_tenant(TENANT)
    _, teacher_key = mint_key(store, TENANT, "teacher", name="T")
    _, student_key = mint_key(store, TENANT, "student", student=STUDENT, name="S")
    port = _free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                            lifespan="on")
    uv = uvicorn.Server(config)
    thread = threading.Thread(target=uv.run, name="web-test-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not uv.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            pytest.fail("the test server did not start")
        time.sleep(0.05)
    try:
        yield Server(f"http://127.0.0.1:{port}", teacher_key, student_key)
    finally:
        uv.should_exit = True
        thread.join(15)


@contextlib.contextmanager
def _page(browser: Any, locale: str = "en-US",
          viewport: dict[str, int] | None = None) -> Iterator[Any]:
    context = browser.new_context(locale=locale, viewport=viewport or
                                  {"width": 1280, "height": 900})
    context.set_default_timeout(20_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        yield page
    finally:
        context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


def _sign_in(page: Any, key: str) -> None:
    page.fill("#key-input", key)
    page.click("#key-save")
    page.locator("#key-status").wait_for(state="visible")


@pytest.fixture(scope="module")
def course(browser: Any, server: Server, playwright_api: Any) -> str:
    """The teacher page creates the course, uploads the sample files and enrols the student."""
    expect = playwright_api.expect
    with _page(browser) as page:
        page.goto(server.url + "/teacher")
        _sign_in(page, server.teacher_key)
        expect(page.locator("#key-who")).to_contain_text("teacher")

        page.fill("#course-id", COURSE)
        page.fill("#course-title", "Numerical Methods (web)")
        page.click("#course-create")
        expect(page.locator(f"[data-testid=course][data-course={COURSE}]")).to_be_visible()
        expect(page.locator("#manage-course")).to_have_value(COURSE)

        jobs = page.locator("[data-testid=job]")
        for i, (doc_type, names) in enumerate(UPLOADS):
            page.set_input_files("#upload-files", [str(SAMPLE_DIR / n) for n in names])
            page.select_option("#upload-type", doc_type)
            page.click("#upload-submit")
            expect(jobs).to_have_count(i + 1)
            # the progress display names the files and counts them
            expect(jobs.first).to_contain_text(names[0])
            expect(jobs.first.locator("[data-testid=job-details]")).to_contain_text(
                f"of {len(names)}")
        for i in range(len(UPLOADS)):
            expect(jobs.nth(i)).to_have_attribute("data-status", "done",
                                                  timeout=INGEST_TIMEOUT_MS)
        # every upload ends with its per-file report; nothing failed
        rows = page.locator("[data-testid=report-row]")
        expect(rows).to_have_count(sum(len(names) for _, names in UPLOADS))
        assert page.locator("[data-testid=report-row][data-status=failed]").count() == 0
        lecture_job = jobs.nth(len(UPLOADS) - 1)  # newest first
        expect(lecture_job.locator("[data-testid=report-summary]")).to_contain_text(
            "2 of 2 files ingested")
        expect(lecture_job.locator("[data-testid=job-status]")).to_have_text("Done")

        documents = page.locator("[data-testid=document]")
        expect(documents).to_have_count(4)
        pdf_row = documents.filter(has_text="lecture-02-convergence.pdf")
        expect(pdf_row).to_have_count(1)
        expect(pdf_row.locator("td").nth(1)).to_have_text("6")  # pages

        page.fill("#student-id", STUDENT)
        page.click("#enrol-submit")
        expect(page.locator(f"[data-testid=student][data-student={STUDENT}]")).to_be_visible()
    return COURSE


def test_student_answer_streams_and_cites_the_pdf_page(browser: Any, server: Server,
                                                       course: str,
                                                       playwright_api: Any) -> None:
    expect = playwright_api.expect
    with _page(browser) as page:
        page.goto(server.url + "/")
        expect(page.locator("html")).to_have_attribute("lang", "en")
        _sign_in(page, server.student_key)
        expect(page.locator("#course-select")).to_have_value(course)
        # the key stays in this browser: a reload signs in again without asking
        page.reload()
        page.locator("#key-status").wait_for(state="visible")
        expect(page.locator("#course-select")).to_have_value(course)

        page.evaluate(RECORD_LENGTHS)
        page.fill("#question", PDF_QUESTION)
        page.press("#question", "Enter")  # the keyboard sends the question
        turn = page.locator("[data-testid=turn]").last
        expect(turn).to_have_attribute("data-state", "done", timeout=ANSWER_TIMEOUT_MS)

        answer = turn.locator("[data-testid=answer]")
        expect(answer).to_have_attribute("aria-live", "polite")
        expect(answer).to_have_attribute("aria-busy", "false")
        assert answer.inner_text().strip()
        lengths = page.evaluate("window.__lengths")
        grew = sorted({n for n in lengths if n > 0})
        assert len(grew) >= 2, f"the answer did not stream in pieces: {lengths}"
        assert turn.locator("[data-testid=not-covered]").count() == 0
        assert turn.locator("[data-testid=error]").is_hidden()

        # a numbered source on the PDF's page, opened from the text's [n] when it is there
        sources = turn.locator("[data-testid=source-link]")
        assert sources.count() >= 1
        # (which of the PDF's pages the small model's reply cites varies with its wording)
        on_page = sources.filter(has_text="Convergence").filter(has_text="p. ")
        assert on_page.count() >= 1, f"no citation of a PDF page: {sources.all_inner_texts()}"
        cited_page = re.findall(r"p\. (\d+)", on_page.first.inner_text())[-1]
        number = on_page.first.get_attribute("data-n")
        inline = turn.locator(f"[data-testid=citation][data-n='{number}']")
        opener = inline.first if inline.count() else on_page.first
        opener.click()

        panel = page.locator("[data-testid=source-panel]")
        expect(panel).to_be_visible()
        frame = panel.locator("[data-testid=source-frame]")
        expect(frame).to_have_count(1)
        src = frame.get_attribute("src") or ""
        assert "/v1/documents/" in src and src.endswith(f"#page={cited_page}"), src
        # a signed URL: it opens without the key
        reply = httpx.get(server.url + src.split("#")[0], timeout=30)
        assert reply.status_code == 200
        assert reply.headers["content-type"].startswith("application/pdf")
        assert reply.content.startswith(b"%PDF")

        # on a phone the panel covers the screen; Escape closes it and focus goes back
        page.set_viewport_size({"width": 390, "height": 800})
        box = panel.bounding_box()
        assert box is not None and box["width"] >= 385, box
        page.keyboard.press("Escape")
        expect(panel).to_be_hidden()
        expect(opener).to_be_focused()

        # the session is listed and opens with its turn
        sessions = page.locator("[data-testid=session]")
        expect(sessions).to_have_count(1)
        page.click("#new-session")
        expect(page.locator("[data-testid=turn]")).to_have_count(0)
        sessions.first.click()
        expect(page.locator("[data-testid=turn]")).to_have_count(1)
        expect(page.locator("[data-testid=question-text]")).to_have_text(PDF_QUESTION)


def test_italian_page_and_not_covered_notice(browser: Any, server: Server, course: str,
                                             playwright_api: Any) -> None:
    expect = playwright_api.expect
    with _page(browser, locale="it-IT") as page:
        page.goto(server.url + "/")
        expect(page.locator("html")).to_have_attribute("lang", "it")
        expect(page.locator("label[for=question]")).to_have_text("La tua domanda")
        expect(page.locator("#ask-submit")).to_have_text("Chiedi")
        _sign_in(page, server.student_key)
        expect(page.locator("#course-select")).to_have_value(course)

        page.fill("#question", OFF_COURSE)
        page.click("#ask-submit")
        turn = page.locator("[data-testid=turn]").last
        expect(turn).to_have_attribute("data-state", "not-covered", timeout=ANSWER_TIMEOUT_MS)
        notice = turn.locator("[data-testid=not-covered]")
        expect(notice).to_be_visible()
        expect(notice).to_contain_text("Non trattato nel materiale del corso")
        assert turn.locator("[data-testid=source-link]").count() == 0

        # the key lives in this tab only, never on disk
        assert page.evaluate("sessionStorage.getItem('coursetutor.key.student')")
        assert page.evaluate("localStorage.getItem('coursetutor.key.student')") is None
        # forgetting the key clears it from the browser and asks for it again
        page.click("#key-forget")
        expect(page.locator("#key-form")).to_be_visible()
        assert page.evaluate("localStorage.getItem('coursetutor.key.student')") is None
        assert page.evaluate("sessionStorage.getItem('coursetutor.key.student')") is None


@pytest.fixture(scope="module")
def static_site() -> Iterator[str]:
    """The page's static files alone, over HTTP (modules do not load from file://)."""
    import functools
    import http.server

    from coursetutor.api.app import STATIC

    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(STATIC))
    handler.log_message = lambda *args: None  # type: ignore[attr-defined]
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, name="static-site", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        thread.join(5)


# the citations answer.js renders: [the text of each button, the text between]
RENDER = """async ([text, markers]) => {
  const { renderAnswer } = await import("/answer.js");
  const box = document.createElement("p");
  const cite = (n) => Object.assign(document.createElement("button"), { textContent: String(n) });
  renderAnswer(box, text, [{ number: 1 }, { number: 2 }], markers, cite);
  return { buttons: [...box.querySelectorAll("button")].map((b) => b.textContent),
           code: [...box.querySelectorAll("code")].map((c) => c.textContent),
           text: box.textContent };
}"""


def test_the_page_shows_as_citations_only_the_brackets_the_tutor_counted(
        browser: Any, static_site: str) -> None:
    from coursetutor.tutor.markers import content_brackets, marker_spans

    # the source writes the interval "[1, 2]"; the reply cites source 2, quotes the interval,
    # and writes a formula and code with brackets; a character beyond U+FFFF comes first
    text = "𝑥 lies in [1, 2] [2], as $[1, 2]$ and `a[1]` say [1]."
    markers = [list(s) for s in marker_spans(text, content_brackets(["x in [1, 2]"]))]
    with _page(browser) as page:
        page.goto(static_site + "/answer.js")  # an empty page of the same origin
        shown = page.evaluate(RENDER, [text, markers])
        fallback = page.evaluate(RENDER, [text, None])
    assert shown == {"buttons": ["2", "1"], "code": ["a[1]"],
                     "text": text.replace("`", "")}
    # without the server's markers the tutor's rule still skips formulas and code
    assert fallback["buttons"] == ["1", "2", "2", "1"]
