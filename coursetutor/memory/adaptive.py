"""The student's side of adaptive retrieval: their profile as the rerank sees it (current
topics, weak areas, mastered topics) and the rerank of a search's hits with it."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..config import Settings
from ..retrieval.adaptive import AdaptiveWeights, ProfileView, profile_rerank
from ..store import Store
from ..store.base import LearnerState
from ..types import Hit
from .topics import chunk_topics, course_topics

__all__ = ["profile_view", "read_view", "reranker", "view_rerank", "weights"]

Rerank = Callable[[list[Hit]], list[Hit]]


def weights(settings: Settings) -> AdaptiveWeights:
    """The factors the settings give."""
    return AdaptiveWeights(settings.adaptive_current, settings.adaptive_weak,
                           settings.adaptive_mastered)


def profile_view(state: LearnerState) -> ProfileView:
    """Current topics (those of the student's latest turn), topics of their active weak
    areas, and topics whose mastery estimate reached 0.95."""
    weak = frozenset(w.topic for w in state.weak)
    mastered = frozenset(m.topic for m in state.estimates if m.mastered)
    studied = state.profile.topics  # latest first
    latest = studied[0].turn_ids[-1] if studied and studied[0].turn_ids else None
    current = frozenset(t.topic for t in studied if latest and t.turn_ids
                        and t.turn_ids[-1] == latest)
    return ProfileView(current, weak, mastered)


def read_view(store: Store, tenant: str, course: str, student: str) -> ProfileView:
    """The profile view of a student, read from the store."""
    return profile_view(store.learner_state(tenant, course, student, "", 0))


def view_rerank(view: ProfileView, settings: Settings, topics: Callable[[], Sequence[str]]
                ) -> Rerank:
    """The profile rerank for a student's `view` (the identity, reading no topics, while
    the view is empty); `topics` gives the course's topic list."""
    if view.empty:
        return list
    listed = topics()
    factors = weights(settings)

    def rerank(hits: list[Hit]) -> list[Hit]:
        return profile_rerank(hits, view, factors, lambda c: chunk_topics(c, listed))

    return rerank


def reranker(store: Store, settings: Settings, tenant: str, course: str,
             student: str) -> Rerank:
    """The profile rerank for one student's searches in a course, read from the store."""
    return view_rerank(read_view(store, tenant, course, student), settings,
                       lambda: course_topics(store, tenant, course))
