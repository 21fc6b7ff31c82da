"""LTI 1.3 as platforms drive it: registration, the OIDC login and the launch (Moodle's and
Canvas's example launches, signed by an in-process platform), every bad launch refused with
its reason and nothing changed, deep linking, the roster and the grade book."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import jwt
import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from coursetutor.api import create_app
from coursetutor.api.access import mint_key
from coursetutor.cli import cli
from coursetutor.config import load_settings
from coursetutor.lti import tool_keys
from coursetutor.lti.keyset import KeySets
from coursetutor.lti.tool import LtiTool
from coursetutor.store import Store
from coursetutor.types import Document

from .lti_platform import (
    CUSTOM,
    DEEP,
    INSTRUCTOR,
    LEARNER,
    MESSAGE,
    FakePlatform,
)

T, T_B = "default", "uni-b"
COURSE, COURSE_B = "numerics", "b-course"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@dataclasses.dataclass
class Lms:
    """The tool's app, its store, admin keys, and the platforms that call it."""

    client: TestClient
    store: Store
    admin: str
    admin_b: str
    moodle: FakePlatform
    canvas: FakePlatform
    tool: LtiTool
    clock: Clock
    platform_ids: dict[str, str] = dataclasses.field(default_factory=dict)

    def h(self, key: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {key}"}

    def register(self, platform: FakePlatform, key: str | None = None) -> str:
        reply = self.client.post("/v1/lti/platforms", json=platform.registration,
                                 headers=self.h(key or self.admin))
        assert reply.status_code == 201, reply.text
        return str(reply.json()["id"])

    def login(self, platform: FakePlatform) -> dict[str, str]:
        """The login initiation; the query the tool sends the browser to the platform with."""
        reply = self.client.get("/lti/login", params=platform.login_params(),
                                follow_redirects=False)
        assert reply.status_code == 302, reply.text
        location = reply.headers["location"]
        assert location.startswith(platform.auth_url + "?")
        return {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}

    def launch(self, platform: FakePlatform, role: str = LEARNER, token: str | None = None,
               **changes: Any) -> httpx.Response:
        auth = self.login(platform)
        if token is None:
            token = platform.sign(platform.claims(auth["nonce"], role, **changes))
        return self.client.post("/lti/launch", data={"id_token": token, "state": auth["state"]},
                                follow_redirects=False)

    def opened(self, reply: httpx.Response) -> tuple[str, dict[str, str]]:
        """The page a launch opened and its fragment's fields."""
        assert reply.status_code == 303, reply.text
        page, _, fragment = reply.headers["location"].partition("#")
        return page, {k: v[0] for k, v in parse_qs(fragment).items()}


@contextmanager
def open_lms(tmp_path: Path) -> Iterator[Lms]:
    """The tool's app over a store in `tmp_path`, with a Moodle and a Canvas that reach it."""
    settings = load_settings(env={}, data_dir=tmp_path, llm_backend="none")
    app = create_app(settings)
    state = app.state.coursetutor
    store = state.workspace.store
    for tenant, course in ((T, COURSE), (T, "algebra"), (T_B, COURSE_B)):
        store.ensure_tenant(tenant)
        store.ensure_course(tenant, course, course.title(), "en")
    _, admin = mint_key(store, T, "admin", name="root")
    _, admin_b = mint_key(store, T_B, "admin", name="root b")
    moodle, canvas = FakePlatform.moodle(), FakePlatform.canvas()
    for platform in (moodle, canvas):
        platform.tool_jwks = lambda: tool_keys.key_set(store.lti)

    def route(request: httpx.Request) -> httpx.Response:
        owner = moodle if request.url.host == "moodle.example.edu" else canvas
        return owner.handle(request)

    clock = Clock()
    tool = LtiTool(store, state.lti.secret, httpx.Client(transport=httpx.MockTransport(route)))
    tool.keys = KeySets(tool.http, refresh=300, max_age=3600, clock=clock)
    state.lti.close()
    state.lti = tool
    with TestClient(app) as client:
        yield Lms(client, store, admin, admin_b, moodle, canvas, tool, clock)


@pytest.fixture
def lms(tmp_path: Path) -> Iterator[Lms]:
    with open_lms(tmp_path) as found:
        yield found


@pytest.fixture
def registered(lms: Lms) -> Lms:
    lms.platform_ids = {"moodle": lms.register(lms.moodle), "canvas": lms.register(lms.canvas)}
    return lms


# -- registration ---------------------------------------------------------------------------

def test_an_admin_registers_and_lists_platforms(lms: Lms) -> None:
    pid = lms.register(lms.moodle)
    listed = lms.client.get("/v1/lti/platforms", headers=lms.h(lms.admin)).json()["platforms"]
    assert [(p["id"], p["issuer"], p["client_id"], p["deployment_ids"], p["frame_origins"])
            for p in listed] == [(pid, "https://moodle.example.edu", "tool-client-1", ["1"],
                                  ["https://moodle.example.edu"])]
    assert lms.client.get("/v1/lti/platforms", headers=lms.h(lms.admin_b)).json() == {
        "platforms": []}  # another tenant sees none of them
    _, teacher = mint_key(lms.store, T, "teacher")
    refused = lms.client.post("/v1/lti/platforms", json=lms.canvas.registration,
                              headers=lms.h(teacher))
    assert refused.status_code == 403
    again = lms.client.post("/v1/lti/platforms", json=lms.moodle.registration,
                            headers=lms.h(lms.admin_b))
    assert again.status_code == 409  # an issuer and client id name one tenant's platform
    bad = lms.client.post("/v1/lti/platforms", headers=lms.h(lms.admin),
                          json={**lms.canvas.registration, "jwks_url": "http://lms.example/k"})
    assert bad.status_code == 400 and "https://" in bad.json()["error"]["message"]


def test_the_pages_may_be_framed_by_registered_platforms_only(lms: Lms) -> None:
    before = lms.client.get("/")
    assert "frame-ancestors 'self'\"" not in before.headers["content-security-policy"]
    assert before.headers["content-security-policy"].endswith("frame-ancestors 'self'")
    assert before.headers["x-frame-options"] == "SAMEORIGIN"
    lms.register(lms.moodle)
    for page in ("/", "/teacher"):
        after = lms.client.get(page)
        assert after.headers["content-security-policy"].endswith(
            "frame-ancestors 'self' https://moodle.example.edu")
        assert "x-frame-options" not in after.headers
    api = lms.client.get("/healthz")  # not a page: framed by this server only
    assert api.headers["content-security-policy"].endswith("frame-ancestors 'self'")


# -- launches -------------------------------------------------------------------------------

def test_a_moodle_learner_launch_opens_the_student_page_enrolled(registered: Lms) -> None:
    lms = registered
    page, fields = lms.opened(lms.launch(lms.moodle))
    student = f"lti-{lms.platform_ids['moodle']}-7"
    assert page == "/" and fields["course"] == COURSE
    me = lms.client.get("/v1/me", headers=lms.h(fields["lti_key"])).json()
    assert (me["role"], me["tenant"], me["student"], me["courses"]) == (
        "student", T, student, [COURSE])
    key = next(k for k in lms.store.list_keys(T) if k.student == student)
    assert key.expires is not None and 7000 < key.expires - key.created <= 7200
    assert lms.store.lti.user_sub(T, lms.platform_ids["moodle"], student) == "7"
    link = lms.store.lti.find_link(lms.platform_ids["moodle"], "2", "3")
    assert link is not None and (link.course, link.lineitem_url, link.memberships_url) == (
        COURSE, "https://moodle.example.edu/mod/lti/services.php/2/lineitems/9/lineitem"
        "?type_id=1", "https://moodle.example.edu/mod/lti/services.php/CourseSection/2/"
        "bindings/1/memberships")


def test_a_canvas_instructor_launch_opens_the_teacher_page(registered: Lms) -> None:
    lms = registered
    page, fields = lms.opened(lms.launch(lms.canvas, INSTRUCTOR))
    assert (page, fields.get("course", "")) == ("/teacher", "")  # no course linked yet
    me = lms.client.get("/v1/me", headers=lms.h(fields["lti_key"])).json()
    assert (me["role"], me["tenant"], me["student"]) == ("teacher", T, "")
    linked = lms.client.put(f"/v1/lti/platforms/{lms.platform_ids['canvas']}/links",
                            headers=lms.h(fields["lti_key"]),
                            json={"context": "4dde05e8ca1973bcca9bffc13e1548820eee93a3",
                                  "course": COURSE})
    assert linked.status_code == 200, linked.text
    _, student = lms.opened(lms.launch(lms.canvas, LEARNER))
    assert student["course"] == COURSE  # the LMS course now opens the linked course
    me = lms.client.get("/v1/me", headers=lms.h(student["lti_key"])).json()
    assert me["student"] == (f"lti-{lms.platform_ids['canvas']}-"
                             "535fa085f22b4655f48cd5a36a9215f64c062838")


def _unsigned(lms: Lms, nonce: str) -> str:
    return jwt.encode(lms.moodle.claims(nonce), key=None, algorithm="none")


BAD_LAUNCHES: dict[str, tuple[str, Any]] = {
    # name: (reason, how the launch is spoiled: claims changes, or a function of (lms, nonce))
    "unsigned": ("unsigned", _unsigned),
    "expired": ("expired", {"exp": 1_000_000, "iat": 999_000}),
    "wrong audience": ("wrong_audience", {"aud": "someone-else"}),
    "several audiences without azp": ("wrong_audience", {"aud": ["tool-client-1", "x"]}),
    "wrong deployment": ("wrong_deployment",
                         {"https://purl.imsglobal.org/spec/lti/claim/deployment_id": "99"}),
    "another issuer": ("unknown_issuer", {"iss": "https://evil.example"}),
    "wrong nonce": ("wrong_nonce", {"nonce": "not-the-login-nonce"}),
    "signed by another key": ("bad_signature", lambda lms, nonce: lms.moodle.sign(
        lms.moodle.claims(nonce), key=FakePlatform.moodle().key)),
}


@pytest.mark.parametrize("name", sorted(BAD_LAUNCHES))
def test_a_bad_launch_is_refused_with_its_reason_and_changes_nothing(
        registered: Lms, name: str, caplog: pytest.LogCaptureFixture) -> None:
    lms = registered
    reason, spoil = BAD_LAUNCHES[name]
    auth = lms.login(lms.moodle)
    nonce = auth["nonce"]
    token = spoil(lms, nonce) if callable(spoil) else lms.moodle.sign(
        {**lms.moodle.claims(nonce), **spoil})
    keys_before = len(lms.store.list_keys(T))
    with caplog.at_level(logging.WARNING, logger="coursetutor.lti"):
        reply = lms.client.post("/lti/launch", data={"id_token": token, "state": auth["state"]})
    assert reply.status_code == 401, reply.text
    error = reply.json()["error"]
    assert (error["type"], error["reason"]) == ("launch", reason)
    assert len(lms.store.list_keys(T)) == keys_before
    assert lms.store.list_students(T, COURSE) == []
    assert f"({reason})" in caplog.text and token not in caplog.text
    assert auth["state"] not in caplog.text


def test_a_replayed_launch_is_refused(registered: Lms) -> None:
    lms = registered
    auth = lms.login(lms.moodle)
    form = {"id_token": lms.moodle.sign(lms.moodle.claims(auth["nonce"])),
            "state": auth["state"]}
    assert lms.client.post("/lti/launch", data=form, follow_redirects=False).status_code == 303
    again = lms.client.post("/lti/launch", data=form)
    assert again.status_code == 401 and again.json()["error"]["reason"] == "replayed_nonce"


def test_a_login_from_an_unknown_issuer_is_refused(registered: Lms) -> None:
    params = {**registered.moodle.login_params(), "iss": "https://lms.unknown.example"}
    reply = registered.client.get("/lti/login", params=params, follow_redirects=False)
    assert reply.status_code == 401
    assert reply.json()["error"]["reason"] == "unknown_issuer"
    forged = registered.client.post("/lti/launch", data={"id_token": "x", "state": "forged"})
    assert forged.status_code == 401 and forged.json()["error"]["reason"] == "bad_state"


@pytest.mark.parametrize("changes", [
    {CUSTOM: {"course": COURSE, "page": "teacher"}},
    {MESSAGE: "LtiDeepLinkingRequest",
     DEEP: {"deep_link_return_url": "https://moodle.example.edu/mod/lti/contentitem_return.php",
            "accept_types": ["ltiResourceLink"]}},
], ids=["teacher link", "deep link"])
def test_a_learner_may_not_open_a_teacher_link(registered: Lms,
                                               changes: dict[str, Any]) -> None:
    reply = registered.launch(registered.moodle, LEARNER, **changes)
    assert reply.status_code == 403, reply.text
    assert registered.store.list_students(T, COURSE) == []


def test_a_cached_key_set_is_used_until_it_expires(registered: Lms) -> None:
    lms = registered
    lms.opened(lms.launch(lms.moodle))
    assert lms.moodle.jwks_fetches == 1
    lms.moodle.jwks_up = False
    lms.clock.now += 600  # stale: fetched again, which fails, so the cached set serves
    lms.opened(lms.launch(lms.moodle, sub="8"))
    assert lms.moodle.jwks_fetches == 2
    lms.clock.now += 3600  # past its age: no key can be trusted
    refused = lms.launch(lms.moodle, sub="9")
    assert refused.status_code == 401
    assert refused.json()["error"]["reason"] == "keyset_unavailable"
    lms.moodle.jwks_up = True
    lms.opened(lms.launch(lms.moodle, sub="9"))


def test_a_platform_reaches_only_its_own_tenants_courses(lms: Lms) -> None:
    pid_b = lms.register(lms.moodle, lms.admin_b)  # the same LMS, registered by tenant B
    refused = lms.launch(lms.moodle)  # its example launch names course "numerics" of tenant A
    assert refused.status_code == 404, refused.text
    assert lms.store.list_students(T, COURSE) == []
    _, fields = lms.opened(lms.launch(lms.moodle, **{CUSTOM: {"course": COURSE_B}}))
    me = lms.client.get("/v1/me", headers=lms.h(fields["lti_key"])).json()
    assert (me["tenant"], me["student"], me["courses"]) == (T_B, f"lti-{pid_b}-7", [COURSE_B])
    other = lms.client.get(f"/v1/courses/{COURSE}", headers=lms.h(fields["lti_key"]))
    assert other.status_code == 404
    assert lms.client.get("/v1/lti/platforms", headers=lms.h(lms.admin)).json() == {
        "platforms": []}


# -- deep linking ---------------------------------------------------------------------------

RETURN = "https://moodle.example.edu/mod/lti/contentitem_return.php?course=2&id=5"


def test_deep_linking_answers_a_signed_link_to_the_chosen_course(registered: Lms) -> None:
    lms = registered
    chooser = lms.launch(lms.moodle, INSTRUCTOR, **{
        MESSAGE: "LtiDeepLinkingRequest", CUSTOM: {},
        DEEP: {"deep_link_return_url": RETURN, "accept_types": ["ltiResourceLink"],
               "accept_presentation_document_targets": ["iframe", "window"],
               "data": "opaque-platform-data"}})
    assert chooser.status_code == 200, chooser.text
    assert 'value="numerics"' in chooser.text and 'value="algebra"' in chooser.text
    assert "b-course" not in chooser.text  # another tenant's course is not offered
    session = chooser.text.split('name="session" value="', 1)[1].split('"', 1)[0]
    answer = lms.client.post("/lti/deep-link",
                             data={"session": session, "course": COURSE, "grades": "mastery"})
    assert answer.status_code == 200, answer.text
    assert f'action="{RETURN.replace("&", "&amp;")}"' in answer.text
    assert "form-action 'self' https://moodle.example.edu" in (
        answer.headers["content-security-policy"])
    token = answer.text.split('name="JWT" value="', 1)[1].split('"', 1)[0]
    kid = jwt.get_unverified_header(token)["kid"]
    jwks = {k["kid"]: k for k in lms.client.get("/lti/jwks").json()["keys"]}
    claims = jwt.decode(token, jwt.PyJWK(jwks[kid], algorithm="RS256"), algorithms=["RS256"],
                        audience="https://moodle.example.edu")
    dl = "https://purl.imsglobal.org/spec/lti-dl/claim/"
    assert claims["iss"] == "tool-client-1" and claims[MESSAGE] == "LtiDeepLinkingResponse"
    assert claims[dl + "data"] == "opaque-platform-data"
    assert claims[dl + "content_items"] == [{
        "type": "ltiResourceLink", "title": "Numerics", "url": "http://testserver/lti/launch",
        "custom": {"course": COURSE, "grades": "mastery"},
        "lineItem": {"scoreMaximum": 100, "label": "Numerics: mastery",
                     "resourceId": COURSE, "tag": "coursetutor-mastery"}}]
    # the LMS course is linked: a launch without a course parameter opens it
    _, fields = lms.opened(lms.launch(lms.moodle, **{CUSTOM: {}}))
    assert fields["course"] == COURSE
    tampered = lms.client.post("/lti/deep-link", data={"session": session + "x",
                                                       "course": COURSE})
    assert tampered.status_code == 401


def test_the_tool_key_set_rotates_and_keeps_the_old_key_published(registered: Lms) -> None:
    first = registered.client.get("/lti/jwks").json()["keys"]
    assert [(k["kty"], k["alg"], k["use"]) for k in first] == [("RSA", "RS256", "sig")]
    new = tool_keys.rotate(registered.store.lti)
    after = registered.client.get("/lti/jwks").json()["keys"]
    assert {k["kid"] for k in after} == {first[0]["kid"], new.kid}
    assert tool_keys.signing_key(registered.store.lti).kid == new.kid


# -- roster and grades ----------------------------------------------------------------------

def _member(sub: str, role: str = LEARNER, status: str = "Active") -> dict[str, Any]:
    return {"status": status, "user_id": sub, "roles": [role], "name": f"User {sub}"}


def test_the_roster_becomes_enrolments(registered: Lms) -> None:
    lms = registered
    pid = lms.platform_ids["moodle"]
    _, teacher = lms.opened(lms.launch(lms.moodle, INSTRUCTOR, sub="1"))
    assert lms.tool.last_roster is not None
    lms.tool.last_roster.result(10)  # the sync a launch started (empty roster)
    lms.store.enroll(T, COURSE, f"lti-{pid}-12")
    lms.moodle.members = [_member("1", INSTRUCTOR), _member("10"), _member("11"),
                          _member("12", status="Inactive"), _member("13"),
                          _member("14", "http://purl.imsglobal.org/vocab/lis/v2/membership#Mentor")]
    reply = lms.client.post(f"/v1/courses/{COURSE}/lti/roster",
                            headers=lms.h(teacher["lti_key"]))
    assert reply.status_code == 200, reply.text
    assert reply.json() == {"enrolled": 3, "removed": 1, "teachers": 1}
    assert lms.store.list_students(T, COURSE) == [f"lti-{pid}-{n}" for n in (10, 11, 13)]
    assertion = lms.moodle.assertions[-1]  # the platform checked the tool's signed assertion
    assert (assertion["iss"], assertion["sub"], assertion["aud"]) == (
        "tool-client-1", "tool-client-1", lms.moodle.token_url)


def test_mastery_reaches_the_grade_book_when_it_changes(registered: Lms) -> None:
    lms = registered
    lms.opened(lms.launch(lms.moodle, **{CUSTOM: {"course": COURSE, "grades": "mastery"}}))
    student = f"lti-{lms.platform_ids['moodle']}-7"
    state = lms.client.app.state.coursetutor  # type: ignore[attr-defined]
    for topic, estimate in (("bisection", 0.8), ("newton", 0.4)):
        lms.store.mastery.observe(T, COURSE, student, topic, True, f"turn-{topic}",
                                  lambda _, e=estimate: e)
    assert lms.tool.grades.after_turn(T, COURSE, student).result(10) == [60.0]
    url, score = lms.moodle.scores[-1]
    assert url == ("https://moodle.example.edu/mod/lti/services.php/2/lineitems/9/lineitem/"
                   "scores?type_id=1")
    assert {k: score[k] for k in ("userId", "scoreGiven", "scoreMaximum", "gradingProgress")} == {
        "userId": "7", "scoreGiven": 60.0, "scoreMaximum": 100.0,
        "gradingProgress": "FullyGraded"}
    assert lms.tool.grades.after_turn(T, COURSE, student).result(10) == []  # unchanged
    lms.store.mastery.observe(T, COURSE, student, "newton", True, "turn-3", lambda _: 0.6)
    state.turn_done(T, COURSE, "student", student)  # what a tutor turn's end does
    lms.tool.grades.after_turn(T, COURSE, student).result(10)
    assert [s["scoreGiven"] for _, s in lms.moodle.scores] == [60.0, 70.0]


def test_a_failing_grade_book_is_logged_and_fails_nothing(
        registered: Lms, caplog: pytest.LogCaptureFixture) -> None:
    lms = registered
    lms.opened(lms.launch(lms.moodle, **{CUSTOM: {"course": COURSE, "grades": "mastery"}}))
    student = f"lti-{lms.platform_ids['moodle']}-7"
    lms.moodle.scores_up = False
    lms.store.mastery.observe(T, COURSE, student, "bisection", True, "t1", lambda _: 0.5)
    with caplog.at_level(logging.WARNING, logger="coursetutor.lti"):
        assert lms.tool.grades.after_turn(T, COURSE, student).result(10) == []
    assert "sending a score to the LMS failed" in caplog.text
    link = lms.store.lti.find_link(lms.platform_ids["moodle"], "2", "3")
    assert link is not None and lms.store.lti.last_score(link.lineitem_url, student) is None


LINEITEM = "https://moodle.example.edu/mod/lti/services.php/2/lineitems/9/lineitem?type_id=1"


def test_grades_are_turned_on_and_off_for_an_existing_link(registered: Lms) -> None:
    lms = registered
    pid = lms.platform_ids["moodle"]
    lms.opened(lms.launch(lms.moodle, **{CUSTOM: {"course": COURSE}}))  # no grades parameter
    student = f"lti-{pid}-7"
    lms.store.mastery.observe(T, COURSE, student, "bisection", True, "t1", lambda _: 0.5)
    assert lms.tool.grades.after_turn(T, COURSE, student).result(10) == []
    _, teacher = mint_key(lms.store, T, "teacher")
    links = f"/v1/lti/platforms/{pid}/links"
    on = lms.client.put(links, headers=lms.h(teacher),
                        json={"context": "2", "course": COURSE, "grades": True})
    assert on.status_code == 200, on.text
    assert (on.json()["grades"], on.json()["grade_columns"]) == (True, [LINEITEM])
    assert lms.tool.grades.after_turn(T, COURSE, student).result(10) == [50.0]
    lms.opened(lms.launch(lms.moodle, **{CUSTOM: {"course": COURSE}}))  # a launch keeps it on
    link = lms.store.lti.find_link(pid, "2", "3")
    assert link is not None and link.grades
    off = lms.client.put(links, headers=lms.h(teacher),
                         json={"context": "2", "course": COURSE, "grades": False})
    assert (off.json()["grades"], off.json()["grade_columns"]) == (False, [])
    lms.store.mastery.observe(T, COURSE, student, "newton", True, "t2", lambda _: 0.9)
    assert lms.tool.grades.after_turn(T, COURSE, student).result(10) == []
    lms.opened(lms.launch(lms.moodle, **{CUSTOM: {"course": COURSE, "grades": "mastery"}}))
    kept = lms.client.put(links, headers=lms.h(teacher), json={"context": "2", "course": COURSE})
    assert (kept.json()["grades"], kept.json()["grade_columns"]) == (False, [])  # stays off
    assert [s["scoreGiven"] for _, s in lms.moodle.scores] == [50.0]


def test_the_cli_turns_grades_on_for_a_link(registered: Lms, tmp_path: Path) -> None:
    lms = registered
    pid = lms.platform_ids["moodle"]
    lms.opened(lms.launch(lms.moodle, **{CUSTOM: {"course": COURSE}}))
    run = ["--data-dir", str(tmp_path), "lti", "link", "--platform", pid, "--context", "2",
           "--course", COURSE]
    result = CliRunner().invoke(cli, [*run, "--grades"], catch_exceptions=False)
    assert result.output == (f"LMS course 2 of platform {pid} opens {COURSE}; mastery goes "
                             "to the grade book (1 column(s) now).\n")
    link = lms.store.lti.find_link(pid, "2", "3")
    assert link is not None and (link.grades, link.lineitem_url) == (True, LINEITEM)
    result = CliRunner().invoke(cli, [*run, "--no-grades"], catch_exceptions=False)
    assert result.output.endswith("mastery does not go to the grade book (0 column(s) now).\n")
    assert lms.store.lti.find_link(pid, "2", "3").grades is False  # type: ignore[union-attr]


# -- deep linking to a document or a live class ---------------------------------------------

def _document(lms: Lms, course: str, doc_id: str, title: str) -> None:
    lms.store.replace_document(Document(T, course, doc_id, title, "lecture", "", 0, "en",
                                        f"{doc_id}.md", doc_id, 1, 0), [])


def _chooser(lms: Lms) -> tuple[str, str]:
    """The deep linking page an Instructor's request opens, and its session."""
    chooser = lms.launch(lms.moodle, INSTRUCTOR, **{
        MESSAGE: "LtiDeepLinkingRequest", CUSTOM: {},
        DEEP: {"deep_link_return_url": RETURN, "accept_types": ["ltiResourceLink"]}})
    assert chooser.status_code == 200, chooser.text
    return chooser.text, chooser.text.split('name="session" value="', 1)[1].split('"', 1)[0]


def _item(lms: Lms, **form: str) -> dict[str, Any]:
    _, session = _chooser(lms)
    answer = lms.client.post("/lti/deep-link", data={"session": session, **form})
    assert answer.status_code == 200, answer.text
    token = answer.text.split('name="JWT" value="', 1)[1].split('"', 1)[0]
    claims = jwt.decode(token, options={"verify_signature": False})
    [item] = claims["https://purl.imsglobal.org/spec/lti-dl/claim/content_items"]
    return dict(item)


def test_deep_linking_offers_each_courses_documents_and_live_classes(registered: Lms) -> None:
    lms = registered
    _document(lms, COURSE, "bisection", "Lecture 2: bisection")
    _document(lms, "algebra", "groups", "Groups")
    lesson = lms.store.classes.start_class(T, COURSE, "Class 3 March")
    page, _ = _chooser(lms)
    assert ('<option value="bisection" data-course="numerics">Numerics: Lecture 2: bisection'
            '</option>') in page
    assert '<option value="groups" data-course="algebra">Algebra: Groups</option>' in page
    assert (f'<option value="{lesson.id}" data-course="numerics">Numerics: Class 3 March'
            '</option>') in page


def test_a_link_to_a_document_opens_the_student_page_on_it(registered: Lms) -> None:
    lms = registered
    _document(lms, COURSE, "bisection", "Lecture 2: bisection")
    item = _item(lms, course=COURSE, document="bisection", live_class="")
    assert (item["title"], item["custom"]) == (
        "Lecture 2: bisection", {"course": COURSE, "grades": "", "document": "bisection"})
    page, fields = lms.opened(lms.launch(lms.moodle, **{CUSTOM: item["custom"]}))
    assert (page, fields["course"], fields["document"], fields["title"]) == (
        "/", COURSE, "bisection", "Lecture 2: bisection")
    assert "live_class" not in fields


def test_a_link_to_a_live_class_opens_the_student_page_on_it(registered: Lms) -> None:
    lms = registered
    lesson = lms.store.classes.start_class(T, COURSE, "Class 3 March")
    item = _item(lms, course=COURSE, live_class=lesson.id, grades="mastery")
    assert (item["title"], item["custom"], item["lineItem"]["label"]) == (
        "Class 3 March", {"course": COURSE, "grades": "mastery", "live_class": lesson.id},
        "Class 3 March: mastery")
    page, fields = lms.opened(lms.launch(lms.moodle, **{CUSTOM: item["custom"]}))
    assert (page, fields["course"], fields["live_class"], fields["title"]) == (
        "/", COURSE, lesson.id, "Class 3 March")


def test_a_document_or_class_outside_the_course_is_refused(registered: Lms) -> None:
    lms = registered
    _document(lms, COURSE, "bisection", "Lecture 2: bisection")
    _document(lms, "algebra", "groups", "Groups")
    lesson = lms.store.classes.start_class(T, "algebra", "Algebra class")
    _, session = _chooser(lms)
    for form, status in (({"document": "groups"}, 404), ({"live_class": lesson.id}, 404),
                         ({"document": "bisection", "live_class": lesson.id}, 400)):
        reply = lms.client.post("/lti/deep-link",
                                data={"session": session, "course": COURSE, **form})
        assert reply.status_code == status, (form, reply.text)
    assert lms.moodle.deep_link_answers == []
    gone = lms.launch(lms.moodle, **{CUSTOM: {"course": COURSE, "document": "removed"}})
    assert gone.status_code == 404, gone.text
    assert lms.store.list_students(T, COURSE) == []  # nothing changed
