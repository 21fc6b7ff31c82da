"""What the tutor believes a student knows: mastery per topic (Bayesian Knowledge Tracing
estimates and the observations behind them) and weak areas (misconceptions in one sentence).

The contract is `MasteryStore`; `SQLMastery` is its SQL, shared by the SQLite and PostgreSQL
stores (each store exposes one as `store.mastery`). Every entry keeps the ids of the turns it
came from (`f"{session_id}:{ordinal}"`), so the student and the teacher can see why.
"""

from __future__ import annotations

import abc
import dataclasses
import json
import time
import uuid
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from ..errors import InputError, NotFoundError
from .sql import Executor

MASTERED = 0.95  # the mastery criterion of the Cognitive Tutors (Corbett & Anderson, 1995)
MASTERY_COLUMNS = "tenant, course, student, topic, estimate, correct, incorrect, updated"
OBSERVATION_COLUMNS = "topic, correct, turn_id, estimate, created"
WEAK_COLUMNS = ("id, tenant, course, student, topic, misconception, strength, turn_ids, "
                "weakened_by, created, updated, resolved")


@dataclasses.dataclass(frozen=True)
class BKTParams:
    """The four probabilities of Bayesian Knowledge Tracing (Corbett & Anderson, 1995)."""

    prior: float  # p(L0): the student knows the topic before any evidence
    learn: float  # p(T): an opportunity to practise turns not-known into known
    slip: float  # p(S): a student who knows it answers wrongly
    guess: float  # p(G): a student who does not know it answers rightly

    def __post_init__(self) -> None:
        for name in ("prior", "learn", "slip", "guess"):
            value = getattr(self, name)
            if not 0.0 < value < 1.0:
                raise InputError(f"BKT {name} must be strictly between 0 and 1, got {value}")
        if self.slip + self.guess >= 1.0:
            # otherwise a right answer would be evidence of not knowing
            raise InputError(f"BKT slip + guess must be below 1, got {self.slip + self.guess}")


@dataclasses.dataclass(frozen=True)
class TopicMastery:
    """A student's estimated mastery of one topic and how many answers it rests on."""

    tenant: str
    course: str
    student: str
    topic: str
    estimate: float
    correct: int
    incorrect: int
    updated: float

    @property
    def mastered(self) -> bool:
        return self.estimate >= MASTERED


@dataclasses.dataclass(frozen=True)
class Observation:
    """One diagnosed answer: right or wrong on a topic, the turn, the estimate after it."""

    topic: str
    correct: bool
    turn_id: str
    estimate: float
    created: float
    student: str = ""


@dataclasses.dataclass(frozen=True)
class WeakArea:
    """A misconception a student showed on a topic, with the turns that show it.

    Repeated evidence adds to `strength`, later right answers on the topic take from it
    (`weakened_by`); at 0 it is overcome. `resolved` is when the student removed it.
    """

    id: str
    tenant: str
    course: str
    student: str
    topic: str
    misconception: str
    strength: float
    turn_ids: tuple[str, ...]
    weakened_by: tuple[str, ...]
    created: float
    updated: float
    resolved: float | None = None

    @property
    def active(self) -> bool:
        return self.resolved is None and self.strength > 0


@dataclasses.dataclass(frozen=True)
class MasteryRecords:
    """Everything `store.mastery` holds for one course (`coursetutor copy`)."""

    estimates: tuple[TopicMastery, ...] = ()
    observations: tuple[Observation, ...] = ()  # every student's, oldest first
    weak_areas: tuple[WeakArea, ...] = ()  # resolved and overcome ones too
    params: BKTParams | None = None


def _mastery(row: Any) -> TopicMastery:
    t, c, s, topic, estimate, correct, incorrect, updated = row
    return TopicMastery(t, c, s, topic, float(estimate), int(correct), int(incorrect),
                        float(updated))


def _observation(row: Any) -> Observation:
    topic, correct, turn_id, estimate, created, student = row
    return Observation(topic, bool(correct), turn_id, float(estimate), float(created), student)


def _weak(row: Any) -> WeakArea:
    (id_, t, c, s, topic, text, strength, turn_ids, weakened_by, created, updated,
     resolved) = row
    return WeakArea(id_, t, c, s, topic, text, float(strength), tuple(json.loads(turn_ids)),
                    tuple(json.loads(weakened_by)), float(created), float(updated),
                    None if resolved is None else float(resolved))


class MasteryStore(abc.ABC):
    """Mastery estimates, observations and weak areas per tenant, course and student."""

    @abc.abstractmethod
    def observe(self, tenant: str, course: str, student: str, topic: str, correct: bool,
                turn_id: str, update: Callable[[float | None], float]) -> TopicMastery:
        """Record one right or wrong answer on `topic`; the new estimate is
        `update(previous estimate, or None for the first)`, read and written in one
        transaction."""

    @abc.abstractmethod
    def estimates(self, tenant: str, course: str, student: str | None = None
                  ) -> list[TopicMastery]:
        """Every topic estimate of a student (of the whole course with no student), by topic."""

    @abc.abstractmethod
    def observations(self, tenant: str, course: str, student: str,
                     topic: str | None = None) -> list[Observation]:
        """A student's observations, oldest first."""

    @abc.abstractmethod
    def add_weak_area(self, tenant: str, course: str, student: str, topic: str,
                      misconception: str, turn_id: str) -> WeakArea:
        """A new weak area of strength 1 shown by `turn_id`."""

    @abc.abstractmethod
    def strengthen(self, tenant: str, course: str, student: str, weak_area: str,
                   turn_id: str, by: float = 1.0) -> WeakArea:
        """More evidence of an unresolved weak area (NotFoundError for another's or none)."""

    @abc.abstractmethod
    def weaken(self, tenant: str, course: str, student: str, topic: str, turn_id: str,
               by: float = 0.5) -> list[WeakArea]:
        """A right answer on `topic`: every active weak area on it loses `by` (not below 0)."""

    @abc.abstractmethod
    def weak_areas(self, tenant: str, course: str, student: str | None = None,
                   active_only: bool = True) -> list[WeakArea]:
        """A student's weak areas (the whole course's with no student), strongest first."""

    @abc.abstractmethod
    def resolve(self, tenant: str, course: str, student: str, weak_area: str) -> WeakArea:
        """The student removes a weak area they have overcome (NotFoundError if not theirs)."""

    @abc.abstractmethod
    def records(self, tenant: str, course: str) -> MasteryRecords:
        """Everything held for the course."""

    @abc.abstractmethod
    def restore(self, tenant: str, course: str, records: MasteryRecords) -> None:
        """Write `records` (of another store) into the course, in one transaction."""

    @abc.abstractmethod
    def params(self, tenant: str, course: str) -> BKTParams | None:
        """The course's own BKT parameters, None when it uses the settings'."""

    @abc.abstractmethod
    def set_params(self, tenant: str, course: str, params: BKTParams | None) -> None:
        """Set the course's BKT parameters (None: back to the settings')."""


class SQLMastery(MasteryStore):
    """`MasteryStore` in the SQL both stores share (`?` placeholders, values bound)."""

    def __init__(self, db: Executor, tx: Callable[[], AbstractContextManager[Executor]]
                 ) -> None:
        self._db = db
        self._tx = tx

    @staticmethod
    def _course(db: Executor, tenant: str, course: str) -> None:
        if db.execute("SELECT 1 FROM courses WHERE tenant = ? AND id = ?",
                      (tenant, course)).fetchone() is None:
            raise NotFoundError(f"course {course!r} does not exist", code="course_not_found",
                                course=course)

    # -- mastery ---------------------------------------------------------------------------
    def observe(self, tenant: str, course: str, student: str, topic: str, correct: bool,
                turn_id: str, update: Callable[[float | None], float]) -> TopicMastery:
        key = (tenant, course, student, topic)
        where = "tenant = ? AND course = ? AND student = ? AND topic = ?"
        now = time.time()
        with self._tx() as db:
            self._course(db, tenant, course)
            db.execute(f"INSERT INTO mastery ({MASTERY_COLUMNS}) VALUES (?, ?, ?, ?, NULL, 0, "
                       "0, ?) ON CONFLICT (tenant, course, student, topic) DO NOTHING",
                       (*key, now))
            # an update first: PostgreSQL then holds the row, so two turns of one student
            # never both start from the same estimate (SQLite's writer is alone anyway)
            db.execute(f"UPDATE mastery SET updated = ? WHERE {where}", (now, *key))
            row = db.execute(f"SELECT estimate FROM mastery WHERE {where}", key).fetchone()
            estimate = float(update(None if row[0] is None else float(row[0])))
            db.execute(f"UPDATE mastery SET estimate = ?, correct = correct + ?, "
                       f"incorrect = incorrect + ? WHERE {where}",
                       (estimate, int(correct), int(not correct), *key))
            db.execute(f"INSERT INTO mastery_observations (tenant, course, student, "
                       f"{OBSERVATION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                       (*key, int(correct), turn_id, estimate, now))
            found = db.execute(f"SELECT {MASTERY_COLUMNS} FROM mastery WHERE {where}",
                               key).fetchone()
        return _mastery(found)

    def estimates(self, tenant: str, course: str, student: str | None = None
                  ) -> list[TopicMastery]:
        who = "" if student is None else " AND student = ?"
        rows = self._db.execute(
            f"SELECT {MASTERY_COLUMNS} FROM mastery WHERE tenant = ? AND course = ?{who} "
            "AND estimate IS NOT NULL ORDER BY topic, student",
            (tenant, course) + (() if student is None else (student,))).fetchall()
        return [_mastery(r) for r in rows]

    def observations(self, tenant: str, course: str, student: str,
                     topic: str | None = None) -> list[Observation]:
        which = "" if topic is None else " AND topic = ?"
        rows = self._db.execute(
            f"SELECT {OBSERVATION_COLUMNS}, student FROM mastery_observations WHERE tenant = ? "
            f"AND course = ? AND student = ?{which} ORDER BY id",
            (tenant, course, student) + (() if topic is None else (topic,))).fetchall()
        return [_observation(r) for r in rows]

    # -- weak areas ------------------------------------------------------------------------
    def add_weak_area(self, tenant: str, course: str, student: str, topic: str,
                      misconception: str, turn_id: str) -> WeakArea:
        misconception = " ".join(misconception.split())
        if not misconception or not topic.strip():
            raise InputError("a weak area needs a topic and a misconception")
        now = time.time()
        area = WeakArea(uuid.uuid4().hex, tenant, course, student, topic, misconception, 1.0,
                        (turn_id,), (), now, now)
        with self._tx() as db:
            self._course(db, tenant, course)
            db.execute(f"INSERT INTO weak_areas ({WEAK_COLUMNS}) VALUES "
                       "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)",
                       (area.id, tenant, course, student, topic, misconception, area.strength,
                        json.dumps(area.turn_ids), "[]", now, now))
        return area

    def _one(self, db: Executor, tenant: str, course: str, student: str, weak_area: str
             ) -> WeakArea:
        row = db.execute(f"SELECT {WEAK_COLUMNS} FROM weak_areas WHERE id = ? AND tenant = ? "
                         "AND course = ? AND student = ?",
                         (weak_area, tenant, course, student)).fetchone()
        if row is None:
            raise NotFoundError(f"weak area {weak_area!r} does not exist",
                                code="weak_area_not_found", area=weak_area)
        return _weak(row)

    def strengthen(self, tenant: str, course: str, student: str, weak_area: str,
                   turn_id: str, by: float = 1.0) -> WeakArea:
        with self._tx() as db:
            area = self._one(db, tenant, course, student, weak_area)
            if area.resolved is not None:
                raise NotFoundError(f"weak area {weak_area!r} was resolved",
                                    code="weak_area_resolved", area=weak_area)
            turns = area.turn_ids + ((turn_id,) if turn_id not in area.turn_ids else ())
            now = time.time()
            db.execute("UPDATE weak_areas SET strength = strength + ?, turn_ids = ?, "
                       "updated = ? WHERE id = ?", (by, json.dumps(turns), now, area.id))
            return self._one(db, tenant, course, student, weak_area)

    def weaken(self, tenant: str, course: str, student: str, topic: str, turn_id: str,
               by: float = 0.5) -> list[WeakArea]:
        now = time.time()
        with self._tx() as db:
            rows = db.execute(
                f"SELECT {WEAK_COLUMNS} FROM weak_areas WHERE tenant = ? AND course = ? AND "
                "student = ? AND topic = ? AND resolved IS NULL AND strength > 0 ORDER BY id",
                (tenant, course, student, topic)).fetchall()
            changed = []
            for area in map(_weak, rows):
                strength = max(0.0, area.strength - by)
                weakened = area.weakened_by + ((turn_id,) if turn_id not in area.weakened_by
                                               else ())
                db.execute("UPDATE weak_areas SET strength = ?, weakened_by = ?, updated = ? "
                           "WHERE id = ?", (strength, json.dumps(weakened), now, area.id))
                changed.append(dataclasses.replace(area, strength=strength,
                                                   weakened_by=weakened, updated=now))
        return changed

    def weak_areas(self, tenant: str, course: str, student: str | None = None,
                   active_only: bool = True) -> list[WeakArea]:
        who = "" if student is None else " AND student = ?"
        active = " AND resolved IS NULL AND strength > 0" if active_only else ""
        rows = self._db.execute(
            f"SELECT {WEAK_COLUMNS} FROM weak_areas WHERE tenant = ? AND course = ?{who}"
            f"{active} ORDER BY strength DESC, updated DESC, id",
            (tenant, course) + (() if student is None else (student,))).fetchall()
        return [_weak(r) for r in rows]

    def resolve(self, tenant: str, course: str, student: str, weak_area: str) -> WeakArea:
        with self._tx() as db:
            self._one(db, tenant, course, student, weak_area)
            db.execute("UPDATE weak_areas SET resolved = COALESCE(resolved, ?) WHERE id = ?",
                       (time.time(), weak_area))
            return self._one(db, tenant, course, student, weak_area)

    # -- copying a course ------------------------------------------------------------------
    def records(self, tenant: str, course: str) -> MasteryRecords:
        rows = self._db.execute(
            f"SELECT {OBSERVATION_COLUMNS}, student FROM mastery_observations WHERE tenant = ? "
            "AND course = ? ORDER BY id", (tenant, course)).fetchall()
        return MasteryRecords(tuple(self.estimates(tenant, course)),
                              tuple(_observation(r) for r in rows),
                              tuple(self.weak_areas(tenant, course, active_only=False)),
                              self.params(tenant, course))

    def restore(self, tenant: str, course: str, records: MasteryRecords) -> None:
        with self._tx() as db:
            self._course(db, tenant, course)
            for m in records.estimates:
                db.execute(f"INSERT INTO mastery ({MASTERY_COLUMNS}) VALUES "
                           "(?, ?, ?, ?, ?, ?, ?, ?)", (tenant, course, m.student, m.topic,
                                                        m.estimate, m.correct, m.incorrect,
                                                        m.updated))
            for o in records.observations:
                db.execute(f"INSERT INTO mastery_observations (tenant, course, student, "
                           f"{OBSERVATION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                           (tenant, course, o.student, o.topic, int(o.correct), o.turn_id,
                            o.estimate, o.created))
            for w in records.weak_areas:
                db.execute(f"INSERT INTO weak_areas ({WEAK_COLUMNS}) VALUES "
                           "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                           (w.id, tenant, course, w.student, w.topic, w.misconception,
                            w.strength, json.dumps(w.turn_ids), json.dumps(w.weakened_by),
                            w.created, w.updated, w.resolved))
        self.set_params(tenant, course, records.params)

    # -- the course's parameters -----------------------------------------------------------
    def params(self, tenant: str, course: str) -> BKTParams | None:
        row = self._db.execute("SELECT prior, learn, slip, guess FROM mastery_params WHERE "
                               "tenant = ? AND course = ?", (tenant, course)).fetchone()
        return None if row is None else BKTParams(*(float(v) for v in row))

    def set_params(self, tenant: str, course: str, params: BKTParams | None) -> None:
        with self._tx() as db:
            self._course(db, tenant, course)
            db.execute("DELETE FROM mastery_params WHERE tenant = ? AND course = ?",
                       (tenant, course))
            if params is not None:
                db.execute("INSERT INTO mastery_params (tenant, course, prior, learn, slip, "
                           "guess) VALUES (?, ?, ?, ?, ?, ?)",
                           (tenant, course, params.prior, params.learn, params.slip,
                            params.guess))
