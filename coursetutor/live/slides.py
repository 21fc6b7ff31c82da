"""Which slide is on screen during a live class, from the speech alone, sentence by sentence.

The pieces (page index, emissions, the model of how lecturers move through slides) are those of
the recorded-lecture alignment in `ingest/slide_align.py`; here they run causally: after each
sentence the belief over pages moves with the seconds since the last one, takes the sentence's
emission, and the page with the highest posterior is the answer. Each page's similarities are
scored against its own record over the sentences heard so far (`RunningColumns`). The teacher's
own page changes override the estimate.
"""

from __future__ import annotations

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
    emission,
)
from ..retrieval.embed import EmbeddingModel

__all__ = ["Emission", "Motion", "SlideTracker", "align_offline", "deck_pages"]


class SlideTracker:
    """The current slide after each sentence, from what was said so far (causal)."""

    def __init__(self, pages: Sequence[str], embedder: EmbeddingModel | None = None, *,
                 language: str | None = None, motion: Motion | None = None,
                 weights: Emission | None = None) -> None:
        if not pages:
            raise InputError("a slide tracker needs at least one page")
        self.index = PageIndex(pages, embedder, language)
        self.motion = motion or Motion()
        self.weights = weights or Emission()
        self._leave = self.motion.leave_matrix(self.index.size)
        self._belief = np.exp(self.motion.start(self.index.size))
        self._recent: list[tuple[Vector, Vector | None]] = []
        self._columns = (RunningColumns(self.index.size), RunningColumns(self.index.size))
        self._last_start: float | None = None
        self.page = 1

    def update(self, text: str, start: float, end: float) -> int:
        """Take one sentence (seconds since the class began); the 1-based page after it."""
        n = self.index.size
        if self._last_start is not None:
            stay = self.motion.stay(start - self._last_start)
            self._belief = stay * self._belief + (1 - stay) * (self._belief @ self._leave)
        self._last_start = start
        self._recent = [*self._recent, self.index.sentence(text)][-self.weights.window :]
        lexical, semantic = self.index.similarities(*self._window())
        lexical, semantic = self._centred(lexical, semantic)
        log_e = emission(lexical, semantic, self.index.empty, self.weights)
        belief = self._belief * np.exp(log_e - log_e.max())
        total = float(belief.sum())
        self._belief = belief / total if total > 0 else np.full(n, 1.0 / n)
        self.page = int(np.argmax(self._belief)) + 1
        return self.page

    def _window(self) -> tuple[Vector, Vector | None]:
        """The recent sentences' term vectors and embeddings summed, the older ones weighing
        `Emission.decay` times less for each sentence back."""
        weights = [self.weights.decay ** k for k in range(len(self._recent) - 1, -1, -1)]
        terms = sum((w * r[0] for w, r in zip(weights, self._recent, strict=True)),
                    np.zeros(len(self.index.vocab)))
        if self._recent[-1][1] is None:
            return terms, None
        vector = sum((w * r[1] for w, r in zip(weights, self._recent, strict=True)
                      if r[1] is not None), np.zeros_like(self._recent[-1][1]))
        return terms, vector

    def _centred(self, lexical: Vector, semantic: Vector | None) -> tuple[Vector, Vector | None]:
        """Similarities as scores against each page's own record over the windows heard."""
        lexical = self._columns[0].score(lexical)
        return lexical, None if semantic is None else self._columns[1].score(semantic)

    def set_page(self, page: int) -> None:
        """The teacher says which slide is on screen: the belief moves there."""
        if not 1 <= page <= self.index.size:
            raise InputError(f"page {page} is not in the deck (1-{self.index.size})")
        belief = np.full(self.index.size, 1e-6)
        belief[page - 1] = 1.0
        self._belief = belief / belief.sum()
        self.page = page


class RunningColumns:
    """Each page's mean and spread of a similarity over the windows heard so far (Welford)."""

    def __init__(self, n: int) -> None:
        self.count = 0
        self.mean = np.zeros(n)
        self.square = np.zeros(n)

    def score(self, row: Vector) -> Vector:
        """Take `row` into the record; `row` less each page's mean, over its spread (the
        first window, with no spread yet, is only centred)."""
        self.count += 1
        delta = row - self.mean
        self.mean = self.mean + delta / self.count
        self.square = self.square + delta * (row - self.mean)
        centred = row - self.mean
        if self.count < 2:
            return centred
        spread = np.sqrt(self.square / self.count)
        out: Vector = np.divide(centred, spread, out=np.zeros_like(centred), where=spread > 1e-9)
        return out
