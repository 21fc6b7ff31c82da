"""Three tiers during a class: this class first, then the course's history, else not covered.

One wide search of the course is split: the class's own passages (its transcript so far and
its slide deck) reranked by progress (`retrieval.progress`), the rest of the course after
them. When the class's best passages are weak (`tier_score` below `live_tier_threshold`) the
whole course competes on its fused scores alone; when that is weak too, the grade says the
material does not cover the question, as outside a class. Every hit is labelled with its tier.
"""

from __future__ import annotations

import dataclasses
import re
import time
from datetime import datetime

from ..config import Settings
from ..live.standing import ClassProgress
from ..retrieval.class_rerank import (
    Focus,
    ProgressWeights,
    class_share,
    in_focus,
    rerank,
    tier_score,
)
from ..retrieval.grading import evidence_score
from ..retrieval.retriever import SearchTrace
from ..types import DocType, Hit
from ..workspace import Workspace
from .evidence import EvidenceFinder, prefer
from .pedagogy import preferred_types

# candidates of the one course search the tiers are cut from: a class's passage that answers
# is often below the course's first 30 (docs/evaluation.md, "Answering during a class")
WIDE_K = 100
CLASS, COURSE, HISTORY = "class", "course", "history"


@dataclasses.dataclass(frozen=True)
class TierInput:
    """A question asked during a class."""

    query: str
    course: str
    progress: ClassProgress
    doc_types: tuple[DocType, ...] | None = None
    k: int = 6


@dataclasses.dataclass(frozen=True)
class TierOutput:
    """The labelled hits, the tier they came from and what decided it."""

    hits: list[Hit]
    tier: str  # "class" or "course"
    class_score: float  # the class's own evidence (`tier_score`)
    keyword_evidence: float
    timings: dict[str, float]  # ms: retrieval, rerank


def weights_of(settings: Settings) -> ProgressWeights:
    """The rerank weights from the `live_*` settings."""
    return ProgressWeights(settings.live_class_boost, settings.live_recency_boost,
                           settings.live_recency_half_life, settings.live_slide_boost,
                           settings.live_slide_window)


@dataclasses.dataclass(frozen=True)
class Bar:
    """When the class's own passages go first (settings `live_tier_threshold`, `_ratio`)."""

    threshold: float = 0.0  # their evidence (`tier_score`) at least this
    ratio: float = 0.45  # and their best fused score at least this share of the course's best

    def passes(self, score: float, share: float) -> bool:
        return score >= self.threshold and share >= self.ratio


def split(hits: list[Hit], fused: list[Hit], focus: Focus, strong: bool,
          ) -> tuple[list[Hit], str]:
    """The class's reranked hits first when they are `strong`, else the plain fusion."""
    if not strong:
        return fused, COURSE
    return ([h for h in hits if in_focus(h, focus)]
            + [h for h in fused if not in_focus(h, focus)]), CLASS


@dataclasses.dataclass(frozen=True)
class Candidates:
    """One wide search of the course, read two ways."""

    fused: list[Hit]  # the course's best WIDE_K as fused
    ranked: list[Hit]  # the same reranked by progress: the class's passages come from here
    score: float  # the class's own evidence among `fused` (`tier_score`)
    share: float  # the class's best fused score over the course's best (`class_share`)
    keyword_evidence: float
    search_ms: float = 0.0  # the course search alone (the rest is the rerank's)


def candidates(ws: Workspace, query: str, course: str, focus: Focus, weights: ProgressWeights,
               doc_types: tuple[DocType, ...] | None = None, k: int = 0,
               wide: int = WIDE_K) -> Candidates:
    """Search the course once, `wide` deep."""
    trace = SearchTrace()
    started = time.perf_counter()
    fused = ws.search(query, course, k=max(wide, k), doc_types=doc_types, trace=trace)
    searched = (time.perf_counter() - started) * 1000
    return Candidates(fused, rerank(fused, focus, weights),
                      tier_score(fused, focus, trace.keyword_evidence),
                      class_share(fused, focus), trace.keyword_evidence, searched)


def bar_of(settings: Settings) -> Bar:
    return Bar(settings.live_tier_threshold, settings.live_tier_ratio)


def tiered_search(ws: Workspace, inp: TierInput, weights: ProgressWeights, bar: Bar,
                  ) -> TierOutput:
    """Search the course once and cut it into tiers (see the module's docstring)."""
    t0 = time.perf_counter()
    focus = inp.progress.focus()
    found = candidates(ws, inp.query, inp.course, focus, weights, inp.doc_types, inp.k)
    hits, tier = split(found.ranked, found.fused, focus, bar.passes(found.score, found.share))
    labelled = [label(h, inp.progress, tier) for h in hits[: inp.k]]
    total = (time.perf_counter() - t0) * 1000
    return TierOutput(labelled, tier, round(found.score, 4), found.keyword_evidence,
                      {"retrieval": round(found.search_ms, 1),
                       "rerank": round(total - found.search_ms, 1)})


# A tier label's code and its English text (the label stored with a turn); pages translate
# the code (see `tier_code`), older clients show the text.
TIER_LABELS = (
    ("class_time", re.compile(r"from today's class, (?P<time>\d\d:\d\d)")),
    ("slides_page", re.compile(r"from today's slides, p\. (?P<page>\d+)")),
    ("slides", re.compile(r"from today's slides")),
    ("document", re.compile(r"from (?P<title>.+)", re.DOTALL)),
)


def label(hit: Hit, progress: ClassProgress, tier: str) -> Hit:
    """The hit with its tier and a label a student reads ("from today's class, 10:23")."""
    chunk = hit.chunk
    if chunk.document_id == progress.document_id:
        start = hit.locator.start if hit.locator.start is not None else 0.0
        text = f"from today's class, {clock(progress.started, start)}"
        return dataclasses.replace(hit, tier=CLASS, tier_label=text)
    if progress.slides_document and chunk.document_id == progress.slides_document:
        page = f", p. {chunk.locator.page}" if chunk.locator.page else ""
        return dataclasses.replace(hit, tier=CLASS, tier_label=f"from today's slides{page}")
    return dataclasses.replace(hit, tier=HISTORY, tier_label=f"from {chunk.document_title}")


def tier_code(tier_label: str) -> tuple[str, dict[str, str]]:
    """The code and parameters of a label `label` wrote ("class_time", {"time": "10:23"});
    ("", {}) for no label."""
    for code, pattern in TIER_LABELS:
        match = pattern.fullmatch(tier_label)
        if match:
            return code, match.groupdict()
    return "", {}


def clock(started: float, offset: float) -> str:
    """The time of day `offset` seconds into a class that started at `started` (epoch)."""
    if started <= 0:
        whole = int(offset)
        return f"{whole // 60:02d}:{whole % 60:02d}"
    return datetime.fromtimestamp(started + offset).strftime("%H:%M")


class TieredFinder(EvidenceFinder):
    """The tutor's evidence finder during a class: every search is a tiered search, graded
    and widened as outside a class (`EvidenceFinder.find`)."""

    def __init__(self, base: EvidenceFinder, progress: ClassProgress) -> None:
        # the same finder (its model and log), searching by tiers
        self.__dict__.update(vars(base))
        self.progress = progress
        self.weights = weights_of(self.settings)
        self.tier = ""
        self.rerank_ms = 0.0

    def _search(self, query: str, course: str, types: tuple[DocType, ...], k: int,
                intent: str) -> tuple[list[Hit], float]:
        out = tiered_search(self.ws, TierInput(query, course, self.progress, types, k),
                            self.weights, bar_of(self.settings))
        self.search_ms += out.timings["retrieval"]
        self.rerank_ms += out.timings["rerank"]
        self.tier = self.tier or out.tier  # the first search decides; widening keeps it
        # preferred document types order each tier, never one tier across the other
        types_first = preferred_types(intent)
        groups = [[h for h in out.hits if h.tier == CLASS], [h for h in out.hits
                                                             if h.tier != CLASS]]
        if out.tier == COURSE:
            groups = [out.hits]
        hits = [h for g in groups for h in prefer(g, types_first)]
        return hits, evidence_score(hits, out.keyword_evidence)


def with_tiers(finder: EvidenceFinder, progress: ClassProgress | None) -> EvidenceFinder:
    """`finder` itself outside a class, a TieredFinder during one."""
    return finder if progress is None else TieredFinder(finder, progress)


def tier_of(finder: EvidenceFinder, timings: dict[str, float]) -> str:
    """The tier a turn's passages came from ("" outside a class); its rerank time booked."""
    if not isinstance(finder, TieredFinder):
        return ""
    timings["rerank"] = round(finder.rerank_ms, 1)
    return finder.tier


def live_block(progress: ClassProgress | None) -> str:
    """The class's progress, first in the prompt (the slide line, the topics and the
    running summary: a few hundred characters, inside the context's 200-token rest)."""
    if progress is None:
        return ""
    lines = [progress.line() or "The class has no slide on screen."]
    if progress.topics:
        lines.append("Topics so far: " + "; ".join(progress.topics))
    if progress.summary:
        lines.append(f"Just said in class: {progress.summary}")
    return "Class in progress (" + " ".join(lines) + ")\n\n"
