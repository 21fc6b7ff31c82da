# ruff: noqa: F811 (the browser fixtures of test_web_browser, imported by name, are parameters)
"""LTI in a real headless Chromium: an LMS page (the in-process platform on localhost) frames
the tool (on 127.0.0.1, another site), the login and launch run inside the iframe, and the
student asks a question there; a teacher deep links; bad launches show their refusal; a
learner on a document's link sees what it opens; an admin manages the LMS platforms on the
teacher page; a platform registers the tool by dynamic registration in its frame.
Screenshots go to $SCREENSHOTS_DIR (else a temporary folder). Skipped without Python
Playwright or the system Chromium."""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import jwt
import pytest

from coursetutor.api import create_app
from coursetutor.api.access import mint_key
from coursetutor.config import load_settings
from coursetutor.lti import dynamic, registry, tool_keys
from coursetutor.retrieval import EmbeddingModel
from coursetutor.store import Store
from coursetutor.workspace import Workspace

from .api_support import prepare_data
from .lti_platform import CUSTOM, DEEP, INSTRUCTOR, LEARNER, MESSAGE, FakePlatform, serve
from .support import SAMPLE_COURSE, Sample
from .test_web_browser import _free_port, _page, browser, playwright_api  # noqa: F401

pytestmark = pytest.mark.slow
QUESTION = "How does the bisection method work?"
# A launch is a few round trips through the login, the platform's storage and the launch page:
# on a busy 2-core machine its frame once took longer than 20 s to show its body, so what a
# launch first shows is awaited this long (expect's own default is 5 s).
LAUNCHED_MS = 40_000


class Lms:
    """The platform, the URL of its course page, and the launch its auth endpoint signs."""

    def __init__(self, platform: FakePlatform, url: str, store: Store, shots: Path,
                 tool_url: str = "", secret: bytes = b"") -> None:
        self.platform = platform
        self.shots = shots
        self.url = url
        self.store = store
        self.tool_url = tool_url
        self.secret = secret  # the tool's: it signs registration URLs
        self.make: Callable[[str], str] = self.learner

    def learner(self, nonce: str) -> str:
        return self.platform.sign(self.platform.claims(
            nonce, LEARNER, **{CUSTOM: {"course": SAMPLE_COURSE}}))

    def id_token(self, nonce: str) -> str:
        return self.make(nonce)


@pytest.fixture(scope="module")
def lms(tmp_path_factory: pytest.TempPathFactory, sample: Sample, embedder: EmbeddingModel,
        playwright_api: Any) -> Iterator[Lms]:
    uvicorn = pytest.importorskip("uvicorn")
    data = tmp_path_factory.mktemp("lti-web")
    store = prepare_data(sample, data)
    settings = load_settings(env={}, data_dir=data, llm_backend="none")
    app = create_app(settings, workspace=Workspace(settings, store=store, embedder=embedder))
    tool_port, lms_port = _free_port(), _free_port()
    tool_url = f"http://127.0.0.1:{tool_port}"
    platform = FakePlatform.moodle(f"http://localhost:{lms_port}")
    platform.launch_url = f"{tool_url}/lti/launch"
    platform.tool_jwks = lambda: tool_keys.key_set(store.lti)
    registry.register(store.lti, "default", platform.issuer, platform.client_id,
                      [platform.deployment], platform.jwks_url, platform.auth_url,
                      platform.token_url)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=tool_port,
                                           log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, name="lti-tool", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            pytest.fail("the tool server did not start")
        time.sleep(0.05)
    shots = Path(os.environ.get("SCREENSHOTS_DIR") or tmp_path_factory.mktemp("shots"))
    shots.mkdir(parents=True, exist_ok=True)
    found = Lms(platform, "", store, shots, tool_url, app.state.coursetutor.lti.secret)
    try:
        with serve(platform, lms_port, tool_url, found.id_token) as url:
            found.url = f"{url}/course"
            yield found
    finally:
        server.should_exit = True
        thread.join(15)
        store.close()


def _tool_frame(page: Any) -> Any:
    return page.frame_locator("#tool")


def test_a_student_launched_from_the_lms_asks_inside_its_frame(lms: Lms, browser: Any,
                                                               playwright_api: Any) -> None:
    expect = playwright_api.expect
    lms.make = lms.learner
    with _page(browser) as page:
        page.goto(lms.url)
        frame = _tool_frame(page)
        frame.locator("#key-status").wait_for(state="visible", timeout=LAUNCHED_MS)
        expect(frame.locator("#course-select")).to_have_value(SAMPLE_COURSE)
        tool = page.frame(name="tool")
        assert tool is not None and "lti_key" not in tool.url  # the key left the address
        assert tool.evaluate("sessionStorage.getItem('coursetutor.key.student')").startswith(
            "ct_")
        frame.locator("#question").fill(QUESTION)
        frame.locator("#question").press("Enter")
        turn = frame.locator("[data-testid=turn]").last
        expect(turn).to_have_attribute("data-state", "done", timeout=60_000)
        assert turn.locator("[data-testid=answer]").inner_text().strip()
        page.screenshot(path=str(lms.shots / "01-student-asks-in-the-lms-frame.png"),
                        full_page=True)
    enrolled = lms.store.list_students("default", SAMPLE_COURSE)
    assert any(s.startswith("lti-") and s.endswith("-7") for s in enrolled)


def test_a_teacher_deep_links_a_course_from_the_lms(lms: Lms, browser: Any,
                                                    playwright_api: Any) -> None:
    expect = playwright_api.expect
    back = f"{lms.platform.issuer}/mod/lti/contentitem_return.php?course=2"
    lms.make = lambda nonce: lms.platform.sign(lms.platform.claims(
        nonce, INSTRUCTOR, sub="2", **{MESSAGE: "LtiDeepLinkingRequest", CUSTOM: {},
                                       DEEP: {"deep_link_return_url": back,
                                              "accept_types": ["ltiResourceLink"]}}))
    with _page(browser) as page:
        page.goto(lms.url)
        frame = _tool_frame(page)
        frame.locator(f"input[value='{SAMPLE_COURSE}']").check()
        frame.locator("input[name=grades]").check()
        page.screenshot(path=str(lms.shots / "02-teacher-chooses-the-course.png"))
        frame.locator("#lti-choose").click()
        expect(frame.locator("#added")).to_contain_text("Link added")
        page.screenshot(path=str(lms.shots / "03-deep-link-back-in-the-lms.png"))
    answer = lms.platform.deep_link_answers[-1]
    items = answer["https://purl.imsglobal.org/spec/lti-dl/claim/content_items"]
    assert items[0]["custom"] == {"course": SAMPLE_COURSE, "grades": "mastery"}


def test_an_instructor_launch_opens_the_teacher_page(lms: Lms, browser: Any) -> None:
    lms.make = lambda nonce: lms.platform.sign(lms.platform.claims(
        nonce, INSTRUCTOR, sub="2", **{CUSTOM: {"course": SAMPLE_COURSE}}))
    with _page(browser) as page:
        page.goto(lms.url)
        _tool_frame(page).locator("#key-status").wait_for(state="visible", timeout=LAUNCHED_MS)
        tool = page.frame(name="tool")
        assert tool is not None and urlsplit(tool.url).path == "/teacher"
        page.screenshot(path=str(lms.shots / "04-instructor-on-the-teacher-page.png"))


def _bad(lms: Lms, kind: str) -> Callable[[str], str]:
    p = lms.platform
    course = {CUSTOM: {"course": SAMPLE_COURSE}}
    spoiled: dict[str, Callable[[str], str]] = {
        "expired": lambda n: p.sign({**p.claims(n, **course), "exp": 1_000_000,
                                     "iat": 999_000}),
        "wrong_audience": lambda n: p.sign({**p.claims(n, **course), "aud": "other-tool"}),
        "wrong_deployment": lambda n: p.sign({**p.claims(n, **course), (
            "https://purl.imsglobal.org/spec/lti/claim/deployment_id"): "99"}),
        "unsigned": lambda n: jwt.encode(p.claims(n, **course), key=None, algorithm="none"),
        "bad_signature": lambda n: p.sign(p.claims(n, **course),
                                          key=FakePlatform.moodle().key),
        "learner_on_teacher_link": lambda n: p.sign(p.claims(
            n, LEARNER, **{CUSTOM: {"course": SAMPLE_COURSE, "page": "teacher"}})),
    }
    return spoiled[kind]


@pytest.mark.parametrize("kind", ["expired", "wrong_audience", "wrong_deployment", "unsigned",
                                  "bad_signature", "learner_on_teacher_link"])
def test_a_bad_launch_shows_its_refusal_in_the_frame(lms: Lms, browser: Any, kind: str,
                                                     playwright_api: Any) -> None:
    lms.make = _bad(lms, kind)
    with _page(browser) as page:
        page.goto(lms.url)
        body = _tool_frame(page).locator("body")
        expected = "permission_denied" if kind == "learner_on_teacher_link" else kind
        playwright_api.expect(body).to_contain_text(expected, timeout=LAUNCHED_MS)
        page.screenshot(path=str(lms.shots / f"10-refused-{kind}.png"))


def test_a_learner_on_a_document_link_sees_what_it_opens(lms: Lms, browser: Any,
                                                        playwright_api: Any) -> None:
    document = lms.store.list_documents("default", SAMPLE_COURSE)[0]
    lms.make = lambda nonce: lms.platform.sign(lms.platform.claims(
        nonce, LEARNER, sub="17", **{CUSTOM: {"course": SAMPLE_COURSE,
                                              "document": document.id}}))
    with _page(browser) as page:
        page.goto(lms.url)
        focus = _tool_frame(page).locator("#link-focus")
        playwright_api.expect(focus).to_be_visible(timeout=LAUNCHED_MS)
        playwright_api.expect(focus).to_contain_text(document.title)
        page.screenshot(path=str(lms.shots / "05-learner-on-a-document-link.png"))


def test_an_admin_manages_lms_platforms_on_the_teacher_page(lms: Lms, browser: Any,
                                                           playwright_api: Any) -> None:
    expect = playwright_api.expect
    _, admin = mint_key(lms.store, "default", "admin", name="lms admin")
    with _page(browser) as page:
        page.on("dialog", lambda dialog: dialog.accept())
        page.goto(f"{lms.tool_url}/teacher")
        page.locator("#key-input").fill(admin)
        page.locator("#key-save").click()
        section = page.locator("[data-testid=lms]")
        expect(section).to_be_visible()
        expect(page.locator("[data-testid=lms-platform]")).to_have_count(1)
        expect(page.locator("[data-testid=lms-platform]")).to_contain_text(lms.platform.issuer)
        form = page.locator("#lms-form")
        for name, value in (("issuer", "https://canvas.instructure.com"),
                            ("client_id", "10000000000042"),
                            ("deployment_ids", "6:8865aa05b4b79b64a91a86042e43af5ea8ae79eb"),
                            ("jwks_url", "https://sso.canvaslms.com/api/lti/security/jwks"),
                            ("auth_login_url",
                             "https://sso.canvaslms.com/api/lti/authorize_redirect"),
                            ("token_url", "https://sso.canvaslms.com/login/oauth2/token"),
                            ("frame_origins", "https://school.instructure.com")):
            form.locator(f"[name={name}]").fill(value)
        page.locator("#lms-add").click()
        expect(page.locator("[data-testid=lms-platform]")).to_have_count(2)
        page.locator("#lms-url-make").click()
        expect(page.locator("#lms-url")).to_have_value(
            re.compile(rf"^{re.escape(lms.tool_url)}/lti/register\?tenant_token=."))
        section.screenshot(path=str(lms.shots / "06-admin-lms-platforms.png"))
        canvas = page.locator("[data-testid=lms-platform]", has_text="canvas.instructure")
        canvas.get_by_role("button").click()
        expect(page.locator("[data-testid=lms-platform]")).to_have_count(1)
    assert [p.issuer for p in lms.store.lti.list_platforms("default")] == [lms.platform.issuer]


def test_a_platform_registers_the_tool_dynamically(lms: Lms, browser: Any,
                                                   playwright_api: Any) -> None:
    port = _free_port()
    other = FakePlatform.moodle(f"http://localhost:{port}")
    url = dynamic.registration_url(lms.tool_url, lms.secret, "default")
    with serve(other, port, lms.tool_url, lambda nonce: "") as site, _page(browser) as page:
        page.goto(f"{site}/register-tool?{urlencode({'url': url})}")
        playwright_api.expect(page.locator("#closed")).to_have_text(
            "The tool is registered: window closed", timeout=LAUNCHED_MS)
        playwright_api.expect(_tool_frame(page).locator("h1")).to_have_text(
            "The tutor is registered")
        page.screenshot(path=str(lms.shots / "07-dynamic-registration-done.png"))
    [found] = [p for p in lms.store.lti.list_platforms("default") if p.issuer == other.issuer]
    assert (found.client_id, found.deployment_ids, found.jwks_url) == (
        "tool-client-1", ("1",), f"{other.issuer}/mod/lti/certs.php")


# The browser denies the tool's frame its storage, as with third-party storage blocked:
# sessionStorage and localStorage throw on the tool's site.
BLOCK_STORAGE = """(() => {
  if (location.origin !== %s) return;
  for (const name of ["sessionStorage", "localStorage"]) {
    Object.defineProperty(window, name, { configurable: true, get() {
      throw new DOMException("third-party storage is blocked", "SecurityError"); } });
  }
})();"""


def _reload(page: Any, tool: Any) -> None:
    """Reload the tool's frame as the student's browser would, and wait for it."""
    with page.expect_event("framenavigated", lambda frame: frame.name == "tool"):
        tool.evaluate("() => { setTimeout(() => location.reload(), 0); }")
    tool.wait_for_load_state()


def _ask(frame: Any, expect: Any, asked: int) -> None:
    frame.locator("#question").fill(QUESTION)
    frame.locator("#question").press("Enter")
    turns = frame.locator("[data-testid=turn]")
    expect(turns).to_have_count(asked)
    expect(turns.last).to_have_attribute("data-state", "done", timeout=60_000)


def test_a_reload_in_the_frame_gets_the_key_back_from_the_platforms_storage(
        lms: Lms, browser: Any, playwright_api: Any) -> None:
    expect = playwright_api.expect
    launches: list[str] = []
    lms.make = lambda nonce: launches.append(nonce) or lms.learner(nonce)
    console: list[str] = []
    with _page(browser) as page:
        page.on("console", lambda message: console.append(message.text))
        page.add_init_script(BLOCK_STORAGE % repr(lms.tool_url))
        page.goto(lms.url)
        frame = _tool_frame(page)
        frame.locator("#key-status").wait_for(state="visible", timeout=LAUNCHED_MS)
        tool = page.frame(name="tool")
        assert tool is not None
        assert tool.evaluate("sessionStorage.constructor.name") == "MemoryStorage"
        _ask(frame, expect, 1)
        _reload(page, tool)
        frame.locator("#key-status").wait_for(state="visible", timeout=LAUNCHED_MS)
        expect(frame.locator("#course-select")).to_have_value(SAMPLE_COURSE)
        expect(frame.locator("[data-testid=lti-relaunch]")).to_have_count(0)
        _ask(frame, expect, 1)  # a fresh page, the same key: no new launch
        page.screenshot(path=str(lms.shots / "08-student-asks-after-a-reload.png"),
                        full_page=True)
        messages = page.evaluate("lmsMessages")
        # a message from another site reaches the frame: ignored, logged without its value
        other = page.frame(name="other")
        assert other is not None
        other.evaluate("""() => parent.frames.tool.postMessage({subject: "lti.get_data.response",
            message_id: "forged", key: "coursetutor.launch.x", value: "lti_key=ct_forged"},
            "*")""")
        ignored = ("coursetutor: ignored an LTI message (lti.get_data.response) from "
                   f"http://127.0.0.1:{urlsplit(lms.url).port}")
        page.wait_for_timeout(300)
        expect(frame.locator("#key-status")).to_be_visible()
        assert "lti_key" not in tool.url
    assert len(launches) == 1
    assert [m["subject"] for m in messages] == [
        "lti.capabilities", "lti.put_data", "lti.put_data",  # the login's state and nonce
        "lti.capabilities", "lti.get_data", "lti.get_data",  # found by the launch's page
        "lti.capabilities", "lti.put_data",  # the student page keeps its launch
        "lti.capabilities", "lti.get_data"]  # and reads it back after the reload
    assert len({m["id"] for m in messages}) == len(messages)
    assert {m["origin"] for m in messages} == {lms.tool_url}
    launch_keys = {m["key"] for m in messages if m["key"].startswith("coursetutor.launch.")}
    assert len(launch_keys) == 1
    assert any(ignored in line for line in console), console
    assert not any("ct_" in line for line in console)


def test_without_any_storage_a_reload_says_to_launch_again(lms: Lms, browser: Any,
                                                          playwright_api: Any) -> None:
    expect = playwright_api.expect
    lms.make = lms.learner
    with _page(browser) as page:
        page.add_init_script(BLOCK_STORAGE % repr(lms.tool_url))
        page.goto(f"{lms.url}?storage=none")
        frame = _tool_frame(page)
        frame.locator("#key-status").wait_for(state="visible", timeout=LAUNCHED_MS)
        tool = page.frame(name="tool")
        assert tool is not None
        _reload(page, tool)
        notice = frame.locator("[data-testid=lti-relaunch]")
        expect(notice).to_have_text("This page lost its sign-in when it was reloaded: open the "
                                    "tutor again from your course page in the LMS.")
        expect(frame.locator("#key-form")).to_be_visible()
        page.screenshot(path=str(lms.shots / "09-no-storage-reload-says-relaunch.png"))


def test_a_launch_whose_login_the_storage_does_not_hold_is_refused(
        lms: Lms, browser: Any, playwright_api: Any) -> None:
    expect = playwright_api.expect
    lms.make = lms.learner
    with _page(browser) as page:
        page.goto(f"{lms.url}?storage=forgets")
        unbound = _tool_frame(page).locator("#lti-unbound")
        expect(unbound).to_be_visible(timeout=LAUNCHED_MS)
        expect(unbound).to_contain_text("unbound_state")
        expect(_tool_frame(page).locator("#key-status")).to_have_count(0)
        tool = page.frame(name="tool")
        assert tool is not None and urlsplit(tool.url).path == "/lti/launch"
        page.screenshot(path=str(lms.shots / "10-refused-unbound_state.png"))


def test_a_storage_that_never_answers_leaves_the_login_to_its_signed_state(
        lms: Lms, browser: Any) -> None:
    lms.make = lms.learner
    console: list[str] = []
    with _page(browser) as page:
        page.on("console", lambda message: console.append(message.text))
        page.goto(f"{lms.url}?storage=silent")
        _tool_frame(page).locator("#key-status").wait_for(state="visible", timeout=LAUNCHED_MS)
        tool = page.frame(name="tool")
        assert tool is not None and urlsplit(tool.url).query.startswith("lti_session=")
        assert "lti_storage_target" not in tool.url  # the page keeps its key in the browser
    assert "coursetutor: the platform's storage did not answer (timeout)" in console
    assert "coursetutor: the login goes on with its signed state alone" in console
