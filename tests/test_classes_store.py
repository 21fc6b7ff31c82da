"""Live classes in every store (SQLite, PostgreSQL): one contract, one suite."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from coursetutor.errors import ConflictError, InputError, NotFoundError
from coursetutor.store import Store
from coursetutor.store.classes import ClassEvent, LiveClass, TranscriptEvent

from .support import open_backend

T = "default"
C = "calculus"


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """Two courses of one tenant and one of another, in a fresh store of each backend."""
    s = open_backend(request.param, lambda: request.getfixturevalue("postgres_url"), tmp_path)
    for tenant, course in [(T, C), (T, "algebra"), ("other-tenant", C)]:
        s.ensure_course(tenant, course, course.title(), "en")
    yield s
    s.close()


def ev(text: str, start: float = 0.0, end: float = 1.0, final: bool = True,
       speaker: str = "") -> TranscriptEvent:
    return TranscriptEvent(start, end, text, speaker, final)


def test_a_class_starts_runs_and_ends(store: Store) -> None:
    live = store.classes.start_class(T, C, "Limits", "slides-pdf")
    assert live == LiveClass(live.id, T, C, "Limits", "slides-pdf", live.started, None, None,
                             "tracked", None)
    assert live.running and live.document_id == f"class-{live.id}"
    assert store.classes.get_class(T, C, live.id) == live
    assert store.classes.list_classes(T, C, running=True) == [live]
    ended = store.classes.end_class(T, C, live.id)
    assert ended.ended is not None and ended.ended >= live.started and not ended.running
    assert store.classes.end_class(T, C, live.id) == ended  # ending twice changes nothing
    assert store.classes.list_classes(T, C, running=True) == []
    assert store.classes.list_classes(T, C) == [ended]


def test_events_are_numbered_in_order_and_keep_every_field(store: Store) -> None:
    live = store.classes.start_class(T, C, "Limits")
    first = store.classes.add_event(T, C, live.id, ev("I can vector", 0.5, 2.0, speaker="Rossi"),
                                    page=3, received=100.0)
    second = store.classes.add_event(T, C, live.id, ev("next one", 2.5, 3.0),
                                     raw_text="next won")
    assert first == ClassEvent(live.id, 1, 0.5, 2.0, "I can vector", "I can vector", "Rossi",
                               True, 3, 100.0)
    assert (second.seq, second.text, second.raw_text, second.page) == (2, "next one",
                                                                         "next won", None)
    assert store.classes.list_events(T, C, live.id) == [first, second]
    assert store.classes.list_events(T, C, live.id, since=1) == [second]
    assert store.classes.last_seq(T, C, live.id) == 2


def test_a_partial_caption_is_replaced_by_the_next_event(store: Store) -> None:
    live = store.classes.start_class(T, C, "Limits")
    store.classes.add_event(T, C, live.id, ev("The derivative", 0, 1))
    store.classes.add_event(T, C, live.id, ev("the eigen", 1, 2, final=False))
    store.classes.add_event(T, C, live.id, ev("the eigen vec", 1, 2.5, final=False))
    final = store.classes.add_event(T, C, live.id, ev("the eigenvector is", 1, 3))
    assert final.seq == 2
    events = store.classes.list_events(T, C, live.id)
    assert [(e.seq, e.text, e.final) for e in events] == [
        (1, "The derivative", True), (2, "the eigenvector is", True)]
    store.classes.add_event(T, C, live.id, ev("partial again", 3, 4, final=False))
    assert [e.seq for e in store.classes.list_events(T, C, live.id, final_only=True)] == [1, 2]
    assert store.classes.last_seq(T, C, live.id) == 3


def test_an_ended_class_takes_no_events_nor_slides(store: Store) -> None:
    live = store.classes.start_class(T, C, "Limits")
    store.classes.end_class(T, C, live.id)
    with pytest.raises(ConflictError, match="has ended"):
        store.classes.add_event(T, C, live.id, ev("too late"))
    with pytest.raises(ConflictError, match="has ended"):
        store.classes.set_slide(T, C, live.id, 2, "teacher")
    assert store.classes.list_events(T, C, live.id) == []


@pytest.mark.parametrize("start, end", [(-1.0, 2.0), (3.0, 2.0), (0.0, 8 * 24 * 3600.0)])
def test_impossible_times_are_refused(store: Store, start: float, end: float) -> None:
    live = store.classes.start_class(T, C, "Limits")
    with pytest.raises(InputError):
        store.classes.add_event(T, C, live.id, ev("x", start, end))


def test_the_slide_moves_and_remembers_who_moved_it(store: Store) -> None:
    live = store.classes.start_class(T, C, "Limits")
    tracked = store.classes.set_slide(T, C, live.id, 2, "tracked")
    assert (tracked.slide_page, tracked.slide_source) == (2, "tracked")
    assert tracked.slide_changed is not None
    same = store.classes.set_slide(T, C, live.id, 2, "teacher")
    assert (same.slide_page, same.slide_source, same.slide_changed) == (
        2, "teacher", tracked.slide_changed)
    with pytest.raises(InputError):
        store.classes.set_slide(T, C, live.id, 0, "teacher")
    with pytest.raises(InputError):
        store.classes.set_slide(T, C, live.id, 3, "guessed")  # type: ignore[arg-type]


@pytest.mark.parametrize("tenant, course", [("other-tenant", C), (T, "algebra")])
def test_classes_are_invisible_outside_their_tenant_and_course(store: Store, tenant: str,
                                                               course: str) -> None:
    live = store.classes.start_class(T, C, "Limits")
    store.classes.add_event(T, C, live.id, ev("secret words"))
    assert store.classes.list_classes(tenant, course) == []
    assert store.classes.last_seq(tenant, course, live.id) == 0
    calls = {
        "get": lambda: store.classes.get_class(tenant, course, live.id),
        "end": lambda: store.classes.end_class(tenant, course, live.id),
        "events": lambda: store.classes.list_events(tenant, course, live.id),
        "add": lambda: store.classes.add_event(tenant, course, live.id, ev("x")),
        "slide": lambda: store.classes.set_slide(tenant, course, live.id, 1, "teacher"),
    }
    for name, call in calls.items():
        with pytest.raises(NotFoundError):
            call()
            pytest.fail(f"{name} reached another scope's class")
    assert store.classes.get_class(T, C, live.id).running
    assert [e.text for e in store.classes.list_events(T, C, live.id)] == ["secret words"]
    with pytest.raises(NotFoundError):
        store.classes.start_class(T, "no-such-course", "x")


def test_removing_the_course_removes_its_classes(store: Store) -> None:
    live = store.classes.start_class(T, C, "Limits")
    store.classes.add_event(T, C, live.id, ev("words"))
    other = store.classes.start_class("other-tenant", C, "Theirs")
    store.remove_course(T, C)
    store.ensure_course(T, C, "Calculus again", "en")
    assert store.classes.list_classes(T, C) == []
    with pytest.raises(NotFoundError):
        store.classes.get_class(T, C, live.id)
    assert store.classes.get_class("other-tenant", C, other.id) == other
