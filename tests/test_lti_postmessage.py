"""The platform's storage (1EdTech LTI Client Side postMessages) on the server's side: a login
initiation with `lti_storage_target` answers a page that keeps its state and nonce there (and
falls back to the signed state alone), the launch answers a page that finds them again before
it opens the tutor, whose fragment names the storage; the nonce is still used once and the
state still bound to its login. What the pages do with it runs in test_lti_browser.py."""

from __future__ import annotations

import json
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from coursetutor.lti.storage import target

from .lti_platform import CUSTOM, DEEP, INSTRUCTOR, MESSAGE, FakePlatform
from .test_lti import COURSE, Lms, T, open_lms

MOODLE = "https://moodle.example.edu"
CANVAS_SSO = "https://sso.canvaslms.com"


class Body(HTMLParser):
    """The attributes of a page's `<body>` and whether its first `<main>` is hidden."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.attrs: dict[str, str] = {}
        self.main_hidden: bool | None = None
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "body":
            self.attrs = {k: v or "" for k, v in attrs}
        elif tag == "main" and self.main_hidden is None:
            self.main_hidden = any(k == "hidden" for k, _ in attrs)


def query(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}


@pytest.fixture
def lms(tmp_path: Path) -> Iterator[Lms]:
    with open_lms(tmp_path) as found:
        found.platform_ids = {"moodle": found.register(found.moodle),
                              "canvas": found.register(found.canvas)}
        yield found


def login(lms: Lms, platform: FakePlatform, frame: str = "_parent") -> httpx.Response:
    params = {**platform.login_params(), "lti_storage_target": frame}
    return lms.client.get("/lti/login", params=params, follow_redirects=False)


def kept(reply: httpx.Response) -> tuple[Body, dict[str, object]]:
    """The login's page and what it tells lti.js about the platform's storage."""
    assert reply.status_code == 200, reply.text
    page = Body(reply.text)
    return page, json.loads(page.attrs["data-lti-storage"])


@pytest.mark.parametrize("frame", ["_parent", "post_message_forwarding", "a.b-c_9"])
def test_a_storage_target_names_a_frame(frame: str) -> None:
    assert target({"lti_storage_target": frame}) == frame


@pytest.mark.parametrize("frame", ["", "x" * 65, "_parent\"><script>", "top frame", "a/b"])
def test_anything_else_is_no_storage_target(frame: str) -> None:
    assert target({"lti_storage_target": frame}) == ""


def test_a_login_with_a_storage_target_keeps_state_and_nonce_there(lms: Lms) -> None:
    reply = login(lms, lms.moodle)
    assert reply.headers["cache-control"] == "no-store"
    assert reply.headers["content-security-policy"].endswith(
        f"frame-ancestors 'self' https://canvas.instructure.com {MOODLE} {CANVAS_SSO}")
    page, storage = kept(reply)
    assert page.attrs["data-page"] == "lti-login"
    go, fallback = query(page.attrs["data-next"]), query(page.attrs["data-fallback"])
    assert page.attrs["data-next"].startswith(lms.moodle.auth_url + "?")
    assert page.attrs["data-fallback"].startswith(lms.moodle.auth_url + "?")
    [login_id] = {k.rsplit(".", 1)[1] for k in storage["items"]}  # type: ignore[attr-defined]
    assert storage == {"target": "_parent", "origin": MOODLE, "origins": [MOODLE],
                       "items": {f"coursetutor.state.{login_id}": go["state"],
                                 f"coursetutor.nonce.{login_id}": go["nonce"]}}
    # the fallback's state and nonce are its own: the signed state alone, as without storage
    assert fallback["state"] != go["state"] and fallback["nonce"] != go["nonce"]
    assert {k: v for k, v in go.items() if k not in ("state", "nonce")} == {
        k: v for k, v in fallback.items() if k not in ("state", "nonce")}


def test_canvas_storage_answers_from_its_authorization_origin(lms: Lms) -> None:
    _, storage = kept(login(lms, lms.canvas, "post_message_forwarding"))
    assert (storage["target"], storage["origin"], storage["origins"]) == (
        "post_message_forwarding", CANVAS_SSO, ["https://canvas.instructure.com", CANVAS_SSO])


def test_a_login_without_a_usable_target_redirects_with_the_signed_state(lms: Lms) -> None:
    reply = login(lms, lms.moodle, "_parent\"><script>")
    assert reply.status_code == 302
    assert reply.headers["location"].startswith(lms.moodle.auth_url + "?")


def _launch(lms: Lms, auth: dict[str, str], **changes: object) -> httpx.Response:
    token = lms.moodle.sign(lms.moodle.claims(auth["nonce"], **changes))
    return lms.client.post("/lti/launch", data={"id_token": token, "state": auth["state"]},
                           follow_redirects=False)


def test_the_launch_finds_the_login_in_the_storage_before_opening_the_tutor(lms: Lms) -> None:
    page, storage = kept(login(lms, lms.moodle))
    auth = query(page.attrs["data-next"])
    reply = _launch(lms, auth)
    assert reply.status_code == 200, reply.text
    assert reply.headers["cache-control"] == "no-store"
    check, found = kept(reply)
    assert check.attrs["data-page"] == "lti-check"
    assert found == storage  # the same names and values the login kept
    opened, _, fragment = check.attrs["data-next"].partition("#")
    fields = {k: v[0] for k, v in parse_qs(fragment).items()}
    assert opened == "/" and fields.pop("lti_key").startswith("ct_")
    assert fields == {"course": COURSE, "lti_storage_target": "_parent",
                      "lti_storage_origin": MOODLE, "lti_origins": MOODLE}
    assert 'id="lti-unbound" hidden' in reply.text and "unbound_state" in reply.text
    again = _launch(lms, auth)  # the nonce is still used once
    assert again.status_code == 401 and again.json()["error"]["reason"] == "replayed_nonce"


def test_the_fallback_state_launches_without_the_storage(lms: Lms) -> None:
    page, _ = kept(login(lms, lms.moodle))
    page_opened, fields = lms.opened(_launch(lms, query(page.attrs["data-fallback"])))
    assert page_opened == "/" and sorted(fields) == ["course", "lti_key"]


def test_a_kept_state_is_bound_to_its_own_login(lms: Lms) -> None:
    first, _ = kept(login(lms, lms.moodle))
    second, _ = kept(login(lms, lms.moodle))
    mixed = {"state": query(first.attrs["data-next"])["state"],
             "nonce": query(second.attrs["data-next"])["nonce"]}
    reply = _launch(lms, mixed)
    assert reply.status_code == 401 and reply.json()["error"]["reason"] == "wrong_nonce"
    forged = {**query(first.attrs["data-next"])}
    forged["state"] = forged["state"][:-2] + ("AA" if forged["state"][-2:] != "AA" else "BB")
    reply = _launch(lms, forged)
    assert reply.status_code == 401 and reply.json()["error"]["reason"] == "bad_state"
    assert lms.store.list_students(T, COURSE) == []


def test_deep_linking_shows_its_form_once_the_login_is_found(lms: Lms) -> None:
    page, storage = kept(login(lms, lms.moodle))
    reply = _launch(lms, query(page.attrs["data-next"]), **{
        "sub": "2", MESSAGE: "LtiDeepLinkingRequest", CUSTOM: {},
        "https://purl.imsglobal.org/spec/lti/claim/roles": [INSTRUCTOR],
        DEEP: {"deep_link_return_url": f"{MOODLE}/mod/lti/contentitem_return.php",
               "accept_types": ["ltiResourceLink"]}})
    chooser, found = kept(reply)
    assert (chooser.attrs["data-page"], chooser.main_hidden, found) == (
        "lti-deep-link", True, storage)
    assert 'value="numerics"' in reply.text and 'id="lti-unbound" hidden' in reply.text
