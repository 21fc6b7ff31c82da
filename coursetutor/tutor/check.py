"""The answer check, a stage of the turn: every claim of a reply against the sources it cites.

For each claim (a sentence that states something; not a question to the student):
1. terms: every number, formula and named term must be in the cited sources or the question
   (`claims.missing_terms`); one that is not makes the claim unsupported, whatever else;
2. support: token overlap with the closest passage of the cited sources (one sentence or two
   neighbouring ones: words gathered from all over a page may say something the page does
   not) and embedding similarity to their best sentence; a clear verdict either way is final.
   Overlap cannot see three things, each of which makes the claim unsupported first: a
   polarity word ("not", "any", "only"; `wording.py`) its passage does not have, or a causal
   word ("because") where its passage gives no reason, a sentence cut short ("is given by
   [1]."), and, in the sources' language, a cosine so low that the passage's words were
   recombined into something it does not say;
3. an unsure claim is kept only when it is close enough to one passage to be a restatement
   of it, and then the configured model, asked yes or no on that one sentence, may still
   remove it. The model never rescues a claim the scores put too far from the sources: a
   small model says yes to fluent, wrong sentences.

An unsupported claim is removed. When half or more of the claims go, or what is left only
introduces ("The rule is:"), it no longer answers the question: the reply becomes
quote-first, the best source sentences copied exactly with their citations under one framing
line.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from ..ingest.formulas import GAP, has_gap
from ..llm import GenParams, Message
from ..llm.router import CallRecord, Router
from ..retrieval.embed import EmbeddingModel
from ..retrieval.language import ANY_STOPWORD
from ..retrieval.tokenize import has_cjk, tokenize
from . import prompts
from .arithmetic import asserted_wrong
from .claims import (
    SourceText,
    claim_numbers,
    claims,
    formulas,
    missing_terms,
    names,
    sentences,
)
from .context import Source
from .exercise import without_reference
from .markers import MARKER, cited_numbers, content_brackets
from .ordinals import unbacked_ordinals
from .tidy import drop_stray
from .wording import causal, dangles, has_opposites, polarity, unbacked_polarity

# measured on the sample course and the course pack (see docs/tutor.md)
OVERLAP_SURE = 0.75  # share of a claim's words in its sources: supported
OVERLAP_LOW = 0.35  # below this (and a low similarity) the claim is unsupported
SIMILARITY_SURE = 0.95  # e5 cosine to the best source sentence: supported
SIMILARITY_LOW = 0.82
OVERLAP_KEEP = 0.55  # unsure and no judge: kept at or above either
SIMILARITY_KEEP = 0.92  # between wrong (0.89-0.90) and right (0.95-0.98) same-language claims
SIMILARITY_ACROSS = 0.86  # the same across languages (wrong claims 0.83-0.86, right 0.85-0.95)
# a sentence in the sources' language this far from every source sentence says something else,
# however many of their words it uses (course pack: every such claim was wrong or invented,
# 0.82-0.85; right ones 0.87 and up)
SIMILARITY_FLOOR = 0.86
WORDED = 20  # letters that make a claim a sentence (not "1." or a formula line)
CUT_SHORT = "an incomplete sentence"
RECOMBINED = "the source's words, not what it says"
UNBACKED = "says what its passage does not: "
SPLIT = "numbers of different passages put together"
WRONG_SUM = "a computation that does not hold"
# a claim citing one source or none must find all its numbers and formulas in one source
# ("20 steps" of one example with the "[0, 4]" and "10^-8" of an exercise is a new, wrong fact)
SPLIT_NUMBERS = True
PASSAGE_CHARS = 300  # the most of a source one claim's words are looked for in
QUOTES = 2  # source sentences a quote-first reply copies
HEADING_SHARE = 0.6  # a sentence with this share of heading or capitalised words is not quoted
_HEADING = re.compile(r"^\s*\d+(?:\.\d+)+\s+\w")  # "2.3.10 Proprietà archimedea"
# a section number before a title ("3.3闭区间上...", "2.1 Limits"): four in one sentence make it
# a table of contents
_SECTION = re.compile(r"(?<![\d.])\d+\.\d+(?![\d.])\s*[^\W\d_]")
CONTENTS = 4
_ANY_WORD = re.compile(r"[^\W\d_]{2,}(?:-[^\W\d_]+)*")
_CAPITAL = re.compile(r"\b[A-Z][^\W\d_]+(?:-[^\W\d_]+)*")
_BLANK = re.compile(r"\s[,.;:，。；：]|\(\s*\)|[，。]\s*[，。]|\uFFFD|[\uE000-\uF8FF]")

Judge = Callable[[str, str], "bool | None"]  # (claim, evidence) -> yes / no / no verdict


@dataclasses.dataclass(frozen=True)
class CheckInput:
    """A finished reply and what it was written from."""

    text: str
    question: str
    sources: Sequence[Source]
    language: str  # the reply's
    # the question as it was searched, translated into the course's language ("" when it
    # was searched as asked): across languages it finds the sentences to quote far better
    search: str = ""


@dataclasses.dataclass(frozen=True)
class Verdict:
    """One claim, checked."""

    claim: str
    supported: bool | None  # None while unsure (before the judge)
    missing: tuple[str, ...] = ()  # numbers, formulas or names not in the sources
    overlap: float = 0.0
    similarity: float = 0.0
    judged: bool = False  # the model decided
    source: int | None = None  # the source that carries it, when it cites another
    note: str = ""  # why it was removed, when neither its terms nor its scores say

    @property
    def reason(self) -> str:
        if self.note:
            return self.note
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
    recited: int = 0  # claims that now cite the source carrying them

    @property
    def changed(self) -> bool:
        return bool(self.removed) or self.quote_first or bool(self.recited)


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
        says = any(v.supported and not _introduces(v.claim) for v in verdicts)
        if removed and (2 * len(removed) > len(verdicts) or not says):
            return CheckResult(self._quote_first(inp, evidence, removed), removed,
                               tuple(verdicts), True)
        return self._result(inp.text, tuple(verdicts), evidence.content)

    def check_terms(self, inp: CheckInput) -> CheckResult:
        """The terms alone: each claim whose numbers, formulas or names are in no source (nor
        the question) is removed, the others kept as worded; never quote-first. For exercise
        help, which words its hints its own way but must not bring in a formula the course
        does not have."""
        found = claims(inp.text)
        if not found or not inp.sources:
            return CheckResult(inp.text, (), ())
        evidence = _Evidence(inp.sources, self.embedder)
        verdicts = []
        for claim in found:
            cites = set(cited_numbers(claim, evidence.content))
            cited = [s for s in inp.sources if s.number in cites] or list(inp.sources)
            if dangles(claim, inp.language):
                verdicts.append(Verdict(claim, False, note=CUT_SHORT))
                continue
            missing = self._missing(claim, cited, inp, evidence)
            if missing and len(cited) < len(inp.sources) and not self._missing(
                    claim, inp.sources, inp, evidence):
                carrier = self._carrier(claim, inp, evidence, [])
                verdicts.append(Verdict(claim, True, source=carrier))
            elif missing:
                verdicts.append(Verdict(claim, False, missing))
            else:  # a claim with terms that cites nothing gets the source holding them
                stated = not cites and bool(formulas(claim) or claim_numbers(claim)
                                            or names(claim))
                verdicts.append(Verdict(claim, True, source=self._carrier(
                    claim, inp, evidence, []) if stated else None))
        if not any(v.supported and not _introduces(v.claim) for v in verdicts):
            # "The equation it solves is:" with the equation gone helps nobody
            verdicts = [v if not v.supported else dataclasses.replace(
                v, supported=False, note=CUT_SHORT) for v in verdicts]
        return self._result(inp.text, tuple(verdicts), evidence.content)

    def _result(self, text: str, verdicts: tuple[Verdict, ...],
                content: frozenset[str] = frozenset()) -> CheckResult:
        """The reply without its unsupported claims, each kept claim citing the source that
        carries it (a claim that cited none gets one when the reply cites it nowhere else)."""
        removed = tuple(v.claim for v in verdicts if not v.supported)
        text = remove_sentences(text, removed)
        # by what is left: a removed claim cites nothing
        cited_anywhere = set(cited_numbers(text, content))
        recited = 0
        for v in verdicts:
            if (not v.supported or v.source is None
                    or v.source in cited_numbers(v.claim, content)):
                continue
            if cited_numbers(v.claim, content):
                text = text.replace(v.claim, recite(v.claim, v.source, content), 1)
            elif v.source not in cited_anywhere or formulas(v.claim) or claim_numbers(v.claim):
                # a formula or a number always shows the page it comes from
                text = text.replace(v.claim, cite(v.claim, v.source), 1)
            else:
                continue
            recited += 1
        if recited:  # a line of markers the statements above now cite themselves goes
            text = drop_stray(text)
        return CheckResult(text, removed, verdicts, recited=recited)

    def _verdict(self, claim: str, inp: CheckInput, ev: _Evidence, may_judge: bool) -> Verdict:
        """Against the sources the claim cites; when they do not carry it, against the whole
        context, and then the claim cites the source that does."""
        cites = set(cited_numbers(claim, ev.content))
        cited = [s for s in inp.sources if s.number in cites] or list(inp.sources)
        verdict, best = self._score(claim, cited, inp, ev)
        if verdict.supported is not True and len(cited) < len(inp.sources):
            wider, wider_best = self._score(claim, inp.sources, inp, ev)
            if wider.supported is True or (verdict.supported is False
                                           and wider.supported is None):
                verdict, best = wider, wider_best
                # the source to cite is the one that carries the claim's terms
                carrier = self._carrier(claim, inp, ev, best)
                if carrier is not None and carrier not in cites:
                    verdict = dataclasses.replace(
                        verdict, source=-1 if verdict.source == -1 else carrier)
        if verdict.supported is not None:
            return self._sourced(verdict, cites, inp, ev, best)
        # unsure: kept only when it restates one passage in most of its words or its meaning
        across = verdict.source == -1
        verdict = dataclasses.replace(verdict, source=None if across else verdict.source)
        keep = verdict.overlap >= OVERLAP_KEEP or verdict.similarity >= (
            SIMILARITY_ACROSS if across else SIMILARITY_KEEP)
        if not keep:
            return dataclasses.replace(verdict, supported=False)
        if self.judge is not None and may_judge:  # the model may still find it unsupported
            answer = self.judge(without_reference(_bare(claim), inp.question),
                                " ".join(text for _, text in best))
            if answer is False:
                return dataclasses.replace(verdict, supported=False, judged=True)
        return self._sourced(dataclasses.replace(verdict, supported=True), cites, inp, ev, best)

    def _sourced(self, verdict: Verdict, cites: set[int], inp: CheckInput, ev: _Evidence,
                 best: Sequence[tuple[int, str]]) -> Verdict:
        """A supported claim that cites nothing, with the source that carries it."""
        if cites or not verdict.supported or verdict.source is not None:
            return verdict
        return dataclasses.replace(verdict, source=self._carrier(verdict.claim, inp, ev, best))

    def _missing(self, claim: str, among: Sequence[Source], inp: CheckInput,
                 ev: _Evidence) -> tuple[str, ...]:
        """The claim's numbers, formulas and names found neither in `among` nor the question
        (and a blank where a source's formula was lost)."""
        missing = tuple(missing_terms(claim, ev.terms(among), inp.question))
        # "the second kind" where the sources name only the first: every other word is theirs
        ranks = unbacked_ordinals(claim, [s.text for s in among], inp.question)
        missing += tuple(f"rank {n}" for n in sorted(ranks))
        return (*missing, GAP) if has_gap(claim) else missing

    def _split(self, claim: str, among: Sequence[Source], inp: CheckInput,
               ev: _Evidence) -> bool:
        """Whether the claim, citing one source or none, has two or more numbers or formulas
        (not the student's own) that only several passages of `among` hold between them."""
        if len(among) < 2 or len(cited_numbers(claim, ev.content)) > 1:
            return False
        named = set(names(claim))  # names may come from anywhere: only numbers and formulas
        asked = SourceText([inp.question])
        terms = [f for f in formulas(claim) if not asked.has_formula(f)]
        terms += [n for n in claim_numbers(claim) if not asked.has_number(n)]
        if len(set(terms)) < 2:
            return False
        return not any(
            not [t for t in missing_terms(claim, ev.terms([s]), inp.question) if t not in named]
            for s in among)

    def _carrier(self, claim: str, inp: CheckInput, ev: _Evidence,
                 best: Sequence[tuple[int, str]]) -> int | None:
        """The source that carries the claim alone: the first, closest sentences' sources
        first, whose text holds all its numbers, formulas and names."""
        by_number = {s.number: s for s in inp.sources}
        order = dict.fromkeys([*(n for n, _ in best if n in by_number), *by_number])
        return next((n for n in order if not self._missing(claim, [by_number[n]], inp, ev)),
                    None)

    def _score(self, claim: str, among: Sequence[Source], inp: CheckInput,
               ev: _Evidence) -> tuple[Verdict, list[tuple[int, str]]]:
        """The verdict of the terms and scores alone (supported None: unsure), and the
        closest source sentences."""
        if dangles(claim, inp.language):
            return Verdict(claim, False, note=CUT_SHORT), []
        if sums := asserted_wrong(claim):  # "70 divided by 3 is equal to 24", the student's
            return Verdict(claim, False, note=f"{WRONG_SUM}: {sums[0].text}"), []
        missing = self._missing(claim, among, inp, ev)
        if missing:
            return Verdict(claim, False, missing), []
        if SPLIT_NUMBERS and self._split(claim, among, inp, ev):
            return Verdict(claim, False, note=SPLIT), []
        overlap, unbacked = ev.overlap(claim, among, inp.question, inp.language)
        similarity, best = ev.similarity(claim, among)
        if unbacked:  # "any", "not", "only" that the passage it rests on does not say
            return Verdict(claim, False, (), overlap, similarity,
                           note=UNBACKED + ", ".join(sorted(unbacked))), best
        cites = set(cited_numbers(claim, ev.content))
        # the source to cite instead, when the claim's own citation does not carry it
        source = best[0][0] if best and cites and best[0][0] not in cites else None
        # across languages words cannot overlap and e5 scores sit lower: only the judge (or,
        # without one, the similarity) may remove such a claim
        across = any(s.hit.chunk.language and s.hit.chunk.language != inp.language
                     for s in among)
        # a formula the passage gives, exactly, said with the passage's own words ("The
        # update formula is given by x[t+1] = x[t] − (∇2f(x[t]))−1 ∇f(x[t])") scores low
        # against a slide's run-on line, and says nothing new
        stated = bool(formulas(claim)) and overlap >= OVERLAP_SURE
        if not across and similarity < SIMILARITY_FLOOR and _worded(claim) and not stated:
            # the passage's words recombined into something it does not say
            return Verdict(claim, False, (), overlap, similarity, note=RECOMBINED), best
        if overlap >= OVERLAP_SURE or similarity >= SIMILARITY_SURE:
            return Verdict(claim, True, (), overlap, similarity, source=source), best
        if not across and overlap < OVERLAP_LOW and similarity < SIMILARITY_LOW:
            return Verdict(claim, False, (), overlap, similarity), best
        return Verdict(claim, None, (), overlap, similarity,
                       source=-1 if across else source), best

    def quote(self, inp: CheckInput, ev: _Evidence | None = None) -> str:
        """The framing line and the source sentences closest to the question, verbatim
        ("" when no sentence is fit to quote)."""
        ev = ev or _Evidence(inp.sources, self.embedder)
        lines = [f"> {text} [{number}]" for number, text in ev.closest(
            inp.question, inp.language, QUOTES, also=inp.search)]
        return "\n".join([self.framing, *lines] if self.framing else lines) if lines else ""

    def _quote_first(self, inp: CheckInput, ev: _Evidence, removed: Sequence[str]) -> str:
        """The quote; with nothing quotable, what is left of the reply, or the best passages."""
        return (self.quote(inp, ev) or remove_sentences(inp.text, removed)
                or " ".join(f"[{s.number}]" for s in inp.sources[:3]))


class _Evidence:
    """The sources' sentences, words and vectors, computed once per reply."""

    def __init__(self, sources: Sequence[Source], embedder: EmbeddingModel) -> None:
        self.embedder = embedder
        self.sentences: list[tuple[int, str]] = [
            (s.number, sentence) for s in sources for sentence in sentences(_full_text(s))
            if len(sentence) >= 12]
        # the words of each source's document title and section headings
        self._headings = {s.number: _content_words(
            f"{s.hit.chunk.document_title} {' '.join(s.hit.chunk.section_path)}",
            s.hit.chunk.language or "en") for s in sources}
        self._languages = {s.number: s.hit.chunk.language or "en" for s in sources}
        # brackets of numbers the sources write themselves ("[1, 2]"): never markers
        self.content = content_brackets(_full_text(s) for s in sources)
        self._vectors: npt.NDArray[np.float32] | None = None
        self._terms: dict[tuple[int, ...], SourceText] = {}
        self._words: dict[tuple[int, str], list[tuple[set[str], str]]] = {}

    @property
    def vectors(self) -> npt.NDArray[np.float32]:
        """The sentences' embeddings, computed when first needed (a terms check needs none)."""
        if self._vectors is None:
            self._vectors = self.embedder.embed_passages(text for _, text in self.sentences)
        return self._vectors

    def terms(self, cited: Sequence[Source]) -> SourceText:
        key = tuple(s.number for s in cited)
        if key not in self._terms:
            self._terms[key] = SourceText(
                [f"{s.hit.chunk.document_title} {' '.join(s.hit.chunk.section_path)}\n"
                 f"{_full_text(s)}" for s in cited])
        return self._terms[key]

    def overlap(self, claim: str, cited: Sequence[Source], question: str,
                language: str) -> tuple[float, set[str]]:
        """Share of the claim's words found in the question or in one passage of the sources
        (a sentence, or two neighbouring ones), and the claim's polarity words ("not", "any",
        "only") that no passage holding that many of its words has. Polarity words are
        compared only where the sources are in the claim's language."""
        words = {w for w in tokenize(MARKER.sub(" ", claim), language) if w not in ANY_STOPWORD}
        rest = words - set(tokenize(question, language))
        passages = [(len(rest & window), text, s.hit.chunk.language or language)
                    for s in cited for window, text in self._passages(s, language)]
        found = max((n for n, _, _ in passages), default=0)
        stated = polarity(claim, language) | causal(claim, language)
        if has_opposites(claim, language):
            stated.add("opposites")
        best = [(text, lang) for n, text, lang in passages if n == found]
        unbacked = set() if not stated or any(lang != language for _, lang in best) else min(
            (unbacked_polarity(claim, text, language) for text, _ in best), key=len,
            default=stated)
        return ((len(words) - len(rest) + found) / len(words) if words else 1.0), unbacked

    def _passages(self, source: Source, language: str) -> list[tuple[set[str], str]]:
        """The words of each passage of a source: a sentence (a line, on slides) and those
        that follow it, up to PASSAGE_CHARS, at least two; in the reply's and the source's
        language."""
        key = (source.number, language)
        if key not in self._words:
            other = source.hit.chunk.language or language
            texts = sentences(_full_text(source))
            words = [set(tokenize(t, language)) | set(tokenize(t, other)) for t in texts]
            windows = []
            for i in range(len(texts)):
                window, size, j = set(words[i]), len(texts[i]), i + 1
                while j < len(texts) and (j == i + 1 or size + len(texts[j]) <= PASSAGE_CHARS):
                    window |= words[j]
                    size += len(texts[j])
                    j += 1
                windows.append((window, " ".join(texts[i:j])))
            self._words[key] = windows
        return self._words[key]

    def similarity(self, claim: str,
                   among: Sequence[Source]) -> tuple[float, list[tuple[int, str]]]:
        """Cosine of the claim to its closest source sentence, and the three closest."""
        numbers = {s.number for s in among}
        rows = [i for i, (n, _) in enumerate(self.sentences) if n in numbers]
        if not rows:
            return 0.0, [(s.number, _full_text(s)) for s in among][:1]
        query = self.embedder.embed_query(_bare(claim))
        scores = self.vectors[rows] @ query
        order = np.argsort(-scores)[:3]
        return float(scores[order[0]]), [self.sentences[rows[i]] for i in order]

    def _heading(self, number: int, text: str) -> bool:
        """The sentence is a heading, not a statement: mostly its document's title and
        headings, a numbered section title ("2.3.10 Proprietà archimedea Teorema 5"), a table
        of contents (four section numbers before titles), a line of capitalised words (a title
        slide) or a page header with a web address. It names the
        topic and says nothing about it."""
        if any(c in text for c in "=∑∫≤≥<>→"):  # a formula is content, whatever surrounds it
            return False
        if _HEADING.match(text) or "http" in text or len(_SECTION.findall(text)) >= CONTENTS:
            return True
        capitalised = _CAPITAL.findall(text)
        if len(capitalised) >= HEADING_SHARE * max(1, len(_ANY_WORD.findall(text))):
            return True
        words = _content_words(text, self._languages.get(number, "en"))
        known = self._headings.get(number, set())
        return bool(words) and len(words & known) >= HEADING_SHARE * len(words)

    def closest(self, question: str, language: str, k: int,
                also: str = "") -> list[tuple[int, str]]:
        """The k source sentences nearest the question (each of its terms a sentence holds
        adds 0.05), none with a blank where maths was, none too short to say anything
        (labels) and none made mostly of the document's title and headings. `also`, the
        question as searched in the sources' language, counts as well: the nearer of the two
        and the more terms of either."""
        if not self.sentences:
            return []
        asked = [question, *([also] if also and also != question else [])]
        scores = np.max([self.vectors @ self.embedder.embed_query(q) for q in asked], axis=0)

        wanted = {t for t in tokenize(question, language) if t not in ANY_STOPWORD}
        searched: dict[str, set[str]] = {}

        def terms(i: int) -> int:
            number, text = self.sentences[i]
            found = len(wanted & set(tokenize(text, language)))
            if len(asked) > 1:
                own = self._languages[number]
                if own not in searched:
                    searched[own] = {t for t in tokenize(also, own) if t not in ANY_STOPWORD}
                found = max(found, len(searched[own] & set(tokenize(text, own))))
            return found

        ranked = sorted((i for i, (_, text) in enumerate(self.sentences) if quotable(text)),
                        key=lambda i: -(float(scores[i]) + 0.05 * terms(i)))
        # statements first; headings only when nothing else is left to quote
        said = [i for i in ranked if not self._heading(*self.sentences[i])]
        return [self.sentences[i] for i in [*said, *(i for i in ranked if i not in said)][:k]]


def _content_words(text: str, language: str) -> set[str]:
    return {w for w in tokenize(text, language) if w not in ANY_STOPWORD and not w.isdigit()}


def _worded(claim: str) -> bool:
    """The claim is a sentence in words, not an enumerator or a formula on its own."""
    return sum(c.isalpha() for c in MARKER.sub("", claim)) >= WORDED


def _introduces(claim: str) -> bool:
    """The claim only introduces what follows it ("The update rule is:")."""
    return MARKER.sub("", claim).rstrip().endswith((":", "\uff1a"))


def quotable(sentence: str) -> bool:
    """A whole source sentence worth quoting: no lost formula, some words to it."""
    if _BLANK.search(sentence) or has_gap(sentence):
        return False
    letters = sum(c.isalpha() for c in sentence)
    if has_cjk(sentence):
        return letters >= 12
    return letters >= 25 and len(sentence.split()) >= 5


def recite(claim: str, number: int, content: frozenset[str] = frozenset()) -> str:
    """The claim citing source `number` instead of what it cited (brackets in `content` are
    the sources' own words and stay)."""
    found = [m for m in MARKER.finditer(claim) if m.group(0) not in content]
    if not found:
        return claim
    first = found[0]

    def drop(m: re.Match[str]) -> str:
        return m.group(0) if m.group(0) in content else ""

    rest = re.sub(r"\s+([.,;:!?])", r"\1", MARKER.sub(drop, claim[first.end():]))
    return re.sub(r" {2,}", " ", f"{claim[:first.start()]}[{number}]{rest}")


def cite(claim: str, number: int) -> str:
    """The claim, which cites nothing, citing source `number` before its final stop."""
    body = claim.rstrip()
    stop = re.search(r"[.!?\u3002\uff01\uff1f]+$", body)
    end = stop.start() if stop else len(body)
    space = "" if has_cjk(body[end - 1 : end]) else " "
    return f"{body[:end]}{space}[{number}]{body[end:]}{claim[len(body):]}"


def _bare(claim: str) -> str:
    """The claim without its citation markers."""
    return re.sub(r"\s+([.,;:!?])", r"\1", MARKER.sub("", claim)).strip()


def _full_text(source: Source) -> str:
    return source.hit.chunk.text


def remove_sentences(text: str, removed: Sequence[str]) -> str:
    """`text` without the `removed` sentences; list items and lines left empty (or holding
    only the removed sentence's citation markers) go too."""
    for sentence in removed:
        text = text.replace(sentence, "\x00", 1)
    lines = []
    for line in text.split("\n"):
        rest = re.sub(r"\s*\x00\s*", " ", line).strip()
        if "\x00" in line and re.fullmatch(r"(?:[-*•]|\d{1,2}[.)])?\s*(?:\[\d+\]\s*)*",
                                            rest):
            continue  # the whole item was the removed claim
        lines.append(rest if "\x00" in line else line)
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def model_judge(router: Router, log: list[CallRecord], wait: bool = True) -> Judge:
    """The configured model as a yes/no judge of one claim against its closest sentences
    (`wait`: False raises ModelBusyError where the in-process model has no free context)."""
    def judge(claim: str, evidence: str) -> bool | None:
        prompt = prompts.render("check_claim", evidence=evidence[:1200], claim=claim[:400])
        raw = router.complete("grade", [Message("user", prompt)],
                              GenParams(temperature=0.0, max_tokens=3, wait=wait), log).text
        word = raw.strip().lower()
        if word.startswith(("yes", "sì", "si", "ja", "oui", "sí", "是", "네", "예")):
            return True
        if word.startswith(("no", "nein", "non", "否", "不", "아니")):
            return False
        return None

    return judge
