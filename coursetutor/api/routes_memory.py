"""What the tutor remembers of a student's sessions: their summaries.

A student key reads only its own (`me` names it); a teacher or an admin names the student.
Another tenant's course or student does not exist (404). A session's summary is written when
the session ends (`POST .../sessions/{session}/end`) or when a new session opens after it went
idle; the running summary holds the folded start of a session still going.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from .deps import CallerDep, State, check_course
from .routes_students import named_student

router = APIRouter(prefix="/v1", tags=["memory"])


@router.get("/courses/{course}/students/{student}/memory")
def memory(course: str, student: str, caller: CallerDep, state: State,
           limit: Annotated[int, Query(ge=1, le=50)] = 5) -> dict[str, Any]:
    """The student's last session summaries in the course, newest first, and the running
    summaries of their sessions still going."""
    check_course(state, caller, course)
    who = named_student(caller, student)
    summaries = state.workspace.store.summaries
    return {
        "student": who,
        "sessions": [s.as_dict() for s in summaries.latest(caller.tenant, course, who, limit)],
        "running": [s.as_dict() for s in summaries.latest(caller.tenant, course, who, limit,
                                                          kind="running")],
    }
