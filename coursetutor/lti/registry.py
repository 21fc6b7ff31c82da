"""Registering a tenant's platforms, finding the one a login or launch names, and the origins
that may frame the tool's pages."""

from __future__ import annotations

import secrets
import time
from urllib.parse import urlsplit

from ..errors import InputError, LaunchError
from ..store.lti import LtiStore, Platform


def origin(url: str) -> str:
    """`scheme://host[:port]` of a URL."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def check_url(what: str, url: str) -> str:
    """`url` if it is an absolute http(s) URL (https, except on this machine for tests)."""
    parts = urlsplit(url)
    local = parts.hostname in ("127.0.0.1", "localhost", "::1")
    if parts.scheme not in ("https", "http") or not parts.netloc or (
            parts.scheme == "http" and not local):
        raise InputError(f"{what} must be an https:// URL, got {url!r}")
    return url


def register(store: LtiStore, tenant: str, issuer: str, client_id: str,
             deployment_ids: list[str], jwks_url: str, auth_login_url: str, token_url: str,
             frame_origins: list[str] | None = None) -> Platform:
    """Store a platform for `tenant`. The pages may be framed by `frame_origins`, by default the
    issuer's and the login URL's origins."""
    if not issuer or not client_id:
        raise InputError("a platform needs its issuer and the client id it gave the tool")
    if not deployment_ids or not all(deployment_ids):
        raise InputError("a platform needs at least one deployment id")
    check_url("the issuer", issuer)
    for what, url in (("jwks_url", jwks_url), ("auth_login_url", auth_login_url),
                      ("token_url", token_url)):
        check_url(what, url)
    framers = frame_origins or sorted({origin(issuer), origin(auth_login_url)})
    for framer in framers:
        check_url("a frame origin", framer)
    platform = Platform(secrets.token_hex(4), tenant, issuer, client_id,
                        tuple(dict.fromkeys(deployment_ids)), jwks_url, auth_login_url,
                        token_url, tuple(origin(f) for f in framers), time.time())
    return store.add_platform(platform)


def find(store: LtiStore, issuer: str, client_id: str | None) -> Platform:
    """The registration a login or launch names (LaunchError for an unknown one)."""
    found = store.find_platforms(issuer, client_id or None)
    if not found:
        raise LaunchError(f"no platform with issuer {issuer!r}"
                          + (f" and client id {client_id!r}" if client_id else "")
                          + " is registered", "unknown_issuer")
    if len(found) > 1:
        raise LaunchError(f"issuer {issuer!r} has several registrations: the login must name "
                          "its client_id", "ambiguous_issuer")
    return found[0]


def frame_origins(store: LtiStore) -> tuple[str, ...]:
    """Every origin a registered platform frames the tool from."""
    return tuple(sorted({o for p in store.list_platforms() for o in p.frame_origins}))
