"""What a teacher sees of a course's students: profiles, who has not been seen for a while,
the weak areas most students share and mastery per topic across the class."""

from __future__ import annotations

import dataclasses
import time
from collections import Counter, defaultdict

from ..errors import NotFoundError
from ..store import Store
from ..store.mastery import TopicMastery, WeakArea

__all__ = ["ClassInsights", "SharedWeakArea", "StudentRow", "TopicClassMastery",
           "course_insights", "course_students"]

DAY = 86_400.0


@dataclasses.dataclass(frozen=True)
class StudentRow:
    """One student of a course as the teacher's table shows them."""

    student: str
    last_seen: float | None  # None: never asked anything
    idle: bool  # not seen for the asked number of days (or never)
    level: int
    style: str
    goals: str
    topics: int  # topics studied
    turns: int  # turns counted over those topics
    weak_areas: int  # active
    mastered: int  # topics


@dataclasses.dataclass(frozen=True)
class SharedWeakArea:
    """A topic many students have a weak area on, with what they got wrong."""

    topic: str
    students: int
    misconceptions: tuple[str, ...]  # a few, most evidenced first
    questions: tuple[str, ...]  # a few example questions that showed them


@dataclasses.dataclass(frozen=True)
class TopicClassMastery:
    """Mastery of one topic across the class."""

    topic: str
    students: int  # with an estimate
    mean: float
    mastered: int


@dataclasses.dataclass(frozen=True)
class ClassInsights:
    students: int
    weak_areas: tuple[SharedWeakArea, ...]  # most students first
    mastery: tuple[TopicClassMastery, ...]  # course topic order, then by name


def course_students(store: Store, tenant: str, course: str, idle_days: float = 14.0,
                    now: float | None = None) -> list[StudentRow]:
    """Every student enrolled, profiled or seen in the course, least recently seen first."""
    now = time.time() if now is None else now
    seen = store.profiles.last_seen(tenant, course)
    profiles = {p.student: p for p in store.profiles.for_course(tenant, course)}
    weak = Counter(a.student for a in store.mastery.weak_areas(tenant, course))
    mastered = Counter(m.student for m in store.mastery.estimates(tenant, course) if m.mastered)
    names = sorted(set(store.list_students(tenant, course)) | set(seen) | set(profiles))
    rows = []
    for name in names:
        p = profiles.get(name)
        last = seen.get(name)
        rows.append(StudentRow(
            name, last, last is None or now - last > idle_days * DAY,
            p.level if p else 0, p.style if p else "", p.goals if p else "",
            len(p.topics) if p else 0, sum(t.turns for t in p.topics) if p else 0,
            weak.get(name, 0), mastered.get(name, 0)))
    return sorted(rows, key=lambda r: (r.last_seen or 0.0, r.student))


def _questions(store: Store, tenant: str, course: str, turn_ids: list[str],
               limit: int) -> tuple[str, ...]:
    """The questions of the first `limit` turns that still exist."""
    found: list[str] = []
    sessions: dict[str, dict[int, str]] = {}
    for turn_id in turn_ids:
        session_id, _, ordinal = turn_id.rpartition(":")
        if session_id not in sessions:
            try:
                turns = store.list_turns(tenant, course, session_id)
            except NotFoundError:  # the session was erased
                turns = []
            sessions[session_id] = {t.ordinal: t.question for t in turns}
        question = sessions[session_id].get(int(ordinal) if ordinal.isdigit() else -1)
        if question and question not in found:
            found.append(question)
        if len(found) >= limit:
            break
    return tuple(found)


def shared_weak_areas(store: Store, tenant: str, course: str, areas: list[WeakArea],
                      examples: int = 3) -> list[SharedWeakArea]:
    """Active weak areas grouped by topic, the topics most students share first."""
    by_topic: dict[str, list[WeakArea]] = defaultdict(list)
    for area in areas:
        by_topic[area.topic].append(area)
    shared = []
    for topic, group in by_topic.items():
        group.sort(key=lambda a: (-a.strength, -a.updated))
        texts = tuple(dict.fromkeys(a.misconception for a in group))[:examples]
        turn_ids = [t for a in group for t in reversed(a.turn_ids)]
        shared.append(SharedWeakArea(topic, len({a.student for a in group}), texts,
                                     _questions(store, tenant, course, turn_ids, examples)))
    return sorted(shared, key=lambda s: (-s.students, s.topic))


def class_mastery(estimates: list[TopicMastery], order: list[str]) -> list[TopicClassMastery]:
    """Mean estimate and mastered count per topic, in the course topic list's order."""
    by_topic: dict[str, list[TopicMastery]] = defaultdict(list)
    for m in estimates:
        by_topic[m.topic].append(m)
    rank = {t: i for i, t in enumerate(order)}
    rows = [TopicClassMastery(topic, len(ms), round(sum(m.estimate for m in ms) / len(ms), 4),
                              sum(m.mastered for m in ms)) for topic, ms in by_topic.items()]
    return sorted(rows, key=lambda r: (rank.get(r.topic, len(rank)), r.topic))


def course_insights(store: Store, tenant: str, course: str, topics: list[str],
                    limit: int = 10) -> ClassInsights:
    """The weak areas most students share (with examples) and mastery per topic."""
    areas = store.mastery.weak_areas(tenant, course)
    estimates = store.mastery.estimates(tenant, course)
    students = {a.student for a in areas} | {m.student for m in estimates}
    return ClassInsights(len(students),
                         tuple(shared_weak_areas(store, tenant, course, areas)[:limit]),
                         tuple(class_mastery(estimates, topics)))
