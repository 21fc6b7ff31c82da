"""Retention: a course keeps its turns `retention_days` (0: forever); summaries, profiles,
mastery and weak areas outlive them (they keep the ids of turns that may be gone)."""

from __future__ import annotations

import time

from ..store import Store

__all__ = ["DAY", "purge_all_tenants", "purge_expired_turns"]

DAY = 86_400.0


def purge_expired_turns(store: Store, tenant: str, course: str | None = None,
                        now: float | None = None) -> dict[str, int]:
    """Delete the turns older than their course's retention (one course, or every course of
    the tenant); turns deleted per course that has a retention."""
    now = time.time() if now is None else now
    courses = [course] if course is not None else [c.id for c in store.list_courses(tenant)]
    purged: dict[str, int] = {}
    for name in courses:
        days = store.profiles.retention_days(tenant, name)
        if days > 0:
            purged[name] = store.profiles.purge_turns(tenant, name, now - days * DAY)
    return purged


def purge_all_tenants(store: Store, now: float | None = None) -> int:
    """Purge expired turns of every tenant (at server start); how many were deleted."""
    return sum(sum(purge_expired_turns(store, t.id, now=now).values())
               for t in store.list_tenants())
