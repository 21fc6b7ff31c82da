"""The tool's own short-lived tokens, signed with the deployment's API secret (HS256): the OIDC
login's `state` and the deep linking page's session. Neither needs a cookie, so both work
inside an LMS's iframe."""

from __future__ import annotations

import time
from typing import Any

import jwt

from ..errors import LaunchError

STATE_SECONDS = 600  # from the login's redirect to the platform until the launch comes back
DEEP_LINK_SECONDS = 1800  # the teacher's time on the deep linking page


def issue(secret: bytes, purpose: str, claims: dict[str, Any], seconds: int) -> str:
    """A token for `purpose` carrying `claims`, valid `seconds`."""
    now = int(time.time())
    return jwt.encode({**claims, "purpose": purpose, "iat": now, "exp": now + seconds},
                      secret, algorithm="HS256")


def check(secret: bytes, purpose: str, token: str) -> dict[str, Any]:
    """The claims of a token this tool issued for `purpose` (LaunchError otherwise)."""
    try:
        claims: dict[str, Any] = jwt.decode(token, secret, algorithms=["HS256"],
                                            options={"require": ["exp", "purpose"]})
    except jwt.ExpiredSignatureError as exc:
        raise LaunchError(f"the {purpose} expired: start again from the LMS",
                          f"{purpose}_expired") from exc
    except jwt.PyJWTError as exc:
        raise LaunchError(f"the {purpose} is not one this tool issued", f"bad_{purpose}") from exc
    if claims.get("purpose") != purpose:
        raise LaunchError(f"the {purpose} is not one this tool issued", f"bad_{purpose}")
    return claims
