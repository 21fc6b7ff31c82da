"""Progress-aware rerank: during a class, what was just said and the slide on screen first.

After fusion, each hit's fused score is multiplied by a factor built from where it sits
relative to the class in progress:

    factor(d) = 1 + c * in_class(d)
                  + r * 2 ** (-age(d) / h)          (a chunk of this class's transcript)
                  + p * max(0, 1 - |page(d) - now_page| / (w + 1))   (its slide is known)

    age(d)  = seconds between the end of the chunk and "now"
    c, r, h = class boost, recency boost, recency half-life;  p, w = slide boost and window

A multiplier keeps the content's own ranking inside each group: a chunk said just now that
does not match the question still scores nothing. The factor and the fused score it changed
are kept in the hit's `scores` ("progress", "fused") as its explanation.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from ..types import Hit
from .grading import evidence_score

_SLIDE = re.compile(r"^slide-(\d+)$")


@dataclasses.dataclass(frozen=True)
class ProgressWeights:
    """The rerank's weights (settings `live_*`)."""

    class_boost: float = 0.5
    recency_boost: float = 0.5
    half_life: float = 120.0  # seconds for the recency boost to halve
    slide_boost: float = 0.3
    slide_window: int = 2  # pages either side of the current one that still get a share


@dataclasses.dataclass(frozen=True)
class Focus:
    """Where the class stands: its transcript document, "now" and the slide on screen."""

    class_document: str
    now: float  # seconds since the class started
    page: int | None = None  # the current slide, 1-based
    slides_document: str = ""  # the deck on screen (a document of the course)


def slide_page(hit: Hit, focus: Focus) -> int | None:
    """The slide a hit was spoken over (transcript) or is (a page of the deck on screen)."""
    chunk = hit.chunk
    if chunk.document_id == focus.class_document and chunk.locator.anchor:
        match = _SLIDE.match(chunk.locator.anchor)
        return int(match.group(1)) if match else None
    if focus.slides_document and chunk.document_id == focus.slides_document:
        return chunk.locator.page
    return None


def age(hit: Hit, focus: Focus) -> float | None:
    """Seconds since the end of a chunk of this class (None for any other chunk)."""
    loc = hit.chunk.locator
    if hit.chunk.document_id != focus.class_document or loc.start is None:
        return None
    end = loc.end if loc.end is not None else loc.start
    return max(0.0, focus.now - end)


def factor(hit: Hit, focus: Focus, w: ProgressWeights) -> float:
    """The multiplier of one hit's fused score (1 for material unrelated to the class)."""
    value = 1.0
    seconds = age(hit, focus)
    if hit.chunk.document_id == focus.class_document:
        value += w.class_boost
        if seconds is not None and w.half_life > 0:
            value += w.recency_boost * 2.0 ** (-seconds / w.half_life)
    page = slide_page(hit, focus)
    if page is not None and focus.page is not None:
        value += w.slide_boost * max(0.0, 1.0 - abs(page - focus.page) / (w.slide_window + 1))
    return value


def rerank(hits: Sequence[Hit], focus: Focus, weights: ProgressWeights) -> list[Hit]:
    """`hits` rescored by `factor` and sorted, best first (stable among equal scores)."""
    rescored: list[Hit] = []
    for hit in hits:
        f = factor(hit, focus, weights)
        scores = {**hit.scores, "fused": hit.score, "progress": round(f, 4)}
        rescored.append(dataclasses.replace(hit, score=hit.score * f, scores=scores))
    return sorted(rescored, key=lambda h: -h.score)


def in_focus(hit: Hit, focus: Focus) -> bool:
    """Whether a hit belongs to the class in progress (its transcript or its deck)."""
    doc = hit.chunk.document_id
    return doc == focus.class_document or bool(focus.slides_document
                                               and doc == focus.slides_document)


def tier_score(hits: Sequence[Hit], focus: Focus, keyword_evidence: float) -> float:
    """How well the class's own passages answer, on the evidence grade's [0, 1] scale.

    The grade's formula (`grading.evidence_score`) over the class's hits, with the keyword
    evidence scaled by how far the class's best keyword score reaches the course's best.
    """
    mine = [h for h in hits if in_focus(h, focus)]
    if not mine:
        return 0.0
    best = max((h.scores.get("bm25") or 0.0) for h in hits)
    own = max((h.scores.get("bm25") or 0.0) for h in mine)
    return evidence_score(mine, keyword_evidence * own / best if best > 0 else 0.0)


def class_share(hits: Sequence[Hit], focus: Focus) -> float:
    """The class's best fused score over the course's best (0 when the class has none)."""
    best = max((h.score for h in hits), default=0.0)
    own = max((h.score for h in hits if in_focus(h, focus)), default=0.0)
    return own / best if best > 0 else 0.0
