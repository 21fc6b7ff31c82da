"""The store contract (store/base.py), run against every store backend.

To add a backend, add a factory to STORES: it gets the test's tmp_path (SQLite) or the URL of a
fresh, empty PostgreSQL database (the `postgres_url` fixture) and returns a store on it; calling
it twice with the same argument must reach the same data.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from coursetutor.errors import NotFoundError
from coursetutor.scoring.bm25 import K1, B, idf
from coursetutor.store import ChunkRow, KeywordResult, SQLiteStore, Store, open_store
from coursetutor.types import Chunk, Course, DocType, Document, Locator, SearchFilters

STORES: dict[str, Callable[[Any], Store]] = {
    "sqlite": lambda root: SQLiteStore(root / "t.db"),
    "postgresql": lambda url: open_store(url),
}

MODEL = "test/axis-4d"
T = "tenant-a"
C = "calculus"
ALL = SearchFilters(T, C)


@pytest.fixture(params=sorted(STORES))
def connect(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], Store]]:
    """Opens a (further) connection to one backend's storage for this test."""
    opened: list[Store] = []
    where = request.getfixturevalue("postgres_url") if request.param == "postgresql" else tmp_path

    def open_one() -> Store:
        opened.append(STORES[request.param](where))
        return opened[-1]

    yield open_one
    for s in opened:
        s.close()


@pytest.fixture
def store(connect: Callable[[], Store]) -> Store:
    return connect()


def vec(*values: float) -> np.ndarray:
    v = np.array(values, dtype=np.float32)
    return v / np.linalg.norm(v)


def doc(
    id: str = "lec", *, tenant: str = T, course: str = C, doc_type: DocType = "lecture",
    difficulty: int = 2, content_hash: str = "v1", title: str | None = None,
) -> Document:
    return Document(
        tenant=tenant, course=course, id=id, title=title or f"Title of {id}", doc_type=doc_type,
        topic="roots", difficulty=difficulty, language="en", source_name=f"{id}.md",
        content_hash=content_hash, pages=0, chunks=0,
    )


def row(id: str, text: str, terms: str, ordinal: int = 0, **locator: Any) -> ChunkRow:
    return ChunkRow(
        id=id, text=text, section_path=("Lecture", f"Section {id}"),
        locator=Locator(**locator) if locator else Locator(anchor=id),
        ordinal=ordinal, n_tokens=len(text.split()), terms=tuple(terms.split()),
        vector_key=f"vk-{id}", content_hash=f"ch-{text}",
    )


def add(store: Store, document: Document, rows: list[ChunkRow], vectors: list[np.ndarray]) -> int:
    store.put_vectors(MODEL, {r.vector_key: v for r, v in zip(rows, vectors, strict=True)})
    return store.replace_document(document, rows)


NEWTON = row("newton", "Newton uses the tangent line.", "newton tangent line")
BISECT = row("bisect", "Bisection halves the bracket.", "bisect halv bracket", 1)
EXERCISE = row("ex-newton", "Apply newton twice.", "appli newton twice")
SUMMARY = row("sum-newton", "Il metodo di Newton.", "newton metodo")


@pytest.fixture
def course(store: Store) -> Store:
    """A course with a lecture (difficulty 2), an exercise (3) and a summary (1)."""
    store.ensure_course(T, C, "Calculus", "en")
    add(store, doc("lec"), [NEWTON, BISECT], [vec(1, 0, 0, 0), vec(0, 1, 0, 0)])
    add(store, doc("ex", doc_type="exercise", difficulty=3), [EXERCISE], [vec(1, 0, 1, 0)])
    add(store, doc("sum", doc_type="summary", difficulty=1), [SUMMARY], [vec(0, 0, 0, 1)])
    return store


# -- courses -------------------------------------------------------------------


def test_ensure_course(store: Store) -> None:
    assert store.ensure_course(T, C, "Calculus", "it") == Course(T, C, "Calculus", "it", 0, 0)
    assert store.ensure_course(T, C, "Calculus I", "en") == Course(T, C, "Calculus I", "it", 0, 0)
    assert store.ensure_course(T, "algebra") == Course(T, "algebra", "algebra", "en", 0, 0)


def test_ensure_course_without_title_keeps_the_title(store: Store) -> None:
    store.ensure_course(T, C, "Calculus", "it")
    assert store.ensure_course(T, C) == Course(T, C, "Calculus", "it", 0, 0)


def test_get_and_list_courses_with_counts(course: Store) -> None:
    course.ensure_course(T, "algebra", "Algebra")
    assert course.get_course(T, C) == Course(T, C, "Calculus", "en", 3, 4)
    assert course.list_courses(T) == [
        Course(T, "algebra", "Algebra", "en", 0, 0),
        Course(T, C, "Calculus", "en", 3, 4),
    ]
    assert course.list_courses("nobody") == []


def test_remove_course(course: Store) -> None:
    course.ensure_course(T, "algebra", "Algebra")
    course.remove_course(T, C)
    assert course.list_courses(T) == [Course(T, "algebra", "Algebra", "en", 0, 0)]
    with pytest.raises(NotFoundError):
        course.get_course(T, C)
    assert course.get_chunks(ALL, ["newton", "bisect"]) == {}
    assert course.find_document(T, C, "lec") is None


def test_course_removed_and_recreated_is_empty(course: Store) -> None:
    course.remove_course(T, C)
    course.ensure_course(T, C)
    assert course.list_documents(T, C) == []
    assert course.keyword_search(ALL, ["zzz"], 10) == KeywordResult([], 0.0)
    assert course.vector_search(ALL, MODEL, vec(1, 0, 0, 0), 10) == []


# -- documents -----------------------------------------------------------------


def test_replace_document_stores_document_and_chunks(course: Store) -> None:
    assert course.find_document(T, C, "lec") == dataclasses.replace(doc("lec"), chunks=2)
    assert [d.id for d in course.list_documents(T, C)] == ["ex", "lec", "sum"]
    assert course.get_chunks(ALL, ["newton"]) == {
        "newton": Chunk(
            id="newton", tenant=T, course=C, document_id="lec", document_title="Title of lec",
            doc_type="lecture", topic="roots", section_path=("Lecture", "Section newton"),
            difficulty=2, language="en", locator=Locator(anchor="newton"),
            text="Newton uses the tangent line.",
            content_hash="ch-Newton uses the tangent line.", ordinal=0,
        )
    }


def test_chunk_at_is_a_documents_chunk_by_its_position(course: Store) -> None:
    after = course.chunk_at(ALL, "lec", 1)
    assert after is not None and after.id == "bisect"
    assert course.chunk_at(ALL, "lec", 2) is None  # past its end
    assert course.chunk_at(SearchFilters("other-tenant", C), "lec", 1) is None
    assert course.chunk_at(SearchFilters(T, "other-course"), "lec", 1) is None


@pytest.mark.parametrize(
    "locator",
    [
        {"page": 3},
        {"start": 12.5, "end": 98.25},
        {"anchor": "43-order-of-convergence"},
    ],
)
def test_locators_round_trip(store: Store, locator: dict[str, Any]) -> None:
    store.ensure_course(T, C)
    add(store, doc(), [row("r", "Text.", "text", **locator)], [vec(1, 0, 0, 0)])
    assert store.get_chunks(ALL, ["r"])["r"].locator == Locator(**locator)


def test_replace_document_replaces_old_chunks(course: Store) -> None:
    secant = row("secant", "The secant method needs no derivative.", "secant deriv")
    stored = add(course, doc("lec", content_hash="v2", title="New title"), [secant],
                 [vec(0, 1, 1, 0)])
    assert stored == 1
    assert course.find_document(T, C, "lec") == dataclasses.replace(
        doc("lec", content_hash="v2", title="New title"), chunks=1
    )
    assert sorted(course.get_chunks(ALL, ["newton", "bisect", "secant"])) == ["secant"]
    assert course.keyword_search(ALL, ["bisect"], 10).hits == []
    assert [cid for cid, _ in course.keyword_search(ALL, ["secant"], 10).hits] == ["secant"]
    best, _ = course.vector_search(ALL, MODEL, vec(0, 1, 0, 0), 10)[0]
    assert best == "secant"
    assert course.get_course(T, C) == Course(T, C, "Calculus", "en", 3, 3)


def test_identical_chunks_are_stored_once_per_course(store: Store) -> None:
    store.ensure_course(T, C)
    assert add(store, doc("a"), [NEWTON, NEWTON, BISECT], [vec(1, 0, 0, 0)] * 3) == 2
    assert add(store, doc("b"), [NEWTON, EXERCISE], [vec(1, 0, 0, 0)] * 2) == 1
    assert [(d.id, d.chunks) for d in store.list_documents(T, C)] == [("a", 2), ("b", 1)]
    assert len(store.vector_search(ALL, MODEL, vec(1, 0, 0, 0), 10)) == 3


def test_identical_chunks_in_two_courses_are_both_stored(store: Store) -> None:
    for name in ("calculus", "analysis"):
        store.ensure_course(T, name)
        assert add(store, doc(course=name), [NEWTON], [vec(1, 0, 0, 0)]) == 1
    for name in ("calculus", "analysis"):
        assert store.get_chunks(SearchFilters(T, name), ["newton"])["newton"].course == name


def test_same_text_in_two_documents_keeps_each_locator(store: Store) -> None:
    """Chunk ids hash document and text: each document keeps its own copy and locator."""
    store.ensure_course(T, C)
    add(store, doc("a"), [row("a-newton", NEWTON.text, "newton tangent line", page=3)],
        [vec(1, 0, 0, 0)])
    add(store, doc("b"), [row("b-newton", NEWTON.text, "newton tangent line", page=7), EXERCISE],
        [vec(1, 0, 0, 0)] * 2)
    found = store.get_chunks(ALL, ["a-newton", "b-newton"])
    assert {cid: (c.document_id, c.locator.page) for cid, c in found.items()} == {
        "a-newton": ("a", 3), "b-newton": ("b", 7)
    }
    assert found["a-newton"].content_hash == found["b-newton"].content_hash
    store.remove_document(T, C, "a")
    assert [cid for cid, _ in store.keyword_search(ALL, ["tangent"], 10).hits] == ["b-newton"]
    assert store.get_chunks(ALL, ["b-newton"])["b-newton"].document_id == "b"


def test_remove_document(course: Store) -> None:
    course.remove_document(T, C, "lec")
    assert course.find_document(T, C, "lec") is None
    assert [d.id for d in course.list_documents(T, C)] == ["ex", "sum"]
    assert course.get_chunks(ALL, ["newton", "bisect", "ex-newton"]).keys() == {"ex-newton"}
    assert [cid for cid, _ in course.keyword_search(ALL, ["newton"], 10).hits] == [
        "sum-newton", "ex-newton"
    ]
    assert course.get_course(T, C) == Course(T, C, "Calculus", "en", 2, 2)


def in_language(document: Document, language: str) -> Document:
    return dataclasses.replace(document, language=language)


def test_course_language_follows_the_chunks_majority(store: Store) -> None:
    store.ensure_course(T, C, "Analisi", "en")
    assert (store.course_language(T, C), store.course_languages(T, C)) == ("en", {})
    add(store, in_language(doc("it-1"), "it"), [NEWTON, BISECT], [vec(1, 0, 0, 0)] * 2)
    assert (store.course_language(T, C), store.course_languages(T, C)) == ("it", {"it": 2})
    add(store, doc("en-1"), [EXERCISE], [vec(0, 1, 0, 0)])
    assert (store.course_language(T, C), store.course_languages(T, C)) == (
        "it", {"it": 2, "en": 1})
    add(store, doc("en-2"), [SUMMARY, row("more", "More text.", "more text")],
        [vec(0, 0, 1, 0)] * 2)
    assert (store.course_language(T, C), store.course_languages(T, C)) == (
        "en", {"en": 3, "it": 2})
    store.remove_document(T, C, "en-2")
    assert (store.course_language(T, C), store.search_state(T, C)[0]) == ("it", "it")
    assert store.explicit_language(T, C) is None
    store.remove_document(T, C, "it-1")
    assert (store.course_language(T, C), store.course_languages(T, C)) == ("en", {"en": 1})
    store.remove_document(T, C, "en-1")  # an empty course keeps the language it had
    assert (store.course_language(T, C), store.course_languages(T, C)) == ("en", {})


def test_a_course_language_set_explicitly_is_kept(store: Store) -> None:
    store.ensure_course(T, C, "Analisi", "en")
    assert store.set_course_language(T, C, "zh").language == "zh"
    add(store, in_language(doc("it-1"), "it"), [NEWTON, BISECT], [vec(1, 0, 0, 0)] * 2)
    assert (store.course_language(T, C), store.explicit_language(T, C)) == ("zh", "zh")
    assert store.get_course(T, C).language == "zh"
    assert store.set_course_language(T, C, None).language == "it"
    assert store.explicit_language(T, C) is None
    with pytest.raises(NotFoundError, match="course 'nope' does not exist"):
        store.set_course_language(T, "nope", "it")
    with pytest.raises(NotFoundError, match="course 'nope' does not exist"):
        store.course_languages(T, "nope")


def test_setting_the_language_changes_the_search_version(store: Store) -> None:
    store.ensure_course(T, C, "Analisi", "en")
    before = store.search_state(T, C)
    store.set_course_language(T, C, "it")
    after = store.search_state(T, C)
    assert after[0] == "it"
    assert before[1] is None or after[1] != before[1]


def test_keyword_search_on_a_course_with_no_chunks_left(course: Store) -> None:
    for d in ("lec", "ex", "sum"):
        course.remove_document(T, C, d)
    assert course.keyword_search(ALL, ["newton"], 10) == KeywordResult([], 0.0)


# -- search --------------------------------------------------------------------


def bm25(tf: int, dl: int, avgdl: float, n: int, df: int) -> float:
    """Okapi BM25 written out by hand for the expected values below."""
    return math.log(1 + (n - df + 0.5) / (df + 0.5)) * tf * (K1 + 1) / (
        tf + K1 * (1 - B + B * dl / avgdl)
    )


def test_keyword_search_scores(course: Store) -> None:
    # four chunks with 3, 3, 3 and 2 terms; 'newton' occurs in three of them
    result = course.keyword_search(ALL, ["newton"], 10)
    avgdl = 11 / 4
    assert [cid for cid, _ in result.hits] == ["sum-newton", "newton", "ex-newton"]
    assert [score for _, score in result.hits] == pytest.approx(
        [bm25(1, 2, avgdl, 4, 3), bm25(1, 3, avgdl, 4, 3), bm25(1, 3, avgdl, 4, 3)], rel=1e-6
    )
    assert result.evidence == 1.0


def test_keyword_search_limit_and_evidence(course: Store) -> None:
    result = course.keyword_search(ALL, ["newton", "unknownterm"], 1)
    assert [cid for cid, _ in result.hits] == ["sum-newton"]
    assert result.evidence == pytest.approx(idf(4, 3) / (idf(4, 3) + idf(4, 0)), rel=1e-6)
    assert course.keyword_search(ALL, ["unknownterm"], 5) == KeywordResult([], 0.0)


def test_vector_search_scores_and_order(course: Store) -> None:
    found = course.vector_search(ALL, MODEL, vec(1, 0, 0, 0), 10)
    # equal scores keep insertion order
    assert [cid for cid, _ in found] == ["newton", "ex-newton", "bisect", "sum-newton"]
    assert [s for _, s in found] == pytest.approx([1.0, math.sqrt(0.5), 0.0, 0.0])
    (best,) = course.vector_search(ALL, MODEL, vec(0, 0, 0, 1), 1)
    assert best[0] == "sum-newton"
    assert best[1] == pytest.approx(1.0)


CHUNKS_OF = {"lec": {"newton", "bisect"}, "ex": {"ex-newton"}, "sum": {"sum-newton"}}
FILTERS = [
    (None, None, {"lec", "ex", "sum"}),
    (("exercise",), None, {"ex"}),
    (("lecture", "summary"), None, {"lec", "sum"}),
    (("slides",), None, set()),
    (None, 2, {"lec", "sum"}),
    (None, 1, {"sum"}),
    (("exercise",), 2, set()),
    (("lecture", "exercise"), 3, {"lec", "ex"}),
]


@pytest.mark.parametrize(("doc_types", "max_difficulty", "docs"), FILTERS)
def test_keyword_search_filters(
    course: Store, doc_types: tuple[DocType, ...] | None, max_difficulty: int | None,
    docs: set[str],
) -> None:
    filters = SearchFilters(T, C, doc_types, max_difficulty)
    found = {cid for cid, _ in course.keyword_search(filters, ["newton"], 10).hits}
    assert found == {cid for d in docs for cid in CHUNKS_OF[d]} - {"bisect"}


@pytest.mark.parametrize(("doc_types", "max_difficulty", "docs"), FILTERS)
def test_vector_search_filters(
    course: Store, doc_types: tuple[DocType, ...] | None, max_difficulty: int | None,
    docs: set[str],
) -> None:
    filters = SearchFilters(T, C, doc_types, max_difficulty)
    found = {cid for cid, _ in course.vector_search(filters, MODEL, vec(1, 0, 0, 1), 10)}
    assert found == {cid for d in docs for cid in CHUNKS_OF[d]}  # every allowed row is ranked


def test_get_chunks_ignores_unknown_ids(course: Store) -> None:
    assert course.get_chunks(ALL, []) == {}
    assert course.get_chunks(ALL, ["nope", "bisect"]).keys() == {"bisect"}


# -- tenants -------------------------------------------------------------------


@pytest.fixture
def two_tenants(store: Store) -> Store:
    """The same course id in tenants A and B, with different chunks and identical vectors."""
    for tenant, word in (("A", "alpha"), ("B", "beta")):
        store.ensure_course(tenant, C, f"Course of {tenant}")
        rows = [row(f"{word}-only", f"{word} newton", f"{word} newton"),
                row("same-id", f"{tenant} version", f"{word} version", 1)]
        add(store, doc(tenant=tenant), rows, [vec(1, 0, 0, 0), vec(0, 1, 0, 0)])
    store.ensure_course("B", "b-only")
    return store


def test_tenants_see_only_their_courses(two_tenants: Store) -> None:
    assert [c.id for c in two_tenants.list_courses("A")] == [C]
    assert [c.id for c in two_tenants.list_courses("B")] == ["b-only", C]
    with pytest.raises(NotFoundError):
        two_tenants.get_course("A", "b-only")
    with pytest.raises(NotFoundError):
        two_tenants.list_documents("A", "b-only")


def test_keyword_search_is_tenant_scoped(two_tenants: Store) -> None:
    a = SearchFilters("A", C)
    assert [cid for cid, _ in two_tenants.keyword_search(a, ["newton"], 10).hits] == ["alpha-only"]
    assert two_tenants.keyword_search(a, ["beta"], 10).hits == []


def test_vector_search_is_tenant_scoped(two_tenants: Store) -> None:
    found = two_tenants.vector_search(SearchFilters("A", C), MODEL, vec(1, 0, 0, 0), 10)
    assert [cid for cid, _ in found] == ["alpha-only", "same-id"]


def test_get_chunks_is_tenant_scoped(two_tenants: Store) -> None:
    a = SearchFilters("A", C)
    assert two_tenants.get_chunks(a, ["beta-only"]) == {}
    chunk = two_tenants.get_chunks(a, ["same-id"])["same-id"]
    assert (chunk.tenant, chunk.text) == ("A", "A version")


def test_removal_is_tenant_scoped(two_tenants: Store) -> None:
    two_tenants.remove_document("A", C, "lec")
    two_tenants.remove_course("A", C)
    assert two_tenants.get_course("B", C) == Course("B", C, "Course of B", "en", 1, 2)
    with pytest.raises(NotFoundError):
        two_tenants.remove_document("A", C, "lec")


# -- vectors -------------------------------------------------------------------


def test_vector_cache(store: Store) -> None:
    v1, v2 = vec(1, 2, 3, 4), vec(4, 3, 2, 1)
    store.put_vectors(MODEL, {"k1": v1})
    found = store.get_vectors(MODEL, ["k1", "k2"])
    assert found.keys() == {"k1"}
    np.testing.assert_array_equal(found["k1"], v1)
    assert store.get_vectors("other/model", ["k1"]) == {}
    store.put_vectors(MODEL, {"k1": v2, "k2": v1})
    found = store.get_vectors(MODEL, ["k1", "k2"])
    np.testing.assert_array_equal(found["k1"], v2)
    np.testing.assert_array_equal(found["k2"], v1)
    assert store.get_vectors(MODEL, []) == {}


def test_vector_cache_many_keys(store: Store) -> None:
    vectors = {f"k{i}": np.full(4, i, dtype=np.float32) for i in range(1234)}
    store.put_vectors(MODEL, vectors)
    found = store.get_vectors(MODEL, list(vectors))
    assert found.keys() == vectors.keys()
    assert all(found[k][0] == v[0] for k, v in vectors.items())


# -- errors --------------------------------------------------------------------

UNKNOWN = SearchFilters(T, "nope")


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda s: s.get_course(T, "nope"), "course 'nope' does not exist"),
        (lambda s: s.list_documents(T, "nope"), "course 'nope' does not exist"),
        (lambda s: s.remove_course(T, "nope"), "course 'nope' does not exist"),
        (lambda s: s.remove_course("tenant-b", C), "course 'calculus' does not exist"),
        (lambda s: s.remove_document(T, C, "nope"),
         "document 'nope' does not exist in course 'calculus'"),
        (lambda s: s.remove_document(T, "nope", "lec"),
         "document 'lec' does not exist in course 'nope'"),
        (lambda s: s.keyword_search(UNKNOWN, ["newton"], 5), "course 'nope' does not exist"),
        (lambda s: s.vector_search(UNKNOWN, MODEL, vec(1, 0, 0, 0), 5),
         "course 'nope' does not exist"),
    ],
)
def test_not_found(course: Store, call: Callable[[Store], object], message: str) -> None:
    with pytest.raises(NotFoundError) as exc:
        call(course)
    assert str(exc.value) == message


def test_find_unknown_document_is_none(course: Store) -> None:
    assert course.find_document(T, C, "nope") is None
    assert course.find_document(T, "nope", "lec") is None


def test_replace_document_in_unknown_course(store: Store) -> None:
    with pytest.raises(NotFoundError):
        store.replace_document(doc(course="nope"), [NEWTON])


# -- durability ----------------------------------------------------------------


def test_reopening_keeps_everything(course: Store, connect: Callable[[], Store]) -> None:
    before = (
        course.list_courses(T), course.list_documents(T, C),
        course.keyword_search(ALL, ["newton"], 10), course.get_chunks(ALL, ["newton"]),
    )
    course.close()
    again = connect()
    assert (
        again.list_courses(T), again.list_documents(T, C),
        again.keyword_search(ALL, ["newton"], 10), again.get_chunks(ALL, ["newton"]),
    ) == before
    assert [c for c, _ in again.vector_search(ALL, MODEL, vec(1, 0, 0, 0), 1)] == ["newton"]


def test_second_connection_sees_new_documents(
    course: Store, connect: Callable[[], Store]
) -> None:
    other = connect()
    assert [c for c, _ in other.keyword_search(ALL, ["secant"], 5).hits] == []
    add(course, doc("lec", content_hash="v2"), [row("secant", "Secant.", "secant")],
        [vec(0, 1, 1, 0)])
    assert [c for c, _ in other.keyword_search(ALL, ["secant"], 5).hits] == ["secant"]


def test_second_connection_sees_a_recreated_course(
    course: Store, connect: Callable[[], Store]
) -> None:
    other = connect()
    assert [c for c, _ in other.keyword_search(ALL, ["bisect"], 5).hits] == ["bisect"]
    # remove the course and load it again with the same number of documents, one changed
    course.remove_course(T, C)
    course.ensure_course(T, C)
    add(course, doc("lec", content_hash="v2"), [row("secant", "Secant.", "secant")],
        [vec(0, 1, 1, 0)])
    add(course, doc("ex", doc_type="exercise", difficulty=3), [EXERCISE], [vec(1, 0, 1, 0)])
    add(course, doc("sum", doc_type="summary", difficulty=1), [SUMMARY], [vec(0, 0, 0, 1)])
    assert other.keyword_search(ALL, ["bisect"], 5).hits == []
    assert [c for c, _ in other.keyword_search(ALL, ["secant"], 5).hits] == ["secant"]


def test_failed_replace_leaves_previous_version(
    course: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Atomicity: a failure after the old chunks were deleted must roll everything back."""
    before = course.keyword_search(ALL, ["bisect"], 5)  # also builds the search cache
    real = course._term_ids  # type: ignore[attr-defined]

    def fail_midway(*args: object) -> object:
        real(*args)
        raise RuntimeError("disk full")

    monkeypatch.setattr(course, "_term_ids", fail_midway)
    secant = row("secant", "Secant.", "secant")
    with pytest.raises(RuntimeError, match="disk full"):
        add(course, doc("lec", content_hash="v2"), [secant], [vec(0, 1, 1, 0)])
    monkeypatch.undo()

    assert course.find_document(T, C, "lec") == dataclasses.replace(doc("lec"), chunks=2)
    assert course.get_chunks(ALL, ["newton", "bisect", "secant"]).keys() == {"newton", "bisect"}
    assert course.keyword_search(ALL, ["bisect"], 5) == before
    assert course.keyword_search(ALL, ["secant"], 5).hits == []
    assert course.get_course(T, C) == Course(T, C, "Calculus", "en", 3, 4)
    # and the store still works afterwards
    assert add(course, doc("lec", content_hash="v2"), [secant], [vec(0, 1, 1, 0)]) == 1
    assert [c for c, _ in course.keyword_search(ALL, ["secant"], 5).hits] == ["secant"]
