"""Sessions and turns in every store (SQLite, PostgreSQL): the tutor's memory of a
conversation."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from coursetutor.errors import NotFoundError
from coursetutor.store import Store, sql_sessions
from coursetutor.types import Citation, Locator, Session, Turn

from .support import Clock, open_backend

T = "default"
C = "calculus"


@pytest.fixture(params=["sqlite", "postgresql"])
def store(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Store]:
    """Three courses in a fresh store of each backend; both share sql_sessions' clock."""
    monkeypatch.setattr(sql_sessions, "time", Clock())
    s = open_backend(request.param, lambda: request.getfixturevalue("postgres_url"), tmp_path)
    for tenant, course in [(T, C), (T, "algebra"), ("other-tenant", C)]:
        s.ensure_course(tenant, course, course.title(), "en")
    yield s
    s.close()


def turn(session: Session, question: str = "What is a limit?", exercise_key: str = "",
         student: str | None = None, sources: tuple[Citation, ...] = ()) -> Turn:
    return Turn(session.id, 0, session.tenant, session.course, student or session.student,
                question, "A limit is ... [1]", "lecture", "concept", "correct",
                "hint" if exercise_key else "", exercise_key, True, sources)


def test_start_and_get_session(store: Store) -> None:
    session = store.start_session(T, C, "alice")
    assert len(session.id) == 32
    assert session == Session(session.id, T, C, "alice", 1000.0, 1000.0)
    assert store.get_session(T, C, session.id) == session


def test_start_session_in_unknown_course(store: Store) -> None:
    with pytest.raises(NotFoundError):
        store.start_session(T, "no-such-course", "alice")


@pytest.mark.parametrize(("tenant", "course", "sid"), [
    ("other-tenant", C, None), (T, "algebra", None), (T, C, "0" * 32),
])
def test_session_outside_its_tenant_and_course_is_not_found(
    store: Store, tenant: str, course: str, sid: str | None
) -> None:
    session = store.start_session(T, C, "alice")
    with pytest.raises(NotFoundError, match="does not exist"):
        store.get_session(tenant, course, sid or session.id)


@pytest.mark.parametrize("call", [
    lambda s, sid: s.end_session("other-tenant", C, sid),
    lambda s, sid: s.list_turns(T, "algebra", sid),
    lambda s, sid: s.list_turns("other-tenant", C, sid, last=2),
])
def test_session_calls_outside_scope_are_not_found(
    store: Store, call: Callable[[Store, str], object]
) -> None:
    session = store.start_session(T, C, "alice")
    with pytest.raises(NotFoundError):
        call(store, session.id)
    assert store.get_session(T, C, session.id).ended is None


def test_list_sessions_most_recent_first(store: Store) -> None:
    first = store.start_session(T, C, "alice")
    second = store.start_session(T, C, "alice")
    store.start_session(T, C, "bob")
    store.start_session(T, "algebra", "alice")
    assert [s.id for s in store.list_sessions(T, C, "alice")] == [second.id, first.id]
    store.add_turn(turn(first))
    assert [(s.id, s.turns) for s in store.list_sessions(T, C, "alice")] == [
        (first.id, 1), (second.id, 0),
    ]
    assert store.list_sessions(T, C, "carol") == []


def test_end_session_keeps_the_first_end(store: Store) -> None:
    session = store.start_session(T, C, "alice")
    ended = store.end_session(T, C, session.id)
    assert ended == dataclasses.replace(session, ended=1001.0)
    assert store.end_session(T, C, session.id) == ended


def test_add_turn_numbers_turns_and_touches_the_session(store: Store) -> None:
    session = store.start_session(T, C, "alice")
    stored = [store.add_turn(turn(session, f"question {i}")) for i in range(3)]
    assert [(t.ordinal, t.created) for t in stored] == [(1, 1001.0), (2, 1002.0), (3, 1003.0)]
    assert stored[0] == dataclasses.replace(turn(session, "question 0"), ordinal=1,
                                            created=1001.0)
    assert store.list_turns(T, C, session.id) == stored
    # a session is titled by its first question
    assert store.get_session(T, C, session.id) == dataclasses.replace(
        session, updated=1003.0, turns=3, title="question 0")


@pytest.mark.parametrize("last", [0, 1, 2, 5])
def test_list_turns_last(store: Store, last: int) -> None:
    session = store.start_session(T, C, "alice")
    for i in range(4):
        store.add_turn(turn(session, f"question {i}"))
    questions = [t.question for t in store.list_turns(T, C, session.id, last=last)]
    assert questions == [f"question {i}" for i in range(4)][4 - min(last, 4):]


def test_turns_are_kept_per_session(store: Store) -> None:
    one, two = store.start_session(T, C, "alice"), store.start_session(T, C, "alice")
    store.add_turn(turn(one, "in one"))
    store.add_turn(turn(two, "in two"))
    assert [(t.question, t.ordinal) for t in store.list_turns(T, C, two.id)] == [("in two", 1)]


@pytest.mark.parametrize("change", [
    {"student": "mallory"}, {"tenant": "other-tenant"}, {"course": "algebra"},
    {"session_id": "0" * 32},
])
def test_add_turn_to_someone_elses_session_is_not_found(
    store: Store, change: dict[str, Any]
) -> None:
    session = store.start_session(T, C, "alice")
    with pytest.raises(NotFoundError, match="does not exist"):
        store.add_turn(dataclasses.replace(turn(session), **change))
    assert store.list_turns(T, C, session.id) == []


def test_count_exercise_turns(store: Store) -> None:
    one, two = store.start_session(T, C, "alice"), store.start_session(T, C, "alice")
    bob = store.start_session(T, C, "bob")
    key = "exercises-md:Exercise 2"
    for s in (one, two, one, bob):
        store.add_turn(turn(s, exercise_key=key))
    store.add_turn(turn(one, exercise_key="exercises-md:Exercise 3"))
    store.add_turn(turn(one))
    counts = [store.count_exercise_turns(T, C, student, k) for student, k in [
        ("alice", key), ("bob", key), ("carol", key), ("alice", "exercises-md:Exercise 3"),
        ("alice", ""),
    ]]
    assert counts == [3, 1, 0, 1, 0]
    assert store.count_exercise_turns(T, "algebra", "alice", key) == 0


def test_remove_course_removes_its_sessions_and_turns(store: Store) -> None:
    gone = store.start_session(T, C, "alice")
    store.add_turn(turn(gone, exercise_key="ex:1"))
    kept = store.start_session(T, "algebra", "alice")
    store.add_turn(turn(kept, exercise_key="ex:1"))
    store.remove_course(T, C)
    with pytest.raises(NotFoundError):
        store.get_session(T, C, gone.id)
    store.ensure_course(T, C, "Calculus again", "en")
    assert store.list_sessions(T, C, "alice") == []
    assert store.count_exercise_turns(T, C, "alice", "ex:1") == 0
    assert store.count_exercise_turns(T, "algebra", "alice", "ex:1") == 1
    assert len(store.list_turns(T, "algebra", kept.id)) == 1


CITATIONS = (
    Citation(1, "c1", "lecture-pdf", "Lecture 2: Convergence", "lecture", Locator(page=3),
             'The "order" of convergence…'),
    Citation(2, "c2", "video-srt", "Lezione 1 (video): metodo di Newton", "transcript",
             Locator(start=62.5, end=150.0), "x n plus one equals ..."),
    Citation(4, "c4", "notes-md", "笔记：二分法", "summary", Locator(anchor="bisection"),
             "二分法每一步把区间减半。"),
    Citation(5, "c5", "sheet-md", "Sheet", "exercise", Locator(), ""),
)


def test_citations_round_trip(store: Store) -> None:
    session = store.start_session(T, C, "alice")
    added = store.add_turn(turn(session, sources=CITATIONS))
    assert added.sources == CITATIONS
    assert store.list_turns(T, C, session.id)[0].sources == CITATIONS


def test_course_activity_counts_turns_and_lists_gaps(store: Store) -> None:
    ana, ben = store.start_session(T, C, "ana"), store.start_session(T, C, "ben")
    store.add_turn(turn(ana, exercise_key="ex-2"))
    store.add_turn(turn(ana, exercise_key="ex-2"))
    store.add_turn(turn(ben, exercise_key="ex-2", student="ben"))
    store.add_turn(dataclasses.replace(turn(ben, "Who won the cup?", student="ben"),
                                       grade="incorrect"))
    store.add_turn(dataclasses.replace(turn(ben, "hello", student="ben"), category="off_topic",
                                       grade=""))
    other = store.start_session(T, "algebra", "ana")
    store.add_turn(turn(other, "Not counted in calculus"))
    activity = store.course_activity(T, C)
    assert (activity.students, activity.sessions, activity.turns) == (2, 2, 5)
    assert activity.categories == {"lecture": 4, "off_topic": 1}
    assert activity.grades == {"correct": 3, "incorrect": 1, "": 1}
    assert activity.levels == {"hint": 3, "": 2}
    assert activity.not_covered == ["Who won the cup?"]
    assert activity.exercises == [("ex-2", 3, 2)]
    assert store.course_activity(T, C, since=10_000).turns == 0


def test_course_activity_of_an_unknown_course_is_not_found(store: Store) -> None:
    with pytest.raises(NotFoundError):
        store.course_activity("other-tenant", "algebra")
