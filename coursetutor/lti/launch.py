"""The OIDC third-party login and the check of a launch's `id_token` (IMS Security Framework
5.1.3): signature by the platform's key, issuer, audience (and `azp`), expiry and issue time,
the nonce the login set, used once, and a registered deployment.

The login's `state` is signed by the tool and names the platform, tenant and nonce, so the
launch needs no cookie. A platform that offers its storage (`lti_storage_target`) also keeps
the state and nonce for the page (LTI Client Side postMessages): the login then answers a page
that puts them there before going on, and the launch's page finds them again before it opens
anything, which binds the launch to the browser the login started in."""

from __future__ import annotations

import dataclasses
import secrets
import time
from typing import Any
from urllib.parse import urlencode

import jwt

from ..errors import LaunchError, NotFoundError
from ..store.lti import LtiStore, Platform
from . import claims as c
from . import registry, tokens
from .keyset import KeySets
from .storage import Storage, storage, target

LEEWAY_SECONDS = 60  # clock skew between the platform and the tool
MAX_TOKEN_SECONDS = 3600  # an id_token issued longer ago is refused whatever its exp


@dataclasses.dataclass(frozen=True)
class Login:
    """Where the login sends the browser: the platform's auth URL with state and nonce. With
    the platform's storage, the page first puts `state` and `nonce` there under the login's
    id (`login`), and goes to `fallback` (its own state and nonce, not kept there) if it
    cannot."""

    platform: Platform
    redirect: str
    storage: Storage | None = None
    login: str = ""
    state: str = ""
    nonce: str = ""
    fallback: str = ""


@dataclasses.dataclass(frozen=True)
class Verified:
    """A checked launch: its platform and claims, and the platform's storage when the login
    kept its state and nonce there (`login` names them)."""

    platform: Platform
    claims: dict[str, Any]
    storage: Storage | None = None
    login: str = ""


def login(store: LtiStore, secret: bytes, params: dict[str, str], launch_url: str) -> Login:
    """Answer a third-party login initiation (`iss`, `login_hint`, `target_link_uri`, maybe
    `client_id`, `lti_message_hint`, `lti_deployment_id`, `lti_storage_target`)."""
    issuer, hint = params.get("iss", ""), params.get("login_hint", "")
    if not issuer or not hint:
        raise LaunchError("a login initiation needs iss and login_hint", "bad_login")
    platform = registry.find(store, issuer, params.get("client_id"))
    deployment = params.get("lti_deployment_id")
    if deployment and deployment not in platform.deployment_ids:
        raise LaunchError(f"deployment {deployment!r} is not registered", "wrong_deployment")
    plain, _, _ = _auth(platform, secret, params, launch_url, {})
    frame = target(params)
    if not frame:
        return Login(platform, plain)
    login_id = secrets.token_urlsafe(12)
    bound, state, nonce = _auth(platform, secret, params, launch_url,
                                {"storage": frame, "login": login_id})
    return Login(platform, bound, storage(platform, frame), login_id, state, nonce, plain)


def _auth(platform: Platform, secret: bytes, params: dict[str, str], launch_url: str,
          extra: dict[str, str]) -> tuple[str, str, str]:
    """The platform's auth URL for a fresh nonce and a state signed with it (and `extra`),
    with that state and nonce."""
    nonce = secrets.token_urlsafe(24)
    state = tokens.issue(secret, "state", {"platform": platform.id, "tenant": platform.tenant,
                                             "nonce": nonce, **extra},
                         tokens.STATE_SECONDS)
    query = {"scope": "openid", "response_type": "id_token", "response_mode": "form_post",
             "prompt": "none", "client_id": platform.client_id, "redirect_uri": launch_url,
             "login_hint": params["login_hint"], "state": state, "nonce": nonce}
    if params.get("lti_message_hint"):
        query["lti_message_hint"] = params["lti_message_hint"]
    sep = "&" if "?" in platform.auth_login_url else "?"
    return f"{platform.auth_login_url}{sep}{urlencode(query)}", state, nonce


def _header(token: str) -> dict[str, Any]:
    try:
        header = jwt.get_unverified_header(token)
    except jwt.PyJWTError as exc:
        raise LaunchError("the id_token is not a JWT", "malformed") from exc
    if header.get("alg") != "RS256":
        raise LaunchError(f"the id_token is not signed with RS256 (alg "
                          f"{header.get('alg')!r})", "unsigned")
    return header


def verify(store: LtiStore, keys: KeySets, secret: bytes, id_token: str,
           state: str) -> Verified:
    """The platform and verified claims of a launch, or LaunchError naming the failed check."""
    expected = tokens.check(secret, "state", state)
    try:
        platform = store.get_platform(str(expected.get("tenant")),
                                      str(expected.get("platform")))
    except NotFoundError:
        raise LaunchError("the login's platform is no longer registered",
                          "unknown_issuer") from None
    header = _header(id_token)
    unverified = jwt.decode(id_token, options={"verify_signature": False})
    if unverified.get("iss") != platform.issuer:
        raise LaunchError(f"the launch's issuer {unverified.get('iss')!r} is not the "
                          "platform the login started with", "unknown_issuer")
    key = keys.key(platform.jwks_url, str(header.get("kid", "")))
    claims = _decode(id_token, key, platform)
    _check(store, platform, claims, str(expected.get("nonce", "")))
    frame, login_id = str(expected.get("storage", "")), str(expected.get("login", ""))
    if frame and login_id:
        return Verified(platform, claims, storage(platform, frame), login_id)
    return Verified(platform, claims)


def _decode(token: str, key: jwt.PyJWK, platform: Platform) -> dict[str, Any]:
    try:
        found: dict[str, Any] = jwt.decode(
            token, key, algorithms=["RS256"], audience=platform.client_id,
            issuer=platform.issuer, leeway=LEEWAY_SECONDS,
            options={"require": ["exp", "iat", "nonce", "sub", "aud", "iss"]})
    except jwt.ExpiredSignatureError as exc:
        raise LaunchError("the launch has expired", "expired") from exc
    except jwt.InvalidAudienceError as exc:
        raise LaunchError(f"the launch is not for this tool's client id "
                          f"{platform.client_id!r}", "wrong_audience") from exc
    except jwt.InvalidSignatureError as exc:
        raise LaunchError("the launch's signature does not verify with the platform's key",
                          "bad_signature") from exc
    except jwt.PyJWTError as exc:
        raise LaunchError(f"the launch's id_token is not valid: {exc}", "invalid") from exc
    return found


def _check(store: LtiStore, platform: Platform, claims: dict[str, Any], nonce: str) -> None:
    aud = claims["aud"]
    if isinstance(aud, list) and len(aud) > 1 and claims.get("azp") != platform.client_id:
        raise LaunchError("a launch for several audiences must name this tool as azp",
                          "wrong_audience")
    if time.time() - float(claims["iat"]) > MAX_TOKEN_SECONDS:
        raise LaunchError("the launch was issued too long ago", "expired")
    if not nonce or claims["nonce"] != nonce:
        raise LaunchError("the launch's nonce is not the one the login set", "wrong_nonce")
    deployment = claims.get(c.DEPLOYMENT)
    if deployment not in platform.deployment_ids:
        raise LaunchError(f"deployment {deployment!r} is not registered for this platform",
                          "wrong_deployment")
    if not store.use_nonce(platform.issuer, nonce, float(claims["exp"]) + LEEWAY_SECONDS):
        raise LaunchError("this launch was used already (replayed nonce)", "replayed_nonce")
