"""Fusing ranked lists: relative score fusion, reciprocal rank fusion, keyword evidence.

Relative score fusion (min-max normalized scores, as in Weaviate's relativeScoreFusion):
    norm_i(d)  = (s_i(d) - min s_i) / (max s_i - min s_i)      (1 when a list has one score)
    score(d)   = sum over lists i of  w_i * norm_i(d)            (a list missing d adds 0)
RRF (Cormack, Clarke & Büttcher 2009):
    score(d)   = sum over lists i of  w_i / (k + rank_i(d))      (1-based ranks, k = 60)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Mapping, Sequence


def rrf(
    rankings: Mapping[str, Sequence[Hashable]],
    k: int = 60,
    weights: Mapping[str, float] | None = None,
) -> list[tuple[Hashable, float]]:
    """Fuse ranked id lists with (weighted) reciprocal rank fusion, best first.

    Ties are broken by the order of the lists in `rankings`, then by first appearance.
    """
    fused: dict[Hashable, float] = {}
    order: dict[Hashable, tuple[int, int]] = {}
    for li, (name, ids) in enumerate(rankings.items()):
        w = 1.0 if weights is None else weights.get(name, 1.0)
        for rank, item in enumerate(ids, start=1):
            fused[item] = fused.get(item, 0.0) + w / (k + rank)
            order.setdefault(item, (li, rank))
    return sorted(fused.items(), key=lambda kv: (-kv[1], order[kv[0]]))


def min_max(scored: Sequence[tuple[Hashable, float]]) -> dict[Hashable, float]:
    """Scores rescaled to [0, 1] within their list."""
    if not scored:
        return {}
    lo = min(s for _, s in scored)
    hi = max(s for _, s in scored)
    return {item: (s - lo) / (hi - lo) if hi > lo else 1.0 for item, s in scored}


def relative_score_fusion(
    scored: Mapping[str, Sequence[tuple[Hashable, float]]],
    weights: Mapping[str, float] | None = None,
) -> list[tuple[Hashable, float]]:
    """Fuse (item, score) lists by weighted sums of min-max normalized scores, best first.

    Unlike RRF this keeps how far apart candidates are inside each list, so a clear vector
    winner is not overturned by a keyword list that only narrowly prefers another item.
    """
    fused: dict[Hashable, float] = {}
    order: dict[Hashable, tuple[int, int]] = {}
    for li, (name, items) in enumerate(scored.items()):
        w = 1.0 if weights is None else weights.get(name, 1.0)
        for rank, (item, norm) in enumerate(min_max(items).items(), start=1):
            fused[item] = fused.get(item, 0.0) + w * norm
            order.setdefault(item, (li, rank))
    return sorted(fused.items(), key=lambda kv: (-kv[1], order[kv[0]]))


def keyword_weight(evidence: float) -> float:
    """Weight of the keyword list given its evidence (the vector list weighs 1).

    Linear in the evidence: a keyword list whose best hit matches none of the question's
    informative terms (another language) adds nothing, one that matches all of them counts
    as much as the vectors.
    """
    return max(0.0, min(1.0, evidence))


@dataclasses.dataclass(frozen=True)
class Features:
    """What a hybrid search knows about its question when it weighs the two lists."""

    evidence: float  # keyword evidence of the best keyword hit (`keyword_evidence`)
    translated: bool = False  # the keywords are a dictionary translation of the question
    cjk: bool = False  # the keywords are Chinese, Japanese or Korean characters and bigrams


# keyword weight = min(1, gain * evidence ** 0.7) for words (decided on 70% of each
# development set, checked on the other 30%); CJK keywords follow `CJK_RULE` (chosen with
# leave-one-dataset-out validation over the CJK sets: docs/evaluation.md)
EVIDENCE_GAIN = 1.0
EVIDENCE_POWER = 0.7


@dataclasses.dataclass(frozen=True)
class CjkRule:
    """The keyword list's weight when question and course are both Chinese, Japanese or Korean:

        w_bm25 = min(cap, gain * evidence^0.7 * (1 + lift * standout(bm25)))

    `standout` is how far BM25's best score stands above its second (`standout`); with
    `lift` 0 the weight depends on the evidence alone.
    """

    gain: float = 1.5
    lift: float = 0.0
    cap: float = 1.0


# chosen on DRCD, KorQuAD, XQuAD-R zh and the course pack's Chinese notes; each set held back
# in turn met the bar with the rule chosen on the others (`coursetutor eval fusion`)
CJK_RULE = CjkRule(gain=2.0, lift=0.25, cap=2.0)
CJK_EVIDENCE_GAIN = CJK_RULE.gain


def standout(scored: Sequence[tuple[Hashable, float]]) -> float:
    """How far a list's best score stands above its second, in standard deviations:

        standout(s) = (s_(1) - s_(2)) / sd(s),   sd(s) = sqrt(mean((s - mean s)^2))

    (0 for a list of fewer than two scores or whose scores are all equal.) The same spread as
    `spread_scaled`'s, so it reads as the lead of the best item after that scaling.
    """
    values = sorted((s for _, s in scored), reverse=True)
    if len(values) < 2:
        return 0.0
    mean = sum(values) / len(values)
    sd = (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5
    return (values[0] - values[1]) / sd if sd > 0 else 0.0


def spread_scaled(scored: Sequence[tuple[Hashable, float]]) -> dict[Hashable, float]:
    """Scores shifted to start at 0 and divided by their standard deviation.

        norm(d) = (s(d) - min s) / sd(s),   sd(s) = sqrt(mean((s - mean s)^2))

    (1 for every item of a list whose scores are all equal.) Min-max scaling gives every
    list's best item 1 however little it stands out; here a best item far above a crowded
    rest (a large margin for its spread) gets more than one that leads by a hair, so each
    list weighs in by how sure it is of this question.
    """
    if not scored:
        return {}
    values = [s for _, s in scored]
    lo = min(values)
    mean = sum(values) / len(values)
    sd = (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5
    return {item: (s - lo) / sd if sd > 0 else 1.0 for item, s in scored}


def spread_fusion(
    scored: Mapping[str, Sequence[tuple[Hashable, float]]],
    weights: Mapping[str, float] | None = None,
) -> list[tuple[Hashable, float]]:
    """Fuse (item, score) lists by weighted sums of `spread_scaled` scores, best first.

        score(d) = sum over lists i of  w_i * norm_i(d)   (a list missing d adds 0)

    Ties are broken by the order of the lists, then by rank.
    """
    fused: dict[Hashable, float] = {}
    order: dict[Hashable, tuple[int, int]] = {}
    for li, (name, items) in enumerate(scored.items()):
        w = 1.0 if weights is None else weights.get(name, 1.0)
        for rank, (item, norm) in enumerate(spread_scaled(items).items(), start=1):
            fused[item] = fused.get(item, 0.0) + w * norm
            order.setdefault(item, (li, rank))
    return sorted(fused.items(), key=lambda kv: (-kv[1], order[kv[0]]))


def adaptive_keyword_weight(evidence: float, cjk: bool = False, lead: float = 0.0,
                            rule: CjkRule = CJK_RULE) -> float:
    """Weight of the keyword list in `spread_fusion` (the vector list weighs 1).

        words:  w_bm25 = min(1, evidence ** 0.7)
        CJK:    w_bm25 = min(cap, gain * evidence ** 0.7 * (1 + lift * lead))   (`CjkRule`)

    Words: the keyword list counts as much as the vectors only when its best hit matches all
    of the question's IDF mass; the power lifts partial matches (half the IDF mass weighs
    0.62, not 0.5). Chinese, Japanese and Korean keywords (characters and bigrams) count
    more for the same evidence: on CJK text the character-bigram BM25 is the more precise
    retriever (it matches names and numbers exactly) and the small multilingual embedding
    the weaker one. `lead` is the keyword list's `standout`.
    """
    base = float(max(0.0, evidence) ** EVIDENCE_POWER)
    if not cjk:
        return min(1.0, EVIDENCE_GAIN * base)
    return min(rule.cap, rule.gain * base * (1.0 + rule.lift * max(0.0, lead)))


def list_weights(
    lists: Mapping[str, Sequence[tuple[Hashable, float]]], features: Features,
    adaptive: bool = True, rule: CjkRule = CJK_RULE,
) -> dict[str, float]:
    """The weight of each list ("vector", "bm25") of a hybrid search.

    Translated keywords weigh 1 (their evidence is no measure of them). Otherwise the
    keyword list weighs `adaptive_keyword_weight(evidence, cjk, standout(bm25), rule)`
    (`adaptive`, for `spread_fusion`) or `keyword_weight(evidence)` (for RRF); the vector
    list weighs 1.
    """
    if features.translated:
        bm25 = 1.0
    elif adaptive:
        lead = standout(lists.get("bm25", ())) if features.cjk and rule.lift else 0.0
        bm25 = adaptive_keyword_weight(features.evidence, features.cjk, lead, rule)
    else:
        bm25 = keyword_weight(features.evidence)
    return {"vector": 1.0, "bm25": bm25}


def fuse(
    lists: Mapping[str, Sequence[tuple[Hashable, float]]], features: Features,
    rule: CjkRule = CJK_RULE,
) -> list[tuple[Hashable, float]]:
    """The default hybrid fusion: `spread_fusion` with the weights of `list_weights`."""
    return spread_fusion(lists, list_weights(lists, features, rule=rule))
