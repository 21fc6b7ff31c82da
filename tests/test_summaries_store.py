"""Conversation summaries in every store (SQLite, PostgreSQL): one contract, one suite."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from coursetutor.errors import InputError
from coursetutor.store import Store, sql_sessions, summaries
from coursetutor.store.summaries import Summary, turn_id
from coursetutor.types import Session, Turn

from .support import Clock, open_backend

T = "default"
C = "calculus"


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path,
          monkeypatch: pytest.MonkeyPatch) -> Iterator[Store]:
    """Three courses in a fresh store of each backend, on one ticking clock."""
    clock = Clock()
    monkeypatch.setattr(sql_sessions, "time", clock)
    monkeypatch.setattr(summaries, "time", clock)
    s = open_backend(request.param, lambda: request.getfixturevalue("postgres_url"), tmp_path)
    for tenant, course in [(T, C), (T, "algebra"), ("other-tenant", C)]:
        s.ensure_course(tenant, course, course.title(), "en")
    yield s
    s.close()


def session_with_turns(store: Store, student: str = "alice", course: str = C,
                       tenant: str = T, n: int = 2) -> Session:
    session = store.start_session(tenant, course, student)
    for i in range(n):
        store.add_turn(Turn(session.id, 0, tenant, course, student, f"question {i}",
                            "answer [1]", "lecture", "concept", "correct", "", "", True, ()))
    return store.get_session(tenant, course, session.id)


def summary(session: Session, kind: str = "session", text: str = "We did limits.",
            **fields: object) -> Summary:
    return Summary(session.tenant, session.course, session.student, session.id,
                   summaries.check_kind(kind), text, **fields)  # type: ignore[arg-type]


def test_put_and_get_keep_every_field(store: Store) -> None:
    s = session_with_turns(store)
    stored = store.summaries.put(summary(
        s, turn_ids=(turn_id(s.id, 1), turn_id(s.id, 2)), topics=("limits", "Ableitung π"),
        exercise_key="ex-01:Exercise 2", level="guiding"))
    assert stored == Summary(T, C, "alice", s.id, "session", "We did limits.",
                             (f"{s.id}:1", f"{s.id}:2"), ("limits", "Ableitung π"),
                             "ex-01:Exercise 2", "guiding", stored.created, stored.created)
    assert stored.created > s.updated
    assert store.summaries.get(T, C, s.id, "session") == stored
    assert store.summaries.get(T, C, s.id, "running") is None


def test_put_replaces_the_summary_of_its_session_and_kind(store: Store) -> None:
    s = session_with_turns(store)
    first = store.summaries.put(summary(s, "running", "Turns 1-2.", turn_ids=("a:1",)))
    second = store.summaries.put(summary(s, "running", "Turns 1-4.", turn_ids=("a:1", "a:2")))
    assert (second.text, second.turn_ids, second.created) == ("Turns 1-4.", ("a:1", "a:2"),
                                                              first.created)
    assert second.updated > first.updated
    session = store.summaries.put(summary(s, "session", "All of it."))
    assert [x.kind for x in store.summaries.for_student(T, "alice")] == ["session", "running"]
    assert store.summaries.get(T, C, s.id, "running") == second
    assert session.text == "All of it."


@pytest.mark.parametrize(("tenant", "course"), [("other-tenant", C), (T, "algebra")])
def test_a_summary_is_not_seen_outside_its_tenant_and_course(store: Store, tenant: str,
                                                              course: str) -> None:
    s = session_with_turns(store)
    store.summaries.put(summary(s))
    assert store.summaries.get(tenant, course, s.id, "session") is None
    assert store.summaries.latest(tenant, course, "alice") == []


def test_latest_is_newest_first_per_student_and_kind(store: Store) -> None:
    texts = []
    for i in range(3):
        s = session_with_turns(store)
        texts.append(store.summaries.put(summary(s, text=f"session {i}")).text)
        store.summaries.put(summary(s, "running", text=f"running {i}"))
    store.summaries.put(summary(session_with_turns(store, "bob"), text="bob's"))
    assert [x.text for x in store.summaries.latest(T, C, "alice", 2)] == ["session 2",
                                                                        "session 1"]
    assert [x.text for x in store.summaries.latest(T, C, "alice", 5, "running")] == [
        "running 2", "running 1", "running 0"]
    assert store.summaries.latest(T, C, "alice", 0) == []
    assert [x.text for x in store.summaries.latest(T, C, "bob")] == ["bob's"]


def test_unknown_kind_is_an_input_error(store: Store) -> None:
    with pytest.raises(InputError, match="use one of: running, session"):
        store.summaries.latest(T, C, "alice", kind="weekly")  # type: ignore[arg-type]


def test_for_student_and_forget(store: Store) -> None:
    store.summaries.put(summary(session_with_turns(store), text="calculus"))
    store.summaries.put(summary(session_with_turns(store, course="algebra"), text="algebra"))
    store.summaries.put(summary(session_with_turns(store, tenant="other-tenant"), text="other"))
    store.summaries.put(summary(session_with_turns(store, "bob"), text="bob's"))
    assert [x.text for x in store.summaries.for_student(T, "alice")] == ["algebra", "calculus"]
    assert [x.text for x in store.summaries.for_student(T, "alice", "algebra")] == ["algebra"]
    assert store.summaries.forget(T, "alice", "algebra") == 1
    assert [x.text for x in store.summaries.for_student(T, "alice")] == ["calculus"]
    assert store.summaries.forget(T, "alice") == 1
    assert store.summaries.for_student(T, "alice") == []
    assert [x.text for x in store.summaries.for_student("other-tenant", "alice")] == ["other"]
    assert [x.text for x in store.summaries.for_student(T, "bob")] == ["bob's"]


def test_pending_sessions_are_ended_or_idle_with_turns_and_no_summary(store: Store) -> None:
    idle = session_with_turns(store)
    ended = session_with_turns(store)
    store.end_session(T, C, ended.id)
    done = session_with_turns(store)
    store.summaries.put(summary(done))
    store.end_session(T, C, done.id)
    store.start_session(T, C, "alice")  # no turns: nothing to summarize
    store.end_session(T, C, store.start_session(T, C, "alice").id)
    running = store.summaries.put(summary(session_with_turns(store), "running"))
    cutoff = running.updated  # every session above saw its last turn before this
    fresh = session_with_turns(store)  # a turn after the cutoff: still going
    session_with_turns(store, "bob")
    assert store.summaries.pending(T, C, "alice", cutoff) == [idle.id, ended.id,
                                                              running.session_id]
    assert store.summaries.pending(T, C, "alice", cutoff, exclude=idle.id) == [
        ended.id, running.session_id]
    assert fresh.id not in store.summaries.pending(T, C, "alice", cutoff)
    assert store.summaries.pending(T, "algebra", "alice", cutoff) == []


def test_for_course_and_restore_keep_every_summary_as_stored(store: Store) -> None:
    s = session_with_turns(store)
    stored = [store.summaries.put(summary(s, "running", "Start.", turn_ids=(f"{s.id}:1",))),
              store.summaries.put(summary(s, exercise_key="ex:2", level="steps"))]
    store.summaries.put(summary(session_with_turns(store, course="algebra"), text="algebra"))
    assert store.summaries.for_course(T, C) == stored[::-1]
    store.summaries.forget(T, "alice", C)
    store.summaries.restore(stored)
    assert store.summaries.for_course(T, C) == stored[::-1]


def test_summaries_go_with_their_course(store: Store) -> None:
    s = session_with_turns(store)
    store.summaries.put(summary(s, turn_ids=(turn_id(s.id, 1),)))
    store.remove_course(T, "algebra")
    assert store.summaries.get(T, C, s.id, "session") is not None
    store.remove_course(T, C)
    assert store.summaries.for_student(T, "alice") == []
