"""The embedded default store: one SQLite file in WAL mode."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import NotFoundError, StoreError
from ..scoring.vectors import EXACT_LIMIT, VectorIndex
from ..types import Chunk, Course, Document, SearchFilters
from .base import ChunkRow, KeywordResult, Store, Vector
from .classes import SQLClasses
from .lti import SQLLti
from .mastery import SQLMastery
from .migrate import migrations as schema_migrations
from .private import private_file
from .profiles import SQLProfiles
from .records import CHUNK_COLUMNS, EXPORT_COLUMNS, chunk_row, expand_terms
from .records import chunk_from_row as _chunk
from .reuse import SQLReuse
from .scope_index import ScopeIndex, top_k
from .sql_access import SQLAccess
from .sql_catalog import SQLCatalog
from .sql_sessions import SQLSessions
from .summaries import SQLSummaries


def migrations() -> list[tuple[int, str]]:
    """Numbered schema migrations shipped with the package, in order, in SQLite's SQL."""
    return schema_migrations("sqlite")


class SQLiteStore(SQLCatalog, SQLAccess, SQLSessions, Store):
    """Store backed by a single SQLite database file."""

    _integrity_errors = (sqlite3.IntegrityError,)

    @staticmethod
    def _vector_of(stored: Any) -> Vector:
        return np.frombuffer(stored, dtype=np.float32)

    _db: sqlite3.Connection

    def __init__(self, path: Path | str, vector_exact_limit: int = EXACT_LIMIT,
                 *, migrate: bool = True) -> None:
        self.path = str(path)
        self.vector_exact_limit = vector_exact_limit
        if self.path != ":memory:":
            private_file(Path(self.path))
        try:
            self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA busy_timeout=10000")
            # deleted rows are overwritten with zeros, so an erased student's data cannot be
            # read back from free pages (the WAL is emptied by `scrub` and on close)
            self._db.execute("PRAGMA secure_delete=ON")
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open store {self.path}: {exc}") from exc
        self._lock = threading.RLock()
        self._indexes: dict[tuple[str, str], ScopeIndex] = {}
        self._reopened: list[SQLiteStore] = []
        self._local = threading.local()
        # each thread's reader, with the thread: readers of threads that ended are closed
        self._readers: list[tuple[threading.Thread, sqlite3.Connection]] = []
        if migrate:
            self.migrate()
        self.classes = SQLClasses(self._reader, self._tx)
        self.summaries = SQLSummaries(self._db, self._tx)
        self.profiles = SQLProfiles(self._db, self._tx)
        self.mastery = SQLMastery(self._db, self._tx)
        self.reuse = SQLReuse(self._reader, self._tx)
        self.lti = SQLLti(self._reader, self._tx, self._integrity_errors)

    # -- plumbing ---------------------------------------------------------
    def close(self) -> None:
        for other in self._reopened:
            other.close()
        with self._lock:
            here = threading.current_thread()
            for thread, reader in self._readers:
                # a reader another thread may be reading with right now is left to that
                # thread: closing a connection under a running query crashes the process,
                # and the reader closes with its thread's locals when the thread ends
                if thread is here or not thread.is_alive():
                    reader.close()
            self._readers.clear()
            with contextlib.suppress(sqlite3.Error):  # another process may still be reading
                self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self._db.close()

    def _reader(self) -> sqlite3.Connection:
        """This thread's read-only connection: searches from many threads read side by side
        (WAL) instead of queueing for the one connection that writes."""
        if self.path == ":memory:":
            return self._db
        reader: sqlite3.Connection | None = getattr(self._local, "db", None)
        if reader is None:
            reader = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            reader.execute("PRAGMA busy_timeout=10000")
            reader.execute("PRAGMA query_only=ON")
            self._local.db = reader
            with self._lock:
                for thread, old in [r for r in self._readers if not r[0].is_alive()]:
                    old.close()
                    self._readers.remove((thread, old))
                self._readers.append((threading.current_thread(), reader))
        return reader

    def reopen(self) -> SQLiteStore:
        if self.path == ":memory:":
            return self
        # the schema is this store's, already migrated: a reopened store takes no write lock
        # until it writes (a background thread holding one while it starts would stall others)
        reopened = SQLiteStore(self.path, self.vector_exact_limit, migrate=False)
        self._reopened.append(reopened)
        return reopened

    def connections(self) -> int:
        return 1 + len(self._readers) + sum(s.connections() for s in self._reopened)

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                yield self._db
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def migrate(self) -> int:
        """Apply pending migrations; return the schema version."""
        with self._tx() as db:
            db.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
            row = db.execute("SELECT MAX(version) FROM schema_version").fetchone()
            current = row[0] or 0
            known = migrations()
            if current > known[-1][0]:
                raise StoreError(
                    f"store schema version {current} is newer than this coursetutor "
                    f"({known[-1][0]}); upgrade coursetutor"
                )
            for version, sql in known:
                if version > current:
                    for statement in sql.split(";\n"):
                        if statement.strip():
                            db.execute(statement)
                    db.execute("INSERT INTO schema_version (version) VALUES (?)", (version,))
                    current = version
        return int(current)

    def scrub(self, tables: Sequence[str] = ()) -> None:
        """After an erasure: copy the WAL into the database and empty it, so the deleted
        rows' old pages are gone from the WAL file too (a reader still open may keep it from
        emptying until its read ends; the next scrub or the close empties it then)."""
        with self._lock:
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    @staticmethod
    def _next_generation(db: sqlite3.Connection) -> int:
        """A store-wide counter, so a re-created course never reuses a generation."""
        db.execute("UPDATE counters SET value = value + 1 WHERE name = 'generation'")
        return int(db.execute("SELECT value FROM counters WHERE name = 'generation'").fetchone()[0])

    def _bump(self, db: sqlite3.Connection, tenant: str, course: str) -> None:
        cur = db.execute(
            "UPDATE courses SET generation = ? WHERE tenant = ? AND id = ?",
            (self._next_generation(db), tenant, course),
        )
        if cur.rowcount == 0:
            raise NotFoundError(f"course {course!r} does not exist", code="course_not_found",
                                course=course)

    # -- courses ----------------------------------------------------------
    def ensure_course(
        self, tenant: str, course: str, title: str = "", language: str = "en"
    ) -> Course:
        with self._tx() as db:
            self._add_tenant(db, tenant, time.time())
            db.execute(
                "INSERT INTO courses (tenant, id, title, language, generation) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (tenant, id) DO UPDATE SET "
                "title = CASE WHEN ? != '' THEN excluded.title ELSE courses.title END",
                (tenant, course, title or course, language, self._next_generation(db), title),
            )
        return self.get_course(tenant, course)

    def course_language(self, tenant: str, course: str) -> str:
        row = self._reader().execute(
            "SELECT language FROM courses WHERE tenant = ? AND id = ?", (tenant, course)
        ).fetchone()
        if row is None:
            raise NotFoundError(f"course {course!r} does not exist", code="course_not_found",
                                course=course)
        return str(row[0])

    def remove_course(self, tenant: str, course: str) -> None:
        self.get_course(tenant, course)
        with self._tx() as db:
            db.execute("DELETE FROM turns WHERE tenant = ? AND course = ?", (tenant, course))
            db.execute("DELETE FROM enrollments WHERE tenant = ? AND course = ?", (tenant, course))
            db.execute("DELETE FROM jobs WHERE tenant = ? AND course = ?", (tenant, course))
            db.execute("DELETE FROM sessions WHERE tenant = ? AND course = ?", (tenant, course))
            db.execute("DELETE FROM chunks WHERE tenant = ? AND course = ?", (tenant, course))
            db.execute("DELETE FROM documents WHERE tenant = ? AND course = ?", (tenant, course))
            db.execute("DELETE FROM courses WHERE tenant = ? AND id = ?", (tenant, course))
        self._indexes.pop((tenant, course), None)

    # -- documents --------------------------------------------------------
    def remove_document(self, tenant: str, course: str, document_id: str) -> None:
        if self.find_document(tenant, course, document_id) is None:
            raise NotFoundError(f"document {document_id!r} does not exist in course {course!r}",
                                code="document_not_found", document=document_id)
        with self._tx() as db:
            db.execute(
                "DELETE FROM chunks WHERE tenant = ? AND course = ? AND document_id = ?",
                (tenant, course, document_id),
            )
            db.execute(
                "DELETE FROM documents WHERE tenant = ? AND course = ? AND id = ?",
                (tenant, course, document_id),
            )
            self._bump(db, tenant, course)
            self._follow_documents(db, tenant, course)

    def _term_ids(self, db: sqlite3.Connection, terms: set[str]) -> dict[str, int]:
        db.executemany("INSERT OR IGNORE INTO terms (term) VALUES (?)", [(t,) for t in terms])
        return self._lookup_terms(db, terms)

    @staticmethod
    def _lookup_terms(db: sqlite3.Connection, terms: set[str]) -> dict[str, int]:
        found: dict[str, int] = {}
        items = sorted(terms)
        for i in range(0, len(items), 500):
            part = items[i : i + 500]
            marks = ",".join("?" * len(part))
            for term, tid in db.execute(
                f"SELECT term, id FROM terms WHERE term IN ({marks})", part
            ):
                found[term] = tid
        return found

    def replace_document(self, document: Document, chunks: list[ChunkRow]) -> int:
        d = document
        with self._tx() as db:
            self._bump(db, d.tenant, d.course)
            db.execute(
                "DELETE FROM chunks WHERE tenant = ? AND course = ? AND document_id = ?",
                (d.tenant, d.course, d.id),
            )
            db.execute(
                "INSERT OR REPLACE INTO documents (tenant, course, id, title, doc_type, topic, "
                "difficulty, language, source_name, content_hash, pages, media_url) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (d.tenant, d.course, d.id, d.title, d.doc_type, d.topic, d.difficulty,
                 d.language, d.source_name, d.content_hash, d.pages, d.media_url),
            )
            ids = self._term_ids(db, {t for c in chunks for t in c.terms})
            stored = 0
            for c in chunks:
                counts = Counter(ids[t] for t in c.terms)
                term_ids = np.fromiter(counts.keys(), dtype=np.int32, count=len(counts))
                tfs = np.fromiter(counts.values(), dtype=np.float32, count=len(counts))
                cur = db.execute(
                    "INSERT OR IGNORE INTO chunks (tenant, course, document_id, id, ordinal, text, "
                    "section_path, page, start_s, end_s, anchor, n_tokens, n_terms, term_ids, "
                    "term_tfs, vector_key, cues, content_hash) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (d.tenant, d.course, d.id, c.id, c.ordinal, c.text,
                     json.dumps(list(c.section_path), ensure_ascii=False), c.locator.page,
                     c.locator.start, c.locator.end, c.locator.anchor, c.n_tokens,
                     len(c.terms), term_ids.tobytes(), tfs.tobytes(), c.vector_key,
                     json.dumps(c.cues), c.content_hash),
                )
                stored += cur.rowcount
            self._follow_documents(db, d.tenant, d.course)
        return stored

    # -- vectors ----------------------------------------------------------
    def get_vectors(self, model: str, keys: list[str]) -> dict[str, Vector]:
        found: dict[str, Vector] = {}
        for i in range(0, len(keys), 500):
            part = keys[i : i + 500]
            marks = ",".join("?" * len(part))
            for key, blob in self._db.execute(
                f"SELECT key, vector FROM vectors WHERE model = ? AND key IN ({marks})",
                [model, *part],
            ):
                found[key] = np.frombuffer(blob, dtype=np.float32)
        return found

    def put_vectors(self, model: str, vectors: dict[str, Vector]) -> None:
        with self._tx() as db:
            db.executemany(
                "INSERT OR REPLACE INTO vectors (model, key, dim, vector) VALUES (?, ?, ?, ?)",
                [(model, k, int(v.shape[0]), np.asarray(v, np.float32).tobytes())
                 for k, v in vectors.items()],
            )

    # -- search -----------------------------------------------------------
    def _scope(self, filters: SearchFilters, model: str | None = None) -> ScopeIndex:
        """The course's in-memory index, rebuilt when the course changed since it was built.

        The generation check, the rows and the vectors are read in one read transaction under
        the store's lock, so concurrent searches never build from a half-written course.
        """
        key = (filters.tenant, filters.course)
        row = self._reader().execute(
            "SELECT generation FROM courses WHERE tenant = ? AND id = ?", key).fetchone()
        index = self._indexes.get(key)
        if (row is not None and index is not None and index.generation == row[0]
                and (model is None or model in index.vectors)):
            return index  # the course did not change: no lock, no transaction
        with self._lock:
            self._db.execute("BEGIN")
            try:
                row = self._db.execute(
                    "SELECT generation FROM courses WHERE tenant = ? AND id = ?", key
                ).fetchone()
                if row is None:
                    raise NotFoundError(f"course {filters.course!r} does not exist",
                                        code="course_not_found", course=filters.course)
                index = self._indexes.get(key)
                if index is None or index.generation != row[0]:
                    rows = self._db.execute(
                        "SELECT k.id, d.doc_type, d.difficulty, k.n_terms, k.term_ids, "
                        "k.term_tfs FROM chunks k JOIN documents d ON d.tenant = k.tenant "
                        "AND d.course = k.course AND d.id = k.document_id "
                        "WHERE k.tenant = ? AND k.course = ? ORDER BY k.pk",
                        key,
                    ).fetchall()
                    index = ScopeIndex.build(row[0], rows)
                    self._indexes[key] = index
                if model is not None and model not in index.vectors:
                    matrix = self._load_vectors(filters, model, len(index.chunk_ids))
                    index.vectors[model] = VectorIndex(matrix, self.vector_exact_limit)
            finally:
                self._db.execute("COMMIT")
        return index

    def _load_vectors(self, filters: SearchFilters, model: str, n: int) -> Vector:
        rows = self._db.execute(
            "SELECT v.vector FROM chunks k "
            "LEFT JOIN vectors v ON v.model = ? AND v.key = k.vector_key "
            "WHERE k.tenant = ? AND k.course = ? ORDER BY k.pk",
            (model, filters.tenant, filters.course),
        ).fetchall()
        if any(r[0] is None for r in rows):
            raise StoreError(f"some chunks have no {model} vector; re-ingest the course")
        if len(rows) != n:
            raise StoreError("the course changed while its index was loading; search again")
        if not rows:
            return np.zeros((0, 1), dtype=np.float32)
        return np.vstack([np.frombuffer(r[0], dtype=np.float32) for r in rows])

    def keyword_search(
        self, filters: SearchFilters, terms: list[str], limit: int
    ) -> KeywordResult:
        index = self._scope(filters)
        known = self._lookup_terms(self._reader(), set(terms))
        columns = index.bm25.columns([known[t] for t in terms if t in known])
        scores = index.bm25.scores(columns)
        hits = top_k(scores, limit, index.mask(filters), positive_only=True)
        distinct = sorted({known[t] for t in terms if t in known})
        present = index.bm25.columns(distinct)
        evidence = index.bm25.evidence(
            present, len(set(terms)) - len(present), hits[0][0] if hits else None
        )
        return KeywordResult([(index.chunk_ids[i], s) for i, s in hits], evidence)

    def vector_search(
        self, filters: SearchFilters, model: str, vector: Vector, limit: int
    ) -> list[tuple[str, float]]:
        index = self._scope(filters, model)
        vectors = index.vectors[model]
        if len(vectors) == 0:
            return []
        mask = index.mask(filters)
        scores, rows = vectors.scores(np.asarray(vector, dtype=np.float32), limit, mask)
        hits = top_k(scores, limit, None if mask is None else mask[rows])
        return [(index.chunk_ids[rows[i]], s) for i, s in hits]

    def export_chunks(self, tenant: str, course: str, document_id: str) -> list[ChunkRow]:
        rows = self._db.execute(
            f"SELECT {EXPORT_COLUMNS}, term_ids, term_tfs FROM chunks WHERE tenant = ? "
            "AND course = ? AND document_id = ? ORDER BY pk", (tenant, course, document_id)
        ).fetchall()
        parts = [(np.frombuffer(r[-2], dtype=np.int32), np.frombuffer(r[-1], dtype=np.float32))
                 for r in rows]
        wanted = sorted({int(t) for ids, _ in parts for t in ids})
        names: dict[int, str] = {}
        for i in range(0, len(wanted), 500):
            part = wanted[i : i + 500]
            marks = ",".join("?" * len(part))
            names.update(self._db.execute(
                f"SELECT id, term FROM terms WHERE id IN ({marks})", part).fetchall())
        return [chunk_row(r, expand_terms(ids.tolist(), tfs.tolist(), names))
                for r, (ids, tfs) in zip(rows, parts, strict=True)]

    def get_chunks(self, filters: SearchFilters, chunk_ids: list[str]) -> dict[str, Chunk]:
        if not chunk_ids:
            return {}
        marks = ",".join("?" * len(chunk_ids))
        rows = self._reader().execute(
            f"SELECT {CHUNK_COLUMNS} FROM chunks k JOIN documents d "
            "ON d.tenant = k.tenant AND d.course = k.course AND d.id = k.document_id "
            f"WHERE k.tenant = ? AND k.course = ? AND k.id IN ({marks})",
            [filters.tenant, filters.course, *chunk_ids],
        ).fetchall()
        return {r[0]: _chunk(r) for r in rows}

    def chunk_at(self, filters: SearchFilters, document_id: str, ordinal: int) -> Chunk | None:
        row = self._reader().execute(
            f"SELECT {CHUNK_COLUMNS} FROM chunks k JOIN documents d "
            "ON d.tenant = k.tenant AND d.course = k.course AND d.id = k.document_id "
            "WHERE k.tenant = ? AND k.course = ? AND k.document_id = ? AND k.ordinal = ?",
            [filters.tenant, filters.course, document_id, ordinal],
        ).fetchone()
        return _chunk(row) if row else None
