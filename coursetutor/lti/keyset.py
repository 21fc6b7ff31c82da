"""Platforms' key sets (JWKS), fetched with httpx and cached.

A key set is fetched again once it is `refresh` seconds old (or names no key a launch was
signed with: the platform rotated); while that fetch fails, the cached set is still used until
it is `max_age` seconds old. Past that, a launch is refused: no key can be trusted.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
import jwt

from ..errors import LaunchError, PlatformError

log = logging.getLogger("coursetutor.lti")

REFRESH_SECONDS = 300.0
MAX_AGE_SECONDS = 3600.0
MAX_KEYSET_BYTES = 256_000


@dataclasses.dataclass(frozen=True)
class _Cached:
    keys: dict[str, jwt.PyJWK]  # kid -> key ("" for a key without a kid)
    fetched: float


class KeySets:
    """The key set of each platform URL, shared by the threads of one process."""

    def __init__(self, http: httpx.Client, refresh: float = REFRESH_SECONDS,
                 max_age: float = MAX_AGE_SECONDS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.http = http
        self.refresh = refresh
        self.max_age = max_age
        self.clock = clock
        self._cached: dict[str, _Cached] = {}
        self._lock = threading.Lock()

    def key(self, url: str, kid: str) -> jwt.PyJWK:
        """The key `kid` of the key set at `url` (LaunchError when there is none)."""
        now = self.clock()
        with self._lock:
            cached = self._cached.get(url)
        stale = cached is None or now - cached.fetched >= self.refresh or kid not in cached.keys
        if stale:
            try:
                cached = self._fetch(url, now)
            except PlatformError as exc:
                if cached is None or now - cached.fetched >= self.max_age:
                    raise LaunchError(f"the platform's key set cannot be fetched and no "
                                      f"cached copy is fresh enough: {exc}",
                                      "keyset_unavailable") from exc
                log.warning("platform key set unreachable, using the cached one: %s", exc)
        assert cached is not None
        found = cached.keys.get(kid) or (cached.keys.get("") if len(cached.keys) == 1 else None)
        if found is None:
            raise LaunchError(f"the platform's key set has no key {kid!r}", "unknown_key")
        return found

    def _fetch(self, url: str, now: float) -> _Cached:
        try:
            reply = self.http.get(url, headers={"Accept": "application/json"})
            reply.raise_for_status()
            if len(reply.content) > MAX_KEYSET_BYTES:
                raise PlatformError(f"the key set at {url} is over {MAX_KEYSET_BYTES} bytes")
            keys = _parse(reply.json())
        except (httpx.HTTPError, ValueError, jwt.PyJWTError) as exc:
            raise PlatformError(f"key set {url}: {exc}") from exc
        cached = _Cached(keys, now)
        with self._lock:
            self._cached[url] = cached
        return cached


def _parse(data: Any) -> dict[str, jwt.PyJWK]:
    """The RSA signing keys of a JWKS document, by kid."""
    if not isinstance(data, dict) or not isinstance(data.get("keys"), list):
        raise ValueError("not a JWKS document (no 'keys' list)")
    keys = {}
    for entry in data["keys"]:
        if isinstance(entry, dict) and entry.get("kty") == "RSA" and entry.get(
                "use", "sig") == "sig":
            keys[str(entry.get("kid", ""))] = jwt.PyJWK(entry, algorithm="RS256")
    return keys
