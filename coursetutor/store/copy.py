"""Copy everything one store holds into another (SQLite to PostgreSQL, or back) without
re-embedding: tenants, vectors, courses with their documents and chunks, enrolments,
sessions with their turns and summaries, mastery and weak areas, ingest jobs, API keys, and
LTI: the registered LMS platforms with their users, LMS course links and the scores sent, and
the tool's signing keys (the nonces of past launches are not kept: they only stop replays).

The target must hold no course. Each document is written in one transaction, so a copy that
stops midway leaves whole documents; run it again on an emptied target. The original files
(`files_dir`) are not in the store: keep the same folder, or copy it beside.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from ..errors import ConflictError
from .base import Store


@dataclasses.dataclass
class CopyReport:
    """What was copied."""

    tenants: int = 0
    vectors: int = 0
    courses: int = 0
    documents: int = 0
    chunks: int = 0
    enrolments: int = 0
    sessions: int = 0
    turns: int = 0
    jobs: int = 0
    keys: int = 0
    classes: int = 0
    class_events: int = 0
    summaries: int = 0
    mastery: int = 0  # observations (estimates and weak areas come with them)
    lti_platforms: int = 0
    lti_keys: int = 0  # the tool's signing keys
    lti_users: int = 0
    lti_links: int = 0
    lti_scores: int = 0

    def as_dict(self) -> dict[str, int]:
        return dataclasses.asdict(self)


def copy_store(source: Store, target: Store,
               progress: Callable[[str], None] | None = None) -> CopyReport:
    """Copy `source` into `target` (which must hold no course); return the counts."""
    tell = progress or (lambda _message: None)
    tenants = source.list_tenants()
    for tenant in tenants:
        if target.list_courses(tenant.id):
            raise ConflictError(
                f"the target store already holds courses of tenant {tenant.id!r}; "
                "copy into an empty store")
    report = CopyReport()
    for tenant in tenants:
        target.ensure_tenant(tenant.id, tenant.name)
        report.tenants += 1
    _copy_lti(source, target, report)
    for model, vectors in source.iter_vectors():
        target.put_vectors(model, vectors)  # first: chunks find their vectors when written
        report.vectors += len(vectors)
        tell(f"vectors: {report.vectors}")
    for tenant in tenants:
        for course in source.list_courses(tenant.id):
            _copy_course(source, target, tenant.id, course.id, report)
            tell(f"course {tenant.id}/{course.id}: {course.documents} documents, "
                 f"{course.chunks} chunks")
    for key in source.list_keys():
        target.add_key(key)
        report.keys += 1
    return report


def _copy_lti(source: Store, target: Store, report: CopyReport) -> None:
    """The tool's keys, and each platform with its LMS users (before the courses: their
    links name the platforms)."""
    for key in reversed(source.lti.tool_keys()):
        target.lti.add_tool_key(key)
        report.lti_keys += 1
    for platform in source.lti.list_platforms():
        target.lti.add_platform(platform)
        report.lti_platforms += 1
        for user in source.lti.users(platform.id):
            target.lti.set_user(user.platform, user.sub, user.tenant, user.student)
            report.lti_users += 1


def _copy_course(source: Store, target: Store, tenant: str, course_id: str,
                 report: CopyReport) -> None:
    course = source.get_course(tenant, course_id)
    target.ensure_course(tenant, course.id, course.title, course.language)
    target.set_course_policy(tenant, course.id, course.allow_solutions)
    report.courses += 1
    for document in source.list_documents(tenant, course.id):
        rows = source.export_chunks(tenant, course.id, document.id)
        report.chunks += target.replace_document(document, rows)
        report.documents += 1
    target.set_course_language(tenant, course.id, source.explicit_language(tenant, course.id))
    for student in source.list_students(tenant, course.id):
        target.enroll(tenant, course.id, student)
        report.enrolments += 1
    for session in reversed(source.all_sessions(tenant, course.id)):
        turns = source.list_turns(tenant, course.id, session.id)
        target.import_session(session, turns)
        report.sessions += 1
        report.turns += len(turns)
    summaries = source.summaries.for_course(tenant, course.id)
    target.summaries.restore(summaries)
    report.summaries += len(summaries)
    mastery = source.mastery.records(tenant, course.id)
    target.mastery.restore(tenant, course.id, mastery)
    report.mastery += len(mastery.observations)
    for job in reversed(source.list_jobs(tenant, course.id)):
        target.add_job(job)
        report.jobs += 1
    for live in reversed(source.classes.list_classes(tenant, course.id)):
        events = source.classes.list_events(tenant, course.id, live.id)
        target.classes.import_class(live, events)
        report.classes += 1
        report.class_events += len(events)
    for link in source.lti.course_links(tenant, course.id):
        target.lti.set_link(link, keep_updated=True)
        report.lti_links += 1
    for sent in source.lti.scores(tenant, course.id):
        target.lti.set_score(sent.lineitem, sent.tenant, sent.course, sent.student, sent.score,
                             sent.sent)
        report.lti_scores += 1
