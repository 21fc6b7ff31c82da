"""Knowledge refinement (corrective RAG): of each retrieved passage, keep the sentences that
matter for the question and the formulas they lead to, so a small model reads a few hundred
tokens of evidence instead of whole chunks.

A sentence's weight is the sum of the IDF (over the context's own sentences) of the question
terms it holds: idf(t) = ln(1 + n / df(t)). The best sentence of each of the first passages is
kept when it holds a question term, then the best of the rest until the budget is spent; a kept
sentence that ends in ':' or is followed by a formula brings that formula along.

A passage in another language than the question shares none of its words (an Italian question
in a course with English and Italian notes is searched as it is, untranslated): words cannot
tell what in it matters, and the search that found it already judged it by meaning. Its
leading sentences are kept, up to an even share of the budget, instead of dropping it.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable, Sequence

from ..retrieval.language import ANY_STOPWORD
from ..retrieval.tokenize import tokenize
from ..types import Hit
from .claims import formulas

Counter = Callable[[str], int]
_UNIT = re.compile(r"(?<=[.!?。！？])\s+|\n+")
ANCHORED = 2  # the best sentence of this many leading passages is always kept
GAP = " … "


@dataclasses.dataclass(frozen=True)
class Unit:
    """One sentence or line of a passage."""

    hit: int  # index of its passage
    index: int  # position in the passage
    text: str
    weight: float
    maths: bool  # holds a formula


def units(hits: Sequence[Hit], question: str, language: str) -> list[Unit]:
    """Every sentence of the passages with its weight for the question."""
    split = [[u.strip() for u in _UNIT.split(h.chunk.text) if u.strip()] for h in hits]
    terms = [[set(tokenize(u, h.chunk.language or language)) for u in parts]
             for h, parts in zip(hits, split, strict=True)]
    wanted = {t for t in tokenize(question, language) if t not in ANY_STOPWORD}
    n = sum(len(parts) for parts in split) or 1
    df = {t: sum(t in ts for group in terms for ts in group) for t in wanted}
    idf = {t: math.log(1 + n / df[t]) for t in wanted if df[t]}
    return [Unit(i, j, text, sum(idf.get(t, 0.0) for t in terms[i][j]), bool(formulas(text)))
            for i, parts in enumerate(split) for j, text in enumerate(parts)]


def refine(hits: Sequence[Hit], question: str, language: str, budget: int,
           count: Counter, translated: bool = False) -> list[str]:
    """Per passage, the sentences kept for the question (in their order, gaps marked); ""
    for a passage with nothing that matters. `translated`: the question is a translation
    of the student's, and the first passages stay even without a word of it."""
    foreign = {i for i, h in enumerate(hits)
               if h.chunk.language and language and h.chunk.language != language}
    every = units(hits, question, language)
    found = [u for u in every if u.hit not in foreign]
    by_hit: dict[int, list[Unit]] = {}
    for u in every:
        by_hit.setdefault(u.hit, []).append(u)
    kept: set[tuple[int, int]] = set()
    used = 0

    def take(u: Unit) -> None:
        nonlocal used
        for v in _with_formula(u, by_hit[u.hit]):
            if (v.hit, v.index) not in kept and (used + count(v.text) <= budget or not kept):
                kept.add((v.hit, v.index))
                used += count(v.text)

    share = budget // max(1, len(hits))
    for i in sorted(foreign & set(by_hit)):
        lead = 0
        for u in by_hit[i]:
            if lead and lead + count(u.text) > share:
                break
            kept.add((u.hit, u.index))
            lead += count(u.text)
        used += lead
    anchors = [max(by_hit[i], key=lambda u: (u.weight, -u.index))
               for i in sorted(set(by_hit) - foreign)[:ANCHORED]]
    for u in sorted(anchors, key=lambda u: -u.weight) + sorted(
            found, key=lambda u: (-u.weight, u.hit, u.index)):
        if u.weight <= 0 or used >= budget:
            break
        take(u)
    if translated:
        # ranked first by the search, yet without a word of the translated question (its
        # words may not be the material's: 二分法 came back as "binary search", not
        # "bisection"): its first sentence
        for u in anchors:
            if u.weight <= 0 and not any(k[0] == u.hit for k in kept):
                take(by_hit[u.hit][0])
    if not kept and anchors:  # no question term anywhere: the best passage's first sentence
        take(anchors[0])
    return [_join([u for u in by_hit.get(i, []) if (u.hit, u.index) in kept])
            for i in range(len(hits))]


def _with_formula(u: Unit, passage: list[Unit]) -> list[Unit]:
    """The unit, and the formula right after it when it introduces one."""
    nxt = passage[u.index + 1] if u.index + 1 < len(passage) else None
    if nxt is not None and (u.text.endswith(":") or nxt.maths):
        return [u, nxt]
    return [u]


def _join(kept: list[Unit]) -> str:
    out = ""
    for prev, u in zip([None, *kept], kept, strict=False):
        out += (GAP if prev is not None and u.index != prev.index + 1 else
                (" " if prev is not None else "")) + u.text
    return out.strip()
