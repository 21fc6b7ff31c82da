"""What the tutor remembers of a student's sessions: their summaries.

A student key reads only its own (`me` names it); a teacher or an admin names the student.
Another tenant's course or student does not exist (404). A session's summary is written when
the session ends (`POST .../sessions/{session}/end`) or when a new session opens after it went
idle; the running summary holds the folded start of a session still going.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from ..errors import NotFoundError
from .deps import Caller, CallerDep, State, check_course

router = APIRouter(prefix="/v1", tags=["memory"])


def _student(caller: Caller, student: str) -> str:
    """The student named (`me`: a student key's own), if the caller may read them."""
    if student == "me":
        if caller.role != "student":
            raise NotFoundError("'me' names a student only with a student key")
        return caller.student
    if caller.role == "student" and student != caller.student:
        raise NotFoundError(f"student {student!r} does not exist")
    return student


@router.get("/courses/{course}/students/{student}/memory")
def memory(course: str, student: str, caller: CallerDep, state: State,
           limit: Annotated[int, Query(ge=1, le=50)] = 5) -> dict[str, Any]:
    """The student's last session summaries in the course, newest first, and the running
    summaries of their sessions still going."""
    check_course(state, caller, course)
    who = _student(caller, student)
    summaries = state.workspace.store.summaries
    return {
        "student": who,
        "sessions": [s.as_dict() for s in summaries.latest(caller.tenant, course, who, limit)],
        "running": [s.as_dict() for s in summaries.latest(caller.tenant, course, who, limit,
                                                          kind="running")],
    }
