"""`coursetutor eval across`: does the e5 cosine tell a translation from another claim?

The statement check compares a statement in the student's language with its evidence sentence
in the source's language by the e5 cosine of their passage embeddings (cross-lingual
thresholds KEEP_ACROSS and DROP_ACROSS, the model judging between them). XQuAD-R gives the
same paragraphs in English, German and Chinese, split into sentences. In paragraphs whose
sentence counts agree across two languages, sentence i of one is a translation of sentence i of
the other:

- `translation` (positive): sentence i in A with sentence i in B: a correct restatement;
- `other` (hard negative): sentence i in A with sentence j != i of the same paragraph in B:
  same topic and names, another claim;
- `question` (negative, reported apart): a question in one language with the sentence that
  answers it in the other: same topic and names, no claim (the nearest the data has to a
  vacuous statement; it is not a statement, so it does not choose the thresholds).

The cosine is symmetric, so A with B and B with A are the same pairs; questions are taken in
both directions. The paragraphs are split in two halves by a seeded shuffle: the thresholds
are chosen on one half (`choose`) and measured on the other (`held_out`).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..retrieval.embed import EmbeddingModel
from ..retrieval.grading import auroc
from .datasets import UnitSet, load_xquadr

LANGUAGES = ("en", "de", "zh")
KINDS = ("translation", "other", "question")
TARGET_KEPT = 0.95  # share of translations the decision without the model must keep
NEGATIVES_KEPT = 0.05  # share of other claims at or above KEEP, at most, in every pair
STEP = 0.005


@dataclasses.dataclass(frozen=True)
class Pair:
    """A source sentence and a text said of it in another language (or the same)."""

    paragraph: str
    kind: str
    source: str
    statement: str


@dataclasses.dataclass(frozen=True)
class Shares:
    """Shares of scores below DROP, between DROP and KEEP (the model judges) and at or above
    KEEP, and below the midpoint (what the check removes without a model)."""

    below: float
    band: float
    above: float
    below_mid: float


def _sentences(units: UnitSet) -> dict[str, list[str]]:
    """Paragraph id -> its sentences in order."""
    out: dict[str, list[str]] = {}
    for u in units.units:
        out.setdefault(u.document, []).append(u.text)
    return out


def _questions(units: UnitSet) -> dict[str, tuple[str, str, int]]:
    """Question id -> (paragraph id, text, index of the first sentence holding its answer)."""
    out = {}
    for q in units.questions:
        first = min(q.gold, key=lambda g: int(g.rsplit("-s", 1)[1]))
        paragraph, index = first.rsplit("-s", 1)
        out[q.id] = (paragraph, q.text, int(index))
    return out


def parallel_pairs(a: UnitSet, b: UnitSet) -> list[Pair]:
    """Every pair of the paragraphs whose sentence counts agree in `a` and `b`."""
    sa, sb = _sentences(a), _sentences(b)
    aligned = {p for p in sa if p in sb and len(sa[p]) == len(sb[p])}
    pairs = [Pair(p, "translation" if i == j else "other", sa[p][i], sb[p][j])
             for p in sorted(aligned) for i, j in itertools.product(range(len(sa[p])), repeat=2)]
    qa, qb = _questions(a), _questions(b)
    for q in sorted(qa.keys() & qb.keys()):
        (pa, ta, ia), (pb, tb, ib) = qa[q], qb[q]
        if pa in aligned and pa == pb:
            pairs += [Pair(pa, "question", sa[pa][ia], tb), Pair(pa, "question", sb[pa][ib], ta)]
    return pairs


def split_halves(paragraphs: Iterable[str], seed: int) -> tuple[set[str], set[str]]:
    """The paragraphs in two halves by a seeded shuffle: (choose, held out)."""
    order = sorted(set(paragraphs))
    random.Random(seed).shuffle(order)
    return set(order[: len(order) // 2]), set(order[len(order) // 2 :])


def band_shares(scores: Sequence[float], keep: float, drop: float) -> Shares:
    """Where the scores fall against DROP, KEEP and their midpoint (the check's bands)."""
    n = max(1, len(scores))
    mid = (keep + drop) / 2
    below = sum(s < drop for s in scores)
    above = sum(s >= keep for s in scores)
    return Shares(round(below / n, 4), round((len(scores) - below - above) / n, 4),
                  round(above / n, 4), round(sum(s < mid for s in scores) / n, 4))


def percentiles(scores: Sequence[float], at: Sequence[int] = (5, 50, 95)) -> list[float]:
    """The nearest-rank percentiles of the scores: the smallest score with at least p% of the
    scores at or below it."""
    ordered = sorted(scores)
    return [ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)] for p in at]


def _grid(value: float) -> float:
    return round(round(value / STEP) * STEP, 3)


def highest_kept(scores: Sequence[float], share: float) -> float:
    """The highest grid value t (steps of STEP) with at least `share` of the scores >= t."""
    t = _grid(max(scores))
    while sum(s >= t for s in scores) < share * len(scores):
        t = _grid(t - STEP)
    return t


def lowest_passed(scores: Sequence[float], share: float) -> float:
    """The lowest grid value t with at most `share` of the scores >= t."""
    t = _grid(min(scores))
    while sum(s >= t for s in scores) > share * len(scores):
        t = _grid(t + STEP)
    return t


def choose_thresholds(positives: Mapping[str, Sequence[float]],
                      negatives: Mapping[str, Sequence[float]]) -> tuple[float, float]:
    """KEEP and DROP for every language pair at once.

    The midpoint (the decision without the model) is the highest that keeps TARGET_KEPT of
    the translations in every pair: it removes as many other claims as it can. KEEP is the
    lowest value (not under the midpoint) that at most NEGATIVES_KEPT of the other claims of
    every pair reach; DROP mirrors it about the midpoint. Between them the model judges.
    """
    mid = min(highest_kept(s, TARGET_KEPT) for s in positives.values())
    keep = max(mid, max(lowest_passed(s, NEGATIVES_KEPT) for s in negatives.values()))
    return keep, _grid(2 * mid - keep)


def score_pairs(pairs: Sequence[Pair], embedder: EmbeddingModel,
                progress: Callable[[int, int], None] | None = None) -> list[float]:
    """The cosine of each pair's passage embeddings, every distinct text embedded once."""
    texts = sorted({t for p in pairs for t in (p.source, p.statement)})
    index = {t: i for i, t in enumerate(texts)}
    vectors = []
    for start in range(0, len(texts), 256):
        vectors.append(embedder.embed_passages(texts[start : start + 256]))
        if progress:
            progress(min(start + 256, len(texts)), len(texts))
    matrix = [row for block in vectors for row in block]
    return [round(float(matrix[index[p.source]] @ matrix[index[p.statement]]), 4)
            for p in pairs]


def _row(scores: Mapping[str, Sequence[float]], keep: float, drop: float) -> dict[str, Any]:
    pos, neg, qs = (scores.get(k, []) for k in KINDS)
    out: dict[str, Any] = {k: len(scores.get(k, [])) for k in KINDS}
    if pos:
        out["auroc"] = round(auroc(pos, neg), 4)
        out["auroc_question"] = round(auroc(pos, qs), 4)
    for kind, values in zip(KINDS, (pos, neg, qs), strict=True):
        if values:
            out[kind + "_shares"] = dataclasses.asdict(band_shares(values, keep, drop))
            out[kind + "_percentiles"] = percentiles(values)
    return out


def rows(scores: Mapping[str, Mapping[str, Sequence[float]]], keep: float, drop: float,
         ) -> dict[str, dict[str, Any]]:
    """Per language pair, and over the cross-language pairs, the figures at KEEP/DROP."""
    out = {name: _row(s, keep, drop) for name, s in scores.items() if name[:2] != name[3:]}
    if out:
        out["overall"] = _row({k: [v for name in out for v in scores[name].get(k, [])]
                               for k in KINDS}, keep, drop)
    return out


def load(folder: Path, limit: int | None) -> dict[str, UnitSet]:
    """The XQuAD-R files of `folder`, each cut to its first `limit` paragraphs."""
    sets = {}
    for language in LANGUAGES:
        units = load_xquadr(folder / f"xquadr-{language}.json", language)
        if limit is not None:
            documents = list(dict.fromkeys(u.document for u in units.units))[:limit]
            keep = set(documents)
            units = UnitSet(language, [u for u in units.units if u.document in keep],
                            [q for q in units.questions if any(g.rsplit("-s", 1)[0] in keep
                                                               for g in q.gold)])
        sets[language] = units
    return sets


def _by_half(pairs: Sequence[Pair], scores: Sequence[float], half: set[str],
             ) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for pair, score in zip(pairs, scores, strict=True):
        if pair.paragraph in half:
            out.setdefault(pair.kind, []).append(score)
    return out


def evaluate(folder: Path, embedder: EmbeddingModel, current: tuple[float, float],
             same: tuple[float, float], limit: int | None = None, seed: int = 7,
             progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Figures at the `current` KEEP/DROP and at those chosen on the other half, per pair.

    `same` are the same-language thresholds, for the reference row (English with English).
    """
    sets = load(folder, limit)
    names = [(a, b) for a, b in itertools.combinations(LANGUAGES, 2)] + [("en", "en")]
    pairs = {f"{a}-{b}": parallel_pairs(sets[a], sets[b]) for a, b in names}
    flat = [p for ps in pairs.values() for p in ps]
    scored = score_pairs(flat, embedder, progress)
    choose, held = split_halves((p.paragraph for p in flat), seed)
    at = 0
    halves: dict[str, dict[str, dict[str, list[float]]]] = {"choose": {}, "held_out": {}}
    for name, ps in pairs.items():
        for half, members in (("choose", choose), ("held_out", held)):
            halves[half][name] = _by_half(ps, scored[at : at + len(ps)], members)
        at += len(ps)
    cross = {n: s for n, s in halves["choose"].items() if n[:2] != n[3:]}
    positives = {n: s["translation"] for n, s in cross.items() if s.get("translation")}
    negatives = {n: s["other"] for n, s in cross.items() if s.get("other")}
    if not positives or not negatives:
        raise InputError("no paragraph with the same sentence count in two languages on the "
                         "choosing half: raise --limit")
    keep, drop = choose_thresholds(positives, negatives)
    negation = {name: negation_shares(ps, name[:2], name[3:]) for name, ps in pairs.items()
                if name[:2] != name[3:]}
    reference = {k: v for k, v in halves["held_out"]["en-en"].items() if k != "translation"}
    return {
        "split": {"seed": seed, "choose": len(choose), "held_out": len(held),
                  "by": "paragraph"},
        "current": {"keep": current[0], "drop": current[1]},
        "chosen": {"keep": keep, "drop": drop},
        "held_out": {"current": rows(halves["held_out"], *current),
                     "chosen": rows(halves["held_out"], keep, drop)},
        "choose": {"current": rows(halves["choose"], *current),
                   "chosen": rows(halves["choose"], keep, drop)},
        "reference": {"en-en": {"keep": same[0], "drop": same[1],
                                **_row(reference, *same)}},
        "negation_flipped": negation,
    }


def negation_shares(pairs: Sequence[Pair], a: str, b: str) -> dict[str, float]:
    """Per kind, the share of pairs whose two sides differ on whether they negate
    (`wording.negates`): what the statement check sends to the model across languages. For a
    correct translation every such pair is a false alarm."""
    from ..tutor.wording import negates

    out = {}
    for kind in ("translation", "other"):
        chosen = [p for p in pairs if p.kind == kind]
        flipped = sum(negates(p.source, a) != negates(p.statement, b) for p in chosen)
        out[kind] = round(flipped / len(chosen), 4) if chosen else 0.0
    return out
