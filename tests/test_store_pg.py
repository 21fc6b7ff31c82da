"""The PostgreSQL store beyond the shared contract: SQL fusion against the reference fusion,
the same ranking as the SQLite store, the connection pool, migrations, atomic writes and
HNSW indexes per vector dimension."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import pytest

pytest.importorskip("psycopg", reason="psycopg is not installed: pip install -e '.[dev]'")

import psycopg

from coursetutor.config import Settings
from coursetutor.errors import StoreError
from coursetutor.ingest import load_manifest
from coursetutor.retrieval import EmbeddingModel
from coursetutor.scoring.fusion import keyword_weight, relative_score_fusion, rrf
from coursetutor.store import ChunkRow, SQLiteStore, Store, open_store
from coursetutor.store.pg import PostgresStore, pg_migrations
from coursetutor.types import Course, DocType, Document, Hit, Locator, SearchFilters
from coursetutor.workspace import Workspace

from .support import SAMPLE_COURSE, SAMPLE_MANIFEST, Sample, fresh_database

MODEL = "test/axis-4d"
T = "tenant-a"
C = "calculus"
ALL = SearchFilters(T, C)
LATEST = pg_migrations()[-1][0]


@pytest.fixture
def store(postgres_url: str) -> Iterator[PostgresStore]:
    s = PostgresStore(postgres_url)
    yield s
    s.close()


def vec(*values: float) -> np.ndarray:
    v = np.array(values, dtype=np.float32)
    return v / np.linalg.norm(v)


def doc(id: str, doc_type: DocType = "lecture", difficulty: int = 2, course: str = C,
        content_hash: str = "v1") -> Document:
    return Document(T, course, id, f"Title of {id}", doc_type, "roots", difficulty, "en",
                    f"{id}.md", content_hash, 0, 0)


def row(id: str, terms: str, ordinal: int = 0) -> ChunkRow:
    return ChunkRow(id=id, text=f"Text of {id}: {terms}.", section_path=("Part", id),
                    locator=Locator(anchor=id), ordinal=ordinal, n_tokens=len(terms.split()),
                    terms=tuple(terms.split()), vector_key=f"vk-{id}", content_hash=f"ch-{id}")


def add(store: Store, document: Document, chunks: list[tuple[ChunkRow, np.ndarray]],
        model: str = MODEL) -> int:
    """Store a document the way the ingest does: its vectors first, then its chunks."""
    store.put_vectors(model, {r.vector_key: v for r, v in chunks})
    return store.replace_document(document, [r for r, _ in chunks])


# (document, type, difficulty) -> chunks (id, terms, vector); no two vectors are parallel
COURSE: dict[tuple[str, DocType, int], list[tuple[str, str, tuple[float, ...]]]] = {
    ("lec-1", "lecture", 2): [
        ("newton", "newton method tangent line newton", (1.0, 0.1, 0.0, 0.0)),
        ("bisect", "bisect method halv bracket", (0.1, 1.0, 0.0, 0.1)),
        ("secant", "secant method order converg", (0.7, 0.7, 0.1, 0.0)),
    ],
    ("lec-2", "lecture", 3): [
        ("converg", "order converg linear quadrat converg", (0.2, 0.3, 1.0, 0.0)),
        ("fixed", "fix point iter contract", (0.0, 0.2, 0.6, 0.8)),
    ],
    ("ex-1", "exercise", 3): [
        ("ex-newton", "appli newton method twice", (0.9, 0.0, 0.4, 0.1)),
        ("ex-bisect", "bisect interv halv three step", (0.3, 0.9, 0.0, 0.4)),
    ],
    ("sol-1", "solution", 4): [
        ("sol-newton", "newton iter converg quadrat", (0.8, 0.2, 0.5, 0.3)),
    ],
    ("sum-it", "summary", 1): [
        ("riassunto", "metodo newton bisezion radic", (0.5, 0.4, 0.0, 0.9)),
        ("riassunto-2", "metodo secant ordin converg", (0.6, 0.5, 0.3, 0.6)),
    ],
    ("video", "transcript", 2): [
        ("video-1", "today newton method tangent", (0.95, 0.2, 0.05, 0.2)),
        ("video-2", "tangent line slope deriv", (0.6, 0.0, 0.0, 0.7)),
    ],
}


def build_course(store: Store) -> None:
    store.ensure_course(T, C, "Calculus", "en")
    for (doc_id, doc_type, difficulty), chunks in COURSE.items():
        add(store, doc(doc_id, doc_type, difficulty),
            [(row(cid, terms, i), vec(*v)) for i, (cid, terms, v) in enumerate(chunks)])


@pytest.fixture(scope="module")
def course(postgres_server: str) -> Iterator[PostgresStore]:
    """COURSE in a database of its own, shared by this module's read-only tests."""
    with fresh_database(postgres_server) as url:
        store = PostgresStore(url)
        build_course(store)
        yield store
        store.close()


# -- hybrid search: the SQL fusion is the reference fusion -------------------------


def reference_fusion(
    store: Store, filters: SearchFilters, vector: np.ndarray, terms: list[str], limit: int,
    fusion: str, top: int,
) -> tuple[list[tuple[str, float]], list[tuple[str, float]], list[tuple[str, float]], float]:
    """What the retriever computes from the store's two lists: (fused, vector, keyword,
    evidence)."""
    keyword = store.keyword_search(filters, terms, limit)
    found = store.vector_search(filters, MODEL, vector, limit)
    weights = {"vector": 1.0, "bm25": keyword_weight(keyword.evidence)}
    if fusion == "rrf":
        fused = rrf({"vector": [c for c, _ in found], "bm25": [c for c, _ in keyword.hits]},
                    k=60, weights=weights)
    else:
        fused = relative_score_fusion({"vector": found, "bm25": keyword.hits}, weights)
    return [(str(c), s) for c, s in fused[:top]], found, keyword.hits, keyword.evidence


FILTERS = {
    "all": ALL,
    "types": SearchFilters(T, C, doc_types=("lecture", "exercise", "transcript")),
    "difficulty": SearchFilters(T, C, max_difficulty=2),
    "both": SearchFilters(T, C, doc_types=("lecture", "summary"), max_difficulty=2),
}
QUERIES = {
    "known": ("newton method converg", (1.0, 0.3, 0.3, 0.1)),
    "repeated": ("newton newton tangent", (0.6, 0.1, 0.1, 0.7)),
    "partly-unknown": ("bisect zzyzx qwerti halv", (0.2, 1.0, 0.1, 0.2)),
    "unknown": ("zzyzx qwerti", (0.3, 0.3, 0.8, 0.2)),
    "no-terms": ("", (0.5, 0.5, 0.5, 0.5)),
}


@pytest.mark.parametrize("fusion", ["rrf", "relative"])
@pytest.mark.parametrize("filtered", sorted(FILTERS))
@pytest.mark.parametrize("query", sorted(QUERIES))
@pytest.mark.parametrize(("limit", "top"), [(20, 20), (4, 5)])
def test_hybrid_search_is_the_reference_fusion(
    course: PostgresStore, fusion: str, filtered: str, query: str, limit: int, top: int
) -> None:
    filters = FILTERS[filtered]
    terms, vector = QUERIES[query][0].split(), vec(*QUERIES[query][1])
    fused, found, hits, evidence = reference_fusion(course, filters, vector, terms, limit,
                                                    fusion, top)
    result = course.hybrid_search(filters, MODEL, vector, terms, limit, fusion, 60, top)
    assert result is not None
    assert [c for c, _ in result.fused] == [c for c, _ in fused]
    assert [s for _, s in result.fused] == pytest.approx([s for _, s in fused], rel=1e-9)
    assert result.evidence == pytest.approx(evidence, abs=1e-12)
    vrank = {c: i for i, (c, _) in enumerate(found, start=1)}
    krank = {c: i for i, (c, _) in enumerate(hits, start=1)}
    assert result.ranks == {c: {"vector": vrank.get(c), "bm25": krank.get(c)} for c, _ in fused}
    vscore, kscore = dict(found), dict(hits)
    assert result.scores == {
        c: {"vector": pytest.approx(vscore.get(c)), "bm25": pytest.approx(kscore.get(c))}
        for c, _ in fused}
    assert result.chunks == course.get_chunks(filters, [c for c, _ in fused])


def test_hybrid_search_cases_are_not_trivial(course: PostgresStore) -> None:
    """The parity cases above cover partial evidence, filters that cut both lists, and
    candidates found by only one list."""
    vector, terms = vec(*QUERIES["partly-unknown"][1]), QUERIES["partly-unknown"][0].split()
    keyword = course.keyword_search(ALL, terms, 20)
    assert 0.0 < keyword.evidence < 1.0
    assert [c for c, _ in keyword.hits] == ["bisect", "ex-bisect"]  # the shorter first
    assert course.keyword_search(ALL, ["zzyzx"], 20) == course.keyword_search(ALL, [], 20)
    both = FILTERS["both"]
    assert {c for c, _ in course.vector_search(both, MODEL, vector, 20)} == {
        "newton", "bisect", "secant", "riassunto", "riassunto-2"}
    known = course.hybrid_search(ALL, MODEL, vec(*QUERIES["known"][1]),
                                 QUERIES["known"][0].split(), 4, "rrf", 60, 20)
    assert known is not None
    assert {r["bm25"] is None for r in known.ranks.values()} == {True, False}
    assert {r["vector"] is None for r in known.ranks.values()} == {True, False}


# -- the same ranking as the SQLite store ----------------------------------------------

QUESTIONS = [
    "What is the order of convergence of the secant method?",
    "How does Newton's method use the tangent line?",
    "When does a fixed-point iteration converge?",
    "How many bisection steps are needed to reach a tolerance of 1e-6?",
    "What is quadratic convergence?",
    "Come funziona il metodo di bisezione?",
    "Qual è l'ordine di convergenza del metodo di Newton?",
    "Perché il metodo della secante non usa la derivata?",
    "割线法的收敛阶是多少？",  # keywords translated (CC-CEDICT): fused outside the store
    "牛顿法什么时候会失败？",
]


@pytest.fixture(scope="module")
def sample_pg(
    postgres_server: str, sample: Sample, embedder: EmbeddingModel,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Settings]:
    """The sample course ingested into a PostgreSQL database of this module's own.

    The vector cache is filled from the session's SQLite ingest first, so this ingest embeds
    nothing (a minute saved) and both stores rank the very same vectors."""
    with fresh_database(postgres_server) as url:
        settings = Settings(data_dir=tmp_path_factory.mktemp("pg-sample"), store=url)
        manifest = load_manifest(SAMPLE_MANIFEST)
        with Workspace(settings, embedder=embedder) as ws:
            lite = SQLiteStore(sample.db_path)
            try:
                for model, vectors in lite.iter_vectors():
                    ws.store.put_vectors(model, vectors)
            finally:
                lite.close()
            ws.create_course(SAMPLE_COURSE, manifest.title, manifest.language)
            report = ws.ingest(SAMPLE_COURSE, manifest.files)
        assert report.totals()["embedded"] == 0
        assert report.totals()["chunks"] == sample.report.totals()["chunks"]
        yield settings


@pytest.fixture(scope="module")
def both(
    sample: Sample, sample_pg: Settings, embedder: EmbeddingModel
) -> Iterator[dict[str, Workspace]]:
    """The sample course in the SQLite store (the session's, only read) and in PostgreSQL."""
    with Workspace(Settings(data_dir=sample.db_path.parent), embedder=embedder) as lite, \
            Workspace(sample_pg, embedder=embedder) as pg:
        yield {"sqlite": lite, "postgresql": pg}


def test_the_sample_course_is_stored_alike(both: dict[str, Workspace]) -> None:
    lite, pg = both["sqlite"], both["postgresql"]
    assert pg.store.get_course("default", SAMPLE_COURSE) == lite.store.get_course(
        "default", SAMPLE_COURSE)
    assert pg.documents(SAMPLE_COURSE) == lite.documents(SAMPLE_COURSE)


@pytest.mark.parametrize(("mode", "fusion"), [
    ("hybrid", "spread"), ("hybrid", "relative"), ("hybrid", "rrf"), ("bm25", "relative"),
    ("vector", "relative"),
])
@pytest.mark.parametrize("filters", [{}, {"doc_types": ("lecture", "summary")},
                                     {"max_difficulty": 2}])
def test_both_stores_rank_alike(
    both: dict[str, Workspace], mode: str, fusion: str, filters: dict[str, Any]
) -> None:
    """The same hits in the same order, with the same chunks, ranks and citation places."""
    found: dict[str, list[list[Hit]]] = {}
    for name, ws in both.items():
        ws.settings = dataclasses.replace(ws.settings, fusion=fusion)
        found[name] = [ws.search(q, SAMPLE_COURSE, k=8, mode=mode, **filters) for q in QUESTIONS]
    assert all(found["sqlite"])
    for lite, pg in zip(found["sqlite"], found["postgresql"], strict=True):
        assert [h.chunk.id for h in pg] == [h.chunk.id for h in lite]
        assert [(h.chunk, h.ranks, h.locator) for h in pg] == [
            (h.chunk, h.ranks, h.locator) for h in lite]
        assert [h.score for h in pg] == pytest.approx([h.score for h in lite], rel=1e-4)


# -- the connection pool ---------------------------------------------------------------


def test_an_exhausted_pool_is_a_store_error(postgres_url: str) -> None:
    store = PostgresStore(postgres_url, pool_size=1, timeout=0.5)
    try:
        store.ensure_course(T, C, "Calculus")
        with store.connection(), ThreadPoolExecutor(1) as other:
            waiting = other.submit(store.get_course, T, C)
            with pytest.raises(StoreError, match=r"connection pool is exhausted: all 1 "
                                                 r"connections stayed busy for 0.5 s"):
                waiting.result(timeout=10)
        assert store.get_course(T, C) == Course(T, C, "Calculus", "en")  # free again
    finally:
        store.close()


def test_a_pool_of_one_serves_every_call(postgres_url: str) -> None:
    """No call borrows a second connection while it holds one (that would wait forever)."""
    store = PostgresStore(postgres_url, pool_size=1, timeout=0.5)
    try:
        build_course(store)
        query = vec(1, 0, 0, 0)
        assert [c for c, _ in store.vector_search(ALL, MODEL, query, 2)] == ["newton", "video-1"]
        assert store.keyword_search(ALL, ["newton"], 3).hits
        assert store.hybrid_search(ALL, MODEL, query, ["newton"], 5, "rrf", 60, 3) is not None
        assert set(store.get_chunks(ALL, ["newton", "bisect"])) == {"newton", "bisect"}
        store.create_tenant("uni")
        session = store.start_session(T, C, "alice")
        store.end_session(T, C, session.id)
        store.enroll(T, C, "alice")
        assert store.course_activity(T, C).sessions == 0
        store.remove_document(T, C, "lec-1")
        store.remove_tenant(T)
        assert store.connections() == 1
    finally:
        store.close()


def test_connections_stay_within_the_pool(postgres_url: str) -> None:
    """Eight threads searching share three connections: the pool's count and the server's
    sessions never exceed them, and every search gets the right answer."""
    store = PostgresStore(postgres_url, pool_size=3, pool_min=1)
    query, terms = vec(1, 1, 0, 0), ["newton", "bisect"]
    try:
        build_course(store)
        expected = store.hybrid_search(ALL, MODEL, query, terms, 10, "relative", 60, 10)
        assert expected is not None
        pooled: list[int] = []
        sessions: list[int] = []
        done = threading.Event()

        def search(_: int) -> bool:
            same = True
            for _ in range(15):
                found = store.hybrid_search(ALL, MODEL, query, terms, 10, "relative", 60, 10)
                same = same and found is not None and found.fused == expected.fused
                same = same and store.keyword_search(ALL, terms, 5).hits != []
                pooled.append(store.connections())
            return same

        def watch() -> None:
            name = urlsplit(postgres_url).path.lstrip("/")
            # autocommit: a transaction would see one snapshot of pg_stat_activity
            with psycopg.connect(postgres_url, autocommit=True) as admin:
                while not done.is_set():
                    row = admin.execute(
                        "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = %s "
                        "AND pid <> pg_backend_pid()", (name,)).fetchone()
                    sessions.append(int(row[0]) if row else -1)

        watcher = threading.Thread(target=watch)
        watcher.start()
        try:
            with ThreadPoolExecutor(8) as pool:
                results = list(pool.map(search, range(8)))
        finally:
            done.set()
            watcher.join()
        assert results == [True] * 8
        assert len(pooled) == 120 and 1 < max(pooled) <= 3  # it grew, up to its size
        assert sessions and max(sessions) <= 3
    finally:
        store.close()


@pytest.mark.parametrize(("url", "shown"), [
    ("postgresql://coursetutor@127.0.0.1:1/x", "postgresql://coursetutor@127.0.0.1:1/x"),
    ("postgresql://coursetutor:s3cret-pw@127.0.0.1:1/x", "postgresql://coursetutor@127.0.0.1:1/x"),
    ("postgresql://127.0.0.1:1/x?user=coursetutor&password=s3cret&connect_timeout=5",
     "postgresql://127.0.0.1:1/x?user=coursetutor&connect_timeout=5"),
    ("postgres://coursetutor:s3cret@127.0.0.1:1/x?password=s3cret",
     "postgres://coursetutor@127.0.0.1:1/x"),
])
def test_a_dead_server_is_a_store_error(url: str, shown: str) -> None:
    with pytest.raises(StoreError, match="cannot connect to PostgreSQL at") as caught:
        open_store(url)
    message = str(caught.value)
    assert message.startswith(f"cannot connect to PostgreSQL at {shown}: ")
    assert "s3cret" not in message


# -- migrations ------------------------------------------------------------------------


def versions(url: str) -> list[int]:
    with psycopg.connect(url) as conn:
        return [int(r[0]) for r in conn.execute(
            "SELECT version FROM schema_version ORDER BY version").fetchall()]


def test_migrations_run_once(postgres_url: str) -> None:
    assert [v for v, _ in pg_migrations()] == list(range(1, LATEST + 1))
    first = PostgresStore(postgres_url)
    first.ensure_course(T, C, "Calculus")
    assert versions(postgres_url) == list(range(1, LATEST + 1))
    second = PostgresStore(postgres_url)
    try:
        assert second.migrate() == LATEST
        assert versions(postgres_url) == list(range(1, LATEST + 1))
        assert second.get_course(T, C) == Course(T, C, "Calculus", "en")
    finally:
        first.close()
        second.close()


def test_concurrent_first_opens_migrate_once(postgres_url: str) -> None:
    start = threading.Barrier(4)

    def open_one(_: int) -> int:
        start.wait()
        store = PostgresStore(postgres_url, pool_min=0)
        try:
            return store.migrate()
        finally:
            store.close()

    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(open_one, range(4))) == [LATEST] * 4
    assert versions(postgres_url) == list(range(1, LATEST + 1))


def test_a_newer_schema_is_refused(postgres_url: str) -> None:
    PostgresStore(postgres_url).close()
    with psycopg.connect(postgres_url) as conn:
        conn.execute("INSERT INTO schema_version (version) VALUES (%s)", (LATEST + 1,))
    with pytest.raises(StoreError, match=f"schema version {LATEST + 1} is newer than this "
                                         f"coursetutor \\({LATEST}\\); upgrade coursetutor"):
        open_store(postgres_url)


# -- atomic writes ---------------------------------------------------------------------


def course_pk(url: str, tenant: str, course: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT pk FROM courses WHERE tenant = %s AND id = %s",
                           (tenant, course)).fetchone()
    assert row is not None
    return int(row[0])


def rows_of(url: str, tenant: str, course: str, pk: int) -> dict[str, int]:
    """The course's rows in each table search reads (postings and embeddings by the course's
    key, so orphans count too), and its BM25 statistics."""
    queries = {
        "documents": ("SELECT COUNT(*) FROM documents WHERE tenant = %s AND course = %s",
                      (tenant, course)),
        "chunks": ("SELECT COUNT(*) FROM chunks WHERE tenant = %s AND course = %s",
                   (tenant, course)),
        "postings": ("SELECT COUNT(*) FROM postings WHERE course_pk = %s", (pk,)),
        "embeddings": ("SELECT COUNT(*) FROM embeddings WHERE course_pk = %s", (pk,)),
        "n_chunks": ("SELECT COALESCE(SUM(n_chunks), 0) FROM courses WHERE pk = %s", (pk,)),
        "sum_terms": ("SELECT COALESCE(SUM(sum_terms), 0) FROM courses WHERE pk = %s", (pk,)),
    }
    found = {}
    with psycopg.connect(url) as conn:
        for name, (sql, params) in queries.items():
            row = conn.execute(sql, params).fetchone()
            assert row is not None
            found[name] = int(row[0])
    return found


def snapshot(store: Store) -> dict[str, Any]:
    """Everything a reader sees of the course."""
    query = vec(1, 1, 1, 1)
    hybrid = store.hybrid_search(ALL, MODEL, query, ["newton", "brand"], 50, "rrf", 60, 50)
    return {
        "course": store.get_course(T, C),
        "documents": store.list_documents(T, C),
        "chunks": store.get_chunks(ALL, [c for cs in COURSE.values() for c, _, _ in cs]),
        "keyword": store.keyword_search(ALL, ["newton", "method", "converg", "brand"], 50),
        "vector": store.vector_search(ALL, MODEL, query, 50),
        "hybrid": hybrid and dataclasses.replace(hybrid, milliseconds=0.0),
    }


@pytest.mark.parametrize("document", ["lec-1", "brand-new"])
def test_a_failed_replace_changes_nothing(
    store: PostgresStore, postgres_url: str, monkeypatch: pytest.MonkeyPatch, document: str
) -> None:
    build_course(store)
    pk = course_pk(postgres_url, T, C)
    before, counts = snapshot(store), rows_of(postgres_url, T, C, pk)

    def fail(*args: object) -> None:
        raise RuntimeError("disk full")

    monkeypatch.setattr(PostgresStore, "_insert_postings", staticmethod(fail))
    new = [(row("brand", "brand new newton text"), vec(1, 2, 3, 4)),
           (row("newton", "newton method tangent line newton"), vec(1.0, 0.1, 0.0, 0.0))]
    with pytest.raises(RuntimeError, match="disk full"):
        add(store, doc(document, "exercise", 5, content_hash="v2"), new)
    assert snapshot(store) == before
    assert rows_of(postgres_url, T, C, pk) == counts
    assert store.find_document(T, C, "brand-new") is None
    monkeypatch.undo()
    add(store, doc(document, "exercise", 5, content_hash="v2"), new)  # and then it works
    assert store.find_document(T, C, document) == dataclasses.replace(
        doc(document, "exercise", 5, content_hash="v2"), chunks=2 if document == "lec-1" else 1)


def test_remove_course_removes_its_search_rows(store: PostgresStore, postgres_url: str) -> None:
    build_course(store)
    store.ensure_course(T, "algebra", "Algebra")
    add(store, doc("alg", course="algebra"), [(row("alg-1", "matrix newton"), vec(1, 0, 0, 1))])
    pk, algebra_pk = course_pk(postgres_url, T, C), course_pk(postgres_url, T, "algebra")
    algebra = rows_of(postgres_url, T, "algebra", algebra_pk)
    # one postings row per document and term; the course's statistics count every term
    postings = sum(len({t for _, terms, _ in chunks for t in terms.split()})
                   for chunks in COURSE.values())
    terms = sum(len(terms.split()) for chunks in COURSE.values() for _, terms, _ in chunks)
    assert (postings, terms) == (45, 51)
    assert rows_of(postgres_url, T, C, pk) == {
        "documents": 6, "chunks": 12, "postings": postings, "embeddings": 12, "n_chunks": 12,
        "sum_terms": terms}
    store.remove_course(T, C)
    assert set(rows_of(postgres_url, T, C, pk).values()) == {0}
    assert rows_of(postgres_url, T, "algebra", algebra_pk) == algebra
    assert algebra == {"documents": 1, "chunks": 1, "postings": 2, "embeddings": 1,
                       "n_chunks": 1, "sum_terms": 2}
    with psycopg.connect(postgres_url) as conn:
        kept = conn.execute("SELECT COUNT(*) FROM vectors").fetchone()
    assert kept is not None and kept[0] == 13  # the embedding cache outlives courses


def writes(course: str, i: int) -> tuple[Document, list[tuple[ChunkRow, np.ndarray]]]:
    """Document `i` of `course`: three chunks with shared, new and per-document terms."""
    return doc(f"d{i}", course=course), [
        (row(f"c{i}-{j}", f"shared new{j} only{i} " + "again " * j, j), vec(1, i + 1, j + 1, 1))
        for j in range(3)]


def test_concurrent_writers_lose_nothing(store: PostgresStore, postgres_url: str) -> None:
    """Eight threads writing documents into two courses, creating the same new terms at once,
    leave each course as the same documents written one by one do."""
    names = {"a": "algebra", "b": "biology"}
    for course in [*names.values(), *(f"{c}-serial" for c in names.values())]:
        store.ensure_course(T, course)
    for i in range(8):
        add(store, *writes(f"{names['ab'[i % 2]]}-serial", i))
    with ThreadPoolExecutor(8) as pool:
        assert list(pool.map(lambda i: add(store, *writes(names["ab"[i % 2]], i)),
                             range(8))) == [3] * 8
    for course in names.values():
        together, serial = SearchFilters(T, course), SearchFilters(T, f"{course}-serial")
        assert rows_of(postgres_url, T, course, course_pk(postgres_url, T, course)) == rows_of(
            postgres_url, T, f"{course}-serial", course_pk(postgres_url, T, f"{course}-serial"))
        for terms in (["shared"], ["new1", "again"], ["only3", "only4", "new2"]):
            one, other = (store.keyword_search(f, terms, 20) for f in (together, serial))
            assert one.evidence == other.evidence
            # equal scores rank by insertion, which the threads shuffle
            assert sorted(one.hits, key=lambda h: (-h[1], h[0])) == sorted(
                other.hits, key=lambda h: (-h[1], h[0]))
        assert store.vector_search(together, MODEL, vec(1, 2, 3, 4), 20) == store.vector_search(
            serial, MODEL, vec(1, 2, 3, 4), 20)
    assert rows_of(postgres_url, T, "algebra", course_pk(postgres_url, T, "algebra")) == {
        "documents": 4, "chunks": 12, "postings": 4 * 6, "embeddings": 12, "n_chunks": 12,
        "sum_terms": 4 * (3 + 4 + 5)}


# -- vectors of other dimensions -------------------------------------------------------


def test_each_dimension_gets_its_own_hnsw_index(store: PostgresStore, postgres_url: str) -> None:
    build_course(store)
    wide = {f"w{i}": np.eye(8, dtype=np.float32)[i] + 0.1 for i in range(8)}
    store.put_vectors("test/axis-8d", {f"vk-{k}": v / np.linalg.norm(v) for k, v in wide.items()})
    store.replace_document(doc("wide"), [row(k, f"wide {k}", i) for i, k in enumerate(wide)])
    with psycopg.connect(postgres_url) as conn:
        indexes = {str(name): str(sql) for name, sql in conn.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'embeddings' "
            "AND indexname LIKE %s", ("embeddings_hnsw_%",)).fetchall()}
    assert sorted(indexes) == ["embeddings_hnsw_384", "embeddings_hnsw_4", "embeddings_hnsw_8"]
    assert "USING hnsw (((embedding)::vector(8)) vector_cosine_ops) WHERE (dim = 8)" in \
        indexes["embeddings_hnsw_8"]
    query = np.eye(8, dtype=np.float32)[5]
    found = store.vector_search(ALL, "test/axis-8d", query, 3)
    assert len(found) == 3 and found[0][0] == "w5"
    hybrid = store.hybrid_search(ALL, "test/axis-8d", query, ["w6"], 20, "rrf", 60, 20)
    assert hybrid is not None
    assert {c for c, _ in hybrid.fused} == set(wide)
    assert (hybrid.ranks["w5"], hybrid.ranks["w6"]["bm25"]) == ({"vector": 1, "bm25": None}, 1)
    # the 4-dimensional vectors of the same chunks' course are still searched on their own
    assert [c for c, _ in store.vector_search(ALL, MODEL, vec(1, 0, 0, 0), 1)] == ["newton"]
    assert {c for c, _ in store.vector_search(ALL, MODEL, vec(1, 0, 0, 0), 50)}.isdisjoint(wide)


# -- common terms and the per-version result cache -------------------------------------------


def _big_course(store: Store, n: int = 1500) -> None:
    """A course of `n` one-chunk documents: "the" and "method" everywhere (common terms),
    "newton" in 30 chunks and "secant" in 20 (rare ones), with varying lengths."""
    from coursetutor.store.pg_search import COMMON_MIN_DF

    assert n > COMMON_MIN_DF
    store.ensure_course(T, C, "Calculus", "en")
    rng = np.random.default_rng(7)
    vectors: dict[str, np.ndarray] = {}
    for i in range(n):
        terms = ["the"] * int(rng.integers(1, 4)) + ["method"] * int(rng.integers(0, 3))
        terms += ["newton"] * (i % 50 == 0) + ["secant"] * (i % 75 == 0)
        terms += [f"filler{int(x)}" for x in rng.integers(0, 400, size=int(rng.integers(3, 30)))]
        v = rng.normal(size=4).astype(np.float32)
        vectors[f"vk-{i}"] = v / np.linalg.norm(v)
        row = ChunkRow(id=f"c{i}", text=" ".join(terms), section_path=(), ordinal=0,
                       locator=Locator(anchor=f"c{i}"), n_tokens=len(terms),
                       terms=tuple(terms), vector_key=f"vk-{i}", content_hash=f"h{i}")
        store.put_vectors(MODEL, {f"vk-{i}": vectors[f"vk-{i}"]})
        store.replace_document(Document(T, C, f"d{i}", f"Doc {i}", "lecture", "", 2, "en",
                                        f"d{i}.md", f"v{i}", 0, 0), [row])


def test_common_terms_only_rescore_and_keep_the_exact_ranking(
        postgres_url: str, tmp_path: Any) -> None:
    pg, lite = open_store(postgres_url), SQLiteStore(tmp_path / "exact.db")
    try:
        for store in (pg, lite):
            _big_course(store)
        for terms in (["the", "newton", "method"], ["the", "secant"], ["newton", "secant"]):
            exact = lite.keyword_search(ALL, terms, 20)
            found = pg.keyword_search(ALL, terms, 20)
            assert [s for _, s in found.hits] == pytest.approx([s for _, s in exact.hits],
                                                                rel=1e-4)
            # the same chunks at every score (ties may be ordered either way)
            by_score = {round(s, 3): set() for _, s in exact.hits}
            for c, s in exact.hits:
                by_score[round(s, 3)].add(c)
            last = round(exact.hits[-1][1], 3)
            for c, s in found.hits:
                assert c in by_score[round(s, 3)] or round(s, 3) == last, (terms, c)
            assert found.evidence == pytest.approx(exact.evidence, abs=1e-6)
        # a question of common terms alone still finds chunks (all its terms count)
        assert len(pg.keyword_search(ALL, ["the", "method"], 20).hits) == 20
    finally:
        pg.close()
        lite.close()


def test_search_results_are_cached_per_course_version(
        postgres_url: str, embedder: EmbeddingModel, tmp_path: Any) -> None:
    settings = Settings(data_dir=tmp_path, store=postgres_url)
    with Workspace(settings, embedder=embedder) as ws:
        store = ws.store
        store.ensure_course(T, C, "Calculus", "en")
        v = embedder.embed_passages(["Newton's method uses the tangent line."])[0]
        store.put_vectors(embedder.model_id, {"k1": v})
        row = ChunkRow("n1", "Newton's method uses the tangent line.", (), Locator(anchor="a"),
                       0, 7, ("newton", "method", "use", "tangent", "line"), "k1", "h1")
        store.replace_document(Document(T, C, "lec", "Lecture", "lecture", "", 2, "en",
                                        "lec.md", "v1", 0, 0), [row])
        ws.tenant = T
        first = ws.search("newton tangent", C, k=3)
        again = ws.search("newton tangent", C, k=3)
        assert [h.chunk.id for h in first] == [h.chunk.id for h in again] == ["n1"]
        assert again[0] is first[0]  # the second came from the cache
        # a write makes a new version: the next search sees the new text at once
        row2 = dataclasses.replace(row, id="n2", text="Newton's method: tangent lines.",
                                   content_hash="h2")
        store.replace_document(Document(T, C, "lec", "Lecture", "lecture", "", 2, "en",
                                        "lec.md", "v2", 0, 0), [row2])
        assert [h.chunk.id for h in ws.search("newton tangent", C, k=3)] == ["n2"]
        # a course removed and created again never reuses a version
        store.remove_course(T, C)
        store.ensure_course(T, C, "Calculus", "en")
        assert ws.search("newton tangent", C, k=3) == []
