"""A student's mastery as a grade book score (AGS), sent when it changes.

The score is 100 times the mean of the student's mastery estimates (BKT, `store/mastery.py`)
over the topics of the course that any of its students has an estimate for, a topic the
student has none for counting as 0; with a chosen topic, that topic's estimate alone.
"""

from __future__ import annotations

import logging
from concurrent.futures import Future, ThreadPoolExecutor

from ..store import Store
from ..store.lti import LtiLink
from .services import Services

log = logging.getLogger("coursetutor.lti")


def mastery_score(store: Store, tenant: str, course: str, student: str, topic: str = "") -> float:
    """The student's mastery of the course (or of `topic`), 0-100, to one decimal."""
    mine = {m.topic: m.estimate for m in store.mastery.estimates(tenant, course, student)}
    if topic:
        return round(100 * mine.get(topic, 0.0), 1)
    topics = {m.topic for m in store.mastery.estimates(tenant, course)}
    if not topics:
        return 0.0
    return round(100 * sum(mine.get(t, 0.0) for t in topics) / len(topics), 1)


def send(store: Store, services: Services, link: LtiLink, student: str) -> float | None:
    """Send the student's score to the link's column if it changed; the score sent, or None."""
    sub = store.lti.user_sub(link.tenant, link.platform, student)
    if sub is None or not link.lineitem_url:
        return None
    score = mastery_score(store, link.tenant, link.course, student, link.topic)
    if store.lti.last_score(link.lineitem_url, student) == score:
        return None
    platform = store.lti.get_platform(link.tenant, link.platform)
    services.send_score(platform, link.lineitem_url, sub, score)
    store.lti.set_score(link.lineitem_url, link.tenant, link.course, student, score)
    return score


def send_all(store: Store, services: Services, tenant: str, course: str,
             student: str) -> list[float]:
    """Send the student's score to every column of the course that takes mastery."""
    sent = []
    for link in store.lti.course_links(tenant, course):
        if link.grades and link.lineitem_url:
            score = send(store, services, link, student)
            if score is not None:
                sent.append(score)
    return sent


class GradeSync:
    """Sends scores after tutor turns on a thread of its own: a turn never waits for an LMS,
    and a grade book that fails is logged, never the turn's failure."""

    def __init__(self, store: Store, services: Services) -> None:
        self.store = store
        self.services = services
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lti-grades")

    def after_turn(self, tenant: str, course: str, student: str) -> Future[list[float]]:
        """Queue the student's scores of the course."""
        return self._pool.submit(self._send, tenant, course, student)

    def _send(self, tenant: str, course: str, student: str) -> list[float]:
        try:
            return send_all(self.store, self.services, tenant, course, student)
        except Exception as exc:  # any failure of a grade book: logged, the turn is done
            log.warning("sending a score to the LMS failed: %s", exc,
                        extra={"tenant": tenant, "course": course})
            return []

    def shutdown(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
