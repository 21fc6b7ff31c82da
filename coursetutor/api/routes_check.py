"""The course health check for teachers: start one, then poll its progress and report."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, Field

from ..errors import NotFoundError
from .deps import CallerDep, State, require_teacher

router = APIRouter(prefix="/v1", tags=["courses"])


class CheckIn(BaseModel):
    k: int = Field(5, ge=1, le=50, description="a section is found when one of its chunks is "
                                               "in the top k")
    sections: int = Field(25, ge=1, le=200, description="at most this many sections per "
                                                        "document")
    answers: bool = Field(True, description="with a model on: answer each question too")


@router.post("/courses/{course}/check", status_code=202)
def start_check(course: str, caller: CallerDep, state: State,
                body: CheckIn | None = None) -> dict[str, Any]:
    """Start a health check of the course (or return the one already running); poll
    GET /v1/courses/{course}/check/{id} for its progress and report."""
    require_teacher(caller)
    state.workspace.store.get_course(caller.tenant, course)
    options = body or CheckIn.model_validate({})
    run = state.checks.submit(state.workspace_for(caller.tenant), state.router, course,
                              options.k, options.sections, options.answers)
    return run.as_dict()


@router.get("/courses/{course}/check")
def latest_check(course: str, caller: CallerDep, state: State) -> dict[str, Any]:
    """The course's most recent check that this server ran."""
    require_teacher(caller)
    state.workspace.store.get_course(caller.tenant, course)
    run = state.checks.latest(caller.tenant, course)
    if run is None:
        raise NotFoundError(f"course {course!r} has not been checked yet: "
                            f"POST /v1/courses/{course}/check", code="course_not_checked",
                            course=course)
    return run.as_dict()


@router.get("/courses/{course}/checks")
def list_checks(course: str, caller: CallerDep, state: State) -> dict[str, Any]:
    """The course's most recent check as a list (empty when this server never checked it):
    the same run as GET .../check, without a 404 for a page to stumble on."""
    require_teacher(caller)
    state.workspace.store.get_course(caller.tenant, course)
    run = state.checks.latest(caller.tenant, course)
    return {"checks": [run.as_dict()] if run is not None else []}


@router.get("/courses/{course}/check/{check_id}")
def get_check(course: str, check_id: str, caller: CallerDep, state: State) -> dict[str, Any]:
    """One check: status, sections done of all, and the report when it is done."""
    require_teacher(caller)
    state.workspace.store.get_course(caller.tenant, course)
    return state.checks.get(caller.tenant, course, check_id).as_dict()
