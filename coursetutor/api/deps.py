"""Request dependencies: the app state, the caller behind the key, and what it may see."""

from __future__ import annotations

import dataclasses
from typing import Annotated

from fastapi import Depends, Request

from ..errors import AuthenticationError, NotFoundError, PermissionDeniedError, RateLimitError
from ..types import ApiKey, Course, Role
from ..workspace import Workspace
from .access import authenticate
from .ratelimit import Limits
from .state import AppState


@dataclasses.dataclass(frozen=True)
class Caller:
    """Who is asking: the key, and the tenant the request acts in."""

    key: ApiKey
    tenant: str

    @property
    def role(self) -> Role:
        return self.key.role

    @property
    def student(self) -> str:
        return self.key.student

    @property
    def limits_key(self) -> str:
        """Who request limits count against: the student behind a student key (all of a
        student's keys share one budget), else the key."""
        if self.key.role == "student":
            return f"student:{self.key.tenant}:{self.key.student}"
        return self.key.id


def get_state(request: Request) -> AppState:
    state: AppState = request.app.state.coursetutor
    return state


State = Annotated[AppState, Depends(get_state)]


def _key_text(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    if header.lower().startswith("bearer "):
        return header[7:].strip()
    return request.headers.get("x-api-key")


async def get_caller(request: Request, state: State) -> Caller:
    """Authenticate the key and count the request against its limits (on the event loop with
    the embedded store: a primary-key read, cheaper than a hop to a worker thread)."""
    return await state.call(caller_of, request, state)


def client_address(request: Request) -> str:
    """The client's address (the proxy's, unless the server trusts its forwarded headers)."""
    return request.client.host if request.client else "unknown"


def limit_address(request: Request, state: AppState, what: str) -> None:
    """Count a request without a key against its client address's limits of `what`
    ('failed_auth' or 'signed_url'): 429 once they are spent."""
    try:
        state.limiter.hit(f"{what}:{client_address(request)}",
                          Limits.for_address(state.settings, what))
    except RateLimitError:
        state.metrics.rate_limited.labels(what).inc()
        raise


def caller_of(request: Request, state: AppState) -> Caller:
    """The caller behind the request's key. A failed authentication counts against the client
    address: past its limits the answer is 429, not 401, so keys cannot be tried in bulk."""
    try:
        key = authenticate(state.workspace.store, _key_text(request))
    except AuthenticationError:
        limit_address(request, state, "failed_auth")
        raise
    request.state.key_id = key.id
    tenant = key.tenant
    if key.role == "admin" and request.headers.get("x-tenant"):
        tenant = request.headers["x-tenant"]
        state.workspace.store.get_tenant(tenant)
    caller = Caller(key, tenant)
    try:
        state.limiter.hit(caller.limits_key, Limits.for_role(state.settings, key.role))
    except RateLimitError:
        state.metrics.rate_limited.labels(key.role).inc()
        raise
    return caller


CallerDep = Annotated[Caller, Depends(get_caller)]


def require_teacher(caller: Caller) -> None:
    if caller.role == "student":
        raise PermissionDeniedError("only teachers and admins may do this",
                                    code="teachers_only")


def require_admin(caller: Caller) -> None:
    if caller.role != "admin":
        raise PermissionDeniedError("only admins may do this", code="admins_only")


def may_see_course(state: AppState, key: ApiKey, tenant: str, course: str) -> bool:
    """Who may see a course of `tenant`: a student key only a course its student is enrolled
    in; a teacher's or an admin's key every course."""
    return key.role != "student" or state.workspace.store.is_enrolled(tenant, course, key.student)


def hides_solutions(key: ApiKey, course: Course) -> bool:
    """Whether the key must not see the course's solutions: a student's, unless the course
    allows them."""
    return key.role == "student" and not course.allow_solutions


def acting_student(caller: Caller, requested: str | None) -> str:
    """The student a turn is asked for: a student key's own; a teacher or an admin names one,
    else the turn is the key's own (`key:<id>`)."""
    if caller.role == "student":
        return caller.student
    return requested or f"key:{caller.key.id}"


def _seen(state: AppState, caller: Caller, course: str, found: Course) -> Course:
    """`found` if the caller may see its course; a course it may not see does not exist."""
    if not may_see_course(state, caller.key, caller.tenant, course):
        raise NotFoundError(f"course {course!r} does not exist", code="course_not_found",
                            course=course)
    return found


def visible_course(state: AppState, caller: Caller, course: str) -> Course:
    """The course if the caller may see it; a course it may not see does not exist."""
    return _seen(state, caller, course, state.workspace.store.get_course(caller.tenant, course))


def check_course(state: AppState, caller: Caller, course: str) -> Course:
    """Like `visible_course` without counting documents and chunks (the hot path)."""
    return _seen(state, caller, course,
                 state.workspace.store.course_settings(caller.tenant, course))


def workspace(state: AppState, caller: Caller) -> Workspace:
    return state.workspace_for(caller.tenant)
