"""LTI Dynamic Registration 1.0: a platform registers the tool by itself.

A tenant's admin gets a registration URL that carries a signed, expiring token naming the
tenant (the platform's request carries no API key). The platform opens it with its OpenID
configuration's URL and a registration token; the tool reads the configuration, checks that its
issuer sits on the configuration URL's origin, posts its client registration to the platform's
`registration_endpoint`, and stores the client id and deployment id the platform answers as a
platform of that tenant, as `coursetutor lti add-platform` would.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode, urlsplit

import httpx

from ..errors import InputError, LaunchError, RegisteredError, RegistrationError
from ..store.lti import LtiStore, Platform
from . import claims as c
from . import registry, services, tokens

PURPOSE = "registration"
URL_SECONDS = 7 * 24 * 3600  # how long a registration URL works, by default
MAX_URL_SECONDS = 30 * 24 * 3600
MAX_REPLY_BYTES = 256_000
PLATFORM_CONFIGURATION = "https://purl.imsglobal.org/spec/lti-platform-configuration"
TOOL_CONFIGURATION = "https://purl.imsglobal.org/spec/lti-tool-configuration"
TOOL_NAME = "coursetutor"
# the endpoints a platform's OpenID configuration must name, and what the tool stores them as
ENDPOINTS = ("issuer", "authorization_endpoint", "token_endpoint", "jwks_uri",
             "registration_endpoint")


def url_token(secret: bytes, tenant: str, seconds: int = URL_SECONDS) -> str:
    """The signed token of a registration URL for `tenant`, valid `seconds`."""
    if not 60 <= seconds <= MAX_URL_SECONDS:
        raise InputError(f"a registration URL lasts from 60 seconds to {MAX_URL_SECONDS // 86400}"
                         f" days, not {seconds} seconds")
    return tokens.issue(secret, PURPOSE, {"tenant": tenant}, seconds)


def registration_url(tool_url: str, secret: bytes, tenant: str,
                     seconds: int = URL_SECONDS) -> str:
    """The URL to paste into the platform's dynamic registration for `tenant` (`tool_url`:
    the tool's address as the platform reaches it)."""
    query = urlencode({"tenant_token": url_token(secret, tenant, seconds)})
    return f"{tool_url.rstrip('/')}/lti/register?{query}"


def tenant_of(secret: bytes, token: str) -> str:
    """The tenant a registration URL's token names (LaunchError when expired or forged)."""
    try:
        found = tokens.check(secret, PURPOSE, token)
    except LaunchError as exc:
        if exc.reason.endswith("_expired"):
            raise LaunchError("the registration URL expired: ask the tutor's administrator for "
                              "a new one", "registration_url_expired") from exc
        raise LaunchError("the registration URL is not one this tool issued",
                          "bad_registration_url") from exc
    return str(found.get("tenant", ""))


@dataclasses.dataclass(frozen=True)
class Configuration:
    """What the tool needs of a platform's OpenID configuration."""

    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    jwks_uri: str
    registration_endpoint: str
    product: str  # product_family_code: "moodle", "canvas", ... ("" when not said)


def _answer(send: Callable[[], httpx.Response], unreachable: str, refused: str,
            code: str) -> httpx.Response:
    """The platform's answer to `send`; a transport failure or a 4xx/5xx is a refusal under
    `code` (`refused` names the status as `{status}`)."""
    try:
        reply = send()
    except httpx.HTTPError as exc:
        raise RegistrationError(f"{unreachable}: {exc}", code) from exc
    if reply.status_code >= 400:
        raise RegistrationError(refused.format(status=reply.status_code), code)
    return reply


def _json(reply: httpx.Response, what: str, reason: str) -> dict[str, Any]:
    if len(reply.content) > MAX_REPLY_BYTES:
        raise RegistrationError(f"the platform's {what} is over {MAX_REPLY_BYTES} bytes", reason)
    try:
        body = reply.json()
    except ValueError as exc:
        raise RegistrationError(f"the platform's {what} is not JSON", reason) from exc
    if not isinstance(body, dict):
        raise RegistrationError(f"the platform's {what} is not a JSON object", reason)
    return body


def fetch_configuration(http: httpx.Client, url: str) -> Configuration:
    """The platform's OpenID configuration at `url`, its issuer checked against the URL."""
    try:
        registry.check_url("openid_configuration", url)
    except InputError as exc:
        raise RegistrationError(str(exc), "bad_configuration") from exc
    reply = _answer(lambda: http.get(url, headers={"Accept": "application/json"}),
                    "the platform's OpenID configuration cannot be fetched",
                    "the platform's OpenID configuration answered {status}",
                    "configuration_unreachable")
    body = _json(reply, "OpenID configuration", "bad_configuration")
    missing = [name for name in ENDPOINTS if not isinstance(body.get(name), str)
               or not body[name]]
    if missing:
        raise RegistrationError(f"the platform's OpenID configuration has no "
                                f"{', '.join(missing)}", "bad_configuration")
    # LTI Dynamic Registration 3.5.1: the issuer must be on the configuration URL's origin
    if registry.origin(body["issuer"]) != registry.origin(url):
        raise RegistrationError(f"the configuration's issuer {body['issuer']!r} is not on the "
                                f"origin of its URL ({registry.origin(url)})", "issuer_mismatch")
    for name in ENDPOINTS:
        try:
            registry.check_url(name, body[name])
        except InputError as exc:
            raise RegistrationError(str(exc), "bad_configuration") from exc
    product = body.get(PLATFORM_CONFIGURATION, {})
    return Configuration(
        issuer=body["issuer"], authorization_endpoint=body["authorization_endpoint"],
        token_endpoint=body["token_endpoint"], jwks_uri=body["jwks_uri"],
        registration_endpoint=body["registration_endpoint"],
        product=str(product.get("product_family_code", "")) if isinstance(product, dict)
        else "")


def client_registration(tool_url: str) -> dict[str, Any]:
    """The tool's OpenID client registration with its LTI tool configuration."""
    base = tool_url.rstrip("/")
    launch = f"{base}/lti/launch"
    return {
        "application_type": "web", "response_types": ["id_token"],
        "grant_types": ["implicit", "client_credentials"],
        "initiate_login_uri": f"{base}/lti/login", "redirect_uris": [launch],
        "client_name": TOOL_NAME, "jwks_uri": f"{base}/lti/jwks",
        "token_endpoint_auth_method": "private_key_jwt",
        "scope": " ".join((services.SCORE_SCOPE, services.ROSTER_SCOPE)),
        TOOL_CONFIGURATION: {
            "domain": urlsplit(base).netloc, "target_link_uri": launch,
            "description": "An AI tutor that answers from the course's own material.",
            "claims": ["iss", "sub"],
            "messages": [{"type": c.DEEP_LINK_REQUEST, "target_link_uri": launch,
                          "label": TOOL_NAME}],
        },
    }


def post_registration(http: httpx.Client, config: Configuration, registration_token: str,
                      body: dict[str, Any]) -> tuple[str, str]:
    """Send the client registration; the client id and deployment id the platform gives."""
    headers = {"Accept": "application/json"}
    if registration_token:
        headers["Authorization"] = f"Bearer {registration_token}"
    reply = _answer(lambda: http.post(config.registration_endpoint, json=body, headers=headers),
                    "the platform's registration endpoint cannot be reached",
                    "the platform refused the registration (status {status})",
                    "registration_refused")
    answer = _json(reply, "registration answer", "bad_registration_reply")
    tool = answer.get(TOOL_CONFIGURATION)
    client_id = answer.get("client_id")
    deployment = tool.get("deployment_id") if isinstance(tool, dict) else None
    if not isinstance(client_id, str) or not client_id:
        raise RegistrationError("the platform's registration answer has no client_id",
                                "bad_registration_reply")
    if not isinstance(deployment, str | int) or not str(deployment):
        raise RegistrationError("the platform's registration answer has no deployment_id: "
                                "register the tool by hand (lti add-platform)",
                                "bad_registration_reply")
    return client_id, str(deployment)


def check_free(store: LtiStore, tenant: str, issuer: str, client_id: str) -> None:
    """Refuse an issuer and client id that already name a registration."""
    for taken in store.find_platforms(issuer, client_id):
        if taken.tenant == tenant:
            raise RegisteredError(f"issuer {issuer!r} with client id {client_id!r} is "
                                  f"registered already (platform {taken.id})",
                                  "already_registered")
        raise RegisteredError(f"issuer {issuer!r} with client id {client_id!r} is registered "
                              "by another tenant", "registered_by_another_tenant")


def register(store: LtiStore, http: httpx.Client, tenant: str, tool_url: str,
             configuration_url: str, registration_token: str) -> Platform:
    """Run a dynamic registration for `tenant`; the stored platform. Nothing is stored
    unless every step succeeded."""
    config = fetch_configuration(http, configuration_url)
    client_id, deployment = post_registration(http, config, registration_token,
                                              client_registration(tool_url))
    check_free(store, tenant, config.issuer, client_id)
    return registry.register(store, tenant, config.issuer, client_id, [deployment],
                             config.jwks_uri, config.authorization_endpoint,
                             config.token_endpoint)
