"""The roster of an LMS course (NRPS) as enrolments: active Learners are enrolled, those the
LMS marks inactive or deleted are not any more."""

from __future__ import annotations

import dataclasses

from ..errors import NotFoundError
from ..store import Store
from ..store.lti import LtiLink, Platform
from . import claims as c
from .services import Member, Services


@dataclasses.dataclass(frozen=True)
class RosterReport:
    """What a sync changed."""

    enrolled: int
    removed: int
    teachers: int  # Instructors on the roster (they need no enrolment)


def apply(store: Store, platform: Platform, course: str, members: list[Member]) -> RosterReport:
    """Make the course's enrolments follow the roster's Learners."""
    enrolled = removed = teachers = 0
    for member in members:
        role = c.role_of(member.roles)
        if role == "teacher":
            teachers += 1
            continue
        if role != "student":
            continue
        student = c.student_id(platform.id, member.sub)
        if member.status == "Active":
            store.lti.set_user(platform.id, member.sub, platform.tenant, student)
            if not store.is_enrolled(platform.tenant, course, student):
                store.enroll(platform.tenant, course, student)
                enrolled += 1
        elif store.is_enrolled(platform.tenant, course, student):
            try:
                store.unenroll(platform.tenant, course, student)
                removed += 1
            except NotFoundError:  # removed meanwhile
                pass
    return RosterReport(enrolled, removed, teachers)


def sync(store: Store, services: Services, link: LtiLink) -> RosterReport:
    """Fetch the roster of a link's LMS course and apply it to its course."""
    if not link.memberships_url:
        return RosterReport(0, 0, 0)
    platform = store.lti.get_platform(link.tenant, link.platform)
    return apply(store, platform, link.course, services.roster(platform, link.memberships_url))


def sync_course(store: Store, services: Services, tenant: str, course: str) -> RosterReport:
    """Sync every LMS course linked to `course` that has a roster service."""
    store.get_course(tenant, course)
    seen: set[tuple[str, str]] = set()
    total = RosterReport(0, 0, 0)
    for link in store.lti.course_links(tenant, course):
        if not link.memberships_url or link.memberships_url in {u for _, u in seen}:
            continue
        seen.add((link.platform, link.memberships_url))
        report = sync(store, services, link)
        total = RosterReport(total.enrolled + report.enrolled, total.removed + report.removed,
                             max(total.teachers, report.teachers))
    return total
