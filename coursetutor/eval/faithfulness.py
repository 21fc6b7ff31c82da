"""Per-answer RAG metrics: faithfulness, unsupported terms, relevance, context precision and recall.

A claim (a sentence of the answer that states something, as the tutor's answer check splits
it) is **supported** when none of its numbers, formulas, symbols or named terms is missing from
the cited sources and the question (`missing_terms`, deterministic), and it is close to one
sentence of the cited sources: either at least `SUPPORT_OVERLAP` of its content terms occur in
that sentence, or its e5 embedding has a cosine of at least `SUPPORT_SIMILARITY` with it.
Faithfulness is the share of supported claims. The thresholds are this module's constants and
are documented in docs/evaluation.md.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from typing import TypeVar

import numpy as np

from ..ingest.chunking import split_sentences
from ..ingest.tex_unicode import to_unicode
from ..retrieval import EmbeddingModel
from ..retrieval.language import detect_language
from ..retrieval.tokenize import has_cjk, tokenize
from ..tutor.citations import MARKER

T = TypeVar("T")
SUPPORT_OVERLAP = 0.6  # share of a claim's content terms found in one source sentence
# cosine (e5, both sides embedded as queries) of the claim and its best source sentence;
# measured on hand-made pairs over the course pack: same language, right claims 0.95-0.98 and
# wrong ones 0.89-0.90; a Korean, Chinese or Italian claim against English slides, right
# 0.85-0.95 and wrong 0.83-0.86 (weak: the deterministic term check matters more there)
SUPPORT_SIMILARITY = 0.92
SUPPORT_SIMILARITY_CROSS = 0.86  # the claim is not in the language of its sources


@dataclasses.dataclass(frozen=True)
class ClaimCheck:
    claim: str
    missing: tuple[str, ...]  # numbers, formulas, symbols, names found in no source
    overlap: float
    similarity: float
    cross_lingual: bool = False

    @property
    def supported(self) -> bool:
        bar = SUPPORT_SIMILARITY_CROSS if self.cross_lingual else SUPPORT_SIMILARITY
        return not self.missing and (self.overlap >= SUPPORT_OVERLAP or self.similarity >= bar)


_QUOTE = re.compile(r"^\s*>\s?")


def content_terms(text: str, language: str) -> set[str]:
    """The terms of `text` that carry content: numbers, CJK terms and words over 3 letters."""
    terms = tokenize(MARKER.sub(" ", text), language)
    return {t for t in terms if t.isdigit() or has_cjk(t) or len(t) > 3}


def overlap(claim: set[str], sentence: set[str]) -> float:
    """Share of the claim's terms that the sentence holds."""
    return len(claim & sentence) / len(claim) if claim else 0.0


def source_sentences(texts: Sequence[str]) -> list[str]:
    """The sentences and the lines of the sources (PDF text puts formulas on lines of their own)."""
    out: dict[str, None] = {}
    for text in texts:
        for piece in [*split_sentences(text), *text.splitlines()]:
            piece = " ".join(piece.split())
            if len(piece) > 2:
                out.setdefault(piece)
    return list(out)


def _unit(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1, norms)


class AnswerScorer:
    """Judges an answer's claims against its sources with the bundled embedding model."""

    def __init__(self, embedder: EmbeddingModel) -> None:
        self.embedder = embedder

    def _embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.embedder.dim), dtype=np.float32)
        parts = [self.embedder.embed_batch(texts[i:i + 16], is_query=True)
                 for i in range(0, len(texts), 16)]
        return _unit(np.vstack(parts).astype(np.float32))

    def check_claims(self, answer: str, sources: Sequence[str], question: str,
                     language: str, source_language: str = "") -> list[ClaimCheck]:
        """Every claim of `answer` with what is missing and its best support score.

        `source_language`: the language of the sources as their course gives it; without
        it, guessed from their text (with the answer's language as the default, which maths
        slides, a few English words among formulas and "i.e.", can fall back to)."""
        from ..tutor.claims import claims, missing_terms

        # a sentence that only introduces a quotation ("The material puts it this way:")
        # states nothing of its own
        # a quoted line is judged as what it states, without its "> " quotation mark
        found = [_QUOTE.sub("", c) for c in claims(answer)
                 if not MARKER.sub("", c).rstrip().endswith((":", "\uff1a"))]
        found = [c for c in found if MARKER.sub("", c).strip()]
        if not found:
            return []
        # LaTeX and Unicode maths read as one: a claim in either against a source in either
        sentences = source_sentences([to_unicode(s) for s in sources])
        stripped = [to_unicode(MARKER.sub("", c).strip()) for c in found]
        sims = (self._embed(stripped) @ self._embed(sentences).T if sentences
                else np.zeros((len(found), 0), dtype=np.float32))
        sent_terms = [content_terms(s, language) for s in sentences]
        source_language = source_language or detect_language(" ".join(sources)[:4000],
                                                             default=language)
        out: list[ClaimCheck] = []
        for i, claim in enumerate(found):
            terms = content_terms(stripped[i], language)
            best_overlap = max((overlap(terms, s) for s in sent_terms), default=0.0)
            best_sim = float(sims[i].max()) if sims.shape[1] else 0.0
            cross = detect_language(stripped[i], default=language) != source_language
            out.append(ClaimCheck(claim, tuple(missing_terms(claim, sources, question)),
                                  round(best_overlap, 3), round(best_sim, 3), cross))
        return out

    def relevance(self, question: str, answer: str) -> float:
        """Cosine of the question and the answer (citation markers removed)."""
        q, a = self._embed([question, MARKER.sub("", answer).strip() or answer])
        return round(float(q @ a), 4)


def context_precision(relevant: Sequence[bool]) -> float:
    """Rank-weighted precision of the context: the mean of precision@k over relevant ranks k.

    1.0 when every relevant chunk comes before every other one; 0.0 when none is relevant.
    """
    hits = 0
    total = 0.0
    for k, rel in enumerate(relevant, start=1):
        if rel:
            hits += 1
            total += hits / k
    return round(total / hits, 4) if hits else 0.0


def context_recall(gold: Sequence[Callable[[T], bool]], chunks: Sequence[T]) -> float:
    """Share of the gold places (each a test of a chunk) that some context chunk holds."""
    if not gold:
        raise ValueError("context recall needs at least one gold place")
    return round(sum(any(test(c) for c in chunks) for test in gold) / len(gold), 4)


_NUMBER_SEP = re.compile(r"(?<=\d)[,\s](?=\d{3}\b)")


def terms_found(reply: str, terms: Sequence[str]) -> float | None:
    """Share of `terms` written in `reply` (thousands separators ignored)."""
    if not terms:
        return None
    text = _NUMBER_SEP.sub("", reply.casefold())
    return round(sum(_NUMBER_SEP.sub("", t.casefold()) in text for t in terms) / len(terms), 4)
