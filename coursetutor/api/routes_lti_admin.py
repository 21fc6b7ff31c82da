"""LTI registrations of a tenant (admins), LMS course links and roster syncs (teachers)."""

from __future__ import annotations

import dataclasses
from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool

from ..lti import enter, registry, roster
from ..store.lti import LtiLink, Platform
from .deps import CallerDep, State, require_admin, require_teacher
from .routes_lti import lti_tool
from .validate import Id, Line, Name

router = APIRouter(prefix="/v1", tags=["lti"])
class PlatformIn(BaseModel):
    issuer: Line = Field(min_length=1)
    client_id: Name = Field(min_length=1)
    deployment_ids: list[Name] = Field(min_length=1, max_length=100)
    jwks_url: Line = Field(min_length=1)
    auth_login_url: Line = Field(min_length=1)
    token_url: Line = Field(min_length=1)
    frame_origins: list[Line] = Field([], max_length=20,
                                      description="default: the issuer's and login URL's "
                                                  "origins")


class LinkIn(BaseModel):
    context: Name = Field(min_length=1, description="the LMS course's context id")
    course: Id = Field(min_length=1)
    grades: bool | None = Field(None, description="send mastery to the grade book columns "
                                                  "of the LMS course's links; null: as it is")
    topic: Name | None = Field(None, description="the one topic whose mastery is the grade; "
                                                 "empty: every topic's; null: as it is")


def platform_json(p: Platform) -> dict[str, Any]:
    return {**dataclasses.asdict(p), "deployment_ids": list(p.deployment_ids),
            "frame_origins": list(p.frame_origins)}


def link_json(link: LtiLink) -> dict[str, Any]:
    return dataclasses.asdict(link)


@router.get("/lti/platforms")
def list_platforms(caller: CallerDep, state: State) -> dict[str, Any]:
    """The LMS platforms registered in the caller's tenant."""
    require_admin(caller)
    return {"platforms": [platform_json(p)
                          for p in state.workspace.store.lti.list_platforms(caller.tenant)]}


@router.post("/lti/platforms", status_code=201)
def add_platform(body: PlatformIn, caller: CallerDep, state: State) -> dict[str, Any]:
    """Register an LMS platform for the caller's tenant."""
    require_admin(caller)
    platform = registry.register(
        state.workspace.store.lti, caller.tenant, body.issuer, body.client_id,
        body.deployment_ids, body.jwks_url, body.auth_login_url, body.token_url,
        body.frame_origins)
    lti_tool(state).forget_origins()
    return platform_json(platform)


@router.delete("/lti/platforms/{platform_id}", status_code=204)
def remove_platform(platform_id: str, caller: CallerDep, state: State) -> None:
    require_admin(caller)
    state.workspace.store.lti.remove_platform(caller.tenant, platform_id)
    lti_tool(state).forget_origins()


@router.put("/lti/platforms/{platform_id}/links")
def link_course(platform_id: str, body: LinkIn, caller: CallerDep,
                state: State) -> dict[str, Any]:
    """Link an LMS course (its context id) to a course, without deep linking."""
    require_teacher(caller)
    store = state.workspace.store
    platform = store.lti.get_platform(caller.tenant, platform_id)
    link = enter.link_course(store, platform, body.context, body.course, body.grades,
                             body.topic)
    columns = enter.grade_columns(store, platform, body.context, body.course)
    return {**link_json(link), "grade_columns": [k.lineitem_url for k in columns]}


@router.get("/courses/{course}/lti/links")
def course_links(course: str, caller: CallerDep, state: State) -> dict[str, Any]:
    """The LMS courses and links that open this course."""
    require_teacher(caller)
    store = state.workspace.store
    store.get_course(caller.tenant, course)
    return {"links": [link_json(k) for k in store.lti.course_links(caller.tenant, course)]}


@router.post("/courses/{course}/lti/roster")
async def sync_roster(course: str, caller: CallerDep, state: State) -> dict[str, Any]:
    """Enrol the Learners of every LMS course linked to this one (their NRPS rosters)."""
    require_teacher(caller)
    report = await run_in_threadpool(roster.sync_course, state.workspace.store,
                                     lti_tool(state).services, caller.tenant, course)
    return dataclasses.asdict(report)
