"""Conversation summaries: a session's running summary and the summary of each ended session.

A running summary holds the oldest turns of a live session folded into a few sentences, so
the prompt keeps the whole conversation within its history budget. A session summary is
written when a session ends; the next session of that student in the course starts from it.
Both keep the ids (`f"{session_id}:{ordinal}"`) of the turns they came from. They reference
the course, not the session, so they outlive the turns when those are deleted.
"""

from __future__ import annotations

import abc
import dataclasses
import json
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any, Literal

from ..errors import InputError
from .sql import Executor

Kind = Literal["running", "session"]
KINDS: tuple[Kind, ...] = ("running", "session")

_COLUMNS = ("tenant, course, student, session_id, kind, text, turn_ids, topics, exercise_key, "
            "level, created, updated")
_MARKS = ", ".join("?" * 12)


@dataclasses.dataclass(frozen=True)
class Summary:
    """What one session, or the folded start of one, was about."""

    tenant: str
    course: str
    student: str
    session_id: str
    kind: Kind
    text: str
    turn_ids: tuple[str, ...] = ()  # f"{session_id}:{ordinal}" of the turns it covers
    topics: tuple[str, ...] = ()
    exercise_key: str = ""  # the last exercise worked on, so a later session can go on
    level: str = ""  # the rung of the hint ladder that exercise reached
    created: float = 0.0
    updated: float = 0.0

    def as_dict(self) -> dict[str, object]:
        """The summary as JSON (the CLI's and the API's shape)."""
        return {**dataclasses.asdict(self), "turn_ids": list(self.turn_ids),
                "topics": list(self.topics)}


def turn_id(session_id: str, ordinal: int) -> str:
    """The id of a turn wherever an entry keeps the turns it came from."""
    return f"{session_id}:{ordinal}"


def check_kind(kind: str) -> Kind:
    """`kind` as a summary kind, or InputError naming the valid ones."""
    for known in KINDS:
        if kind == known:
            return known
    raise InputError(f"unknown summary kind {kind!r}; use one of: {', '.join(KINDS)}")


class Summaries(abc.ABC):
    """The contract of a store's summaries (`store.summaries`)."""

    @abc.abstractmethod
    def put(self, summary: Summary) -> Summary:
        """Write the summary of its session and kind, replacing an earlier one (which keeps
        its creation time); returns it as stored."""

    @abc.abstractmethod
    def get(self, tenant: str, course: str, session_id: str, kind: Kind) -> Summary | None:
        """The session's summary of `kind`, or None."""

    @abc.abstractmethod
    def latest(self, tenant: str, course: str, student: str, limit: int = 2,
               kind: Kind = "session") -> list[Summary]:
        """The student's most recent summaries of `kind` in the course, newest first."""

    @abc.abstractmethod
    def for_student(self, tenant: str, student: str, course: str | None = None) -> list[Summary]:
        """Every summary about the student (in one course, or all of the tenant's), newest
        first: what the student may see and export."""

    @abc.abstractmethod
    def for_course(self, tenant: str, course: str) -> list[Summary]:
        """Every summary of the course, newest first (for a copy of the store)."""

    @abc.abstractmethod
    def restore(self, summaries: Sequence[Summary]) -> None:
        """Insert summaries as they were stored, times included (a copy of the store)."""

    @abc.abstractmethod
    def forget(self, tenant: str, student: str, course: str | None = None) -> int:
        """Delete every summary about the student (in one course, or all); how many."""

    @abc.abstractmethod
    def pending(self, tenant: str, course: str, student: str, idle_before: float,
                exclude: str = "") -> list[str]:
        """Ids of the student's sessions in the course with turns but no session summary that
        have ended or seen no turn since `idle_before`, oldest first (`exclude` left out)."""


def _values(s: Summary, created: float, updated: float) -> tuple[object, ...]:
    return (s.tenant, s.course, s.student, s.session_id, check_kind(s.kind), s.text,
            json.dumps(list(s.turn_ids)), json.dumps(list(s.topics), ensure_ascii=False),
            s.exercise_key, s.level, created, updated)


def _row(row: Sequence[Any]) -> Summary:
    values = list(row)
    return Summary(
        str(values[0]), str(values[1]), str(values[2]), str(values[3]), check_kind(values[4]),
        str(values[5]), tuple(json.loads(values[6])), tuple(json.loads(values[7])),
        str(values[8]), str(values[9]), float(values[10]), float(values[11]))


class SQLSummaries(Summaries):
    """Summaries in the `summaries` table, SQL shared by the SQLite and PostgreSQL stores."""

    def __init__(self, db: Executor,
                 tx: Callable[[], AbstractContextManager[Executor]]) -> None:
        self._db = db
        self._tx = tx

    def put(self, summary: Summary) -> Summary:
        s = summary
        now = time.time()
        with self._tx() as db:
            db.execute(
                f"INSERT INTO summaries ({_COLUMNS}) VALUES ({_MARKS}) "
                "ON CONFLICT (session_id, kind) DO UPDATE SET text = excluded.text, "
                "turn_ids = excluded.turn_ids, topics = excluded.topics, "
                "exercise_key = excluded.exercise_key, level = excluded.level, "
                "updated = excluded.updated", _values(s, now, now))
            row = db.execute(f"SELECT {_COLUMNS} FROM summaries WHERE session_id = ? AND kind = ?",
                             (s.session_id, s.kind)).fetchone()
        return _row(row)

    def restore(self, summaries: Sequence[Summary]) -> None:
        with self._tx() as db:
            for s in summaries:
                db.execute(f"INSERT INTO summaries ({_COLUMNS}) VALUES ({_MARKS})",
                           _values(s, s.created, s.updated))

    def _select(self, where: str, params: tuple[object, ...], limit: int = -1) -> list[Summary]:
        # `where` comes from the fixed clauses of this class, never from a caller
        sql = f"SELECT {_COLUMNS} FROM summaries WHERE {where} ORDER BY updated DESC, created DESC"
        if limit >= 0:
            sql += " LIMIT ?"
            params = (*params, limit)
        return [_row(r) for r in self._db.execute(sql, params).fetchall()]

    def get(self, tenant: str, course: str, session_id: str, kind: Kind) -> Summary | None:
        found = self._select("tenant = ? AND course = ? AND session_id = ? AND kind = ?",
                             (tenant, course, session_id, check_kind(kind)))
        return found[0] if found else None

    def latest(self, tenant: str, course: str, student: str, limit: int = 2,
               kind: Kind = "session") -> list[Summary]:
        return self._select("tenant = ? AND course = ? AND student = ? AND kind = ?",
                            (tenant, course, student, check_kind(kind)), max(0, limit))

    def for_student(self, tenant: str, student: str, course: str | None = None) -> list[Summary]:
        if course is None:
            return self._select("tenant = ? AND student = ?", (tenant, student))
        return self._select("tenant = ? AND course = ? AND student = ?",
                            (tenant, course, student))

    def for_course(self, tenant: str, course: str) -> list[Summary]:
        return self._select("tenant = ? AND course = ?", (tenant, course))

    def forget(self, tenant: str, student: str, course: str | None = None) -> int:
        with self._tx() as db:
            if course is None:
                cur = db.execute("DELETE FROM summaries WHERE tenant = ? AND student = ?",
                                 (tenant, student))
            else:
                cur = db.execute("DELETE FROM summaries WHERE tenant = ? AND course = ? "
                                 "AND student = ?", (tenant, course, student))
        return int(cur.rowcount)

    def pending(self, tenant: str, course: str, student: str, idle_before: float,
                exclude: str = "") -> list[str]:
        rows = self._db.execute(
            "SELECT s.id FROM sessions s WHERE s.tenant = ? AND s.course = ? AND s.student = ? "
            "AND s.id <> ? AND (s.ended IS NOT NULL OR s.updated < ?) "
            "AND EXISTS (SELECT 1 FROM turns t WHERE t.session_id = s.id) "
            "AND NOT EXISTS (SELECT 1 FROM summaries m WHERE m.session_id = s.id "
            "AND m.kind = 'session') ORDER BY s.updated, s.created",
            (tenant, course, student, exclude, idle_before)).fetchall()
        return [str(r[0]) for r in rows]
