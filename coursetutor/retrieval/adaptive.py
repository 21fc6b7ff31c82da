"""Profile rerank (adaptive retrieval): what the student is studying, gets wrong or has
mastered moves passages up or down among close candidates.

After fusion each hit's fused score is multiplied by one factor per kind of topic it is on:

    factor(d) = (c if d is on a current topic) * (w if on a weak area's topic)
                * (m if on a mastered topic),        defaults c = 1.3, w = 1.5, m = 0.7

and the hits are sorted again (stably, so equal scores keep their order). The factor and the
fused score it changed are kept in the hit's `scores` ("profile", "fused_before_profile") and
the reasons in its `explain` lines. With an empty profile every hit comes back untouched, in
the same order: a student the tutor knows nothing about gets today's ranking.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from ..types import Chunk, Hit

TopicsOf = Callable[[Chunk], Sequence[str]]


@dataclasses.dataclass(frozen=True)
class AdaptiveWeights:
    """The rerank's factors (settings `adaptive_current`, `adaptive_weak`, `adaptive_mastered`)."""

    current: float = 1.3
    weak: float = 1.5
    mastered: float = 0.7


@dataclasses.dataclass(frozen=True)
class ProfileView:
    """What the rerank knows of a student: topic names of the course's topic list."""

    current: frozenset[str] = frozenset()  # the topics of the conversation now
    weak: frozenset[str] = frozenset()  # topics of their active weak areas
    mastered: frozenset[str] = frozenset()  # topics whose mastery estimate is >= 0.95

    @property
    def empty(self) -> bool:
        return not (self.current or self.weak or self.mastered)


def profile_factor(topics: Sequence[str], view: ProfileView, weights: AdaptiveWeights
                   ) -> tuple[float, tuple[str, ...]]:
    """The factor for a passage on `topics`, and why (one line per kind that applied)."""
    factor, why = 1.0, []
    for kind, names, weight in (("current topic", view.current, weights.current),
                                ("weak area", view.weak, weights.weak),
                                ("mastered", view.mastered, weights.mastered)):
        matched = [t for t in topics if t in names]
        if matched and weight != 1.0:
            factor *= weight
            why.append(f"{kind} {', '.join(matched)}: x{weight:g}")
    return factor, tuple(why)


def profile_rerank(hits: Sequence[Hit], view: ProfileView, weights: AdaptiveWeights,
                   topics_of: TopicsOf) -> list[Hit]:
    """The hits with their fused scores times the profile factor, best first."""
    if view.empty:
        return list(hits)
    changed = []
    for hit in hits:
        factor, why = profile_factor(topics_of(hit.chunk), view, weights)
        if factor == 1.0:
            changed.append(hit)
            continue
        scores = {**hit.scores, "profile": factor, "fused_before_profile": hit.score}
        changed.append(dataclasses.replace(hit, score=hit.score * factor, scores=scores,
                                           explain=(*hit.explain, *why)))
    return sorted(changed, key=lambda h: h.score, reverse=True)
