"""Stage: open. The question, the course, the session and the backend are checked before
anything streams, and what the turn needs of the course and the session is read once."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence

from ...config import Settings
from ...errors import EmptyQueryError, InputError, NotFoundError
from ...live.standing import ClassProgress, class_progress
from ...llm.router import Router
from ...store.base import CourseState
from ...types import DOC_TYPES, DocType, Turn
from ...workspace import Workspace


@dataclasses.dataclass(frozen=True)
class Ask:
    """A student's request, as the caller made it."""

    question: str
    course: str
    student: str = "anonymous"
    session_id: str | None = None
    level: int = 3
    history: Sequence[Turn] | None = None  # replaces the stored session's turns
    class_id: str | None = None  # asked during this class of the course


@dataclasses.dataclass(frozen=True)
class Opened:
    """A checked request with its course, session and recent turns."""

    question: str
    course: str
    student: str
    session_id: str
    level: int
    started: float
    history: tuple[Turn, ...]
    state: CourseState
    fresh: bool  # the session opened with this turn
    live: ClassProgress | None = None  # the class in progress, when asked during one

    @property
    def allow_solutions(self) -> bool:
        return self.state.course.allow_solutions

    @property
    def language(self) -> str:
        """The course's language."""
        return self.state.course.language

    @property
    def allowed_types(self) -> tuple[DocType, ...]:
        """Every document type a student may see in this course."""
        return tuple(d for d in DOC_TYPES if self.allow_solutions or d != "solution")


def open_turn(ws: Workspace, router: Router, ask: Ask) -> Opened:
    """Check the request and read the course and the session; every error a caller can act
    on is raised here, before any work is queued or streamed."""
    question = _checked_question(ask.question, ask.student, ws.settings)
    state = ws.store.course_state(ws.tenant, ask.course)
    if state.chunks == 0:
        raise NotFoundError(f"course {ask.course!r} has no documents yet: ingest some first",
                            code="course_empty", course=ask.course)
    if router.enabled:
        router.llm("answer")  # load the model or reach the server before streaming
    # an unknown class is a NotFoundError, raised before a session is started for it
    live = (class_progress(ws.store, ws.tenant, ask.course, ask.class_id)
            if ask.class_id else None)
    if ask.session_id:
        session = ws.store.get_session(ws.tenant, ask.course, ask.session_id)
        if session.student != ask.student:
            raise NotFoundError(f"session {ask.session_id!r} does not exist",
                                code="session_not_found", session=ask.session_id)
    else:
        session = ws.store.start_session(ws.tenant, ask.course, ask.student)
    limit = ws.settings.history_turns
    if ask.history is not None:
        history = list(ask.history)[-limit:]
    elif ask.session_id:
        history = ws.turns.recent(ws.store, ws.tenant, ask.course, session.id, limit)
    else:
        history = []  # a new session has no turns yet: cached as such, with no read
        ws.turns.put(ws.tenant, ask.course, session.id, history)
    return Opened(question, ask.course, ask.student, session.id, ask.level,
                  time.perf_counter(), tuple(history), state, not ask.session_id, live)


def _checked_question(question: str, student: str, settings: Settings) -> str:
    question = question.strip()
    if not question:
        raise EmptyQueryError("the question is empty", code="empty_question")
    if len(question) > settings.max_question_chars:
        raise InputError(
            f"the question has {len(question)} characters; the limit is "
            f"{settings.max_question_chars} (max_question_chars): shorten it",
            code="question_too_long", length=len(question), limit=settings.max_question_chars)
    if not student.strip():
        raise InputError("the student id is empty", code="student_id_empty")
    return question
