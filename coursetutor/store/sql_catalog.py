"""Course settings and documents (SQL shared by the SQLite and PostgreSQL stores)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from ..errors import NotFoundError
from ..types import Course, Document, check_doc_type
from .base import Vector
from .records import course_from_row
from .sql import Executor

DOCUMENT_SQL = (
    "SELECT d.tenant, d.course, d.id, d.title, d.doc_type, d.topic, d.difficulty, "
    "d.language, d.source_name, d.content_hash, d.pages, "
    "(SELECT COUNT(*) FROM chunks k WHERE k.tenant = d.tenant AND k.course = d.course "
    "AND k.document_id = d.id), d.media_url FROM documents d "
    "WHERE d.tenant = ? AND d.course = ?"
)


# chunks per language of their documents, most first
LANGUAGES_SQL = (
    "SELECT d.language, COUNT(*) FROM chunks k JOIN documents d ON d.tenant = k.tenant "
    "AND d.course = k.course AND d.id = k.document_id WHERE k.tenant = ? AND k.course = ? "
    "GROUP BY d.language ORDER BY COUNT(*) DESC, d.language"
)
# a course not set to a language takes the one most of its chunks are in (kept when empty)
FOLLOW_SQL = (
    "UPDATE courses SET language = COALESCE((SELECT d.language FROM chunks k JOIN documents d "
    "ON d.tenant = k.tenant AND d.course = k.course AND d.id = k.document_id "
    "WHERE k.tenant = ? AND k.course = ? GROUP BY d.language "
    "ORDER BY COUNT(*) DESC, d.language LIMIT 1), language) "
    "WHERE tenant = ? AND id = ? AND language_set = 0"
)


def document_from_row(row: Sequence[Any]) -> Document:
    values = list(row)
    values[4] = check_doc_type(values[4])
    values[11] = int(values[11])
    return Document(*values)


class SQLCatalog:
    """Store mixin: courses, their settings and documents, and the vector cache's export."""

    _db: Executor
    # how the store counts a course's chunks (a subquery, or a column the store keeps)
    _CHUNK_COUNT = ("(SELECT COUNT(*) FROM chunks k WHERE k.tenant = c.tenant "
                    "AND k.course = c.id)")

    if TYPE_CHECKING:  # provided by the store

        def _tx(self) -> AbstractContextManager[Executor]: ...

        def _reader(self) -> Executor: ...

        def _bump(self, db: Any, tenant: str, course: str) -> None: ...

    @staticmethod
    def _vector_of(stored: Any) -> Vector:
        """A vector as the store's driver returns it, as float32 numbers."""
        raise NotImplementedError

    def _courses(self, tenant: str, course: str | None) -> list[Course]:
        sql = ("SELECT c.tenant, c.id, c.title, c.language, (SELECT COUNT(*) FROM documents d "
               f"WHERE d.tenant = c.tenant AND d.course = c.id), {self._CHUNK_COUNT}, "
               "c.allow_solutions FROM courses c WHERE c.tenant = ?")
        params: tuple[str, ...] = (tenant,)
        if course is not None:
            sql += " AND c.id = ?"
            params = (tenant, course)
        rows = self._db.execute(sql + " ORDER BY c.id", params).fetchall()
        return [course_from_row(r) for r in rows]

    def get_course(self, tenant: str, course: str) -> Course:
        found = self._courses(tenant, course)
        if not found:
            raise NotFoundError(f"course {course!r} does not exist", code="course_not_found",
                                course=course)
        return found[0]

    def list_courses(self, tenant: str) -> list[Course]:
        return self._courses(tenant, None)

    def iter_vectors(self, batch: int = 1000) -> Iterator[tuple[str, dict[str, Vector]]]:
        after = ("", "")
        while True:
            rows = self._db.execute(
                "SELECT model, key, vector FROM vectors WHERE (model, key) > (?, ?) "
                "ORDER BY model, key LIMIT ?", (*after, batch)).fetchall()
            if not rows:
                return
            by_model: dict[str, dict[str, Vector]] = {}
            for model, key, stored in rows:
                by_model.setdefault(model, {})[key] = self._vector_of(stored)
            yield from by_model.items()
            after = (rows[-1][0], rows[-1][1])

    def set_course_policy(self, tenant: str, course: str, allow_solutions: bool) -> Course:
        with self._tx() as db:
            cur = db.execute("UPDATE courses SET allow_solutions = ? WHERE tenant = ? AND id = ?",
                             (int(allow_solutions), tenant, course))
            if cur.rowcount == 0:
                raise NotFoundError(f"course {course!r} does not exist", code="course_not_found",
                                course=course)
        return self.get_course(tenant, course)

    def course_settings(self, tenant: str, course: str) -> Course:
        row = self._reader().execute(
            "SELECT tenant, id, title, language, 0, 0, allow_solutions FROM courses "
            "WHERE tenant = ? AND id = ?", (tenant, course)).fetchone()
        if row is None:
            raise NotFoundError(f"course {course!r} does not exist", code="course_not_found",
                                course=course)
        return course_from_row(row)

    def course_languages(self, tenant: str, course: str) -> dict[str, int]:
        """The course's chunks per language of their documents, most first."""
        self.course_settings(tenant, course)
        rows = self._reader().execute(LANGUAGES_SQL, (tenant, course)).fetchall()
        return {str(lang): int(n) for lang, n in rows}

    def explicit_language(self, tenant: str, course: str) -> str | None:
        row = self._reader().execute(
            "SELECT language, language_set FROM courses WHERE tenant = ? AND id = ?",
            (tenant, course)).fetchone()
        if row is None:
            raise NotFoundError(f"course {course!r} does not exist", code="course_not_found",
                                course=course)
        return str(row[0]) if row[1] else None

    def set_course_language(self, tenant: str, course: str, language: str | None) -> Course:
        with self._tx() as db:
            if language is None:
                cur = db.execute("UPDATE courses SET language_set = 0 WHERE tenant = ? AND id = ?",
                                 (tenant, course))
                self._follow_documents(db, tenant, course)
            else:
                cur = db.execute("UPDATE courses SET language = ?, language_set = 1 "
                                 "WHERE tenant = ? AND id = ?", (language, tenant, course))
            if cur.rowcount == 0:
                raise NotFoundError(f"course {course!r} does not exist", code="course_not_found",
                                course=course)
            self._bump(db, tenant, course)  # searches cached under the old language go
        return self.get_course(tenant, course)

    @staticmethod
    def _follow_documents(db: Executor, tenant: str, course: str) -> None:
        """After a write to its documents: the course takes its chunks' majority language,
        unless a language was set for it."""
        db.execute(FOLLOW_SQL, (tenant, course, tenant, course))

    def find_document(self, tenant: str, course: str, document_id: str) -> Document | None:
        row = self._db.execute(DOCUMENT_SQL + " AND d.id = ?",
                               (tenant, course, document_id)).fetchone()
        return document_from_row(row) if row else None

    def list_documents(self, tenant: str, course: str) -> list[Document]:
        self.get_course(tenant, course)
        rows = self._db.execute(DOCUMENT_SQL + " ORDER BY d.id", (tenant, course)).fetchall()
        return [document_from_row(r) for r in rows]
