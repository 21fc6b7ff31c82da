"""The answer check, a stage of the turn: every claim of a reply against the sources it cites.

For each claim (a sentence that states something; not a question to the student):
1. terms: every number, formula and named term must be in the cited sources or the question
   (`claims.missing_terms`); one that is not makes the claim unsupported, whatever else;
2. support: token overlap with the cited sources and embedding similarity to their best
   sentence; a clear verdict either way is final;
3. only when (2) is unsure, the configured model answers yes or no on that one sentence.

An unsupported claim is removed. When half or more of the claims go, what is left no longer
answers the question: the reply becomes quote-first, the best source sentences copied exactly
with their citations under one framing line.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence

import numpy as np

from ..llm import GenParams, Message
from ..llm.router import CallRecord, Router
from ..retrieval.embed import EmbeddingModel
from ..retrieval.language import STOPWORDS
from ..retrieval.tokenize import tokenize
from . import prompts
from .citations import MARKER, cited_numbers
from .claims import SourceText, claims, missing_terms, sentences
from .context import Source

# measured on the sample course and the course pack (see docs/tutor.md)
OVERLAP_SURE = 0.75  # share of a claim's words in its sources: supported
OVERLAP_LOW = 0.35  # below this (and a low similarity) the claim is unsupported
SIMILARITY_SURE = 0.95  # e5 cosine to the best source sentence: supported
SIMILARITY_LOW = 0.82
OVERLAP_KEEP = 0.55  # unsure and no judge: kept at or above either
SIMILARITY_KEEP = 0.88
QUOTES = 2  # source sentences a quote-first reply copies
_BLANK = re.compile(r"\s[,.;:，。；：]|\(\s*\)|[，。]\s*[，。]|\uFFFD|[\uE000-\uF8FF]")
_STOP = frozenset().union(*STOPWORDS.values())

Judge = Callable[[str, str], "bool | None"]  # (claim, evidence) -> yes / no / no verdict


@dataclasses.dataclass(frozen=True)
class CheckInput:
    """A finished reply and what it was written from."""

    text: str
    question: str
    sources: Sequence[Source]
    language: str  # the reply's


@dataclasses.dataclass(frozen=True)
class Verdict:
    """One claim, checked."""

    claim: str
    supported: bool
    missing: tuple[str, ...] = ()  # numbers, formulas or names not in the sources
    overlap: float = 0.0
    similarity: float = 0.0
    judged: bool = False  # the model decided

    @property
    def reason(self) -> str:
        if self.missing:
            return "not in the sources: " + ", ".join(self.missing)
        return "the model found it unsupported" if self.judged else "too far from the sources"


@dataclasses.dataclass(frozen=True)
class CheckResult:
    """The reply as the student may read it."""

    text: str
    removed: tuple[str, ...]
    verdicts: tuple[Verdict, ...]
    quote_first: bool = False

    @property
    def changed(self) -> bool:
        return bool(self.removed) or self.quote_first


class AnswerChecker:
    """Checks replies against their sources with an embedding model and an optional judge."""

    def __init__(self, embedder: EmbeddingModel, judge: Judge | None = None,
                 max_judged: int = 4, framing: str = "") -> None:
        self.embedder = embedder
        self.judge = judge
        self.max_judged = max_judged
        self.framing = framing

    def check(self, inp: CheckInput) -> CheckResult:
        """Each claim judged; unsupported ones removed; quote-first when too little is left."""
        found = claims(inp.text)
        if not found or not inp.sources:
            return CheckResult(inp.text, (), ())
        evidence = _Evidence(inp.sources, self.embedder)
        judged = 0
        verdicts: list[Verdict] = []
        for claim in found:
            verdict = self._verdict(claim, inp, evidence, judged < self.max_judged)
            judged += verdict.judged
            verdicts.append(verdict)
        removed = tuple(v.claim for v in verdicts if not v.supported)
        if not removed:
            return CheckResult(inp.text, (), tuple(verdicts))
        if 2 * len(removed) >= len(verdicts):
            return CheckResult(self._quote_first(inp, evidence), removed, tuple(verdicts), True)
        return CheckResult(remove_sentences(inp.text, removed), removed, tuple(verdicts))

    def _verdict(self, claim: str, inp: CheckInput, ev: _Evidence, may_judge: bool) -> Verdict:
        cited = [s for s in inp.sources if s.number in cited_numbers(claim)] or list(inp.sources)
        missing = tuple(missing_terms(claim, ev.terms(cited), inp.question))
        if missing:
            return Verdict(claim, False, missing)
        overlap = ev.overlap(claim, cited, inp.question, inp.language)
        similarity, best = ev.similarity(claim, cited)
        if overlap >= OVERLAP_SURE or similarity >= SIMILARITY_SURE:
            return Verdict(claim, True, (), overlap, similarity)
        if overlap < OVERLAP_LOW and similarity < SIMILARITY_LOW:
            return Verdict(claim, False, (), overlap, similarity)
        if self.judge is not None and may_judge:
            answer = self.judge(_bare(claim), " ".join(best))
            if answer is not None:
                return Verdict(claim, answer, (), overlap, similarity, judged=True)
        # unsure and no judge: keep what shares most of its words or meaning with the sources
        keep = overlap >= OVERLAP_KEEP or similarity >= SIMILARITY_KEEP
        return Verdict(claim, keep, (), overlap, similarity)

    def _quote_first(self, inp: CheckInput, ev: _Evidence) -> str:
        """The framing line and the source sentences closest to the question, verbatim."""
        picked = ev.closest(inp.question, QUOTES)
        lines = [f"> {text} [{number}]" for number, text in picked]
        return "\n".join([self.framing, *lines]) if self.framing else "\n".join(lines)


class _Evidence:
    """The sources' sentences, words and vectors, computed once per reply."""

    def __init__(self, sources: Sequence[Source], embedder: EmbeddingModel) -> None:
        self.embedder = embedder
        self.sentences: list[tuple[int, str]] = [
            (s.number, sentence) for s in sources for sentence in sentences(_full_text(s))
            if len(sentence) >= 12]
        self.vectors = embedder.embed_passages(text for _, text in self.sentences)
        self._terms: dict[tuple[int, ...], SourceText] = {}

    def terms(self, cited: Sequence[Source]) -> SourceText:
        key = tuple(s.number for s in cited)
        if key not in self._terms:
            self._terms[key] = SourceText(
                [f"{s.hit.chunk.document_title} {' '.join(s.hit.chunk.section_path)}\n"
                 f"{_full_text(s)}" for s in cited])
        return self._terms[key]

    def overlap(self, claim: str, cited: Sequence[Source], question: str, language: str) -> float:
        words = {w for w in tokenize(MARKER.sub(" ", claim), language) if w not in _STOP}
        if not words:
            return 1.0
        known: set[str] = set(tokenize(question, language))
        for s in cited:
            known.update(tokenize(_full_text(s), language))
            known.update(tokenize(_full_text(s), s.hit.chunk.language or language))
        return len(words & known) / len(words)

    def similarity(self, claim: str, cited: Sequence[Source]) -> tuple[float, list[str]]:
        """Cosine of the claim to its closest source sentence, and the three closest."""
        numbers = {s.number for s in cited}
        rows = [i for i, (n, _) in enumerate(self.sentences) if n in numbers]
        if not rows:
            return 0.0, [_full_text(s) for s in cited][:1]
        query = self.embedder.embed_query(MARKER.sub(" ", claim).strip())
        scores = self.vectors[rows] @ query
        order = np.argsort(-scores)[:3]
        return float(scores[order[0]]), [self.sentences[rows[i]][1] for i in order]

    def closest(self, question: str, k: int) -> list[tuple[int, str]]:
        """The k source sentences nearest the question, none with a blank where maths was."""
        if not self.sentences:
            return []
        scores = self.vectors @ self.embedder.embed_query(question)
        picked = [self.sentences[i] for i in np.argsort(-scores)
                  if not _BLANK.search(self.sentences[i][1])]
        return picked[:k]


def _bare(claim: str) -> str:
    """The claim without its citation markers."""
    return re.sub(r"\s+([.,;:!?])", r"\1", MARKER.sub("", claim)).strip()


def _full_text(source: Source) -> str:
    return source.hit.chunk.text


def remove_sentences(text: str, removed: Sequence[str]) -> str:
    """`text` without the `removed` sentences; list items and lines left empty go too."""
    for sentence in removed:
        text = text.replace(sentence, "\x00", 1)
    lines = []
    for line in text.split("\n"):
        rest = re.sub(r"\s*\x00\s*", " ", line).strip()
        if "\x00" in line and re.fullmatch(r"(?:[-*•]|\d{1,2}[.)])?\s*", rest):
            continue  # the whole item was the removed claim
        lines.append(rest if "\x00" in line else line)
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def model_judge(router: Router, log: list[CallRecord]) -> Judge:
    """The configured model as a yes/no judge of one claim against its closest sentences."""
    def judge(claim: str, evidence: str) -> bool | None:
        prompt = prompts.render("check_claim", evidence=evidence[:1200], claim=claim[:400])
        raw = router.complete("grade", [Message("user", prompt)],
                              GenParams(temperature=0.0, max_tokens=3), log).text
        word = raw.strip().lower()
        if word.startswith(("yes", "sì", "si", "ja", "oui", "sí", "是", "네", "예")):
            return True
        if word.startswith(("no", "nein", "non", "否", "不", "아니")):
            return False
        return None

    return judge
