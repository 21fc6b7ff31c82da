"""What a checked launch opens: the course its LMS course or link is linked to, and the user
as a teacher or an enrolled student of the platform's tenant (never another tenant's)."""

from __future__ import annotations

import dataclasses

from ..errors import NotFoundError
from ..store import Store
from ..store.lti import LtiLink, Platform
from . import claims as c
from .claims import Launch, Role


@dataclasses.dataclass(frozen=True)
class Entry:
    """Who enters which course: the role, the student id (students) and the course ('' for a
    teacher of an LMS course not linked yet)."""

    role: Role
    student: str
    course: str
    link: LtiLink | None


def course_of(store: Store, platform: Platform, launch: Launch) -> str:
    """The course a launch opens: its link's `course` parameter (set by deep linking), else the
    course its link or LMS course was linked to; '' when none."""
    wanted = launch.custom.get("course", "")
    if wanted:
        store.get_course(platform.tenant, wanted)  # only the platform's tenant's courses
        return wanted
    for resource in (launch.resource_link, ""):
        link = store.lti.find_link(platform.id, launch.context_id, resource)
        if link is not None:
            return link.course
    return ""


def enter(store: Store, platform: Platform, launch: Launch) -> Entry:
    """Admit the launch's user: a student is enrolled in the course; the link keeps the LMS
    course's roster and grade book services for later."""
    role = c.require_role(launch)
    course = course_of(store, platform, launch)
    if not course and role == "student":
        raise NotFoundError("this LMS course is not linked to a course of the tutor yet: an "
                            "Instructor chooses one (deep linking)")
    student = c.student_id(platform.id, launch.sub) if role == "student" else ""
    link = None
    if course:
        link = store.lti.set_link(LtiLink(
            platform.id, launch.context_id, launch.resource_link, platform.tenant, course,
            launch.memberships_url, launch.lineitem_url,
            grades=launch.custom.get("grades") == "mastery" and bool(launch.lineitem_url),
            topic=launch.custom.get("topic", "")))
        if store.lti.find_link(platform.id, launch.context_id, "") is None:
            store.lti.set_link(dataclasses.replace(link, resource_link="", lineitem_url="",
                                                   grades=False))
    if role == "student":
        store.lti.set_user(platform.id, launch.sub, platform.tenant, student)
        store.enroll(platform.tenant, course, student)
    return Entry(role, student, course, link)


def link_course(store: Store, platform: Platform, context: str, course: str,
                grades: bool = False, topic: str = "") -> LtiLink:
    """Link an LMS course (context) as a whole to a course of the platform's tenant."""
    store.get_course(platform.tenant, course)
    found = store.lti.find_link(platform.id, context, "")
    base = found or LtiLink(platform.id, context, "", platform.tenant, course)
    return store.lti.set_link(dataclasses.replace(base, tenant=platform.tenant, course=course,
                                                  grades=grades, topic=topic))


