"""Turn stage, after the done event: when the student showed their own work or answered the
tutor's question, ask the model whether it is right and which misconception it shows, and
record that (mastery estimate, weak area). It runs once the reply is out, so it never holds
up the answer; any failure leaves the turn as it was and records nothing."""

from __future__ import annotations

import dataclasses
import logging

from ..errors import CoursetutorError
from ..llm import GenParams, Message
from ..llm.router import CallRecord, Router
from ..memory.diagnose import Diagnosis, Recorded, parse_diagnosis, record, should_diagnose
from ..memory.topics import chunk_topics, course_topics, title_topic
from ..types import Answer, Chunk, Hit, SearchFilters
from ..workspace import Workspace
from . import prompts
from .exercise import EXERCISE_TYPES, solution_text

log = logging.getLogger(__name__)

MATERIAL_CHARS = 1500  # of the passages the turn cited, shown to the model
TOPICS_SHOWN = 30


@dataclasses.dataclass(frozen=True)
class DiagnoseInput:
    """One turn, as the stage needs it."""

    course: str
    student: str
    session_id: str
    message: str  # the student's message of this turn
    previous: str  # the tutor's reply before it ("" on a session's first turn)
    turn_id: str = ""  # the stored turn ("session:ordinal"); "" reads the session's last


def diagnose_turn(ws: Workspace, router: Router, inp: DiagnoseInput, answer: Answer,
                  log_calls: list[CallRecord]) -> Recorded | None:
    """Diagnose and record the turn if it shows the student's work; None when it does not,
    the model is off, or its verdict is unusable."""
    if not router.enabled or not should_diagnose(
            ws.settings.diagnose, answer.intent, answer.covered and bool(answer.context),
            inp.message, inp.previous):
        return None
    try:
        return _diagnose(ws, router, inp, answer, log_calls)
    except CoursetutorError as exc:  # a model or store failure costs the diagnosis only
        log.warning("diagnosis skipped: %s", exc)
        return None


def _diagnose(ws: Workspace, router: Router, inp: DiagnoseInput, answer: Answer,
              log_calls: list[CallRecord]) -> Recorded | None:
    turn_id = inp.turn_id
    if not turn_id:
        turns = ws.store.list_turns(ws.tenant, inp.course, inp.session_id, last=1)
        if not turns or turns[0].question != inp.message:
            return None
        turn_id = f"{inp.session_id}:{turns[0].ordinal}"
    found = ws.store.get_chunks(SearchFilters(ws.tenant, inp.course), list(answer.context))
    chunks = [found[i] for i in answer.context if i in found]
    topics = course_topics(ws.store, ws.tenant, inp.course)
    offered = _offered(chunks, topics)
    diagnosis = ask_model(router, DiagnosePrompt(
        material=_material(chunks), reference=_reference(ws, inp.course, chunks),
        previous=inp.previous, message=inp.message, topics=tuple(offered)),
        fallback_topic(chunks, topics), log_calls)
    if diagnosis is None:
        return None
    return record(ws.store, ws.settings, ws.tenant, inp.course, inp.student, turn_id,
                  diagnosis)


@dataclasses.dataclass(frozen=True)
class DiagnosePrompt:
    """What the model is shown (also what `coursetutor eval memory` fills from MathDial)."""

    material: str
    reference: str  # a worked solution, for the model only ("" when none)
    previous: str
    message: str
    topics: tuple[str, ...]


def ask_model(router: Router, p: DiagnosePrompt, fallback: str,
              log_calls: list[CallRecord]) -> Diagnosis | None:
    """The model's verdict on the student's message, validated (None when unusable)."""
    reference = (f"\nWorked solution (for you only; never state its result):\n{p.reference}\n"
                 if p.reference else "")
    prompt = prompts.render("diagnose", material=p.material, reference=reference,
                            previous=p.previous or "(none)", message=p.message,
                            topics="; ".join(p.topics) or fallback)
    raw = router.complete("grade", [Message("user", prompt)],
                          GenParams(temperature=0.0, max_tokens=120, json=True), log_calls)
    return parse_diagnosis(raw.text, p.topics or (fallback,), fallback)


def _material(chunks: list[Chunk]) -> str:
    text = "\n\n".join(c.text for c in chunks[:3])
    return text[:MATERIAL_CHARS]


def _reference(ws: Workspace, course: str, chunks: list[Chunk]) -> str:
    """The solution of the exercise the turn cited, when the course has one."""
    exercise = next((c for c in chunks if c.doc_type in EXERCISE_TYPES), None)
    if exercise is None:
        return ""
    return solution_text(ws, course, Hit(exercise, 0.0, {}, {}, exercise.locator))[
        :MATERIAL_CHARS]


def _offered(chunks: list[Chunk], topics: list[str]) -> list[str]:
    """The topics of the cited passages first, then the rest of the list, at most 30."""
    near = [t for c in chunks for t in chunk_topics(c, topics)]
    ordered = list(dict.fromkeys([*near, *topics]))
    return ordered[:TOPICS_SHOWN]


def fallback_topic(chunks: list[Chunk], topics: list[str]) -> str:
    """The turn's topic when the model names none from the list: the first cited passage's
    topic, else its innermost section title, else its document's title."""
    for c in chunks:
        found = chunk_topics(c, topics)
        if found:
            return found[0]
    if chunks:
        first = chunks[0]
        return title_topic(first.section_path[-1]) if first.section_path else first.document_title
    return ""
