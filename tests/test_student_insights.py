"""The teacher's class view: students with their profiles and last visit, the weak areas most
students share and mastery per topic, over a real store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from coursetutor.memory.insights import (
    SharedWeakArea,
    TopicClassMastery,
    course_insights,
    course_students,
)
from coursetutor.store import SQLiteStore
from coursetutor.types import Turn

T, C = "default", "calculus"
DAY = 86_400.0


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    s = SQLiteStore(tmp_path / "t.db")
    s.ensure_course(T, C, "Calculus", "en")
    yield s
    s.close()


def _ask(store: SQLiteStore, student: str, question: str) -> str:
    session = store.start_session(T, C, student)
    turn = store.add_turn(Turn(session.id, 0, T, C, student, question, "a", "lecture",
                               "exercise", "correct"))
    return f"{session.id}:{turn.ordinal}"


def _set(value: float) -> object:
    return lambda previous: value


def test_shared_weak_areas_and_class_mastery(store: SQLiteStore) -> None:
    for student, answer in [("ana", "lim 1/x is 0 at 0?"), ("ben", "is 1/0 zero?")]:
        turn = _ask(store, student, answer)
        store.mastery.add_weak_area(T, C, student, "limits", f"{student} divides by zero", turn)
        store.mastery.observe(T, C, student, "limits", False, turn, _set(0.2))  # type: ignore[arg-type]
    turn = _ask(store, "cleo", "series?")
    store.mastery.add_weak_area(T, C, "cleo", "series", "sums diverge", turn)
    store.mastery.observe(T, C, "cleo", "limits", True, turn, _set(0.97))  # type: ignore[arg-type]
    found = course_insights(store, T, C, ["series", "limits"])
    assert found.students == 3
    # the most evidenced first, then the most recent
    assert found.weak_areas[0] == SharedWeakArea(
        "limits", 2, ("ben divides by zero", "ana divides by zero"),
        ("is 1/0 zero?", "lim 1/x is 0 at 0?"))
    assert [(w.topic, w.students) for w in found.weak_areas] == [("limits", 2), ("series", 1)]
    assert found.mastery == (TopicClassMastery("limits", 3, 0.4567, 1),)


def test_students_flags_those_not_seen_for_a_while(store: SQLiteStore) -> None:
    store.enroll(T, C, "dora")  # enrolled, never asked
    _ask(store, "ana", "q")
    store.profiles.update(T, C, "ana", level=3, style="step by step")
    store.profiles.record_topics(T, C, "ana", ["limits", "series"], "s:1")
    now = store.list_sessions(T, C, "ana")[0].updated
    rows = course_students(store, T, C, idle_days=7, now=now + 3 * DAY)
    assert [(r.student, r.idle, r.level, r.style, r.topics, r.turns) for r in rows] == [
        ("dora", True, 0, "", 0, 0), ("ana", False, 3, "step by step", 2, 2)]
    later = course_students(store, T, C, idle_days=7, now=now + 8 * DAY)
    assert [r.idle for r in later] == [True, True]
