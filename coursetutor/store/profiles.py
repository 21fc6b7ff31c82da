"""Student profiles, the topics each student studied and a course's topic list.

A profile belongs to a tenant, course and student: the level (1-5, 0 when not set), preferred
language, learning style and goals the student gave, plus every topic of the course the
student's turns touched, with when it was first and last seen, how many turns and their ids
(`f"{session_id}:{ordinal}"`). A course's topic list is made from its material
(`coursetutor.memory.topics`); a teacher's correction of it is stored here and wins. The
course's `retention_days` (0: forever) says how long its turns are kept.
"""

from __future__ import annotations

import abc
import dataclasses
import json
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any, Literal

from ..errors import InputError, NotFoundError
from . import privacy
from .sql import Executor

Style = Literal["", "examples first", "theory first", "step by step"]
STYLES: tuple[Style, ...] = ("", "examples first", "theory first", "step by step")
KEPT_TURN_IDS = 200  # a studied topic keeps the ids of its latest turns, not all of them


@dataclasses.dataclass(frozen=True)
class StudiedTopic:
    """A topic of the course a student's turns were about."""

    topic: str
    first_seen: float
    last_seen: float
    turns: int
    turn_ids: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class Profile:
    """What a student told the tutor about themselves, and what they studied."""

    tenant: str
    course: str
    student: str
    level: int = 0  # 1-5; 0: not set
    language: str = ""  # preferred reply language; "": the question's
    style: str = ""  # one of STYLES; "": none
    goals: str = ""
    created: float = 0.0  # 0: nothing stored yet
    updated: float = 0.0
    topics: tuple[StudiedTopic, ...] = ()  # most recently seen first


@dataclasses.dataclass(frozen=True)
class TopicSource:
    """What a document gives the topic list: its ingest topic and its section paths."""

    document_id: str
    doc_type: str
    topic: str
    section_paths: tuple[tuple[str, ...], ...]


def check_level(level: int) -> int:
    """`level` if it is 0 (not set) or 1-5, else InputError."""
    if not 0 <= int(level) <= 5:
        raise InputError(f"level must be 1-5 (0 to clear it), got {level}",
                         code="invalid_level", value=level)
    return int(level)


def check_style(style: str) -> Style:
    """`style` as a learning style, or InputError naming the valid ones."""
    for known in STYLES:
        if style == known:
            return known
    raise InputError(f"unknown learning style {style!r}; use one of: "
                     f"{', '.join(repr(s) for s in STYLES[1:])} or '' for none",
                     code="invalid_learning_style", value=style)


def check_topics(topics: Sequence[str]) -> list[str]:
    """Topic names stripped, without blanks and duplicates (case-insensitive), in order."""
    seen: set[str] = set()
    kept: list[str] = []
    for raw in topics:
        name = " ".join(str(raw).split())
        if len(name) > 200:
            raise InputError(f"a topic name has at most 200 characters: {name[:40]!r}...",
                             code="topic_too_long", limit=200)
        if name and name.casefold() not in seen:
            seen.add(name.casefold())
            kept.append(name)
    return kept


class Profiles(abc.ABC):
    """The contract of a store's profiles (`store.profiles`)."""

    @abc.abstractmethod
    def get(self, tenant: str, course: str, student: str) -> Profile:
        """The student's profile (an empty one, created 0, when nothing is stored)."""

    @abc.abstractmethod
    def update(self, tenant: str, course: str, student: str, *, level: int | None = None,
               language: str | None = None, style: str | None = None,
               goals: str | None = None) -> Profile:
        """Set the given fields (None: unchanged) and return the profile."""

    @abc.abstractmethod
    def for_course(self, tenant: str, course: str) -> list[Profile]:
        """Every stored profile of the course (a student with studied topics has one)."""

    @abc.abstractmethod
    def record_topics(self, tenant: str, course: str, student: str, topics: Sequence[str],
                      turn_id: str, when: float | None = None) -> None:
        """Count one turn (`turn_id`) for each of `topics` in the student's profile."""

    @abc.abstractmethod
    def remove_topic(self, tenant: str, course: str, student: str, topic: str) -> bool:
        """Take a studied topic off the student's profile; False when it was not there."""

    @abc.abstractmethod
    def topic_list(self, tenant: str, course: str) -> list[str] | None:
        """The course's topic list as a teacher corrected it, or None (made from material)."""

    @abc.abstractmethod
    def set_topic_list(self, tenant: str, course: str, topics: Sequence[str] | None) -> None:
        """Store a teacher's topic list for the course; None: back to the material's."""

    @abc.abstractmethod
    def topic_sources(self, tenant: str, course: str) -> list[TopicSource]:
        """Each document's ingest topic and distinct section paths, in ingest order."""

    def topic_material(self, tenant: str, course: str
                       ) -> tuple[list[str] | None, list[TopicSource]]:
        """What the course's topic list is made from, in one call: the teacher's list (None
        when not corrected) and, only without one, the documents' topics and sections."""
        corrected = self.topic_list(tenant, course)
        return corrected, [] if corrected is not None else self.topic_sources(tenant, course)

    @abc.abstractmethod
    def retention_days(self, tenant: str, course: str) -> int:
        """How many days the course keeps its turns (0: forever)."""

    @abc.abstractmethod
    def set_retention_days(self, tenant: str, course: str, days: int) -> None: ...

    @abc.abstractmethod
    def purge_turns(self, tenant: str, course: str, before: float) -> int:
        """Delete the course's turns created before `before`; return how many."""

    @abc.abstractmethod
    def last_seen(self, tenant: str, course: str) -> dict[str, float]:
        """When each student of the course last asked something (their latest session)."""

    # privacy: everything about one student, in one course or the whole tenant
    @abc.abstractmethod
    def export_student(self, tenant: str, student: str,
                       course: str | None = None) -> dict[str, list[dict[str, Any]]]:
        """The student's rows of every table that has a student column, per table."""

    @abc.abstractmethod
    def erase_student(self, tenant: str, student: str, course: str | None = None
                      ) -> tuple[dict[str, int], list[str]]:
        """Delete the student's rows everywhere in one transaction; the rows deleted per
        table and the ids of the sessions that were deleted (to drop from caches)."""


class SQLProfiles(Profiles):
    """Profiles in the store's own database (SQL shared by SQLite and PostgreSQL)."""

    def __init__(self, db: Executor, tx: Callable[[], AbstractContextManager[Executor]],
                 dialect: privacy.Dialect = "sqlite") -> None:
        self._db = db
        self._tx = tx
        self._dialect: privacy.Dialect = dialect

    def _course_exists(self, db: Executor, tenant: str, course: str) -> None:
        if db.execute("SELECT 1 FROM courses WHERE tenant = ? AND id = ?",
                      (tenant, course)).fetchone() is None:
            raise NotFoundError(f"course {course!r} does not exist", code="course_not_found",
                                course=course)

    def get(self, tenant: str, course: str, student: str) -> Profile:
        row = self._db.execute(
            "SELECT level, language, style, goals, created, updated FROM profiles "
            "WHERE tenant = ? AND course = ? AND student = ?", (tenant, course, student)
        ).fetchone()
        topics = self._studied(tenant, course, student)
        base = Profile(tenant, course, student, topics=topics)
        if row is None:
            return base
        return dataclasses.replace(base, level=int(row[0]), language=str(row[1]),
                                   style=str(row[2]), goals=str(row[3]),
                                   created=float(row[4]), updated=float(row[5]))

    def _studied(self, tenant: str, course: str, student: str) -> tuple[StudiedTopic, ...]:
        rows = self._db.execute(
            "SELECT topic, first_seen, last_seen, turns, turn_ids FROM studied_topics "
            "WHERE tenant = ? AND course = ? AND student = ? ORDER BY last_seen DESC, topic",
            (tenant, course, student)).fetchall()
        return tuple(StudiedTopic(str(r[0]), float(r[1]), float(r[2]), int(r[3]),
                                  tuple(json.loads(r[4]))) for r in rows)

    def update(self, tenant: str, course: str, student: str, *, level: int | None = None,
               language: str | None = None, style: str | None = None,
               goals: str | None = None) -> Profile:
        fields: dict[str, Any] = {}
        if level is not None:
            fields["level"] = check_level(level)
        if language is not None:
            fields["language"] = language.strip()[:20]
        if style is not None:
            fields["style"] = check_style(style)
        if goals is not None:
            fields["goals"] = goals.strip()[:2000]
        now = time.time()
        with self._tx() as db:
            self._course_exists(db, tenant, course)
            self._ensure(db, tenant, course, student, now)
            for column, value in fields.items():  # column names from the fixed keys above
                db.execute(f"UPDATE profiles SET {column} = ?, updated = ? WHERE tenant = ? "
                           "AND course = ? AND student = ?",
                           (value, now, tenant, course, student))
        return self.get(tenant, course, student)

    @staticmethod
    def _ensure(db: Executor, tenant: str, course: str, student: str, now: float) -> None:
        db.execute("INSERT INTO profiles (tenant, course, student, created, updated) "
                   "VALUES (?, ?, ?, ?, ?) ON CONFLICT (tenant, course, student) DO NOTHING",
                   (tenant, course, student, now, now))

    def for_course(self, tenant: str, course: str) -> list[Profile]:
        rows = self._db.execute(
            "SELECT student FROM profiles WHERE tenant = ? AND course = ? ORDER BY student",
            (tenant, course)).fetchall()
        return [self.get(tenant, course, str(r[0])) for r in rows]

    def record_topics(self, tenant: str, course: str, student: str, topics: Sequence[str],
                      turn_id: str, when: float | None = None) -> None:
        now = time.time() if when is None else when
        names = check_topics(topics)
        if not names:
            return
        with self._tx() as db:
            self._ensure(db, tenant, course, student, now)
            for topic in names:
                row = db.execute(
                    "SELECT turns, turn_ids FROM studied_topics WHERE tenant = ? AND course = ? "
                    "AND student = ? AND topic = ?", (tenant, course, student, topic)).fetchone()
                if row is None:
                    db.execute(
                        "INSERT INTO studied_topics (tenant, course, student, topic, first_seen, "
                        "last_seen, turns, turn_ids) VALUES (?, ?, ?, ?, ?, ?, 1, ?)",
                        (tenant, course, student, topic, now, now, json.dumps([turn_id])))
                    continue
                kept = json.loads(row[1])
                counted = int(row[0]) + (turn_id not in kept)  # a turn counts once
                ids = [*(i for i in kept if i != turn_id), turn_id][-KEPT_TURN_IDS:]
                db.execute(
                    "UPDATE studied_topics SET last_seen = ?, turns = ?, turn_ids = ? "
                    "WHERE tenant = ? AND course = ? AND student = ? AND topic = ?",
                    (now, counted, json.dumps(ids), tenant, course, student, topic))

    def remove_topic(self, tenant: str, course: str, student: str, topic: str) -> bool:
        with self._tx() as db:
            cur = db.execute("DELETE FROM studied_topics WHERE tenant = ? AND course = ? "
                             "AND student = ? AND topic = ?", (tenant, course, student, topic))
            return cur.rowcount > 0

    def topic_list(self, tenant: str, course: str) -> list[str] | None:
        row = self._db.execute("SELECT topics FROM course_topics WHERE tenant = ? AND course = ?",
                               (tenant, course)).fetchone()
        return None if row is None else [str(t) for t in json.loads(row[0])]

    def set_topic_list(self, tenant: str, course: str, topics: Sequence[str] | None) -> None:
        with self._tx() as db:
            self._course_exists(db, tenant, course)
            db.execute("DELETE FROM course_topics WHERE tenant = ? AND course = ?",
                       (tenant, course))
            if topics is not None:
                db.execute("INSERT INTO course_topics (tenant, course, topics, updated) "
                           "VALUES (?, ?, ?, ?)",
                           (tenant, course, json.dumps(check_topics(topics), ensure_ascii=False),
                            time.time()))

    def topic_sources(self, tenant: str, course: str) -> list[TopicSource]:
        rows = self._db.execute(
            "SELECT d.id, d.doc_type, d.topic, k.section_path, MIN(k.pk) FROM documents d "
            "LEFT JOIN chunks k ON k.tenant = d.tenant AND k.course = d.course "
            "AND k.document_id = d.id WHERE d.tenant = ? AND d.course = ? "
            "GROUP BY d.id, d.doc_type, d.topic, k.section_path ORDER BY MIN(k.pk)",
            (tenant, course)).fetchall()
        order: list[str] = []
        found: dict[str, tuple[str, str, list[tuple[str, ...]]]] = {}
        for doc_id, doc_type, topic, path, _ in rows:
            if doc_id not in found:
                order.append(doc_id)
                found[doc_id] = (str(doc_type), str(topic), [])
            if path is not None and path != "[]":
                found[doc_id][2].append(tuple(json.loads(path)))
        return [TopicSource(d, found[d][0], found[d][1], tuple(found[d][2])) for d in order]

    def retention_days(self, tenant: str, course: str) -> int:
        row = self._db.execute("SELECT retention_days FROM courses WHERE tenant = ? AND id = ?",
                               (tenant, course)).fetchone()
        if row is None:
            raise NotFoundError(f"course {course!r} does not exist", code="course_not_found",
                                course=course)
        return int(row[0])

    def set_retention_days(self, tenant: str, course: str, days: int) -> None:
        if not 0 <= int(days) <= 36_500:
            raise InputError(f"retention_days must be 0 (keep forever) to 36500, got {days}")
        with self._tx() as db:
            self._course_exists(db, tenant, course)
            db.execute("UPDATE courses SET retention_days = ? WHERE tenant = ? AND id = ?",
                       (int(days), tenant, course))

    def purge_turns(self, tenant: str, course: str, before: float) -> int:
        with self._tx() as db:
            cur = db.execute("DELETE FROM turns WHERE tenant = ? AND course = ? AND created < ?",
                             (tenant, course, before))
            return int(cur.rowcount)

    def last_seen(self, tenant: str, course: str) -> dict[str, float]:
        rows = self._db.execute("SELECT student, MAX(updated) FROM sessions WHERE tenant = ? "
                                "AND course = ? GROUP BY student", (tenant, course)).fetchall()
        return {str(r[0]): float(r[1]) for r in rows}

    def export_student(self, tenant: str, student: str,
                       course: str | None = None) -> dict[str, list[dict[str, Any]]]:
        tables = privacy.student_tables(self._db, self._dialect)
        return privacy.export_rows(self._db, tables, tenant, student, course)

    def erase_student(self, tenant: str, student: str, course: str | None = None
                      ) -> tuple[dict[str, int], list[str]]:
        return privacy.erase_rows(self._tx, self._dialect, tenant, student, course)
