"""The student and teacher pages as a person meets them, in a real headless Chromium.

The sample course (ingested once per test session) behind a live server with the model off
(`llm_backend = "none"`), so every screen is reached in seconds: each journey runs at desktop
and phone size in English and Italian and fails on any console error (a failed request, a
policy violation, an exception) or a page wider than the screen. Screenshots of every screen
go to $COURSETUTOR_SCREENSHOTS (default: a pytest temporary folder). Skipped when Python
Playwright or the system Chromium is missing: no browser is ever downloaded.
"""

from __future__ import annotations

import contextlib
import dataclasses
import http.server
import importlib.util
import os
import re
import socket
import threading
import time
import wave
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from coursetutor.api.access import mint_key
from coursetutor.config import load_settings

from .support import SAMPLE_COURSE, TENANT, Sample, copy_db
from .test_web_browser import CHROMIUM_ARGS

pytestmark = pytest.mark.slow

CHROMIUM = Path("/usr/bin/chromium")
STUDENT = "ana"
LISTENER = "ben"  # a second student, who follows the recording: requests of their own
SLIDES = "lecture-02-convergence.pdf"
SLIDE = 5
VIEWPORTS = {"desktop": {"width": 1366, "height": 900}, "phone": {"width": 390, "height": 844}}
LOCALES = {"en": "en-US", "it": "it-IT"}
QUESTIONS = {
    "en": "How does fixed-point iteration x_{n+1} = g(x_n) converge?",
    "it": "Come converge l'iterazione di punto fisso?",
}
# a few of each page's strings, as a person reads them in each language
TEXT = {
    "en": {"ask": "Ask", "profile": "My profile", "saved": "Profile saved.",
           "class_now": f"Now in class: slide {SLIDE}", "signed_out": "Enter your key",
           "teacher_out": "Enter your teacher key",
           "check": "Course check", "whole": "Show the whole passage", "live": "Live class",
           "jobs_none": "No uploads in this page yet",
           "course_exists": f"A course with the id {SAMPLE_COURSE} exists already.",
           "broken": "broken.pdf is not a readable PDF.", "empty": "empty.md is empty.",
           "no_file": "No file could be ingested.", "none_chosen": "No file chosen"},
    "it": {"ask": "Chiedi", "profile": "Il mio profilo", "saved": "Profilo salvato.",
           "class_now": f"Ora in classe: slide {SLIDE}", "signed_out": "Inserisci",
           "teacher_out": "la chiave docente",
           "check": "Verifica del corso", "whole": "Mostra il passaggio intero",
           "live": "Lezione in diretta", "jobs_none": "Ancora nessun caricamento",
           "course_exists": f"Esiste già un corso con l'id {SAMPLE_COURSE}.",
           "broken": "broken.pdf non è un PDF leggibile.", "empty": "empty.md è vuoto.",
           "no_file": "Nessun file è stato importato.", "none_chosen": "Nessun file scelto"},
}
JOURNEYS = [(lang, size) for lang in LOCALES for size in VIEWPORTS]
# the lecture recording the transcript belongs to: silence as long as the lecture, on a host
# of its own as a course's media address is
RECORDING = "lecture-01.wav"
RECORDING_SECONDS = 750
TRANSCRIPT_TITLE = "Lecture 1 (video)"
VIDEO_QUESTION = "Were people using Newton's method thousands of years before Newton?"

OVERFLOW = "() => document.scrollingElement.scrollWidth - window.innerWidth"
# the innermost elements that stick out on the right, to say what made the page too wide
WIDE = """() => {
  const out = (e) => e.getBoundingClientRect().right > window.innerWidth + 0.5;
  return [...document.querySelectorAll("body *")]
    .filter((e) => out(e) && ![...e.children].some(out))
    .slice(0, 5).map((e) => `${e.tagName.toLowerCase()}#${e.id}.${e.className}`);
}"""


@dataclasses.dataclass(frozen=True)
class Server:
    url: str
    teacher_key: str
    student_key: str
    listener_key: str


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the screenshots go: $COURSETUTOR_SCREENSHOTS, else a temporary folder."""
    folder = os.environ.get("COURSETUTOR_SCREENSHOTS")
    path = Path(folder) if folder else tmp_path_factory.mktemp("screenshots")
    path.mkdir(parents=True, exist_ok=True)
    return path


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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class RangedFiles(http.server.SimpleHTTPRequestHandler):
    """A folder's files with byte ranges, as a media host serves them: a player reads the
    header, then seeks with a range."""

    def send_head(self) -> Any:
        match = re.fullmatch(r"bytes=(\d+)-(\d*)", self.headers.get("Range", ""))
        path = Path(self.translate_path(self.path))
        if match is None or not path.is_file():
            return super().send_head()
        size = path.stat().st_size
        start = int(match.group(1))
        end = min(int(match.group(2) or size - 1), size - 1)
        handle = path.open("rb")
        handle.seek(start)
        self.send_response(206)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        self.send_header("Content-Length", str(end - start + 1))
        self.end_headers()
        self.range_left = end - start + 1
        return handle

    def copyfile(self, source: Any, outputfile: Any) -> None:
        left = getattr(self, "range_left", None)
        if left is None:
            super().copyfile(source, outputfile)
            return
        while left > 0:
            block = source.read(min(65536, left))
            if not block:
                break
            outputfile.write(block)
            left -= len(block)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the player's requests are no news."""


@pytest.fixture(scope="module")
def media(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The address of the folder that holds the lecture's recording."""
    folder = tmp_path_factory.mktemp("media")
    with wave.open(str(folder / RECORDING), "wb") as recording:
        recording.setnchannels(1)
        recording.setsampwidth(1)
        recording.setframerate(8000)
        recording.writeframes(b"\x80" * 8000 * RECORDING_SECONDS)

    def handler(*args: Any) -> RangedFiles:
        return RangedFiles(*args, directory=str(folder))

    host = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=host.serve_forever, name="media-host", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{host.server_address[1]}"
    finally:
        host.shutdown()
        host.server_close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, sample: Sample, media: str,
           playwright_api: Any) -> Iterator[Server]:
    """The sample course, the model off, a student enrolled, a class running on slide 5 and
    the transcript linked to its recording."""
    uvicorn = pytest.importorskip("uvicorn")
    from coursetutor.api import create_app

    data_dir = tmp_path_factory.mktemp("pages")
    copy_db(sample.db_path, data_dir / "coursetutor.db")
    settings = load_settings(env={}, data_dir=data_dir, llm_backend="none")
    app = create_app(settings)
    store = app.state.coursetutor.workspace.store
    store.ensure_tenant(TENANT)
    _, teacher_key = mint_key(store, TENANT, "teacher", name="T")
    _, student_key = mint_key(store, TENANT, "student", student=STUDENT, name="S")
    _, listener_key = mint_key(store, TENANT, "student", student=LISTENER, name="L")
    port = _free_port()
    uv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                                       lifespan="on"))
    thread = threading.Thread(target=uv.run, name="pages-test-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not uv.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            pytest.fail("the test server did not start")
        time.sleep(0.05)
    url = f"http://127.0.0.1:{port}"
    teacher = {"Authorization": f"Bearer {teacher_key}"}
    course = f"{url}/v1/courses/{SAMPLE_COURSE}"
    for student in (STUDENT, LISTENER):
        httpx.put(f"{course}/students/{student}", headers=teacher, timeout=120,
                  json={}).raise_for_status()
    # the course files themselves, as a teacher uploads them (the sample's passages are
    # unchanged, so nothing is embedded again): "open the original" has a file to open
    for path, meta in sample.manifest.files:
        fields = {"type": meta.doc_type, "topic": meta.topic}
        if meta.doc_type == "transcript":  # the manifest's title, and its recording
            fields.update(title=meta.title, media_url=f"{media}/{RECORDING}")
        with path.open("rb") as handle:
            job = httpx.post(f"{course}/documents", headers=teacher, timeout=120,
                             files={"files": (path.name, handle)}, data=fields).json()
        while job["status"] not in ("done", "failed"):
            time.sleep(0.2)
            job = httpx.get(f"{url}/v1/jobs/{job['id']}", headers=teacher, timeout=120).json()
        assert job["status"] == "done", job
    documents = httpx.get(f"{course}/documents", headers=teacher, timeout=120).json()["documents"]
    slides = next(d["document"] for d in documents if d["name"] == SLIDES)
    live = httpx.post(f"{course}/classes", headers=teacher, timeout=120,
                      json={"title": "Convergence", "slides": slides})
    assert live.status_code == 201, live.text
    httpx.post(f"{course}/classes/{live.json()['id']}/slide", headers=teacher, timeout=120,
               json={"page": SLIDE}).raise_for_status()
    try:
        yield Server(url, teacher_key, student_key, listener_key)
    finally:
        uv.should_exit = True
        thread.join(15)


class Screens:
    """One journey's page: every console error is kept; `shot` checks the width and saves."""

    def __init__(self, page: Any, folder: Path, name: str) -> None:
        self.page, self.folder, self.name = page, folder, name
        self.errors: list[str] = []
        self.expected: list[str] = []  # failed requests a step provokes on purpose
        self.count = 0
        page.on("console", self._console)
        page.on("pageerror", lambda exc: self.errors.append(str(exc)))

    def _console(self, message: Any) -> None:
        if message.type != "error":
            return
        for i, text in enumerate(self.expected):
            if text in message.text:
                del self.expected[i]
                return
        self.errors.append(message.text)

    def expect_refusal(self, status: int) -> None:
        """The next request the page sends is refused with `status`, on purpose: the browser's
        own console line about it is no error of the page."""
        self.expected.append(f"status of {status}")

    def shot(self, screen: str, at: str = "", full: bool = True) -> None:
        """Check and save this screen: the whole page, the part from `at` (a selector), or
        (not `full`) what the screen shows."""
        if at:
            self.page.locator(at).first.evaluate("(e) => e.scrollIntoView({block: 'start'})")
        self.page.wait_for_timeout(150)  # fonts and formulas settle
        wider = self.page.evaluate(OVERFLOW)
        self.count += 1
        self.page.screenshot(path=str(self.folder / f"{self.name}-{self.count:02d}-{screen}.png"),
                             full_page=full and not at)
        assert wider <= 0, (f"{self.name} {screen}: the page is {wider}px wider than the screen: "
                            f"{self.page.evaluate(WIDE)}")
        assert not self.errors, f"{self.name} {screen}: console errors {self.errors}"


@contextlib.contextmanager
def _journey(browser: Any, shots: Path, page_name: str, lang: str,
             size: str) -> Iterator[Screens]:
    context = browser.new_context(locale=LOCALES[lang], viewport=VIEWPORTS[size])
    context.set_default_timeout(20_000)
    try:
        yield Screens(context.new_page(), shots, f"{page_name}-{lang}-{size}")
    finally:
        context.close()


def _sign_in(page: Any, key: str) -> None:
    page.fill("#key-input", key)
    page.click("#key-save")
    page.locator("#key-status").wait_for(state="visible")


@pytest.mark.parametrize(("lang", "size"), JOURNEYS)
def test_student_journey(browser: Any, server: Server, shots: Path, lang: str, size: str,
                         playwright_api: Any) -> None:
    expect = playwright_api.expect
    text = TEXT[lang]
    with _journey(browser, shots, "student", lang, size) as screens:
        page = screens.page
        page.goto(server.url + "/")
        expect(page.locator("html")).to_have_attribute("lang", lang)
        expect(page.locator("#course-select")).to_contain_text(text["signed_out"])
        expect(page.locator("#sessions")).to_contain_text(text["signed_out"])
        screens.shot("signed-out")

        _sign_in(page, server.student_key)
        expect(page.locator("#course-select")).to_have_value(SAMPLE_COURSE)
        expect(page.locator("#class-now")).to_contain_text(text["class_now"], timeout=10_000)
        expect(page.locator("#ask-submit")).to_have_text(text["ask"])
        if size == "phone":  # the question box is on the first screen
            box = page.locator("#question").bounding_box()
            assert box is not None and box["y"] + box["height"] <= VIEWPORTS[size]["height"], box
        screens.shot("signed-in")

        page.fill("#question", QUESTIONS[lang])
        page.click("#ask-submit")
        turn = page.locator("[data-testid=turn]").last
        expect(turn).to_have_attribute("data-state", "done", timeout=30_000)
        # the model is off: a sentence for the student, the passages inline, readable labels
        answer = turn.locator("[data-testid=answer]").inner_text()
        assert "llm_backend" not in answer
        links = turn.locator("[data-testid=source-link]")
        assert links.count() >= 1
        labels = links.all_inner_texts()
        assert not any("#" in label for label in labels), labels
        assert len(set(labels)) == len(labels), f"duplicate sources: {labels}"
        assert turn.locator("[data-testid=source-excerpt]").count() >= 1
        screens.shot("answer")

        links.first.click()
        panel = page.locator("[data-testid=source-panel]")
        expect(panel).to_be_visible()
        whole = panel.locator("[data-testid=panel-whole]").first
        expect(whole).to_have_text(text["whole"])
        whole.click()
        expect(panel.locator("[data-testid=panel-snippet][data-whole=true]")).to_have_count(1)
        original = panel.locator("button[data-testid=panel-open-file]")
        if original.count():  # Markdown or a transcript: shown at the cited place
            original.click()
            expect(panel.locator("[data-testid=panel-original] .cited")).to_have_count(1)
        screens.shot("source", full=False)
        page.keyboard.press("Escape")
        expect(panel).to_be_hidden()

        session = page.locator("[data-testid=session]").first
        expect(session.locator(".session-title")).to_have_text(QUESTIONS[lang])
        page.locator("#profile summary").click()
        expect(page.locator("#profile summary")).to_have_text(text["profile"])
        page.locator("[data-testid=profile-save]").click()
        expect(page.locator("#profile-status")).to_have_text(text["saved"])
        screens.shot("profile")


@pytest.mark.parametrize(("lang", "size"), JOURNEYS)
def test_teacher_journey(browser: Any, server: Server, shots: Path, lang: str, size: str,
                         playwright_api: Any) -> None:
    expect = playwright_api.expect
    text = TEXT[lang]
    with _journey(browser, shots, "teacher", lang, size) as screens:
        page = screens.page
        page.goto(server.url + "/teacher")
        expect(page.locator("#courses")).to_contain_text(text["teacher_out"])
        screens.shot("signed-out")

        _sign_in(page, server.teacher_key)
        expect(page.locator("#manage-course")).to_have_value(SAMPLE_COURSE)
        expect(page.locator("[data-testid=document]").first).to_be_visible()
        expect(page.locator("[data-testid=jobs-empty]")).to_contain_text(text["jobs_none"])
        expect(page.locator("#live-heading")).to_have_text(text["live"])
        expect(page.locator("[data-testid=live-state]")).to_contain_text(str(SLIDE))
        expect(page.locator("#check-heading")).to_have_text(text["check"])
        # the file input in the page's language, not the browser's
        expect(page.locator("[data-testid=upload-files-chosen]")).to_have_text(
            text["none_chosen"])
        screens.shot("courses", at="#courses-heading")
        screens.shot("documents", at="#docs-heading")
        screens.shot("live", at="#students-heading")

        # a refusal in the page's words: the course id is taken
        screens.expect_refusal(409)
        page.fill("#course-id", SAMPLE_COURSE)
        page.fill("#course-title", "Again")
        page.click("#course-create")
        refused = page.locator("#course-error")
        expect(refused).to_have_text(text["course_exists"])
        expect(refused).to_have_attribute("data-code", "course_exists")
        screens.shot("error", at="#course-form")

        # an upload whose every file fails: each report line and the job in the page's words
        page.set_input_files("#upload-files", [
            {"name": "broken.pdf", "mimeType": "application/pdf", "buffer": b"%PDF-1.4 torn"},
            {"name": "empty.md", "mimeType": "text/markdown", "buffer": b""}])
        page.click("#upload-submit")
        job = page.locator("[data-testid=job]").first
        expect(job).to_have_attribute("data-status", "failed", timeout=60_000)
        expect(job.locator("[data-testid=report-notes]")).to_have_text(
            [text["broken"], text["empty"]])
        expect(job.locator("[data-testid=job-details]")).to_contain_text(text["no_file"])
        screens.shot("upload-report", at="[data-testid=job]")

        page.click("#check-run")
        bars = page.locator("[data-testid=check-bar]")
        expect(bars.first).to_be_visible(timeout=60_000)
        assert bars.first.locator(".check-name").inner_text().strip()  # labelled, not on hover
        screens.shot("check", at="#check-heading")

        expect(page.locator("#class-view h4").first).to_be_visible()
        screens.shot("class", at="#class-heading")


def _clock(seconds: int) -> str:
    return f"{seconds // 60:02d}:{seconds % 60:02d}"


@pytest.mark.parametrize(("lang", "size"), [("en", "desktop"), ("it", "phone")])
def test_a_transcript_source_opens_the_recording_at_its_second(
        browser: Any, server: Server, media: str, shots: Path, lang: str, size: str,
        playwright_api: Any) -> None:
    expect = playwright_api.expect
    with _journey(browser, shots, "recording", lang, size) as screens:
        page = screens.page
        page.goto(server.url + "/")
        _sign_in(page, server.listener_key)
        expect(page.locator("#course-select")).to_have_value(SAMPLE_COURSE)
        page.fill("#question", VIDEO_QUESTION)
        page.click("#ask-submit")
        turn = page.locator("[data-testid=turn]").last
        expect(turn).to_have_attribute("data-state", "done", timeout=30_000)
        link = turn.locator("[data-testid=source-link]", has_text=TRANSCRIPT_TITLE).first
        label = link.inner_text()
        link.click()
        panel = page.locator("[data-testid=source-panel]")
        player = panel.locator("[data-testid=source-media]")
        expect(player).to_have_count(1)
        src = player.get_attribute("src")
        address, _, fragment = src.partition("#t=")
        assert address == f"{media}/{RECORDING}"
        second = int(fragment)
        assert 0 < second < RECORDING_SECONDS and _clock(second) in label, (second, label)
        expect(panel.locator("[data-testid=panel-media]")).to_have_attribute("href", src)
        # the player itself stands at that second once it has read the recording's header
        page.wait_for_function(
            """(second) => {
              const player = document.querySelector("[data-testid=source-media]");
              return player.readyState >= 1 && Math.abs(player.currentTime - second) < 0.5;
            }""", arg=second)
        screens.shot("recording", full=False)


# course text as the page renders it: Markdown, formulas, and markup that must stay text
RENDER = """async (text) => {
  const { showText } = await import("/static/sources.js");
  const box = document.createElement("div");
  document.body.append(box);
  showText(box, text);
  return { html: box.innerHTML, text: box.textContent,
           katex: box.querySelectorAll(".katex").length,
           strong: [...box.querySelectorAll("strong")].map((n) => n.textContent),
           items: box.querySelectorAll("li").length,
           scripts: box.querySelectorAll("script, img, iframe").length };
}"""


def test_course_text_renders_markdown_and_formulas_safely(browser: Any, server: Server,
                                                          shots: Path) -> None:
    text = ("## Fixed points\n\nThe iteration $x_{n+1} = g(x_n)$ converges when **|g'| < 1**:"
            "\n\n- first\n- second\n\n$$\\sum_{k=0}^{n} L^k$$\n\n"
            "<script>alert(1)</script><img src=x onerror=alert(2)>")
    with _journey(browser, shots, "render", "en", "desktop") as screens:
        screens.page.goto(server.url + "/")
        shown = screens.page.evaluate(RENDER, text)
        screens.shot("markdown")
    assert shown["katex"] == 2
    assert shown["strong"] == ["|g'| < 1"]
    assert shown["items"] == 2
    assert shown["scripts"] == 0
    assert "<script>alert(1)</script><img src=x onerror=alert(2)>" in shown["text"]
