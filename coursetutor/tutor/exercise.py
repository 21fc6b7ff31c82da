"""Which exercise a request is about, and its solution (kept from students, used for checks)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..errors import EmptyQueryError
from ..types import DocType, Hit, Turn
from ..workspace import Workspace

_NUMBER = re.compile(r"\d+")
EXERCISE_TYPES: tuple[DocType, ...] = ("exercise", "exam")


def exercise_hit(hits: Sequence[Hit]) -> Hit | None:
    """The best-ranked exercise or exam passage, if any."""
    return next((h for h in hits if h.chunk.doc_type in EXERCISE_TYPES), None)


def exercise_key(hit: Hit) -> str:
    """A stable name for the exercise a passage belongs to: document and section."""
    chunk = hit.chunk
    section = " > ".join(chunk.section_path) or f"#{chunk.ordinal}"
    return f"{chunk.document_id}:{section}"


def current_exercise(hits: Sequence[Hit], history: Sequence[Turn], followup: bool) -> str:
    """The exercise key of this turn: a follow-up stays on the previous turn's exercise."""
    if followup:
        for turn in reversed(history):
            if turn.exercise_key:
                return turn.exercise_key
    hit = exercise_hit(hits)
    return exercise_key(hit) if hit else ""


def _label_number(hit: Hit) -> str | None:
    for part in reversed(hit.chunk.section_path):
        found = _NUMBER.findall(part)
        if found:
            return str(found[0])
    return None


def solution_text(ws: Workspace, course: str, exercise: Hit) -> str:
    """The solution passage(s) of `exercise`: same number in the heading, else the closest."""
    try:
        hits = ws.search(exercise.chunk.text, course, k=5, doc_types=("solution",))
    except EmptyQueryError:
        return ""
    if not hits:
        return ""
    number = _label_number(exercise)
    numbered = [h for h in hits if number is not None and _label_number(h) == number]
    best = numbered or hits[:1]
    return "\n\n".join(h.chunk.text for h in best)


_REFERENCE = re.compile(
    r"(?:exercise|problem|question|task|esercizio|problema|domanda|aufgabe|übung|exercice|"
    r"ejercicio|练习|习题|题目|문제|연습\s*문제|演習|問題)\s*(?:no\.?|n\.|nr\.?|#)?\s*(\d+)|"
    r"第\s*(\d+)\s*[题題]|(\d+)\s*번\s*문제",
    re.IGNORECASE,
)


def referenced_number(question: str) -> str | None:
    """'exercise 2', 'esercizio 2', '第2题', '2번 문제' -> '2'."""
    m = _REFERENCE.search(question)
    if not m:
        return None
    return next(g for g in m.groups() if g)


def find_exercise(ws: Workspace, course: str, question: str, history: Sequence[Turn],
                  followup: bool) -> Hit | None:
    """The exercise the student names ('exercise 2') or, on a follow-up, the one before."""
    number = referenced_number(question)
    key = "" if number or not followup else current_exercise((), history, True)
    if not number and not key:
        return None
    try:
        hits = ws.search(question, course, k=30, doc_types=EXERCISE_TYPES)
    except EmptyQueryError:
        return None
    if number:
        return next((h for h in hits if _label_number(h) == number), None)
    return next((h for h in hits if exercise_key(h) == key), None)
