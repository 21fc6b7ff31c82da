"""The scale-out store: PostgreSQL with pgvector, behind a bounded connection pool.

Everything the SQLite store keeps, this store keeps in the same shape (the access and session
SQL is shared). Search runs inside PostgreSQL:

- vectors: one row per chunk and model in `embeddings`, searched through an HNSW index
  (cosine) per dimension, with pgvector's iterative scan so course and type filters inside
  the query still return enough rows;
- keywords: Okapi BM25 over `postings` (one row per course, term and document: the chunks of
  that document holding the term, with their term frequencies and lengths). The terms are
  the ones the shared tokenizer makes (Snowball stemmers for European languages, character
  bigrams for Chinese, Japanese and Korean), so both stores rank with the same formula on the
  same tokens;
- hybrid: both lists and their fusion (reciprocal rank fusion or relative score fusion,
  weighted by the keyword evidence) in one statement, with the chunks' text.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from ..errors import ConfigError, NotFoundError, StoreError
from ..types import Chunk, Course, Document, SearchFilters
from .base import ChunkRow, HybridResult, KeywordResult, Store, Vector
from .classes import SQLClasses
from .lti import SQLLti
from .mastery import SQLMastery
from .migrate import LEGACY_POSTGRES, from_legacy, has_statements, migrations
from .pg_search import HNSW_DIMS, hybrid_sql, keyword_sql, vector_sql
from .privacy import student_tables
from .profiles import SQLProfiles
from .records import (
    CHUNK_COLUMNS,
    EXPORT_COLUMNS,
    chunk_from_row,
    chunk_row,
    expand_terms,
)
from .reuse import SQLReuse
from .sql import Result, redact, to_pyformat
from .sql_access import SQLAccess
from .sql_catalog import SQLCatalog
from .sql_sessions import SQLSessions
from .summaries import SQLSummaries

try:
    import psycopg
    from pgvector.psycopg import register_vector
    from psycopg_pool import ConnectionPool, PoolTimeout
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ConfigError(
        "the PostgreSQL store needs the postgres extra: pip install 'coursetutor[postgres]'"
    ) from exc

MIGRATION_LOCK = 7_243_110  # advisory lock id: one process migrates at a time


def pg_migrations() -> list[tuple[int, str]]:
    """Numbered schema migrations shipped with the package, in order, in PostgreSQL's SQL."""
    return migrations("postgres")


def _run(conn: psycopg.Connection[Any], sql: str, params: Sequence[Any] = ()) -> Result:
    cur = conn.execute(to_pyformat(sql), params)  # type: ignore[arg-type]
    rows = cur.fetchall() if cur.description else []
    return Result(rows, cur.rowcount)


class _Pooled:
    """Runs each shared-SQL statement on a connection borrowed from the pool."""

    def __init__(self, store: PostgresStore) -> None:
        self._store = store

    def execute(self, sql: str, parameters: Sequence[Any] = (), /) -> Result:
        with self._store.connection() as conn:
            return _run(conn, sql, parameters)


class _InTransaction:
    """Runs shared-SQL statements on one connection inside its transaction."""

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self.conn = conn

    def execute(self, sql: str, parameters: Sequence[Any] = (), /) -> Result:
        return _run(self.conn, sql, parameters)


class PostgresStore(SQLCatalog, SQLAccess, SQLSessions, Store):
    """Store backed by PostgreSQL with the pgvector extension."""

    _integrity_errors = (psycopg.errors.UniqueViolation,)
    _CHUNK_COUNT = "c.n_chunks"  # kept by every write
    fuses_hybrid = True

    @staticmethod
    def _vector_of(stored: Any) -> Vector:
        return np.asarray(stored.to_numpy(), dtype=np.float32)

    def __init__(
        self,
        url: str,
        pool_size: int = 10,
        pool_min: int = 1,
        idle_seconds: float = 300.0,
        timeout: float = 10.0,
        ef_search: int = 100,
        common_terms: float = 0.05,
    ) -> None:
        if pool_size < 1 or pool_min < 0 or pool_min > pool_size:
            raise ConfigError(
                f"pg_pool_min ({pool_min}) must be between 0 and pg_pool_size ({pool_size}), "
                "and pg_pool_size at least 1"
            )
        self.url = url
        self.pool_size = pool_size
        self.timeout = timeout
        self.ef_search = ef_search
        self.common_terms = common_terms
        self._dims: set[int] = set(HNSW_DIMS)
        self._dims_lock = threading.Lock()
        self.migrate()
        self._pool: ConnectionPool[psycopg.Connection[Any]] = ConnectionPool(
            url, min_size=pool_min, max_size=pool_size, max_idle=idle_seconds, timeout=timeout,
            kwargs={"autocommit": True}, configure=self._configure, name="coursetutor",
            open=True,
        )
        self._db: _Pooled = _Pooled(self)
        self.classes = SQLClasses(self._reader, self._tx)
        self.summaries = SQLSummaries(self._db, self._tx)
        self.profiles = SQLProfiles(self._db, self._tx, "postgresql")
        self.mastery = SQLMastery(self._db, self._tx)
        self.reuse = SQLReuse(self._reader, self._tx)
        self.lti = SQLLti(self._reader, self._tx, self._integrity_errors)

    # -- plumbing ---------------------------------------------------------
    def _configure(self, conn: psycopg.Connection[Any]) -> None:
        register_vector(conn)
        conn.execute("SET hnsw.iterative_scan = relaxed_order")
        conn.execute(f"SET hnsw.ef_search = {int(self.ef_search)}")

    def _connect(self) -> psycopg.Connection[Any]:
        try:
            return psycopg.connect(self.url, autocommit=True, connect_timeout=10)
        except psycopg.OperationalError as exc:
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise StoreError(
                f"cannot connect to PostgreSQL at {redact(self.url)}: {first}") from exc

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection[Any]]:
        """A connection from the pool (StoreError when none frees up within the timeout)."""
        try:
            with self._pool.connection() as conn:
                yield conn
        except PoolTimeout as exc:
            raise StoreError(
                f"the PostgreSQL connection pool is exhausted: all {self.pool_size} connections "
                f"stayed busy for {self.timeout:g} s (raise pg_pool_size or pg_pool_timeout)"
            ) from exc
        except psycopg.OperationalError as exc:
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise StoreError(f"PostgreSQL at {redact(self.url)} failed: {first}") from exc

    @contextmanager
    def _tx(self) -> Iterator[_InTransaction]:
        with self.connection() as conn, conn.transaction():
            yield _InTransaction(conn)

    def _reader(self) -> _Pooled:
        return self._db

    def close(self) -> None:
        self._pool.close()

    def scrub(self, tables: Sequence[str] = ()) -> None:
        """After an erasure: VACUUM the tables rows were deleted from, so their dead row
        versions are freed for reuse now rather than at the next autovacuum (VACUUM runs
        outside a transaction, on a connection of its own). PostgreSQL does not overwrite
        freed space at once, and its WAL, archives and backups keep the rows until they
        roll over (docs/privacy.md)."""
        from psycopg import sql as psql

        if not tables:
            return
        with self._connect() as conn:
            known = {t.name for t in student_tables(conn, "postgresql")}
            for table in (t for t in dict.fromkeys(tables) if t in known):
                conn.execute(psql.SQL("VACUUM {}").format(psql.Identifier(table)))

    def connections(self) -> int:
        return int(self._pool.get_stats().get("pool_size", 0))

    def migrate(self) -> int:
        """Apply pending migrations (one process at a time); return the schema version."""
        known = pg_migrations()
        with self._connect() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
            row = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
            current = int(row[0] or 0) if row else 0
            if current <= LEGACY_POSTGRES and from_legacy(current) != current:
                current = from_legacy(current)  # recorded in the store's own former series
                conn.execute("INSERT INTO schema_version (version) VALUES (%s)", (current,))
            if current > known[-1][0]:
                raise StoreError(
                    f"store schema version {current} is newer than this coursetutor "
                    f"({known[-1][0]}); upgrade coursetutor"
                )
            for version, sql in known:
                if version > current:
                    try:
                        if has_statements(sql):
                            conn.execute(sql.encode())
                    except psycopg.errors.FeatureNotSupported as exc:
                        raise StoreError(f"migration {version} failed: {exc}") from exc
                    except psycopg.errors.UndefinedFile as exc:
                        raise StoreError(
                            "PostgreSQL has no pgvector extension: install pgvector on the "
                            f"server ({str(exc).splitlines()[0]})") from exc
                    conn.execute("INSERT INTO schema_version (version) VALUES (%s)", (version,))
                    current = version
        return current

    def _course_pk(self, db: _InTransaction, tenant: str, course: str, lock: bool = False) -> int:
        row = db.execute(
            "SELECT pk FROM courses WHERE tenant = ? AND id = ?" + (" FOR UPDATE" if lock else ""),
            (tenant, course)).fetchone()
        if row is None:
            raise NotFoundError(f"course {course!r} does not exist", code="course_not_found",
                                course=course)
        return int(row[0])

    # -- courses ----------------------------------------------------------
    def ensure_course(
        self, tenant: str, course: str, title: str = "", language: str = "en"
    ) -> Course:
        with self._tx() as db:
            self._add_tenant(db, tenant, time.time())
            db.execute(
                "INSERT INTO courses (tenant, id, title, language) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (tenant, id) DO UPDATE SET "
                "title = CASE WHEN ? <> '' THEN excluded.title ELSE courses.title END",
                (tenant, course, title or course, language, title),
            )
        return self.get_course(tenant, course)

    def course_language(self, tenant: str, course: str) -> str:
        return self.course_settings(tenant, course).language

    def _bump(self, db: _InTransaction, tenant: str, course: str) -> None:
        db.execute("UPDATE courses SET generation = nextval('course_generation') "
                   "WHERE tenant = ? AND id = ?", (tenant, course))

    def search_state(self, tenant: str, course: str) -> tuple[str, int | None]:
        row = self._db.execute("SELECT language, generation FROM courses WHERE tenant = ? "
                               "AND id = ?", (tenant, course)).fetchone()
        if row is None:
            raise NotFoundError(f"course {course!r} does not exist", code="course_not_found",
                                course=course)
        return str(row[0]), int(row[1])

    def remove_course(self, tenant: str, course: str) -> None:
        with self._tx() as db:
            self._course_pk(db, tenant, course, lock=True)
            # documents, chunks, postings, embeddings, sessions, turns and enrolments cascade
            db.execute("DELETE FROM jobs WHERE tenant = ? AND course = ?", (tenant, course))
            db.execute("DELETE FROM courses WHERE tenant = ? AND id = ?", (tenant, course))

    # -- documents --------------------------------------------------------
    def _drop_chunks(self, db: _InTransaction, course_pk: int, d: tuple[str, str, str]) -> None:
        """Delete a document's chunks (embeddings cascade) and postings; update the stats."""
        row = db.execute(
            "WITH gone AS (DELETE FROM chunks WHERE tenant = ? AND course = ? "
            "AND document_id = ? RETURNING n_terms) SELECT COUNT(*), COALESCE(SUM(n_terms), 0) "
            "FROM gone", d).fetchone()
        db.execute(
            "UPDATE course_terms ct SET df = ct.df - p.n FROM (SELECT term_id, "
            "cardinality(chunk_pks) AS n FROM postings WHERE document_pk IN (SELECT pk FROM "
            "documents WHERE tenant = ? AND course = ? AND id = ?)) p "
            "WHERE ct.course_pk = ? AND ct.term_id = p.term_id", (*d, course_pk))
        db.execute("DELETE FROM postings WHERE document_pk IN (SELECT pk FROM documents "
                   "WHERE tenant = ? AND course = ? AND id = ?)", d)
        db.execute("UPDATE courses SET n_chunks = n_chunks - ?, sum_terms = sum_terms - ?, "
                   "generation = nextval('course_generation') WHERE pk = ?",
                   (int(row[0]), int(row[1]), course_pk))

    def remove_document(self, tenant: str, course: str, document_id: str) -> None:
        with self._tx() as db:
            if db.execute("SELECT 1 FROM documents WHERE tenant = ? AND course = ? AND id = ?",
                          (tenant, course, document_id)).fetchone() is None:
                raise NotFoundError(
                    f"document {document_id!r} does not exist in course {course!r}",
                    code="document_not_found", document=document_id)
            course_pk = self._course_pk(db, tenant, course, lock=True)
            self._drop_chunks(db, course_pk, (tenant, course, document_id))
            db.execute("DELETE FROM documents WHERE tenant = ? AND course = ? AND id = ?",
                       (tenant, course, document_id))
            self._follow_documents(db, tenant, course)

    def replace_document(self, document: Document, chunks: list[ChunkRow]) -> int:
        d = document
        with self._tx() as db:
            course_pk = self._course_pk(db, d.tenant, d.course, lock=True)
            self._drop_chunks(db, course_pk, (d.tenant, d.course, d.id))
            row = db.execute(
                "INSERT INTO documents (tenant, course, id, title, doc_type, topic, difficulty, "
                "language, source_name, content_hash, pages, media_url) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (tenant, course, id) DO UPDATE SET title = excluded.title, "
                "doc_type = excluded.doc_type, topic = excluded.topic, "
                "difficulty = excluded.difficulty, language = excluded.language, "
                "source_name = excluded.source_name, content_hash = excluded.content_hash, "
                "pages = excluded.pages, media_url = excluded.media_url, updated_at = now() "
                "RETURNING pk",
                (d.tenant, d.course, d.id, d.title, d.doc_type, d.topic, d.difficulty,
                 d.language, d.source_name, d.content_hash, d.pages, d.media_url),
            ).fetchone()
            document_pk = int(row[0])
            ids = self._term_ids(db, {t for c in chunks for t in c.terms})
            stored = self._insert_chunks(db, d, chunks, ids)
            self._insert_postings(db, course_pk, document_pk, d, stored)
            db.execute(
                "INSERT INTO embeddings (chunk_pk, model, course_pk, doc_type, difficulty, dim, "
                "embedding) SELECT k.pk, v.model, ?, ?, ?, v.dim, v.vector FROM chunks k "
                "JOIN vectors v ON v.key = k.vector_key "
                "WHERE k.tenant = ? AND k.course = ? AND k.document_id = ?",
                (course_pk, d.doc_type, d.difficulty, d.tenant, d.course, d.id))
            db.execute("UPDATE courses SET n_chunks = n_chunks + ?, sum_terms = sum_terms + ? "
                       "WHERE pk = ?", (len(stored), sum(len(c.terms) for _, c, _ in stored),
                                        course_pk))
            self._follow_documents(db, d.tenant, d.course)
        return len(stored)

    @staticmethod
    def _term_ids(db: _InTransaction, terms: set[str]) -> dict[str, int]:
        if not terms:
            return {}
        items = sorted(terms)  # a fixed order: concurrent writers lock terms alike
        db.execute("INSERT INTO terms (term) SELECT unnest(?::text[]) ON CONFLICT DO NOTHING",
                   (items,))
        rows = db.execute("SELECT term, id FROM terms WHERE term = ANY(?)", (items,)).fetchall()
        return {str(t): int(i) for t, i in rows}

    @staticmethod
    def _insert_chunks(
        db: _InTransaction, d: Document, chunks: list[ChunkRow], ids: dict[str, int]
    ) -> list[tuple[int, ChunkRow, Counter[int]]]:
        """Insert the chunks (identical ones in the course once); return the stored ones."""
        stored = []
        with db.conn.cursor() as cur:
            for c in chunks:
                counts = Counter(ids[t] for t in c.terms)
                cur.execute(
                    "INSERT INTO chunks (tenant, course, document_id, id, ordinal, text, "
                    "section_path, page, start_s, end_s, anchor, n_tokens, n_terms, term_ids, "
                    "term_tfs, vector_key, cues, content_hash) VALUES (%s, %s, %s, %s, %s, %s, "
                    "%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
                    "ON CONFLICT (tenant, course, id) DO NOTHING RETURNING pk",
                    (d.tenant, d.course, d.id, c.id, c.ordinal, c.text,
                     _json(list(c.section_path)), c.locator.page, c.locator.start,
                     c.locator.end, c.locator.anchor, c.n_tokens, len(c.terms),
                     list(counts.keys()), [float(v) for v in counts.values()], c.vector_key,
                     _json(c.cues), c.content_hash),
                )
                row = cur.fetchone()
                if row is not None:
                    stored.append((int(row[0]), c, counts))
        return stored

    @staticmethod
    def _insert_postings(
        db: _InTransaction, course_pk: int, document_pk: int, d: Document,
        stored: list[tuple[int, ChunkRow, Counter[int]]],
    ) -> None:
        lists: dict[int, tuple[list[int], list[float], list[float]]] = defaultdict(
            lambda: ([], [], []))
        for pk, c, counts in stored:
            for term_id, tf in counts.items():
                entry = lists[term_id]
                entry[0].append(pk)
                entry[1].append(float(tf))
                entry[2].append(float(len(c.terms)))
        if not lists:
            return
        with db.conn.cursor() as cur, cur.copy(
            "COPY postings (course_pk, term_id, document_pk, doc_type, difficulty, chunk_pks, "
            "tfs, lens) FROM STDIN"
        ) as copy:
            for term_id, (pks, tfs, lens) in lists.items():
                copy.write_row((course_pk, term_id, document_pk, d.doc_type, d.difficulty,
                                pks, tfs, lens))
        terms = sorted(lists)  # a fixed order: concurrent writers lock rows alike
        db.execute(
            "INSERT INTO course_terms (course_pk, term_id, df) SELECT ?, t, n FROM "
            "unnest(?::int[], ?::int[]) AS u(t, n) ON CONFLICT (course_pk, term_id) "
            "DO UPDATE SET df = course_terms.df + excluded.df",
            (course_pk, terms, [len(lists[t][0]) for t in terms]))

    # -- vectors ----------------------------------------------------------
    def get_vectors(self, model: str, keys: list[str]) -> dict[str, Vector]:
        if not keys:
            return {}
        with self.connection() as conn:
            rows = conn.execute("SELECT key, vector FROM vectors WHERE model = %s "
                                "AND key = ANY(%s)", (model, keys)).fetchall()
        return {str(k): np.asarray(v.to_numpy(), dtype=np.float32) for k, v in rows}

    def put_vectors(self, model: str, vectors: dict[str, Vector]) -> None:
        if not vectors:
            return
        dims = {int(v.shape[0]) for v in vectors.values()}
        for dim in dims - self._dims:
            self._ensure_hnsw(dim)
        with self.connection() as conn, conn.transaction(), conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO vectors (model, key, dim, vector) VALUES (%s, %s, %s, %s) "
                "ON CONFLICT (model, key) DO UPDATE SET dim = excluded.dim, "
                "vector = excluded.vector",
                [(model, k, int(v.shape[0]), np.asarray(v, np.float32))
                 for k, v in sorted(vectors.items())],
            )

    def _ensure_hnsw(self, dim: int) -> None:
        """An HNSW index for vectors of `dim` dimensions (the bundled model's ships built)."""
        with self._dims_lock:
            if dim in self._dims:
                return
            if not 0 < dim <= 2000:
                raise StoreError(f"pgvector's HNSW index takes up to 2000 dimensions, not {dim}")
            with self.connection() as conn:
                conn.execute(
                    f"CREATE INDEX IF NOT EXISTS embeddings_hnsw_{dim} ON embeddings USING hnsw "
                    f"((embedding::vector({dim})) vector_cosine_ops) WHERE dim = {dim}")
            self._dims.add(dim)

    # -- search -----------------------------------------------------------
    def _params(self, filters: SearchFilters, limit: int) -> dict[str, Any]:
        return {"tenant": filters.tenant, "course": filters.course, "n": limit,
                "common": self.common_terms,
                "types": list(filters.doc_types) if filters.doc_types is not None else None,
                "max_difficulty": filters.max_difficulty}

    def keyword_search(
        self, filters: SearchFilters, terms: list[str], limit: int
    ) -> KeywordResult:
        params = self._params(filters, limit) | {"terms": terms,
                                                 "n_distinct": len(set(terms))}
        with self.connection() as conn:
            rows = conn.execute(keyword_sql(), params).fetchall()
        if not rows:
            self.course_settings(filters.tenant, filters.course)  # NotFoundError if none
            return KeywordResult([], 0.0)
        evidence = float(rows[0][2] or 0.0)
        hits = [(str(r[0]), float(r[1])) for r in rows if r[0] is not None]
        return KeywordResult(hits, evidence if hits else 0.0)

    def vector_search(
        self, filters: SearchFilters, model: str, vector: Vector, limit: int
    ) -> list[tuple[str, float]]:
        q = np.asarray(vector, dtype=np.float32)
        params = self._params(filters, limit) | {"model": model, "vector": q}
        with self.connection() as conn:
            rows = conn.execute(vector_sql(int(q.shape[0])), params).fetchall()
        if not rows:
            self._check_vectors(filters, model)
        return [(str(r[0]), float(r[1])) for r in rows]

    def _check_vectors(self, filters: SearchFilters, model: str) -> None:
        """No vector hit: fine for an empty course, an error when its vectors are missing."""
        course = self.get_course(filters.tenant, filters.course)
        if course.chunks and self._db.execute(
            "SELECT 1 FROM embeddings e JOIN courses c ON c.pk = e.course_pk WHERE "
            "c.tenant = ? AND c.id = ? AND e.model = ? LIMIT 1",
            (filters.tenant, filters.course, model)).fetchone() is None:
            raise StoreError(f"some chunks have no {model} vector; re-ingest the course")

    def hybrid_search(
        self, filters: SearchFilters, model: str, vector: Vector, terms: list[str],
        limit: int, fusion: str, rrf_k: int, top: int,
    ) -> HybridResult:
        q = np.asarray(vector, dtype=np.float32)
        params = self._params(filters, limit) | {
            "model": model, "vector": q, "terms": terms, "n_distinct": len(set(terms)),
            "fusion": fusion, "rrf_k": rrf_k, "top": top}
        t0 = time.perf_counter()
        with self.connection() as conn:
            rows = conn.execute(hybrid_sql(int(q.shape[0])), params).fetchall()
        elapsed = (time.perf_counter() - t0) * 1000
        if not rows:
            self._check_vectors(filters, model)
        result = HybridResult(evidence=float(rows[0][5] or 0.0) if rows else 0.0,
                              milliseconds=elapsed)
        for r in rows:
            chunk = chunk_from_row(r[6:])
            result.fused.append((chunk.id, float(r[0])))
            result.ranks[chunk.id] = {"vector": _int(r[1]), "bm25": _int(r[3])}
            result.scores[chunk.id] = {"vector": _float(r[2]), "bm25": _float(r[4])}
            result.chunks[chunk.id] = chunk
        return result

    def export_chunks(self, tenant: str, course: str, document_id: str) -> list[ChunkRow]:
        with self.connection() as conn:
            rows = conn.execute(
                f"SELECT {EXPORT_COLUMNS}, term_ids, term_tfs FROM chunks WHERE tenant = %s "
                "AND course = %s AND document_id = %s ORDER BY pk", (tenant, course, document_id)
            ).fetchall()
            wanted = sorted({int(t) for r in rows for t in r[-2]})
            names = dict(conn.execute("SELECT id, term FROM terms WHERE id = ANY(%s)",
                                      (wanted,)).fetchall())
        return [chunk_row(r, expand_terms(r[-2], r[-1], names)) for r in rows]

    def get_chunks(self, filters: SearchFilters, chunk_ids: list[str]) -> dict[str, Chunk]:
        if not chunk_ids:
            return {}
        with self.connection() as conn:
            rows = conn.execute(
                f"SELECT {CHUNK_COLUMNS} FROM chunks k JOIN documents d ON d.tenant = k.tenant "
                "AND d.course = k.course AND d.id = k.document_id "
                "WHERE k.tenant = %s AND k.course = %s AND k.id = ANY(%s)",
                (filters.tenant, filters.course, chunk_ids)).fetchall()
        return {r[0]: chunk_from_row(r) for r in rows}

    def chunk_at(self, filters: SearchFilters, document_id: str, ordinal: int) -> Chunk | None:
        with self.connection() as conn:
            row = conn.execute(
                f"SELECT {CHUNK_COLUMNS} FROM chunks k JOIN documents d ON d.tenant = k.tenant "
                "AND d.course = k.course AND d.id = k.document_id "
                "WHERE k.tenant = %s AND k.course = %s AND k.document_id = %s "
                "AND k.ordinal = %s", (filters.tenant, filters.course, document_id, ordinal),
            ).fetchone()
        return chunk_from_row(row) if row else None


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


def _int(value: Any) -> int | None:
    return None if value is None else int(value)


def _float(value: Any) -> float | None:
    return None if value is None else float(value)
