"""Sessions and turns: SQL shared by the SQLite and PostgreSQL stores."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from ..errors import NotFoundError
from ..types import Course, CourseActivity, Session, Turn
from .records import SESSION_COLUMNS, TURN_COLUMNS, session_from_row, turn_from_row, turn_values
from .sql import Executor


class SQLSessions:
    """Store mixin: the tutor's conversation memory."""

    _db: Executor

    if TYPE_CHECKING:  # provided by the store

        def _tx(self) -> AbstractContextManager[Executor]: ...

        def get_course(self, tenant: str, course: str) -> Course: ...

    def start_session(self, tenant: str, course: str, student: str) -> Session:
        self.get_course(tenant, course)
        now = time.time()
        sid = uuid.uuid4().hex
        with self._tx() as db:
            db.execute(
                "INSERT INTO sessions (id, tenant, course, student, created, updated) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (sid, tenant, course, student, now, now),
            )
        return Session(sid, tenant, course, student, now, now)

    def _sessions(self, where: str, params: tuple[object, ...]) -> Iterator[Session]:
        sql = f"SELECT {SESSION_COLUMNS} FROM sessions s WHERE {where} ORDER BY s.updated DESC"
        for row in self._db.execute(sql, params).fetchall():
            yield session_from_row(tuple(row))

    def get_session(self, tenant: str, course: str, session_id: str) -> Session:
        found = list(self._sessions("s.tenant = ? AND s.course = ? AND s.id = ?",
                                    (tenant, course, session_id)))
        if not found:
            raise NotFoundError(f"session {session_id!r} does not exist",
                                code="session_not_found", session=session_id)
        return found[0]

    def list_sessions(self, tenant: str, course: str, student: str) -> list[Session]:
        return list(self._sessions("s.tenant = ? AND s.course = ? AND s.student = ?",
                                   (tenant, course, student)))

    def all_sessions(self, tenant: str, course: str) -> list[Session]:
        return list(self._sessions("s.tenant = ? AND s.course = ?", (tenant, course)))

    def import_session(self, session: Session, turns: list[Turn]) -> None:
        s = session
        with self._tx() as db:
            db.execute(
                "INSERT INTO sessions (id, tenant, course, student, created, updated, ended) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (s.id, s.tenant, s.course, s.student, s.created, s.updated, s.ended))
            for t in turns:
                values = turn_values(t, t.ordinal, t.created)
                marks = ", ".join("?" * len(values))
                db.execute(f"INSERT INTO turns ({TURN_COLUMNS}) VALUES ({marks})", values)

    def end_session(self, tenant: str, course: str, session_id: str) -> Session:
        self.get_session(tenant, course, session_id)
        with self._tx() as db:
            db.execute("UPDATE sessions SET ended = COALESCE(ended, ?) WHERE id = ?",
                       (time.time(), session_id))
        return self.get_session(tenant, course, session_id)

    def add_turn(self, turn: Turn) -> Turn:
        session = self.get_session(turn.tenant, turn.course, turn.session_id)
        if session.student != turn.student:
            raise NotFoundError(f"session {turn.session_id!r} does not exist",
                                code="session_not_found", session=turn.session_id)
        now = time.time()
        with self._tx() as db:
            row = db.execute("SELECT COALESCE(MAX(ordinal), 0) + 1 FROM turns WHERE session_id = ?",
                             (turn.session_id,)).fetchone()
            values = turn_values(turn, int(row[0]), now)
            marks = ", ".join("?" * len(values))
            db.execute(f"INSERT INTO turns ({TURN_COLUMNS}) VALUES ({marks})", values)
            db.execute("UPDATE sessions SET updated = ? WHERE id = ?", (now, turn.session_id))
        return turn_from_row(values)

    def list_turns(
        self, tenant: str, course: str, session_id: str, last: int | None = None
    ) -> list[Turn]:
        self.get_session(tenant, course, session_id)
        rows = self._db.execute(
            f"SELECT {TURN_COLUMNS} FROM turns WHERE session_id = ? AND tenant = ? "
            "AND course = ? ORDER BY ordinal DESC LIMIT ?",
            (session_id, tenant, course, 1 << 62 if last is None else last),
        ).fetchall()
        return [turn_from_row(tuple(r)) for r in reversed(rows)]

    def count_exercise_turns(
        self, tenant: str, course: str, student: str, exercise_key: str
    ) -> int:
        row = self._db.execute(
            "SELECT COUNT(*) FROM turns WHERE tenant = ? AND course = ? AND student = ? "
            "AND exercise_key = ? AND exercise_key != ''",
            (tenant, course, student, exercise_key),
        ).fetchone()
        return int(row[0])

    def course_activity(self, tenant: str, course: str, since: float = 0.0,
                        examples: int = 20) -> CourseActivity:
        self.get_course(tenant, course)
        where = "tenant = ? AND course = ? AND created >= ?"
        params = (tenant, course, since)
        totals = self._db.execute(
            f"SELECT COUNT(DISTINCT student), COUNT(DISTINCT session_id), COUNT(*) FROM turns "
            f"WHERE {where}", params).fetchone()

        def counts(column: str) -> dict[str, int]:
            # column names come from the fixed calls below, never from a request
            rows = self._db.execute(f"SELECT {column}, COUNT(*) FROM turns WHERE {where} "
                                    f"GROUP BY {column} ORDER BY 2 DESC", params).fetchall()
            return {str(r[0]): int(r[1]) for r in rows}

        uncovered = self._db.execute(
            f"SELECT question FROM turns WHERE {where} AND grade = 'incorrect' "
            "AND category IN ('lecture', 'followup') ORDER BY created DESC LIMIT ?",
            (*params, examples)).fetchall()
        exercises = self._db.execute(
            f"SELECT exercise_key, COUNT(*), COUNT(DISTINCT student) FROM turns WHERE {where} "
            "AND exercise_key != '' GROUP BY exercise_key ORDER BY 2 DESC LIMIT ?",
            (*params, examples)).fetchall()
        return CourseActivity(
            students=int(totals[0]), sessions=int(totals[1]), turns=int(totals[2]),
            categories=counts("category"), intents=counts("intent"), grades=counts("grade"),
            levels=counts("level"), not_covered=[str(r[0]) for r in uncovered],
            exercises=[(str(r[0]), int(r[1]), int(r[2])) for r in exercises])
