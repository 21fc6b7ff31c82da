"""A student's right to see, export and erase everything stored about them.

The store finds the student's rows by schema (`store/privacy.py`): every table with a student
column, in one course or the whole tenant. Erasing also drops what Redis holds about the
student: the cached turns of their sessions and the request and compute windows named after
them.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

from ..config import Settings
from ..store import Store

__all__ = ["Forgotten", "export_student", "forget_student", "redis_patterns"]


@dataclasses.dataclass(frozen=True)
class Forgotten:
    """What erasing a student removed: rows per table, sessions, Redis keys."""

    student: str
    course: str | None
    rows: dict[str, int]
    sessions: int
    cache_keys: int

    @property
    def total(self) -> int:
        return sum(self.rows.values())


def export_student(store: Store, tenant: str, student: str,
                   course: str | None = None) -> dict[str, Any]:
    """One JSON-ready record of everything stored about the student."""
    return {
        "tenant": tenant, "student": student, "course": course,
        "exported": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "tables": store.profiles.export_student(tenant, student, course),
    }


def redis_patterns(tenant: str, student: str, sessions: list[str]) -> list[str]:
    """Glob patterns of the Redis key names (after the prefix) that belong to the student:
    their request windows (`rate:{student:<tenant>:<student>}:...`), compute buckets
    (`budget:{<tenant>}:key:student:<tenant>:<student>`) and their sessions' cached turns."""
    who = _glob(f"student:{tenant}:{student}")
    return [f"*{{{who}}}*", f"*:{who}", *(f"*{_glob(sid)}*" for sid in sessions)]


def _glob(text: str) -> str:
    """`text` with Redis glob characters escaped."""
    return "".join("\\" + ch if ch in "*?[]\\" else ch for ch in text)


def _forget_in_redis(settings: Settings, patterns: list[str]) -> int:
    from ..store.redis import connect

    link = connect(settings)
    removed = 0
    try:
        with link.reached():
            for pattern in patterns:
                keys = list(link.client.scan_iter(match=f"{_glob(link.prefix)}:{pattern}"))
                removed += int(link.client.delete(*keys)) if keys else 0
    finally:
        link.client.close()
    return removed


def forget_student(store: Store, settings: Settings, tenant: str, student: str,
                   course: str | None = None) -> Forgotten:
    """Erase the student (in one course, or the whole tenant) from the store in one
    transaction, then from Redis."""
    rows, sessions = store.profiles.erase_student(tenant, student, course)
    store.scrub(list(rows))
    keys = _forget_in_redis(settings, redis_patterns(tenant, student, sessions)) \
        if settings.redis else 0
    return Forgotten(student, course, rows, len(sessions), keys)
