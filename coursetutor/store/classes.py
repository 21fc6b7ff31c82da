"""Live classes and their transcript events: the contract and the SQL both stores share.

A class belongs to a course of a tenant; outside them it does not exist. Its events are the
transcript as it was spoken, numbered in arrival order (`seq`). A speech-to-text system may
send a partial (non-final) caption first: it stays the class's last event only until the
next event of the class arrives, which takes its place (and its number), so a class holds at
most one partial caption, always its last.
"""

from __future__ import annotations

import abc
import dataclasses
import time
import uuid
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, Literal

from ..errors import ConflictError, InputError, NotFoundError
from .sql import Executor

__all__ = ["ClassEvent", "ClassStore", "LiveClass", "SQLClasses", "SlideSource",
           "TranscriptEvent"]

SlideSource = Literal["teacher", "tracked"]
SLIDE_SOURCES: tuple[SlideSource, ...] = ("teacher", "tracked")


@dataclasses.dataclass(frozen=True)
class LiveClass:
    """A class session of a course: when it ran and which slide is on screen."""

    id: str
    tenant: str
    course: str
    title: str
    slides_document_id: str | None
    started: float
    ended: float | None
    slide_page: int | None  # 1-based page of the slide deck, None while unknown
    slide_source: SlideSource  # teacher: set by the presentation; tracked: from the speech
    slide_changed: float | None  # when the slide last changed

    @property
    def running(self) -> bool:
        return self.ended is None

    @property
    def document_id(self) -> str:
        """The course document its transcript is indexed as."""
        return f"class-{self.id}"


@dataclasses.dataclass(frozen=True)
class TranscriptEvent:
    """One caption as a speech-to-text system sends it (seconds since the class started)."""

    start: float
    end: float
    text: str
    speaker: str = ""
    final: bool = True


@dataclasses.dataclass(frozen=True)
class ClassEvent:
    """A stored transcript event: its text after lexicon correction and as it came in."""

    class_id: str
    seq: int
    start: float
    end: float
    text: str
    raw_text: str
    speaker: str
    final: bool
    page: int | None  # the slide on screen while it was said
    received: float  # when it arrived (epoch seconds)


class ClassStore(abc.ABC):
    """Live classes of a store (`store.classes`)."""

    @abc.abstractmethod
    def start_class(self, tenant: str, course: str, title: str,
                    slides_document_id: str | None = None) -> LiveClass:
        """A new running class of the course (NotFoundError when the course does not exist)."""

    @abc.abstractmethod
    def get_class(self, tenant: str, course: str, class_id: str) -> LiveClass: ...

    @abc.abstractmethod
    def list_classes(self, tenant: str, course: str, running: bool = False) -> list[LiveClass]:
        """The course's classes, the latest first (only those still running if `running`)."""

    @abc.abstractmethod
    def end_class(self, tenant: str, course: str, class_id: str) -> LiveClass:
        """End the class (ending it again changes nothing)."""

    @abc.abstractmethod
    def add_event(self, tenant: str, course: str, class_id: str, event: TranscriptEvent,
                  raw_text: str | None = None, page: int | None = None,
                  received: float | None = None) -> ClassEvent:
        """Add an event to a running class (ConflictError once it has ended); it replaces
        the class's last event when that one is partial."""

    @abc.abstractmethod
    def list_events(self, tenant: str, course: str, class_id: str, since: int = 0,
                    final_only: bool = False) -> list[ClassEvent]:
        """The class's events with a number above `since`, in order."""

    @abc.abstractmethod
    def last_seq(self, tenant: str, course: str, class_id: str) -> int:
        """The number of the class's last event (0 when it has none)."""

    @abc.abstractmethod
    def set_slide(self, tenant: str, course: str, class_id: str, page: int,
                  source: SlideSource) -> LiveClass:
        """Record the slide on screen; `slide_changed` moves only when the page does."""

    @abc.abstractmethod
    def import_class(self, live: LiveClass, events: list[ClassEvent]) -> None:
        """Write a class and its events as they are (copying a store)."""


_CLASS_COLUMNS = ("id, tenant, course, title, slides_document_id, started, ended, slide_page, "
                  "slide_source, slide_changed")
_EVENT_COLUMNS = ("class_id, seq, start_s, end_s, text, raw_text, speaker, final, page, "
                  "received")


def _class(r: Any) -> LiveClass:
    return LiveClass(
        id=str(r[0]), tenant=str(r[1]), course=str(r[2]), title=str(r[3]),
        slides_document_id=None if r[4] is None else str(r[4]), started=float(r[5]),
        ended=None if r[6] is None else float(r[6]),
        slide_page=None if r[7] is None else int(r[7]),
        slide_source="teacher" if r[8] == "teacher" else "tracked",
        slide_changed=None if r[9] is None else float(r[9]))


def _event(r: Any) -> ClassEvent:
    return ClassEvent(
        class_id=str(r[0]), seq=int(r[1]), start=float(r[2]), end=float(r[3]), text=str(r[4]),
        raw_text=str(r[5]), speaker=str(r[6]), final=bool(r[7]),
        page=None if r[8] is None else int(r[8]), received=float(r[9]))


def check_event(event: TranscriptEvent) -> TranscriptEvent:
    """`event` if its times make sense (InputError saying why not)."""
    if not (event.start >= 0 and event.end >= event.start):
        raise InputError(f"an event needs 0 <= start <= end, got start={event.start} "
                         f"end={event.end}")
    if event.end > 7 * 24 * 3600:
        raise InputError(f"an event's end ({event.end} s) is over a week into the class")
    return event


class SQLClasses(ClassStore):
    """The SQL of `ClassStore`, on a store's readers and transactions."""

    def __init__(self, read: Callable[[], Executor],
                 tx: Callable[[], AbstractContextManager[Executor]]) -> None:
        self._read = read
        self._tx = tx

    def start_class(self, tenant: str, course: str, title: str,
                    slides_document_id: str | None = None) -> LiveClass:
        class_id = uuid.uuid4().hex[:16]
        with self._tx() as db:
            found = db.execute("SELECT 1 FROM courses WHERE tenant = ? AND id = ?",
                               (tenant, course)).fetchone()
            if found is None:
                raise NotFoundError(f"course {course!r} does not exist", code="course_not_found",
                                course=course)
            db.execute(
                f"INSERT INTO classes ({_CLASS_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (class_id, tenant, course, title, slides_document_id, time.time(), None, None,
                 "tracked", None))
        return self.get_class(tenant, course, class_id)

    def _get(self, db: Executor, tenant: str, course: str, class_id: str) -> LiveClass:
        row = db.execute(f"SELECT {_CLASS_COLUMNS} FROM classes WHERE tenant = ? AND course = ? "
                         "AND id = ?", (tenant, course, class_id)).fetchone()
        if row is None:
            raise NotFoundError(f"class {class_id!r} does not exist", code="class_not_found",
                                klass=class_id)
        return _class(row)

    def get_class(self, tenant: str, course: str, class_id: str) -> LiveClass:
        return self._get(self._read(), tenant, course, class_id)

    def list_classes(self, tenant: str, course: str, running: bool = False) -> list[LiveClass]:
        where = " AND ended IS NULL" if running else ""
        rows = self._read().execute(
            f"SELECT {_CLASS_COLUMNS} FROM classes WHERE tenant = ? AND course = ?{where} "
            "ORDER BY started DESC, id", (tenant, course)).fetchall()
        return [_class(r) for r in rows]

    def end_class(self, tenant: str, course: str, class_id: str) -> LiveClass:
        with self._tx() as db:
            self._get(db, tenant, course, class_id)
            db.execute("UPDATE classes SET ended = COALESCE(ended, ?) WHERE id = ?",
                       (time.time(), class_id))
            return self._get(db, tenant, course, class_id)

    def add_event(self, tenant: str, course: str, class_id: str, event: TranscriptEvent,
                  raw_text: str | None = None, page: int | None = None,
                  received: float | None = None) -> ClassEvent:
        check_event(event)
        with self._tx() as db:
            if not self._get(db, tenant, course, class_id).running:
                raise ConflictError(f"class {class_id!r} has ended", code="class_ended",
                                    klass=class_id)
            last = db.execute("SELECT seq, final FROM class_events WHERE class_id = ? "
                              "ORDER BY seq DESC LIMIT 1", (class_id,)).fetchone()
            replaces = last is not None and not bool(last[1])
            seq = int(last[0]) if replaces else (int(last[0]) + 1 if last else 1)
            stored = ClassEvent(class_id, seq, float(event.start), float(event.end), event.text,
                                event.text if raw_text is None else raw_text, event.speaker,
                                bool(event.final), page,
                                time.time() if received is None else received)
            if replaces:
                db.execute("DELETE FROM class_events WHERE class_id = ? AND seq = ?",
                           (class_id, seq))
            values = dataclasses.astuple(stored)
            db.execute(f"INSERT INTO class_events ({_EVENT_COLUMNS}, tenant, course) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       (*values[:7], int(stored.final), *values[8:], tenant, course))
        return stored

    def list_events(self, tenant: str, course: str, class_id: str, since: int = 0,
                    final_only: bool = False) -> list[ClassEvent]:
        db = self._read()
        self._get(db, tenant, course, class_id)
        where = " AND final = 1" if final_only else ""
        rows = db.execute(
            f"SELECT {_EVENT_COLUMNS} FROM class_events WHERE class_id = ? AND tenant = ? "
            f"AND course = ? AND seq > ?{where} ORDER BY seq", (class_id, tenant, course, since)
        ).fetchall()
        return [_event(r) for r in rows]

    def last_seq(self, tenant: str, course: str, class_id: str) -> int:
        row = self._read().execute(
            "SELECT MAX(seq) FROM class_events WHERE class_id = ? AND tenant = ? AND course = ?",
            (class_id, tenant, course)).fetchone()
        return int(row[0] or 0)

    def set_slide(self, tenant: str, course: str, class_id: str, page: int,
                  source: SlideSource) -> LiveClass:
        if source not in SLIDE_SOURCES:
            raise InputError(f"unknown slide source {source!r}; valid: "
                             f"{', '.join(SLIDE_SOURCES)}")
        if page < 1:
            raise InputError(f"a slide page is 1 or more, got {page}", code="invalid_slide_page",
                             page=page)
        with self._tx() as db:
            if not self._get(db, tenant, course, class_id).running:
                raise ConflictError(f"class {class_id!r} has ended", code="class_ended",
                                    klass=class_id)
            db.execute(
                "UPDATE classes SET slide_changed = CASE WHEN slide_page IS NULL OR "
                "slide_page <> ? THEN ? ELSE slide_changed END, slide_page = ?, "
                "slide_source = ? WHERE id = ?", (page, time.time(), page, source, class_id))
            return self._get(db, tenant, course, class_id)

    def import_class(self, live: LiveClass, events: list[ClassEvent]) -> None:
        with self._tx() as db:
            db.execute(
                f"INSERT INTO classes ({_CLASS_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                dataclasses.astuple(live))
            for e in events:
                values = dataclasses.astuple(e)
                db.execute(f"INSERT INTO class_events ({_EVENT_COLUMNS}, tenant, course) "
                           "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                           (*values[:7], int(e.final), *values[8:], live.tenant, live.course))
