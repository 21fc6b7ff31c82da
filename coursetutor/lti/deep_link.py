"""Deep linking (LTI Deep Linking 2.0): the teacher picks a course in the tool (and maybe one
of its documents or live classes), the tool answers the platform with a signed
`LtiDeepLinkingResponse` holding one LTI resource link."""

from __future__ import annotations

import secrets
import time
from typing import Any

from ..store.lti import LtiStore, Platform
from . import claims as c
from . import tool_keys
from .focus import Focus

RESPONSE = "LtiDeepLinkingResponse"
RESPONSE_SECONDS = 600
SCORE_MAXIMUM = 100


def content_item(launch_url: str, course: str, title: str, grades: bool,
                 focus: Focus | None = None) -> dict[str, Any]:
    """The link to `course` (or to its document or live class, `focus`); with `grades`, a
    grade book column for its mastery."""
    item: dict[str, Any] = {"type": "ltiResourceLink", "title": title, "url": launch_url,
                            "custom": {"course": course, "grades": "mastery" if grades else "",
                                       **(focus.custom() if focus else {})}}
    if grades:
        item["lineItem"] = {"scoreMaximum": SCORE_MAXIMUM, "label": f"{title}: mastery",
                            "resourceId": course, "tag": "coursetutor-mastery"}
    return item


def response(store: LtiStore, platform: Platform, deployment: str, data: str,
             items: list[dict[str, Any]]) -> str:
    """The signed JWT the platform's `deep_link_return_url` takes as `JWT`."""
    now = int(time.time())
    claims: dict[str, Any] = {
        "iss": platform.client_id, "aud": [platform.issuer], "azp": platform.client_id,
        "iat": now, "exp": now + RESPONSE_SECONDS, "nonce": secrets.token_urlsafe(16),
        c.MESSAGE_TYPE: RESPONSE, c.VERSION: "1.3.0", c.DEPLOYMENT: deployment,
        c.DL + "content_items": items}
    if data:
        claims[c.DL + "data"] = data
    return tool_keys.sign(store, claims)
