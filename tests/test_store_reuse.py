"""Answered questions kept for reuse (store/reuse.py), in every store: one suite."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from coursetutor.store import ChunkRow, SQLiteStore, Store
from coursetutor.store.privacy import Dialect, student_tables
from coursetutor.store.reuse import AnsweredQuestion
from coursetutor.types import Document, Locator

from .support import open_backend

T = "default"
C = "calculus"
MODEL = "test/axis-3d"


def unit(*values: float) -> np.ndarray:
    v = np.array(values, dtype=np.float32)
    return v / np.linalg.norm(v)


def entry(question: str, vector: np.ndarray, *, student: str = "alice", course: str = C,
          tenant: str = T, model: str = MODEL, created: float = 0.0) -> AnsweredQuestion:
    return AnsweredQuestion(
        tenant=tenant, course=course, student=student, turn_id=f"s-{student}:1",
        question=question, key=question.lower().rstrip("?"), language="en", model=model,
        vector=vector, chunk_ids=("c1", "c2"), answer=f"Answer to {question}", generation=7,
        created=created)


@pytest.fixture(params=["sqlite", "postgresql"])
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], Store]]:
    """Opens (further) stores on one backend's data: two of them act as two processes."""
    url: list[str] = []

    def where() -> str:
        if not url:
            url.append(request.getfixturevalue("postgres_url"))
        return url[0]

    opened: list[Store] = []

    def open_one() -> Store:
        opened.append(open_backend(request.param, where, tmp_path))
        return opened[-1]

    yield open_one
    for s in opened:
        s.close()


@pytest.fixture
def store(opener: Callable[[], Store]) -> Store:
    s = opener()
    for tenant, course in [(T, C), (T, "algebra"), ("other-tenant", C)]:
        s.ensure_course(tenant, course, course.title(), "en")
    return s


def test_an_entry_comes_back_as_it_was_stored(store: Store) -> None:
    added = store.reuse.add(entry("What is Newton's method?", unit(1, 0, 0), created=1000.0))
    assert added.id > 0 and added.created == 1000.0
    got = store.reuse.get(T, C, added.id)
    assert got == added
    assert got is not None and np.array_equal(got.vector, unit(1, 0, 0))
    assert (got.chunk_ids, got.turn_id, got.generation) == (("c1", "c2"), "s-alice:1", 7)
    assert store.reuse.get(T, "algebra", added.id) is None
    assert store.reuse.get("other-tenant", C, added.id) is None


def test_nearest_ranks_the_course_entries_by_cosine(store: Store) -> None:
    a = store.reuse.add(entry("a", unit(1, 0, 0)))
    b = store.reuse.add(entry("b", unit(1, 1, 0)))
    store.reuse.add(entry("c", unit(0, 0, 1)))
    found = store.reuse.nearest(T, C, MODEL, unit(1, 0.2, 0), limit=2)
    assert [n.entry.id for n in found] == [a.id, b.id]
    assert found[0].score == pytest.approx(float(unit(1, 0, 0) @ unit(1, 0.2, 0)), abs=1e-6)
    assert found[0].score > found[1].score
    assert len(store.reuse.nearest(T, C, MODEL, unit(1, 0, 0), limit=10)) == 3
    assert store.reuse.nearest(T, C, MODEL, unit(1, 0, 0), limit=0) == []


def test_nearest_never_leaves_its_tenant_course_and_model(store: Store) -> None:
    store.reuse.add(entry("other course", unit(1, 0, 0), course="algebra"))
    store.reuse.add(entry("other tenant", unit(1, 0, 0), tenant="other-tenant"))
    store.reuse.add(entry("other model", unit(1, 0, 0), model="test/other"))
    assert store.reuse.nearest(T, C, MODEL, unit(1, 0, 0)) == []
    mine = store.reuse.add(entry("mine", unit(0, 1, 0)))
    assert [n.entry.id for n in store.reuse.nearest(T, C, MODEL, unit(1, 0, 0))] == [mine.id]


def test_entries_added_or_removed_after_a_lookup_are_seen_by_every_process(
        opener: Callable[[], Store], store: Store) -> None:
    other = opener()
    first = store.reuse.add(entry("first", unit(1, 0, 0)))
    assert [n.entry.id for n in other.reuse.nearest(T, C, MODEL, unit(1, 0, 0))] == [first.id]
    second = store.reuse.add(entry("second", unit(0, 1, 0)))
    assert other.reuse.nearest(T, C, MODEL, unit(0, 1, 0))[0].entry.id == second.id
    assert store.reuse.remove(T, C, [first.id]) == 1
    third = store.reuse.add(entry("third", unit(0, 0, 1)))
    assert {n.entry.id for n in other.reuse.nearest(T, C, MODEL, unit(1, 0, 0), limit=5)} == {
        second.id, third.id}
    assert other.reuse.count(T, C) == 2


def test_the_course_generation_changes_with_its_documents(store: Store) -> None:
    before = store.reuse.generation(T, C)
    assert before > 0 and store.reuse.generation(T, "missing") == 0
    store.replace_document(Document(
        tenant=T, course=C, id="lec", title="Lecture", doc_type="lecture", topic="",
        difficulty=1, language="en", source_name="lec.md", content_hash="v1", pages=0,
        chunks=0), [ChunkRow("k1", "Newton's method", ("L",), Locator(anchor="a"), 0, 2,
                             ("newton",), "vk1")])
    assert store.reuse.generation(T, C) != before
    assert store.reuse.generation(T, "algebra") not in (0, store.reuse.generation(T, C))


def test_remove_deletes_only_the_course_entries_named(store: Store) -> None:
    a = store.reuse.add(entry("a", unit(1, 0, 0)))
    elsewhere = store.reuse.add(entry("b", unit(1, 0, 0), course="algebra"))
    assert store.reuse.remove(T, C, []) == 0
    assert store.reuse.remove(T, C, [elsewhere.id]) == 0
    assert store.reuse.remove(T, C, [a.id, 999_999]) == 1
    assert store.reuse.count(T, C) == 0 and store.reuse.count(T, "algebra") == 1


def test_a_student_sees_and_forgets_only_their_own_entries(store: Store) -> None:
    old = store.reuse.add(entry("old", unit(1, 0, 0), created=1.0))
    new = store.reuse.add(entry("new", unit(0, 1, 0), created=2.0))
    algebra = store.reuse.add(entry("alg", unit(1, 0, 0), course="algebra", created=3.0))
    bob = store.reuse.add(entry("bob's", unit(1, 0, 0), student="bob"))
    assert [e.id for e in store.reuse.for_student(T, "alice")] == [algebra.id, new.id, old.id]
    assert [e.id for e in store.reuse.for_student(T, "alice", C)] == [new.id, old.id]
    assert store.reuse.forget(T, "alice", "algebra") == 1
    assert store.reuse.forget(T, "alice") == 2
    assert store.reuse.for_student(T, "alice") == []
    assert [n.entry.id for n in store.reuse.nearest(T, C, MODEL, unit(1, 0, 0))] == [bob.id]


def test_removing_the_course_removes_its_entries(store: Store) -> None:
    store.reuse.add(entry("a", unit(1, 0, 0)))
    kept = store.reuse.add(entry("b", unit(1, 0, 0), course="algebra"))
    store.remove_course(T, C)
    store.ensure_course(T, C, "Calculus", "en")
    assert store.reuse.count(T, C) == 0
    assert store.reuse.nearest(T, C, MODEL, unit(1, 0, 0)) == []
    assert store.reuse.get(T, "algebra", kept.id) == kept


def test_erasing_a_student_finds_the_entries_by_schema(store: Store) -> None:
    dialect: Dialect = "sqlite" if isinstance(store, SQLiteStore) else "postgresql"
    tables = {t.name: t for t in student_tables(store._reader(), dialect)}  # type: ignore[attr-defined]
    assert "answer_keys" in tables and tables["answer_keys"].per_course


def test_an_entry_keeps_its_vector_as_float32(store: Store) -> None:
    wide = dataclasses.replace(entry("a", unit(1, 0, 0)), vector=np.array([1.0, 0.0, 0.0]))
    added = store.reuse.add(wide)
    got = store.reuse.get(T, C, added.id)
    assert got is not None and got.vector.dtype == np.float32
    assert store.reuse.nearest(T, C, MODEL, unit(1, 0, 0))[0].score == pytest.approx(1.0)
