"""Everything a store holds about one student, found by schema, to export or erase.

Every table that holds anything about a student has `tenant` and `student` columns (and
`course`, unless it is tenant-wide like API keys), so the tables are found by reading the
schema (SQLite's `sqlite_master` and `PRAGMA table_info`, PostgreSQL's
`information_schema.columns`), not by a list that a new table could be missing from. Erasing
deletes from all of them in one transaction, tables that others reference last.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, Literal

from ..errors import StoreError
from .sql import Executor

Dialect = Literal["sqlite", "postgresql"]
# who may use a course is the teacher's record: erasing a student's data in one course keeps
# it; erasing the student from the tenant removes it with the keys
ACCESS_TABLES = frozenset({"enrollments"})
HIDDEN_COLUMNS = frozenset({"secret_hash"})  # never exported
_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")


@dataclasses.dataclass(frozen=True)
class StudentTable:
    """A table with a `student` column: its columns, and whether it is per course."""

    name: str
    columns: tuple[str, ...]

    @property
    def per_course(self) -> bool:
        return "course" in self.columns


def _sqlite_schema(db: Executor) -> tuple[dict[str, list[str]], list[tuple[str, str]]]:
    tables = [str(r[0]) for r in db.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").fetchall()]
    columns: dict[str, list[str]] = {}
    references: list[tuple[str, str]] = []
    for table in tables:
        if not _NAME.match(table):
            continue
        columns[table] = [str(r[1]) for r in db.execute(f"PRAGMA table_info({table})")
                          .fetchall()]
        references += [(table, str(r[2])) for r in db.execute(
            f"PRAGMA foreign_key_list({table})").fetchall()]
    return columns, references


def _pg_schema(db: Executor) -> tuple[dict[str, list[str]], list[tuple[str, str]]]:
    columns: dict[str, list[str]] = {}
    for table, column in db.execute(
            "SELECT table_name, column_name FROM information_schema.columns "
            "WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position"
    ).fetchall():
        columns.setdefault(str(table), []).append(str(column))
    references = [(str(a), str(b)) for a, b in db.execute(
        "SELECT c.conrelid::regclass::text, c.confrelid::regclass::text FROM pg_constraint c "
        "WHERE c.contype = 'f' AND c.connamespace = current_schema()::regnamespace").fetchall()]
    return columns, references


def student_tables(db: Executor, dialect: Dialect) -> list[StudentTable]:
    """Every table with tenant and student columns, referencing tables before the tables
    they reference (the order to delete in)."""
    columns, references = (_sqlite_schema if dialect == "sqlite" else _pg_schema)(db)
    found = {t: c for t, c in columns.items()
             if _NAME.match(t) and "student" in c and "tenant" in c}
    ordered: list[str] = []

    def visit(table: str, path: tuple[str, ...]) -> None:
        if table in ordered or table in path:
            return
        for child, parent in references:  # children (the referencing tables) first
            if parent == table and child in found and child != table:
                visit(child, (*path, table))
        ordered.append(table)

    for table in sorted(found):
        visit(table, ())
    return [StudentTable(t, tuple(found[t])) for t in ordered]


def _where(table: StudentTable, course: str | None) -> tuple[str, tuple[str, ...]]:
    if course is None:
        return "tenant = ? AND student = ?", ()
    return "tenant = ? AND student = ? AND course = ?", (course,)


def _plain(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return f"<{len(bytes(value))} bytes>"
    return value


def export_rows(db: Executor, tables: list[StudentTable], tenant: str, student: str,
                course: str | None) -> dict[str, list[dict[str, Any]]]:
    """The student's rows of each table (in one course, or all of the tenant's)."""
    found: dict[str, list[dict[str, Any]]] = {}
    for table in tables:
        if course is not None and not table.per_course:
            continue
        shown = [c for c in table.columns if c not in HIDDEN_COLUMNS]
        where, extra = _where(table, course)
        rows = db.execute(f"SELECT {', '.join(shown)} FROM {table.name} WHERE {where}",
                          (tenant, student, *extra)).fetchall()
        if rows:
            found[table.name] = [dict(zip(shown, map(_plain, r), strict=True)) for r in rows]
    return found


def erase_rows(tx: Callable[[], AbstractContextManager[Executor]], dialect: Dialect,
               tenant: str, student: str, course: str | None
               ) -> tuple[dict[str, int], list[str]]:
    """Delete the student's rows from every table in one transaction; the rows deleted per
    table and the ids of the sessions deleted."""
    if not student:
        raise StoreError("erasing needs a student id")
    counts: dict[str, int] = {}
    with tx() as db:
        sessions = session_ids(db, tenant, student, course)
        for table in student_tables(db, dialect):
            if course is not None and (not table.per_course or table.name in ACCESS_TABLES):
                continue
            where, extra = _where(table, course)
            cur = db.execute(f"DELETE FROM {table.name} WHERE {where}",
                             (tenant, student, *extra))
            if cur.rowcount:
                counts[table.name] = int(cur.rowcount)
    return counts, sessions


def session_ids(db: Executor, tenant: str, student: str, course: str | None) -> list[str]:
    """The ids of the student's sessions (caches key their turns by them)."""
    where, extra = _where(StudentTable("sessions", ("course",)), course)
    return [str(r[0]) for r in db.execute(f"SELECT id FROM sessions WHERE {where}",
                                          (tenant, student, *extra)).fetchall()]
