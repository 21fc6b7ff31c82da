"""The platform's storage (1EdTech LTI Client Side postMessages: `lti.put_data` and
`lti.get_data`), as the server prepares it for the page: the frame a login initiation names
(`lti_storage_target`), the origins whose answers the page accepts, and the names under which
a login keeps its state and nonce there. The page (`static/lti.js`) does the messaging; the
server only signs what it must later find again."""

from __future__ import annotations

import dataclasses
import re

from ..store.lti import Platform
from .registry import origin

# a frame's name as platforms send it: `_parent` (Moodle 4.3+), `post_message_forwarding`
# (Canvas); anything else is ignored and the login keeps to its signed state alone
_TARGET = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
KEY_PREFIX = "coursetutor."  # every key the tool puts in a platform's storage starts so


def target(params: dict[str, str]) -> str:
    """The login initiation's `lti_storage_target` if it names a frame, else ''."""
    found = params.get("lti_storage_target", "")
    return found if _TARGET.match(found) else ""


@dataclasses.dataclass(frozen=True)
class Storage:
    """Where the page reaches the platform's storage: the frame named `target`, answering
    from `origin` (the platform's OIDC authorization URL's, as the specification says);
    `origins` are all the registration lists (its frame origins too), the only ones whose
    messages the page reads."""

    target: str
    origin: str
    origins: tuple[str, ...]

    def fields(self) -> dict[str, str]:
        """The page's fields (the launch's URL fragment) that name this storage."""
        return {"lti_storage_target": self.target, "lti_storage_origin": self.origin,
                "lti_origins": " ".join(self.origins)}


def storage(platform: Platform, frame: str) -> Storage:
    """The storage of `platform` behind the frame named `frame`."""
    auth = origin(platform.auth_login_url)
    return Storage(frame, auth, tuple(sorted({auth, *platform.frame_origins})))


def state_key(login: str) -> str:
    """The name a login's state is kept under."""
    return f"{KEY_PREFIX}state.{login}"


def nonce_key(login: str) -> str:
    """The name a login's nonce is kept under."""
    return f"{KEY_PREFIX}nonce.{login}"
