"""The student's side of adaptive retrieval: their profile as the rerank sees it (current
topics, weak areas, mastered topics) and the rerank of a search's hits with it."""

from __future__ import annotations

from collections.abc import Callable

from ..config import Settings
from ..retrieval.adaptive import AdaptiveWeights, ProfileView, profile_rerank
from ..store import Store
from ..types import Hit
from .topics import chunk_topics, course_topics

__all__ = ["profile_view", "reranker", "weights"]

Rerank = Callable[[list[Hit]], list[Hit]]


def weights(settings: Settings) -> AdaptiveWeights:
    """The factors the settings give."""
    return AdaptiveWeights(settings.adaptive_current, settings.adaptive_weak,
                           settings.adaptive_mastered)


def profile_view(store: Store, tenant: str, course: str, student: str) -> ProfileView:
    """Current topics (those of the student's latest turn), topics of their active weak
    areas, and topics whose mastery estimate reached 0.95."""
    weak = frozenset(w.topic for w in store.mastery.weak_areas(tenant, course, student))
    mastered = frozenset(m.topic for m in store.mastery.estimates(tenant, course, student)
                         if m.mastered)
    studied = store.profiles.get(tenant, course, student).topics  # latest first
    latest = studied[0].turn_ids[-1] if studied and studied[0].turn_ids else None
    current = frozenset(t.topic for t in studied if latest and t.turn_ids
                        and t.turn_ids[-1] == latest)
    return ProfileView(current, weak, mastered)


def reranker(store: Store, settings: Settings, tenant: str, course: str,
             student: str) -> Rerank:
    """The profile rerank for one student's searches in a course (the identity, reading
    nothing more, while the profile is empty)."""
    view = profile_view(store, tenant, course, student)
    if view.empty:
        return list
    topics = course_topics(store, tenant, course)
    factors = weights(settings)

    def rerank(hits: list[Hit]) -> list[Hit]:
        return profile_rerank(hits, view, factors, lambda c: chunk_topics(c, topics))

    return rerank

