"""LTI Dynamic Registration as Moodle 4.x drives it: the admin's registration URL, the platform
opening it with its OpenID configuration and registration token, the tool's client registration,
the stored platform, and every refusal with its reason and nothing stored."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import jwt
import pytest
from click.testing import CliRunner

from coursetutor.api.access import mint_key
from coursetutor.api.signing import load_secret
from coursetutor.cli import cli
from coursetutor.config import load_settings
from coursetutor.lti import tokens

from .lti_platform import FakePlatform
from .test_lti import T_B, Lms, T, open_lms

TOOL = "http://testserver"
TOOL_CONFIG = "https://purl.imsglobal.org/spec/lti-tool-configuration"


@pytest.fixture
def lms(tmp_path: Path) -> Iterator[Lms]:
    with open_lms(tmp_path) as found:
        yield found


def registration_url(lms: Lms, key: str | None = None) -> str:
    reply = lms.client.post("/v1/lti/registration-url", headers=lms.h(key or lms.admin))
    assert reply.status_code == 200, reply.text
    return str(reply.json()["url"])


def open_registration(lms: Lms, url: str, page: bool = False,
                      platform: FakePlatform | None = None) -> httpx.Response:
    """What the platform does with the registration URL: open it with its configuration's
    URL and its registration token."""
    platform = platform or lms.moodle
    params = {"openid_configuration": platform.configuration_url,
              "registration_token": platform.registration_token}
    headers = {"Accept": "text/html"} if page else {}
    return lms.client.get(f"{url}&{urlencode(params)}", headers=headers)


def test_an_admin_gets_a_registration_url_for_their_tenant(lms: Lms) -> None:
    reply = lms.client.post("/v1/lti/registration-url", headers=lms.h(lms.admin_b),
                            json={"hours": 2})
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body["url"].startswith(f"{TOOL}/lti/register?tenant_token=")
    assert body["tenant"] == T_B and abs(body["expires"] - (time.time() + 7200)) < 5
    token = parse_qs(urlsplit(body["url"]).query)["tenant_token"][0]
    assert tokens.check(lms.tool.secret, "registration", token)["tenant"] == T_B
    _, teacher = mint_key(lms.store, T, "teacher")
    refused = lms.client.post("/v1/lti/registration-url", headers=lms.h(teacher))
    assert refused.status_code == 403


def test_a_dynamic_registration_stores_the_platform_and_closes_the_window(lms: Lms) -> None:
    reply = open_registration(lms, registration_url(lms), page=True)
    assert reply.status_code == 200, reply.text
    assert 'data-page="lti-registered"' in reply.text and "tool-client-1" in reply.text
    assert '<script type="module" src="/static/lti.js">' in reply.text  # posts the close
    assert reply.headers["content-security-policy"].endswith(
        "frame-ancestors 'self' https://moodle.example.edu")
    assert "x-frame-options" not in reply.headers
    [sent] = lms.moodle.registrations
    assert sent == {
        "application_type": "web", "response_types": ["id_token"],
        "grant_types": ["implicit", "client_credentials"],
        "initiate_login_uri": f"{TOOL}/lti/login", "redirect_uris": [f"{TOOL}/lti/launch"],
        "client_name": "coursetutor", "jwks_uri": f"{TOOL}/lti/jwks",
        "token_endpoint_auth_method": "private_key_jwt",
        "scope": "https://purl.imsglobal.org/spec/lti-ags/scope/score "
                 "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly",
        TOOL_CONFIG: {
            "domain": "testserver", "target_link_uri": f"{TOOL}/lti/launch",
            "description": "An AI tutor that answers from the course's own material.",
            "claims": ["iss", "sub"],
            "messages": [{"type": "LtiDeepLinkingRequest",
                          "target_link_uri": f"{TOOL}/lti/launch", "label": "coursetutor"}]}}
    [platform] = lms.store.lti.list_platforms(T)
    assert (platform.issuer, platform.client_id, platform.deployment_ids, platform.jwks_url,
            platform.auth_login_url, platform.token_url, platform.frame_origins) == (
        "https://moodle.example.edu", "tool-client-1", ("1",),
        "https://moodle.example.edu/mod/lti/certs.php",
        "https://moodle.example.edu/mod/lti/auth.php",
        "https://moodle.example.edu/mod/lti/token.php", ("https://moodle.example.edu",))
    assert lms.store.lti.list_platforms(T_B) == []
    page, fields = lms.opened(lms.launch(lms.moodle))  # the registered LMS launches at once
    assert (page, fields["course"]) == ("/", "numerics")


def test_a_client_gets_the_registration_as_json(lms: Lms) -> None:
    reply = open_registration(lms, registration_url(lms, lms.admin_b))
    assert reply.status_code == 200, reply.text
    platform = reply.json()["platform"]
    assert (platform["tenant"], platform["issuer"], platform["client_id"],
            platform["deployment_ids"]) == (T_B, "https://moodle.example.edu", "tool-client-1",
                                            ["1"])


def _expired(lms: Lms) -> str:
    token = tokens.issue(lms.tool.secret, "registration", {"tenant": T}, -120)
    return f"{TOOL}/lti/register?tenant_token={token}"


def _forged(lms: Lms) -> str:
    other_secret = b"not the secret of this server, 32+ bytes long"
    token = tokens.issue(other_secret, "registration", {"tenant": T}, 3600)
    return f"{TOOL}/lti/register?tenant_token={token}"


def _state_token(lms: Lms) -> str:  # a token of the tool, but for another purpose
    token = tokens.issue(lms.tool.secret, "state", {"tenant": T}, 3600)
    return f"{TOOL}/lti/register?tenant_token={token}"


def _unreachable(lms: Lms) -> str:
    lms.moodle.configuration_up = False
    return registration_url(lms)


def _mismatch(lms: Lms) -> str:
    lms.moodle.configuration_issuer = "https://lms.elsewhere.example"
    return registration_url(lms)


def _refused(lms: Lms) -> str:
    lms.moodle.registration_expired = True  # the admin took too long in Moodle's window
    return registration_url(lms)


def _another_tenant(lms: Lms) -> str:
    lms.register(lms.moodle, lms.admin_b)
    return registration_url(lms)


def _same_tenant(lms: Lms) -> str:
    lms.register(lms.moodle)
    return registration_url(lms)


REFUSALS = {  # name: (how the registration is spoiled, status, reason)
    "expired registration URL": (_expired, 401, "registration_url_expired"),
    "forged registration URL": (_forged, 401, "bad_registration_url"),
    "another purpose's token": (_state_token, 401, "bad_registration_url"),
    "configuration unreachable": (_unreachable, 502, "configuration_unreachable"),
    "issuer off the configuration's origin": (_mismatch, 502, "issuer_mismatch"),
    "registration refused": (_refused, 502, "registration_refused"),
    "registered by another tenant": (_another_tenant, 409, "registered_by_another_tenant"),
    "registered already": (_same_tenant, 409, "already_registered"),
}


@pytest.mark.parametrize("name", sorted(REFUSALS))
def test_a_bad_registration_is_refused_with_its_reason_and_stores_nothing(
        lms: Lms, name: str, caplog: pytest.LogCaptureFixture) -> None:
    spoil, status, reason = REFUSALS[name]
    url = spoil(lms)
    before = lms.store.lti.list_platforms()
    with caplog.at_level(logging.WARNING, logger="coursetutor.lti"):
        reply = open_registration(lms, url)
    assert f"LTI registration refused ({reason})" in caplog.text
    assert lms.moodle.registration_token not in caplog.text
    assert parse_qs(urlsplit(url).query)["tenant_token"][0] not in caplog.text
    assert reply.status_code == status, reply.text
    assert reply.json()["error"]["reason"] == reason
    assert lms.store.lti.list_platforms() == before
    page = open_registration(lms, url, page=True)
    assert page.status_code == status
    assert 'data-page="lti-refused"' in page.text and f"<code>{reason}</code>" in page.text
    assert 'data-i18n="lti.register_retry"' in page.text
    assert page.headers["content-security-policy"].endswith(
        "frame-ancestors 'self' https://moodle.example.edu")  # shown in the platform's frame


def test_a_registration_without_a_configuration_url_is_refused(lms: Lms) -> None:
    reply = lms.client.get(registration_url(lms))
    assert reply.status_code == 400
    assert "openid_configuration" in reply.json()["error"]["message"]
    assert lms.store.lti.list_platforms() == []


def test_the_cli_prints_a_registration_url(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["--data-dir", str(tmp_path), "--tenant", "uni", "lti",
                                      "registration-url", "--url",
                                      "https://tutor.example.edu/", "--hours", "3"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    url = result.output.strip()
    assert url.startswith("https://tutor.example.edu/lti/register?tenant_token=")
    secret = load_secret(load_settings(env={}, data_dir=tmp_path))
    claims = jwt.decode(parse_qs(urlsplit(url).query)["tenant_token"][0], secret,
                        algorithms=["HS256"])
    assert claims["tenant"] == "uni" and claims["purpose"] == "registration"
    assert claims["exp"] - claims["iat"] == 3 * 3600
    plain = CliRunner().invoke(cli, ["--data-dir", str(tmp_path), "lti", "registration-url",
                                     "--url", "http://tutor.example.edu"])
    assert plain.exit_code == 1 and "https://" in plain.output
