"""Which slide a lecture was on, from its speech: a hidden Markov model over the deck's pages.

Each sentence is compared with every page twice: lexically (TF-IDF over the shared tokenizer's
terms) and by meaning (the multilingual embedder's vectors against each page's). Each score is
centred and scaled per page over the sentences heard (a page full of common words matches
everything a little) and standardised across the pages; their sum is the emission. Lecturers
mostly stay on a slide, move to the next one, and now and then go back or jump, so the chance of
leaving a page grows with the seconds spoken since the last sentence (a mean dwell of
`Motion.dwell_seconds`) and a page is left mostly for the next one.

A recorded lecture is aligned whole (`align_offline`): each sentence gets the page most probable
given everything said before and after it (forward-backward; on MaViLS this placed more
sentences right than the single best path of Viterbi). The live tracker (`live/slides.py`)
filters forward on the same page index and motion model, with its own scoring (it cannot
see a lecture's record ahead of it). Pages without text (an image-only slide that OCR could not
read) get a neutral emission, so the motion model carries the path across them.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from ..errors import InputError, NoTextLayerError
from ..ingest.ocr import OcrFn
from ..ingest.pdf import load_pdf
from ..retrieval.embed import EmbeddingModel
from ..retrieval.language import majority_language
from ..retrieval.tokenize import tokenize
from ..types import Section

Vector = npt.NDArray[np.float64]
MIN_PAGE_CHARS = 20  # fewer characters: the page is read as having no text


@dataclasses.dataclass(frozen=True)
class Motion:
    """How lecturers move through slides, once they leave one."""

    dwell_seconds: float = 120.0  # mean time on a slide
    next: float = 0.80
    skip: float = 0.06  # two pages forward
    back: float = 0.06
    jump: float = 0.005  # anywhere, evenly
    start_decay: float = 0.3  # log-odds lost per page from page 1 before the first sentence

    def leave_matrix(self, n: int) -> Vector:
        """Row i: where a lecturer leaving page i goes (the diagonal is 0)."""
        t = np.full((n, n), self.jump / n)
        idx = np.arange(n)
        t[idx[:-1], idx[:-1] + 1] += self.next
        t[idx[:-2], idx[:-2] + 2] += self.skip
        t[idx[1:], idx[1:] - 1] += self.back
        t[idx, idx] = 0.0
        sums = t.sum(axis=1, keepdims=True)
        out: Vector = np.divide(t, sums, out=np.zeros_like(t), where=sums > 0)
        return out

    def stay(self, seconds: float) -> float:
        """The chance of still being on the same slide `seconds` later."""
        return math.exp(-max(seconds, 0.5) / self.dwell_seconds)

    def start(self, n: int) -> Vector:
        """Log prior over pages before anything is said: the beginning of the deck."""
        prior = -self.start_decay * np.arange(n, dtype=np.float64)
        return prior - float(np.logaddexp.reduce(prior))


@dataclasses.dataclass(frozen=True)
class Emission:
    """How a recorded lecture's sentences are compared with pages."""

    around: int = 1  # sentences read with each one, before it and after it
    lexical: float = 1.0
    semantic: float = 1.0
    sharpness: float = 0.3  # multiplies the standardised score into a log-likelihood


@dataclasses.dataclass(frozen=True)
class Deck:
    """A deck's page texts and how they were read."""

    pages: list[str]  # page 1 first; '' for a page without text
    image_pages: list[int]  # 1-based pages without a text layer (OCR needed)
    ocr_pages: list[int]  # 1-based pages whose text OCR read

    @property
    def readable(self) -> bool:
        """Whether any page has text to compare speech with."""
        return any(len(p.strip()) >= MIN_PAGE_CHARS for p in self.pages)


def read_deck(path: Path, ocr: OcrFn | None = None) -> Deck:
    """The text of every page of a PDF deck, as ingest reads it (`load_pdf`): pages without a
    text layer are read with `ocr` when given; without it an image-only deck gives only empty
    pages (the tracker then follows time alone)."""
    pages, image, _ = _pages(path, None)
    if ocr is None:
        return Deck(pages, image, [])
    pages, _, read = _pages(path, ocr)  # as ingest reads it: formula gaps are read too
    return Deck(pages, image, read)


def _pages(path: Path, ocr: OcrFn | None) -> tuple[list[str], list[int], list[int]]:
    """Page texts, the pages left without text and the pages OCR read."""
    try:
        doc = load_pdf(path, ocr)
    except NoTextLayerError as exc:
        return [""] * exc.pages, list(range(1, exc.pages + 1)), []
    pages = [""] * doc.pages
    for section in doc.sections:
        page = section.locator.page or 0
        if 1 <= page <= doc.pages:
            title = " ".join(section.path)
            pages[page - 1] = clean_text(f"{title}\n{section.text}" if title else section.text)
    return pages, list(doc.no_text_pages), list(doc.ocr_pages)


def deck_pages(path: Path, ocr: OcrFn | None = None) -> list[str]:
    """The text of every page of a PDF deck, page 1 first ('' for a page without text).

    Pages without a text layer are read with `ocr` when given; without it an image-only
    deck gives only empty pages (the tracker then follows time alone).
    """
    return read_deck(path, ocr).pages


def clean_text(text: str) -> str:
    """`text` with split surrogate pairs joined and lone surrogates replaced (some PDFs'
    mathematical letters come out so)."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


class PageIndex:
    """The deck's pages as TF-IDF rows and embedding rows."""

    def __init__(self, pages: Sequence[str], embedder: EmbeddingModel | None,
                 language: str | None = None) -> None:
        texts = [clean_text(p) for p in pages]
        self.size = len(texts)
        self.language = language or majority_language(
            (p for p in texts if len(p.strip()) >= MIN_PAGE_CHARS), default="en")
        self.empty = np.array([len(p.strip()) < MIN_PAGE_CHARS for p in texts], dtype=bool)
        terms = [tokenize(p, self.language) for p in texts]
        self.vocab: dict[str, int] = {}
        for page_terms in terms:
            for term in page_terms:
                self.vocab.setdefault(term, len(self.vocab))
        self.counts = np.array([self.term_counts(t) for t in terms]).reshape(
            self.size, len(self.vocab))
        self.df = (self.counts > 0).sum(axis=0).astype(np.float64)
        self.idf = np.log((self.size + 1) / (self.df + 1)) + 1.0
        self.lexical = unit_rows(self.counts * self.idf)
        self.embedder = embedder
        self.vectors: Vector | None = None
        if embedder is not None and self.size:
            self.vectors = np.asarray(embedder.embed_passages(texts), dtype=np.float64)

    def term_counts(self, terms: Sequence[str]) -> Vector:
        """Sublinear term frequencies (1 + log count) over the deck's vocabulary (unknown
        terms dropped)."""
        v = np.zeros(len(self.vocab))
        for term in terms:
            i = self.vocab.get(term)
            if i is not None:
                v[i] += 1.0
        nz = v > 0
        v[nz] = 1.0 + np.log(v[nz])
        return v

    def term_vector(self, terms: Sequence[str]) -> Vector:
        """Sublinear TF times IDF over the deck's vocabulary (unknown terms dropped)."""
        out: Vector = self.term_counts(terms) * self.idf
        return out

    def sentence(self, text: str) -> tuple[Vector, Vector | None]:
        """One sentence's sublinear term frequencies and (with an embedder) its embedding."""
        terms = self.term_counts(tokenize(clean_text(text), self.language))
        if self.embedder is None or self.vectors is None:
            return terms, None
        vector = np.asarray(self.embedder.embed_query(clean_text(text)), dtype=np.float64)
        return terms, vector

    def sentences(self, texts: Sequence[str]) -> tuple[Vector, Vector | None]:
        """Term vectors and embeddings of many sentences at once (rows)."""
        terms = np.array([self.term_vector(tokenize(clean_text(t), self.language))
                          for t in texts]).reshape(len(texts), len(self.vocab))
        if self.embedder is None or self.vectors is None:
            return terms, None
        cleaned = [clean_text(t) for t in texts]
        vectors = np.vstack([self.embedder.embed_batch(cleaned[i : i + 32], is_query=True)
                             for i in range(0, len(cleaned), 32)]) if cleaned else \
            np.zeros((0, self.vectors.shape[1]))
        return terms, np.asarray(vectors, dtype=np.float64)


def unit(v: Vector) -> Vector:
    """`v` scaled to length 1 (a zero vector stays zero)."""
    norm = float(np.linalg.norm(v))
    return v / norm if norm > 0 else v


def unit_rows(m: Vector) -> Vector:
    """Every row of `m` scaled to length 1 (zero rows stay zero)."""
    if m.size == 0:
        return m.astype(np.float64)
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    out: Vector = np.divide(m, norms, out=np.zeros_like(m, dtype=np.float64), where=norms > 0)
    return out


def standardise(row: Vector) -> Vector:
    """Zero mean and unit spread across pages (a flat row stays 0)."""
    spread = float(row.std())
    return (row - row.mean()) / spread if spread > 1e-9 else np.zeros_like(row)


def emission(lexical: Vector, semantic: Vector | None, empty: npt.NDArray[np.bool_],
             weights: Emission) -> Vector:
    """Log-likelihood of one window under each page from its centred similarities."""
    score = weights.lexical * standardise(lexical)
    if semantic is not None:
        score = score + weights.semantic * standardise(semantic)
    if empty.any() and not empty.all():
        score[empty] = float(np.median(score[~empty]))
    elif empty.all():
        score = np.zeros_like(score)
    return weights.sharpness * score


def align_offline(pages: Sequence[str], sentences: Sequence[str],
                  embedder: EmbeddingModel | None = None, *,
                  times: Sequence[tuple[float, float]] | None = None,
                  language: str | None = None, motion: Motion | None = None,
                  weights: Emission | None = None) -> list[int]:
    """The 1-based page of each sentence of a recorded lecture: for each sentence the page
    most probable given the whole lecture (forward-backward over the motion model).

    `times` are the sentences' (start, end) seconds; without them each sentence counts as
    five seconds.
    """
    if not sentences:
        return []
    if not pages:
        raise InputError("aligning a lecture needs at least one page")
    motion = motion or Motion()
    weights = weights or Emission()
    index = PageIndex(pages, embedder, language)
    log_e = offline_emissions(index, sentences, weights)
    starts = [t[0] for t in times] if times else [5.0 * i for i in range(len(sentences))]
    return posterior_path(log_e, starts, motion)


def offline_emissions(index: PageIndex, sentences: Sequence[str], weights: Emission) -> Vector:
    """Each sentence's emission row, its window centred on it (the lecture is known whole)."""
    terms, vectors = index.sentences(sentences)
    half = weights.around
    lexical = index.lexical @ unit_rows(_windowed(terms, half, half)).T
    semantic = None
    if vectors is not None and index.vectors is not None:
        semantic = (index.vectors @ unit_rows(_windowed(vectors, half, half)).T).T
    lexical = column_scores(lexical.T)
    if semantic is not None:
        semantic = column_scores(semantic)
    return np.array([emission(lexical[t], None if semantic is None else semantic[t],
                              index.empty, weights) for t in range(len(sentences))])


def column_scores(scores: Vector) -> Vector:
    """Each page's column less its mean over the lecture, over its spread: a page that
    matches everything a little (common words, a long text) stands out only where it
    matches more than it usually does."""
    spread = scores.std(axis=0, keepdims=True)
    centred = scores - scores.mean(axis=0, keepdims=True)
    out: Vector = np.divide(centred, spread, out=np.zeros_like(centred), where=spread > 1e-9)
    return out


def transition(n: int, seconds: float, motion: Motion, leave: Vector | None = None) -> Vector:
    """Page-to-page probabilities over `seconds` of speech (rows: from, columns: to)."""
    stay = motion.stay(seconds)
    t = (1.0 - stay) * (motion.leave_matrix(n) if leave is None else leave)
    np.fill_diagonal(t, stay)
    return t


def posterior_path(log_e: Vector, starts: Sequence[float], motion: Motion) -> list[int]:
    """For each step the page (1-based) with the highest posterior given every emission
    (forward-backward, normalised at each step)."""
    steps, n = log_e.shape
    likely = np.exp(log_e - log_e.max(axis=1, keepdims=True))
    leave = motion.leave_matrix(n)
    moves = [transition(n, starts[t] - starts[t - 1], motion, leave) for t in range(1, steps)]
    forward = np.zeros((steps, n))
    first = np.exp(motion.start(n)) * likely[0]
    forward[0] = first / first.sum()
    for t in range(1, steps):
        f = (forward[t - 1] @ moves[t - 1]) * likely[t]
        forward[t] = f / f.sum()
    path = [int(np.argmax(forward[-1]))]
    backward = np.ones(n)
    for t in range(steps - 1, 0, -1):
        backward = moves[t - 1] @ (likely[t] * backward)
        backward /= backward.sum()
        path.append(int(np.argmax(forward[t - 1] * backward)))
    return [p + 1 for p in reversed(path)]


def _windowed(rows: Vector, before: int, after: int) -> Vector:
    """Each row summed with `before` rows before it and `after` rows after it."""
    cum = np.vstack([np.zeros((1, rows.shape[1])), np.cumsum(rows, axis=0)])
    idx = np.arange(len(rows))
    lo = np.maximum(idx - before, 0)
    hi = np.minimum(idx + after + 1, len(rows))
    return np.asarray(cum[hi] - cum[lo], dtype=np.float64)


def slide_cues(cues: Sequence[Section], deck: Path, embedder: EmbeddingModel | None,
               ocr: OcrFn | None = None) -> list[Section]:
    """A recorded lecture's cues, each anchored to the slide it was spoken over
    (`slide-<page>`), aligned offline with the deck at `deck`."""
    if not deck.is_file():
        raise InputError(f"the slides {deck.name!r} are not a file")
    if not cues:
        return []
    pages = deck_pages(deck, ocr)
    if not pages:
        return list(cues)
    times = [(c.locator.start or 0.0, c.locator.end or 0.0) for c in cues]
    found = align_offline(pages, [c.text for c in cues], embedder, times=times)
    return [dataclasses.replace(c, locator=dataclasses.replace(c.locator, anchor=f"slide-{p}"))
            for c, p in zip(cues, found, strict=True)]
