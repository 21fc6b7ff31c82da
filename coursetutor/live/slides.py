"""Which slide is on screen during a live class, from the speech alone, sentence by sentence.

The page index and the model of how lecturers move through slides are those of the
recorded-lecture alignment (`ingest/slide_align.py`); here they run causally: after each
sentence the belief over pages moves with the seconds since the last one, takes the sentence's
evidence, and the page with the highest belief is the answer.

The evidence is read on absolute similarities, so that a sentence that matches no page
clearly leaves the belief where it was (standardised scores always name a favourite).
Lexically, words the lecturer keeps saying count for little: document frequencies run over
the pages and the sentences heard so far. Each page's similarity is taken less a share of its
background, its usual similarity to sentences spoken while it was not on screen (weighted by
the belief that it was not), so a page that matches everything a little does not pull, and the
page being talked about is not held against its own record. How fast a lecturer moves is not
known in advance: the belief is held over a few paces side by side (`Pace`), and the evidence
shifts it towards the lecture's own. The teacher's own page changes override the estimate.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from ..errors import InputError
from ..ingest.slide_align import (
    Emission,
    Motion,
    PageIndex,
    Vector,
    align_offline,
    deck_pages,
    unit,
    unit_rows,
)
from ..retrieval.embed import EmbeddingModel

__all__ = ["Emission", "LiveScoring", "Motion", "Pace", "SlideTracker", "align_offline",
           "deck_pages"]


@dataclasses.dataclass(frozen=True)
class LiveScoring:
    """How the live tracker turns a sentence's similarities into evidence (log-likelihoods)."""

    lexical: float = 12.0  # per unit of TF-IDF cosine above the page's background
    semantic: float = 30.0  # per unit of embedding cosine above the page's background
    background: float = 0.75  # share of each page's background similarity taken off


@dataclasses.dataclass(frozen=True)
class Pace:
    """The paces the live tracker holds side by side: mean dwells as multiples of
    `Motion.dwell_seconds`, and the share of belief that moves between paces per sentence."""

    dwell: tuple[float, ...] = (1 / 3, 1.0, 3.0)
    change: float = 0.01


class SlideTracker:
    """The current slide after each sentence, from what was said so far (causal)."""

    def __init__(self, pages: Sequence[str], embedder: EmbeddingModel | None = None, *,
                 language: str | None = None, motion: Motion | None = None,
                 scoring: LiveScoring | None = None, pace: Pace | None = None) -> None:
        if not pages:
            raise InputError("a slide tracker needs at least one page")
        self.index = PageIndex(pages, embedder, language)
        self.motion = motion or Motion()
        self.scoring = scoring or LiveScoring()
        self.pace = pace or Pace()
        n = self.index.size
        self._leave = self.motion.leave_matrix(n)
        self._dwell = np.array([f * self.motion.dwell_seconds for f in self.pace.dwell])[:, None]
        self._belief = np.outer(np.full(len(self.pace.dwell), 1.0 / len(self.pace.dwell)),
                                np.exp(self.motion.start(n)))
        self._df = HeardFrequencies(self.index)
        self._background = (Background(n), Background(n))
        self._last_start: float | None = None
        self.page = 1

    def update(self, text: str, start: float, end: float) -> int:
        """Take one sentence (seconds since the class began); the 1-based page after it."""
        if self._last_start is not None:
            self._move(start - self._last_start)
        self._last_start = start
        away = 1.0 - self._belief.sum(axis=0)
        log_e = self._evidence(*self.index.sentence(text), away)
        belief = self._belief * np.exp(log_e - log_e.max())
        total = float(belief.sum())
        self._belief = belief / total if total > 0 else np.full_like(belief, 1.0 / belief.size)
        self.page = int(np.argmax(self._belief.sum(axis=0))) + 1
        return self.page

    def _move(self, seconds: float) -> None:
        """The belief after `seconds` of speech: each pace leaves its page at its own rate,
        then a little belief moves between paces."""
        stay = np.exp(-max(seconds, 0.5) / self._dwell)
        belief = stay * self._belief + (1 - stay) * (self._belief @ self._leave)
        mixed = belief.sum(axis=0, keepdims=True) / len(belief)
        self._belief = (1 - self.pace.change) * belief + self.pace.change * mixed

    def _evidence(self, counts: Vector, vector: Vector | None, away: Vector) -> Vector:
        """Log-likelihood of the sentence under each page."""
        s = self.scoring
        self._df.hear(counts)
        score = s.lexical * self._background[0].above(self._df.similarities(counts), away,
                                                      s.background)
        if vector is not None and self.index.vectors is not None:
            semantic = self.index.vectors @ unit(vector)
            score = score + s.semantic * self._background[1].above(semantic, away,
                                                                   s.background)
        empty = self.index.empty
        if empty.all():
            return np.zeros_like(score)
        if empty.any():
            score[empty] = float(np.median(score[~empty]))
        return score

    @property
    def belief(self) -> Vector:
        """The belief over the deck's pages now (the paces summed; index 0 is page 1)."""
        out: Vector = self._belief.sum(axis=0)
        return out

    @property
    def paces(self) -> dict[float, float]:
        """The belief over the paces held: mean seconds on a slide -> weight."""
        weights = self._belief.sum(axis=1)
        return {float(d): float(w) for d, w in zip(self._dwell[:, 0], weights, strict=True)}

    def set_page(self, page: int) -> None:
        """The teacher says which slide is on screen: the belief moves there (each pace
        keeps its weight)."""
        if not 1 <= page <= self.index.size:
            raise InputError(f"page {page} is not in the deck (1-{self.index.size})",
                             code="slide_not_in_deck", page=page, pages=self.index.size)
        there = np.full(self.index.size, 1e-6)
        there[page - 1] = 1.0
        belief = np.outer(self._belief.sum(axis=1), there)
        self._belief = belief / belief.sum()
        self.page = page


class HeardFrequencies:
    """TF-IDF against the pages with document frequencies over the pages and every sentence
    heard so far: a word the lecturer keeps saying weighs little even where the deck has it
    on one page only."""

    def __init__(self, index: PageIndex) -> None:
        self.index = index
        self.df = index.df.copy()
        self.documents = index.size

    def hear(self, counts: Vector) -> None:
        """Count one sentence (its term frequencies) as a document."""
        self.df += counts > 0
        self.documents += 1

    def similarities(self, counts: Vector) -> Vector:
        """Cosine of the sentence's TF-IDF vector with every page's, under today's IDF."""
        idf = np.log((self.documents + 1) / (self.df + 1)) + 1.0
        out: Vector = unit_rows(self.index.counts * idf) @ unit(counts * idf)
        return out


class Background:
    """Each page's usual similarity to sentences spoken while it was not on screen."""

    def __init__(self, n: int) -> None:
        self.total = np.zeros(n)
        self.weight = np.zeros(n)

    def above(self, row: Vector, away: Vector, share: float) -> Vector:
        """`row` less `share` times each page's background, after taking `row` in with
        weight `away` (the belief that the page was not on screen). Each background starts
        from one sentence at the row's mean across pages."""
        self.total = self.total + away * row
        self.weight = self.weight + away
        background = (self.total + float(row.mean())) / (self.weight + 1.0)
        out: Vector = row - share * background
        return out
