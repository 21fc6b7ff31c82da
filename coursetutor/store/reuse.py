"""Answered lecture questions, kept so that a question asked again can reuse the earlier
answer's passages (tutor/reuse.py decides when).

The contract is `ReuseStore`; `SQLReuse` is its SQL, shared by the SQLite and PostgreSQL
stores (each exposes one as `store.reuse`). An entry holds the question's normalised key and
its embedding (the course's embedder, stored as float32 bytes), the ids of the chunks the
answer was given, the answer's text, the turn it came from (`f"{session_id}:{ordinal}"`), the
student who asked and the course generation it was answered at.

The nearest entries are found by cosine over all of a course's entries in numpy: each process
keeps a course's matrix and checks it against the row count and the highest id before every
lookup, reading only the rows added since (any other change reloads it).
"""

from __future__ import annotations

import abc
import dataclasses
import json
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

import numpy as np
import numpy.typing as npt

from .sql import Executor

Vector = npt.NDArray[np.float32]
COLUMNS = ("id, tenant, course, student, turn_id, question, key, language, model, vector, "
           "chunk_ids, answer, generation, created")


@dataclasses.dataclass(frozen=True)
class AnsweredQuestion:
    """One answered lecture question of a course, as reuse needs it."""

    tenant: str
    course: str
    student: str
    turn_id: str  # f"{session_id}:{ordinal}" of the turn that answered it
    question: str
    key: str  # the normalised question (tutor/reuse_key.py)
    language: str
    model: str  # the embedder that made `vector`
    vector: Vector = dataclasses.field(compare=False, repr=False)
    chunk_ids: tuple[str, ...]  # the passages the answer was given, in prompt order
    answer: str
    generation: int  # the course's version when it was answered
    created: float = 0.0
    id: int = 0  # given by the store


@dataclasses.dataclass(frozen=True)
class Nearest:
    """An entry and the cosine of its key's embedding with the question's."""

    entry: AnsweredQuestion
    score: float


class ReuseStore(abc.ABC):
    """The contract of a store's answered questions (`store.reuse`)."""

    @abc.abstractmethod
    def add(self, entry: AnsweredQuestion) -> AnsweredQuestion:
        """Store an answered question; returns it with its id and creation time."""

    @abc.abstractmethod
    def nearest(self, tenant: str, course: str, model: str, vector: Vector,
                limit: int = 3) -> list[Nearest]:
        """The course's entries embedded by `model` nearest to `vector` (unit length), best
        first."""

    @abc.abstractmethod
    def get(self, tenant: str, course: str, entry_id: int) -> AnsweredQuestion | None:
        """One entry of the course, or None."""

    @abc.abstractmethod
    def generation(self, tenant: str, course: str) -> int:
        """The course's version now (every write to its documents changes it); 0 when the
        course does not exist."""

    @abc.abstractmethod
    def remove(self, tenant: str, course: str, entry_ids: Sequence[int]) -> int:
        """Delete entries of the course (stale ones); how many."""

    @abc.abstractmethod
    def count(self, tenant: str, course: str) -> int:
        """How many entries the course has."""

    @abc.abstractmethod
    def for_student(self, tenant: str, student: str,
                    course: str | None = None) -> list[AnsweredQuestion]:
        """Every entry built from the student's turns (in one course, or all), newest
        first."""

    @abc.abstractmethod
    def forget(self, tenant: str, student: str, course: str | None = None) -> int:
        """Delete every entry built from the student's turns; how many."""


def _entry(row: Sequence[Any]) -> AnsweredQuestion:
    v = list(row)
    return AnsweredQuestion(
        tenant=str(v[1]), course=str(v[2]), student=str(v[3]), turn_id=str(v[4]),
        question=str(v[5]), key=str(v[6]), language=str(v[7]), model=str(v[8]),
        vector=np.frombuffer(bytes(v[9]), dtype=np.float32), chunk_ids=tuple(json.loads(v[10])),
        answer=str(v[11]), generation=int(v[12]), created=float(v[13]), id=int(v[0]))


@dataclasses.dataclass
class _Matrix:
    """A course's entry ids and unit vectors, as of a row count and highest id."""

    count: int
    last: int
    ids: npt.NDArray[np.int64]
    vectors: npt.NDArray[np.float32]


class SQLReuse(ReuseStore):
    """`ReuseStore` in the SQL both stores share (`?` placeholders, values bound)."""

    def __init__(self, read: Callable[[], Executor],
                 tx: Callable[[], AbstractContextManager[Executor]]) -> None:
        self._read = read
        self._tx = tx
        self._lock = threading.Lock()
        self._matrices: dict[tuple[str, str, str], _Matrix] = {}

    def add(self, entry: AnsweredQuestion) -> AnsweredQuestion:
        e = entry
        vector = np.ascontiguousarray(e.vector, dtype=np.float32)
        created = e.created or time.time()
        with self._tx() as db:
            row = db.execute(
                "INSERT INTO answer_keys (tenant, course, student, turn_id, question, key, "
                "language, model, vector, chunk_ids, answer, generation, created) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                (e.tenant, e.course, e.student, e.turn_id, e.question, e.key, e.language,
                 e.model, vector.tobytes(), json.dumps(list(e.chunk_ids)), e.answer,
                 e.generation, created)).fetchone()
        return dataclasses.replace(e, vector=vector, created=created, id=int(row[0]))

    def nearest(self, tenant: str, course: str, model: str, vector: Vector,
                limit: int = 3) -> list[Nearest]:
        matrix = self._matrix(tenant, course, model)
        query = np.asarray(vector, dtype=np.float32)
        if not len(matrix.ids) or limit < 1 or matrix.vectors.shape[1] != query.shape[0]:
            return []
        scores = matrix.vectors @ query
        best = np.argsort(-scores, kind="stable")[:limit]
        wanted = {int(matrix.ids[i]): float(scores[i]) for i in best}
        marks = ", ".join("?" * len(wanted))
        rows = self._read().execute(
            f"SELECT {COLUMNS} FROM answer_keys WHERE tenant = ? AND course = ? "
            f"AND id IN ({marks})", (tenant, course, *wanted)).fetchall()
        found = [Nearest(_entry(r), wanted[int(r[0])]) for r in rows]
        return sorted(found, key=lambda n: (-n.score, n.entry.id))

    def _matrix(self, tenant: str, course: str, model: str) -> _Matrix:
        """The course's vectors, read again only as far as they changed."""
        scope = (tenant, course, model)
        db = self._read()
        count, last = db.execute(
            "SELECT COUNT(*), COALESCE(MAX(id), 0) FROM answer_keys WHERE tenant = ? "
            "AND course = ? AND model = ?", scope).fetchone()
        count, last = int(count), int(last)
        with self._lock:
            held = self._matrices.get(scope)
        if held is not None and (held.count, held.last) == (count, last):
            return held
        since = held.last if held is not None and last > held.last else 0
        rows = db.execute("SELECT id, vector FROM answer_keys WHERE tenant = ? AND course = ? "
                          "AND model = ? AND id > ? ORDER BY id", (*scope, since)).fetchall()
        ids = np.array([int(r[0]) for r in rows], dtype=np.int64)
        vectors = _stack([bytes(r[1]) for r in rows])
        if since and held is not None and held.count + len(rows) == count:
            ids = np.concatenate([held.ids, ids])
            vectors = np.vstack([held.vectors, vectors]) if len(rows) else held.vectors
        elif since:  # rows were also removed: read them all
            rows = db.execute("SELECT id, vector FROM answer_keys WHERE tenant = ? "
                              "AND course = ? AND model = ? ORDER BY id", scope).fetchall()
            ids = np.array([int(r[0]) for r in rows], dtype=np.int64)
            vectors = _stack([bytes(r[1]) for r in rows])
        matrix = _Matrix(len(ids), int(ids[-1]) if len(ids) else 0, ids, vectors)
        with self._lock:
            self._matrices[scope] = matrix
        return matrix

    def get(self, tenant: str, course: str, entry_id: int) -> AnsweredQuestion | None:
        row = self._read().execute(
            f"SELECT {COLUMNS} FROM answer_keys WHERE tenant = ? AND course = ? AND id = ?",
            (tenant, course, entry_id)).fetchone()
        return _entry(row) if row is not None else None

    def generation(self, tenant: str, course: str) -> int:
        row = self._read().execute("SELECT generation FROM courses WHERE tenant = ? AND id = ?",
                                   (tenant, course)).fetchone()
        return int(row[0]) if row is not None else 0

    def remove(self, tenant: str, course: str, entry_ids: Sequence[int]) -> int:
        if not entry_ids:
            return 0
        marks = ", ".join("?" * len(entry_ids))
        with self._tx() as db:
            cur = db.execute(f"DELETE FROM answer_keys WHERE tenant = ? AND course = ? "
                             f"AND id IN ({marks})", (tenant, course, *map(int, entry_ids)))
        return int(cur.rowcount)

    def count(self, tenant: str, course: str) -> int:
        row = self._read().execute(
            "SELECT COUNT(*) FROM answer_keys WHERE tenant = ? AND course = ?",
            (tenant, course)).fetchone()
        return int(row[0])

    def for_student(self, tenant: str, student: str,
                    course: str | None = None) -> list[AnsweredQuestion]:
        where, params = _student_scope(tenant, student, course)
        rows = self._read().execute(
            f"SELECT {COLUMNS} FROM answer_keys WHERE {where} ORDER BY created DESC, id DESC",
            params).fetchall()
        return [_entry(r) for r in rows]

    def forget(self, tenant: str, student: str, course: str | None = None) -> int:
        where, params = _student_scope(tenant, student, course)
        with self._tx() as db:
            cur = db.execute(f"DELETE FROM answer_keys WHERE {where}", params)
        return int(cur.rowcount)


def _student_scope(tenant: str, student: str,
                   course: str | None) -> tuple[str, tuple[str, ...]]:
    """A fixed WHERE clause (never caller text) and its values."""
    if course is None:
        return "tenant = ? AND student = ?", (tenant, student)
    return "tenant = ? AND student = ? AND course = ?", (tenant, student, course)


def _stack(blobs: list[bytes]) -> npt.NDArray[np.float32]:
    """Stored vectors as the rows of one matrix."""
    if not blobs:
        return np.zeros((0, 0), dtype=np.float32)
    return np.vstack([np.frombuffer(b, dtype=np.float32) for b in blobs])
