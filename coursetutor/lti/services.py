"""Calling a platform's LTI Advantage services: an OAuth 2 access token by client credentials
with a JWT the tool signs (IMS Security Framework 4.1), then the roster (NRPS) and the grade
book's scores (AGS)."""

from __future__ import annotations

import dataclasses
import secrets
import threading
import time
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from ..errors import PlatformError
from ..store.lti import LtiStore, Platform
from . import tool_keys

ROSTER_SCOPE = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"
SCORE_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
MEMBERSHIPS = "application/vnd.ims.lti-nrps.v2.membershipcontainer+json"
SCORE = "application/vnd.ims.lis.v1.score+json"
MAX_PAGES = 100  # roster pages followed by their `Link: rel="next"`


@dataclasses.dataclass(frozen=True)
class Member:
    """One person of an LMS course's roster."""

    sub: str
    roles: tuple[str, ...]
    status: str  # Active, Inactive or Deleted


class Services:
    """The platforms' services, with access tokens cached until shortly before they expire."""

    def __init__(self, store: LtiStore, http: httpx.Client) -> None:
        self.store = store
        self.http = http
        self._tokens: dict[tuple[str, str], tuple[str, float]] = {}
        self._lock = threading.Lock()

    def token(self, platform: Platform, scope: str) -> str:
        """An access token of `platform` for `scope`."""
        now = time.time()
        with self._lock:
            cached = self._tokens.get((platform.id, scope))
        if cached and cached[1] > now:
            return cached[0]
        assertion = tool_keys.sign(self.store, {
            "iss": platform.client_id, "sub": platform.client_id, "aud": platform.token_url,
            "iat": int(now), "exp": int(now) + 300, "jti": secrets.token_urlsafe(16)})
        reply = self._call("POST", platform.token_url, "token", data={
            "grant_type": "client_credentials", "client_assertion_type": ASSERTION_TYPE,
            "client_assertion": assertion, "scope": scope})
        try:
            body = reply.json()
            token, seconds = str(body["access_token"]), float(body.get("expires_in", 3600))
        except (ValueError, KeyError, TypeError) as exc:
            raise PlatformError(f"the token endpoint's reply has no access_token: {exc}") from exc
        with self._lock:
            self._tokens[(platform.id, scope)] = (token, now + max(0.0, seconds - 30))
        return token

    def _call(self, method: str, url: str, what: str, **kwargs: Any) -> httpx.Response:
        try:
            reply = self.http.request(method, url, **kwargs)
        except httpx.HTTPError as exc:
            raise PlatformError(f"the platform's {what} endpoint cannot be reached: "
                                f"{exc}") from exc
        if reply.status_code >= 400:
            raise PlatformError(f"the platform's {what} endpoint answered "
                                f"{reply.status_code}")
        return reply

    def roster(self, platform: Platform, memberships_url: str) -> list[Member]:
        """Every member of the LMS course, page by page."""
        auth = {"Authorization": f"Bearer {self.token(platform, ROSTER_SCOPE)}",
                "Accept": MEMBERSHIPS}
        members: list[Member] = []
        url: str | None = memberships_url
        for _ in range(MAX_PAGES):
            if url is None:
                break
            reply = self._call("GET", url, "roster", headers=auth)
            try:
                rows = reply.json()["members"]
            except (ValueError, KeyError, TypeError) as exc:
                raise PlatformError(f"the roster reply has no members: {exc}") from exc
            members += [Member(str(m["user_id"]), tuple(m.get("roles", [])),
                               str(m.get("status", "Active")))
                        for m in rows if isinstance(m, dict) and "user_id" in m]
            next_link = reply.links.get("next")
            url = next_link.get("url") if next_link else None
        return members

    def send_score(self, platform: Platform, lineitem: str, sub: str, score: float,
                   maximum: float = 100.0) -> None:
        """Post a student's score to a grade book column (`{lineitem}/scores`)."""
        parts = urlsplit(lineitem)
        scores = urlunsplit(parts._replace(path=parts.path.rstrip("/") + "/scores"))
        stamp = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        self._call("POST", scores, "score", json={
            "userId": sub, "scoreGiven": score, "scoreMaximum": maximum,
            "activityProgress": "InProgress", "gradingProgress": "FullyGraded",
            "timestamp": stamp}, headers={
            "Authorization": f"Bearer {self.token(platform, SCORE_SCOPE)}",
            "Content-Type": SCORE})
