"""The mastery contract (store/mastery.py) on every store backend: estimates, observations,
weak areas and a course's BKT parameters."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from coursetutor.errors import InputError, NotFoundError
from coursetutor.store import SQLiteStore, Store, open_store
from coursetutor.store.mastery import BKTParams

T, C, S = "tenant-a", "calculus", "ada"


@pytest.fixture(params=["postgresql", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    if request.param == "postgresql":
        opened: Store = open_store(request.getfixturevalue("postgres_url"))
    else:
        opened = SQLiteStore(tmp_path / "t.db")
    opened.ensure_tenant(T)
    opened.ensure_course(T, C)
    opened.ensure_course(T, "other")
    yield opened
    opened.close()


def test_observe_starts_from_none_and_counts_answers(store: Store) -> None:
    seen: list[float | None] = []

    def update(previous: float | None) -> float:
        seen.append(previous)
        return 0.5 if previous is None else previous + 0.25

    first = store.mastery.observe(T, C, S, "limits", True, "s1:1", update)
    second = store.mastery.observe(T, C, S, "limits", False, "s1:2", update)
    assert seen == [None, 0.5]
    assert (first.estimate, first.correct, first.incorrect) == (0.5, 1, 0)
    assert (second.estimate, second.correct, second.incorrect) == (0.75, 1, 1)
    assert not second.mastered
    obs = store.mastery.observations(T, C, S)
    assert [(o.topic, o.correct, o.turn_id, o.estimate) for o in obs] == [
        ("limits", True, "s1:1", 0.5), ("limits", False, "s1:2", 0.75)]


def test_estimates_per_student_and_course_and_mastered_flag(store: Store) -> None:
    store.mastery.observe(T, C, S, "series", True, "s1:1", lambda p: 0.95)
    store.mastery.observe(T, C, S, "limits", True, "s1:2", lambda p: 0.4)
    store.mastery.observe(T, C, "bob", "limits", False, "s2:1", lambda p: 0.1)
    store.mastery.observe(T, "other", S, "limits", True, "s3:1", lambda p: 0.9)
    mine = store.mastery.estimates(T, C, S)
    assert [(m.topic, m.estimate, m.mastered) for m in mine] == [
        ("limits", 0.4, False), ("series", 0.95, True)]
    course = store.mastery.estimates(T, C)
    assert [(m.topic, m.student) for m in course] == [
        ("limits", "ada"), ("limits", "bob"), ("series", "ada")]
    assert store.mastery.estimates("tenant-b", C, S) == []
    assert [o.topic for o in store.mastery.observations(T, C, S, topic="series")] == ["series"]


def test_observe_in_an_unknown_course_fails_and_writes_nothing(store: Store) -> None:
    with pytest.raises(NotFoundError):
        store.mastery.observe(T, "nope", S, "limits", True, "s:1", lambda p: 0.5)
    with pytest.raises(NotFoundError):
        store.mastery.observe("tenant-b", C, S, "limits", True, "s:1", lambda p: 0.5)
    assert store.mastery.observations(T, "nope", S) == []


def test_a_failing_update_leaves_nothing_half_written(store: Store) -> None:
    def broken(previous: float | None) -> float:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        store.mastery.observe(T, C, S, "limits", True, "s:1", broken)
    assert store.mastery.estimates(T, C, S) == []
    assert store.mastery.observations(T, C, S) == []


def test_weak_area_strengthens_weakens_and_is_overcome(store: Store) -> None:
    area = store.mastery.add_weak_area(T, C, S, "limits", "  Divides by zero\n at the limit. ",
                                       "s1:1")
    assert (area.misconception, area.strength, area.turn_ids) == (
        "Divides by zero at the limit.", 1.0, ("s1:1",))
    again = store.mastery.strengthen(T, C, S, area.id, "s1:3")
    assert (again.strength, again.turn_ids) == (2.0, ("s1:1", "s1:3"))
    weakened = store.mastery.weaken(T, C, S, "limits", "s2:1")
    assert [(w.id, w.strength, w.weakened_by) for w in weakened] == [(area.id, 1.5, ("s2:1",))]
    assert store.mastery.weaken(T, C, S, "series", "s2:2") == []
    for n in range(2, 6):
        store.mastery.weaken(T, C, S, "limits", f"s2:{n}")
    assert store.mastery.weak_areas(T, C, S) == []  # overcome: strength 0
    kept = store.mastery.weak_areas(T, C, S, active_only=False)
    assert [(w.strength, w.weakened_by, w.active) for w in kept] == [
        (0.0, ("s2:1", "s2:2", "s2:3", "s2:4"), False)]


def test_weak_areas_listed_strongest_first_per_student_or_course(store: Store) -> None:
    a = store.mastery.add_weak_area(T, C, S, "limits", "Confuses limit and value.", "s1:1")
    b = store.mastery.add_weak_area(T, C, S, "series", "Adds the terms' limits.", "s1:2")
    store.mastery.strengthen(T, C, S, b.id, "s1:4")
    c = store.mastery.add_weak_area(T, C, "bob", "limits", "Confuses limit and value.", "s9:1")
    assert [w.id for w in store.mastery.weak_areas(T, C, S)] == [b.id, a.id]
    assert {w.id for w in store.mastery.weak_areas(T, C)} == {a.id, b.id, c.id}
    assert store.mastery.weak_areas(T, "other", S) == []


def test_student_resolves_only_their_own_weak_area(store: Store) -> None:
    area = store.mastery.add_weak_area(T, C, S, "limits", "Confuses limit and value.", "s1:1")
    with pytest.raises(NotFoundError):
        store.mastery.resolve(T, C, "bob", area.id)
    with pytest.raises(NotFoundError):
        store.mastery.resolve("tenant-b", C, S, area.id)
    done = store.mastery.resolve(T, C, S, area.id)
    assert done.resolved is not None and not done.active
    assert store.mastery.weak_areas(T, C, S) == []
    with pytest.raises(NotFoundError):
        store.mastery.strengthen(T, C, S, area.id, "s1:2")
    assert store.mastery.weaken(T, C, S, "limits", "s1:3") == []  # resolved stays as it was


def test_weak_area_needs_words(store: Store) -> None:
    with pytest.raises(InputError):
        store.mastery.add_weak_area(T, C, S, "limits", "   ", "s1:1")


def test_course_params_set_and_cleared(store: Store) -> None:
    assert store.mastery.params(T, C) is None
    store.mastery.set_params(T, C, BKTParams(0.2, 0.15, 0.08, 0.25))
    assert store.mastery.params(T, C) == BKTParams(0.2, 0.15, 0.08, 0.25)
    assert store.mastery.params(T, "other") is None
    store.mastery.set_params(T, C, None)
    assert store.mastery.params(T, C) is None
    with pytest.raises(NotFoundError):
        store.mastery.set_params(T, "nope", BKTParams(0.2, 0.15, 0.08, 0.25))


@pytest.mark.parametrize("values", [(0.0, 0.1, 0.1, 0.2), (0.3, 1.0, 0.1, 0.2),
                                    (0.3, 0.1, 0.6, 0.5)])
def test_params_out_of_range_are_refused(values: tuple[float, ...]) -> None:
    with pytest.raises(InputError):
        BKTParams(*values)


def test_removing_the_course_removes_its_mastery(store: Store) -> None:
    store.mastery.observe(T, C, S, "limits", True, "s1:1", lambda p: 0.5)
    store.mastery.add_weak_area(T, C, S, "limits", "Confuses limit and value.", "s1:1")
    store.mastery.set_params(T, C, BKTParams(0.2, 0.15, 0.08, 0.25))
    store.remove_course(T, C)
    store.ensure_course(T, C)
    assert store.mastery.estimates(T, C) == []
    assert store.mastery.observations(T, C, S) == []
    assert store.mastery.weak_areas(T, C, active_only=False) == []
    assert store.mastery.params(T, C) is None
