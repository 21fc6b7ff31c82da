"""What an LTI 1.3 launch says: its message, the user's roles, the LMS course, the services."""

from __future__ import annotations

import dataclasses
import hashlib
import re
from typing import Any, Literal

from ..errors import LaunchError, PermissionDeniedError

LTI = "https://purl.imsglobal.org/spec/lti/claim/"
DL = "https://purl.imsglobal.org/spec/lti-dl/claim/"
NRPS = "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"
AGS = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
MESSAGE_TYPE = LTI + "message_type"
DEPLOYMENT = LTI + "deployment_id"
VERSION = LTI + "version"
ROLES = LTI + "roles"
CONTEXT = LTI + "context"
RESOURCE_LINK = LTI + "resource_link"
CUSTOM = LTI + "custom"
DEEP_LINKING = DL + "deep_linking_settings"
RESOURCE_LAUNCH = "LtiResourceLinkRequest"
DEEP_LINK_REQUEST = "LtiDeepLinkingRequest"
MESSAGES = (RESOURCE_LAUNCH, DEEP_LINK_REQUEST)

Role = Literal["teacher", "student"]
# context roles (membership#...) and the institution or system roles that make a teacher
TEACHING = ("Instructor", "ContentDeveloper", "Administrator", "TeachingAssistant")
_ADMIN = re.compile(r"/(system|institution)/person#(Administrator|SysAdmin)$")
_SAFE_SUB = re.compile(r"^[A-Za-z0-9_.@-]{1,96}$")


@dataclasses.dataclass(frozen=True)
class Launch:
    """A checked launch's claims, as the tool uses them."""

    message_type: str
    sub: str
    roles: tuple[str, ...]
    context_id: str
    context_title: str
    resource_link: str
    custom: dict[str, str]
    memberships_url: str = ""
    lineitem_url: str = ""
    ags_scopes: tuple[str, ...] = ()
    deep_link_return: str = ""
    deep_link_data: str = ""

    @property
    def role(self) -> Role | None:
        """teacher for Instructor (and admins), student for Learner, else None."""
        return role_of(self.roles)


def _membership(role: str) -> str:
    """A context role's name (`...membership#Instructor` and `Instructor` are one;
    `...membership/Instructor#TeachingAssistant` is a sub-role of Instructor)."""
    if "/membership/" in role:
        return role.rsplit("/membership/", 1)[1].split("#", 1)[0]
    if "/membership#" in role:
        return role.rsplit("#", 1)[1]
    return role if "/" not in role and "#" not in role else ""


def role_of(roles: tuple[str, ...]) -> Role | None:
    """The coursetutor role of a user with these LTI roles."""
    names = {_membership(r) for r in roles}
    if names & set(TEACHING) or any(_ADMIN.search(r) for r in roles):
        return "teacher"
    if "Learner" in names:
        return "student"
    return None


def student_id(platform: str, sub: str) -> str:
    """The tenant's student id of an LMS user: readable when the LMS's user id is an id
    already, else a hash of it (ids must fit `access.check_id`)."""
    if _SAFE_SUB.match(sub):
        return f"lti-{platform}-{sub}"
    return f"lti-{platform}-{hashlib.sha256(sub.encode()).hexdigest()[:32]}"


def _text(claims: dict[str, Any], name: str) -> str:
    value = claims.get(name, "")
    return value if isinstance(value, str) else ""


def _object(claims: dict[str, Any], name: str) -> dict[str, Any]:
    value = claims.get(name)
    return value if isinstance(value, dict) else {}


def read(claims: dict[str, Any]) -> Launch:
    """The launch of verified `claims` (LaunchError for a message this tool does not take)."""
    kind = _text(claims, MESSAGE_TYPE)
    if kind not in MESSAGES:
        raise LaunchError(f"unsupported LTI message type {kind!r}: this tool takes "
                          f"{', '.join(MESSAGES)}", "message_type")
    if _text(claims, VERSION) != "1.3.0":
        raise LaunchError("the launch is not LTI 1.3.0", "version")
    roles = claims.get(ROLES, [])
    context, link = _object(claims, CONTEXT), _object(claims, RESOURCE_LINK)
    nrps, ags = _object(claims, NRPS), _object(claims, AGS)
    deep = _object(claims, DEEP_LINKING)
    custom = {str(k): str(v) for k, v in _object(claims, CUSTOM).items()}
    return Launch(
        message_type=kind, sub=_text(claims, "sub"),
        roles=tuple(r for r in roles if isinstance(r, str)) if isinstance(roles, list) else (),
        context_id=str(context.get("id", "")), context_title=str(context.get("title", "")),
        resource_link=str(link.get("id", "")), custom=custom,
        memberships_url=str(nrps.get("context_memberships_url", "")),
        lineitem_url=str(ags.get("lineitem", "")),
        ags_scopes=tuple(str(s) for s in ags.get("scope", []) if isinstance(s, str)),
        deep_link_return=str(deep.get("deep_link_return_url", "")),
        deep_link_data=str(deep.get("data", "")))


def require_role(launch: Launch) -> Role:
    """The launch's role, refusing users who are neither teacher nor student, a student on a
    teacher's link (`custom: page=teacher`) and a student asking to deep link."""
    role = launch.role
    if role is None:
        raise PermissionDeniedError("this LMS role may not use the tutor: only Instructors "
                                    "and Learners")
    if role == "student" and launch.message_type == DEEP_LINK_REQUEST:
        raise PermissionDeniedError("only an Instructor may choose what a link opens")
    if role == "student" and launch.custom.get("page") == "teacher":
        raise PermissionDeniedError("this link opens the teacher page: Learners may not open "
                                    "it")
    if not launch.sub:
        raise LaunchError("the launch names no user (sub)", "no_user")
    return role
