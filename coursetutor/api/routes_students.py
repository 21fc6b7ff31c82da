"""A course's topic list, students' profiles (see, correct, export, erase) and the teacher's
view of a class.

Who may do what: a student key sees, corrects, exports and erases only itself (`me` names
it); a teacher sees the profiles of its tenant's courses and the class view; an admin may do
anything in its tenant. Another tenant's course or student does not exist (404).
"""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field

from ..errors import NotFoundError, PermissionDeniedError
from ..memory import course_topics
from ..memory.insights import course_insights, course_students
from ..memory.privacy import export_student, forget_student
from .deps import Caller, CallerDep, State, require_teacher, visible_course
from .state import AppState
from .validate import Id, Line, Name, Text

router = APIRouter(prefix="/v1", tags=["students"])


class TopicsIn(BaseModel):
    topics: list[Name] | None = Field(None, max_length=2000)  # None: the material's list again


class ProfilePatch(BaseModel):
    level: int | None = Field(None, ge=0, le=5)  # 0 clears it
    style: Line | None = None  # "examples first", "theory first", "step by step" or ""
    goals: Text | None = Field(None, max_length=2000)
    language: Line | None = Field(None, max_length=20)
    resolve_weak_areas: list[Id] = Field(default_factory=list, max_length=100)
    remove_topics: list[Name] = Field(default_factory=list, max_length=100)


def named_student(caller: Caller, student: str, own_only: bool = False) -> str:
    """The student the caller names (`me`: a student key's own) if it may reach them: a
    student only itself, a teacher (unless `own_only`) and an admin anyone in the tenant."""
    if student == "me":
        if caller.role != "student":
            raise NotFoundError("'me' names a student only with a student key",
                                code="me_needs_student_key")
        return caller.student
    if caller.role == "student" and student != caller.student:
        raise NotFoundError(f"student {student!r} does not exist", code="student_not_found",
                            student=student)
    if own_only and caller.role == "teacher":
        raise PermissionDeniedError("only the student or an admin may do this",
                                    code="own_student_only")
    return student


def _profile(state: AppState, tenant: str, course: str, student: str) -> dict[str, Any]:
    store = state.workspace.store
    return {
        "profile": dataclasses.asdict(store.profiles.get(tenant, course, student)),
        "weak_areas": [dataclasses.asdict(w) for w in store.mastery.weak_areas(
            tenant, course, student)],
        "mastery": [dataclasses.asdict(m) | {"mastered": m.mastered}
                    for m in store.mastery.estimates(tenant, course, student)],
    }


@router.get("/courses/{course}/topics")
def get_topics(course: str, caller: CallerDep, state: State) -> dict[str, Any]:
    """The course's topic list (from the material, or as a teacher corrected it)."""
    visible_course(state, caller, course)
    store = state.workspace.store
    return {"course": course, "topics": course_topics(store, caller.tenant, course),
            "corrected": store.profiles.topic_list(caller.tenant, course) is not None}


@router.put("/courses/{course}/topics")
def put_topics(course: str, body: TopicsIn, caller: CallerDep, state: State) -> dict[str, Any]:
    """Correct the course's topic list (teachers and admins); `null` restores the material's."""
    require_teacher(caller)
    state.workspace.store.profiles.set_topic_list(caller.tenant, course, body.topics)
    return get_topics(course, caller, state)


@router.get("/courses/{course}/students/{student}/profile")
def get_profile(course: str, student: str, caller: CallerDep, state: State) -> dict[str, Any]:
    """A student's profile, weak areas and mastery per topic, each with its turn ids."""
    name = named_student(caller, student)
    visible_course(state, caller, course)
    return _profile(state, caller.tenant, course, name)


@router.patch("/courses/{course}/students/{student}/profile")
def patch_profile(course: str, student: str, body: ProfilePatch, caller: CallerDep,
                  state: State) -> dict[str, Any]:
    """The student corrects their profile: level, style, goals, language; weak areas they
    have overcome and topics to forget."""
    name = named_student(caller, student, own_only=True)
    visible_course(state, caller, course)
    store = state.workspace.store
    _check_named(state, caller.tenant, course, name, body)
    store.profiles.update(caller.tenant, course, name, level=body.level, style=body.style,
                          goals=body.goals, language=body.language)
    for area in body.resolve_weak_areas:
        store.mastery.resolve(caller.tenant, course, name, area)
    for topic in body.remove_topics:
        store.profiles.remove_topic(caller.tenant, course, name, topic)
    return _profile(state, caller.tenant, course, name)


def _check_named(state: AppState, tenant: str, course: str, student: str,
                 body: ProfilePatch) -> None:
    """A 404 for a weak area or topic the patch names that is not the student's, before
    anything is written: a refused patch changes nothing."""
    store = state.workspace.store
    areas = {w.id for w in store.mastery.weak_areas(tenant, course, student, active_only=False)}
    for area in body.resolve_weak_areas:
        if area not in areas:
            raise NotFoundError(f"weak area {area!r} does not exist",
                                code="weak_area_not_found", area=area)
    topics = {t.topic for t in store.profiles.get(tenant, course, student).topics}
    for topic in body.remove_topics:
        if topic not in topics:
            raise NotFoundError(f"{student} has no studied topic {topic!r}",
                                code="topic_not_found", student=student, topic=topic)


@router.get("/courses/{course}/students/{student}/export")
def export_in_course(course: str, student: str, caller: CallerDep,
                     state: State) -> dict[str, Any]:
    """Everything stored about the student in the course, as one JSON document."""
    name = named_student(caller, student, own_only=True)
    visible_course(state, caller, course)
    return export_student(state.workspace.store, caller.tenant, name, course)


@router.delete("/courses/{course}/students/{student}/data")
def forget_in_course(course: str, student: str, caller: CallerDep,
                     state: State) -> dict[str, Any]:
    """Erase everything stored about the student in the course (the enrolment stays)."""
    name = named_student(caller, student, own_only=True)
    visible_course(state, caller, course)
    gone = forget_student(state.workspace.store, state.settings, caller.tenant, name, course)
    return {"student": name, "course": course, "rows": gone.rows, "sessions": gone.sessions,
            "cache_keys": gone.cache_keys}


@router.get("/students/{student}/export")
def export_everything(student: str, caller: CallerDep, state: State) -> dict[str, Any]:
    """Everything stored about the student in every course of the tenant."""
    return export_student(state.workspace.store, caller.tenant,
                          named_student(caller, student, own_only=True))


@router.delete("/students/{student}/data")
def forget_everything(student: str, caller: CallerDep, state: State) -> dict[str, Any]:
    """Erase the student from the tenant: every course's data, enrolments and keys."""
    name = named_student(caller, student, own_only=True)
    gone = forget_student(state.workspace.store, state.settings, caller.tenant, name)
    return {"student": name, "course": None, "rows": gone.rows, "sessions": gone.sessions,
            "cache_keys": gone.cache_keys}


@router.get("/courses/{course}/insights")
def insights(course: str, caller: CallerDep, state: State,
             limit: Annotated[int, Query(ge=1, le=100)] = 10) -> dict[str, Any]:
    """The weak areas most students share (with counts, misconceptions and example
    questions) and mastery per topic across the class."""
    require_teacher(caller)
    store = state.workspace.store
    store.get_course(caller.tenant, course)
    found = course_insights(store, caller.tenant, course,
                            course_topics(store, caller.tenant, course), limit)
    return dataclasses.asdict(found)


def students_view(state: AppState, caller: Caller, course: str,
                  idle_days: float) -> dict[str, Any]:
    """The course's students with profile, last seen and whether idle for `idle_days`."""
    store = state.workspace.store
    rows = course_students(store, caller.tenant, course, idle_days)
    return {"profiles": [dataclasses.asdict(r) for r in rows],
            "idle": [r.student for r in rows if r.idle], "idle_days": idle_days,
            "retention_days": store.profiles.retention_days(caller.tenant, course)}
