"""A course's write lock, shared by every worker: one document written into a course at a time.

A redis-py `Lock` with a timeout: the lock of a worker that dies while writing expires after
`ingest_lock_seconds`, and the next worker goes on.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator

from ..errors import ConflictError, RedisUnavailableError
from ..store.redis import RedisLink

log = logging.getLogger("coursetutor.tasks")


def lock_key(link: RedisLink, tenant: str, course: str) -> str:
    return link.key("lock", "course", tenant, course)


@contextlib.contextmanager
def course_lock(link: RedisLink, tenant: str, course: str, seconds: int) -> Iterator[None]:
    """Hold the course's lock inside; wait up to `seconds` for another worker's write."""
    lock = link.client.lock(lock_key(link, tenant, course), timeout=seconds,
                            blocking_timeout=seconds)
    with link.reached():
        taken = lock.acquire()
    if not taken:
        raise ConflictError(f"course {course!r} stayed locked by another worker for "
                            f"{seconds} s (ingest_lock_seconds)")
    try:
        yield
    finally:
        try:
            with link.reached():
                lock.release()
        except RedisUnavailableError as exc:  # it expired during a slow write: written anyway
            log.warning("course lock of %s/%s not released: %s", tenant, course, exc)
