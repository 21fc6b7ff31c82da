"""What a checked launch opens: the course its LMS course or link is linked to, and the user
as a teacher or an enrolled student of the platform's tenant (never another tenant's)."""

from __future__ import annotations

import dataclasses

from ..errors import NotFoundError
from ..store import Store
from ..store.lti import LtiLink, Platform
from . import claims as c
from .claims import Launch, Role
from .focus import Focus, check


@dataclasses.dataclass(frozen=True)
class Entry:
    """Who enters which course: the role, the student id (students) and the course ('' for a
    teacher of an LMS course not linked yet)."""

    role: Role
    student: str
    course: str
    link: LtiLink | None
    focus: Focus = dataclasses.field(default_factory=Focus)  # its document or live class


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


def sends_grades(store: Store, platform: Platform, launch: Launch,
                 own: LtiLink | None) -> bool:
    """Whether the launch's link sends mastery to its grade book column: as chosen for the
    link already (`link_course` turns it on or off), else as its deep link's `grades`
    parameter or its LMS course's choice says."""
    if not launch.lineitem_url:
        return False
    if own is not None and own.lineitem_url:
        return own.grades
    whole = store.lti.find_link(platform.id, launch.context_id, "")
    return launch.custom.get("grades") == "mastery" or (whole is not None and whole.grades)


def enter(store: Store, platform: Platform, launch: Launch) -> Entry:
    """Admit the launch's user: a student is enrolled in the course; the link keeps the LMS
    course's roster and grade book services for later."""
    role = c.require_role(launch)
    course = course_of(store, platform, launch)
    if not course and role == "student":
        raise NotFoundError("this LMS course is not linked to a course of the tutor yet: an "
                            "Instructor chooses one (deep linking)")
    focus = check(store, platform.tenant, course, launch.custom.get("document", ""),
                  launch.custom.get("live_class", "")) if course else Focus()
    student = c.student_id(platform.id, launch.sub) if role == "student" else ""
    link = None
    if course:
        own = store.lti.find_link(platform.id, launch.context_id, launch.resource_link)
        link = store.lti.set_link(LtiLink(
            platform.id, launch.context_id, launch.resource_link, platform.tenant, course,
            launch.memberships_url, launch.lineitem_url,
            grades=sends_grades(store, platform, launch, own),
            topic=launch.custom.get("topic", "") or (own.topic if own else "")))
        if store.lti.find_link(platform.id, launch.context_id, "") is None:
            store.lti.set_link(dataclasses.replace(link, resource_link="", lineitem_url="",
                                                   grades=False))
    if role == "student":
        store.lti.set_user(platform.id, launch.sub, platform.tenant, student)
        store.enroll(platform.tenant, course, student)
    return Entry(role, student, course, link, focus)


def link_course(store: Store, platform: Platform, context: str, course: str,
                grades: bool | None = None, topic: str | None = None) -> LtiLink:
    """Link an LMS course (context) as a whole to a course of the platform's tenant. `grades`
    (and `topic`) turn mastery passback on or off for the LMS course and for each of its links
    to the course that has a grade book column; None keeps them as they are."""
    store.get_course(platform.tenant, course)
    found = store.lti.find_link(platform.id, context, "")
    base = found or LtiLink(platform.id, context, "", platform.tenant, course)
    whole = store.lti.set_link(dataclasses.replace(
        base, tenant=platform.tenant, course=course,
        grades=base.grades if grades is None else grades,
        topic=base.topic if topic is None else topic))
    for link in grade_columns(store, platform, context, course, every=True):
        store.lti.set_link(dataclasses.replace(
            link, grades=link.grades if grades is None else grades,
            topic=link.topic if topic is None else topic))
    return whole


def grade_columns(store: Store, platform: Platform, context: str, course: str,
                  every: bool = False) -> list[LtiLink]:
    """The links of an LMS course to `course` that have a grade book column (those that send
    mastery to it, unless `every`)."""
    return [k for k in store.lti.course_links(platform.tenant, course)
            if k.platform == platform.id and k.context == context and k.resource_link
            and k.lineitem_url and (every or k.grades)]
