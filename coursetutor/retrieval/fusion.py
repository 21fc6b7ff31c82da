"""Fusing ranked lists: relative score fusion, reciprocal rank fusion, keyword evidence.

Relative score fusion (min-max normalized scores, as in Weaviate's relativeScoreFusion):
    norm_i(d)  = (s_i(d) - min s_i) / (max s_i - min s_i)      (1 when a list has one score)
    score(d)   = sum over lists i of  w_i * norm_i(d)            (a list missing d adds 0)
RRF (Cormack, Clarke & Büttcher 2009):
    score(d)   = sum over lists i of  w_i / (k + rank_i(d))      (1-based ranks, k = 60)
"""

from __future__ import annotations

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


def keyword_evidence(matched_idf: float, query_idf: float) -> float:
    """Share of the query's IDF mass that the best keyword hit matches (0..1).

    A question whose informative terms do not occur in the course (another language,
    paraphrase) gets a weak keyword list, and fusion should lean on vectors.
    """
    if query_idf <= 0:
        return 0.0
    return max(0.0, min(1.0, matched_idf / query_idf))


def keyword_weight(evidence: float) -> float:
    """Weight of the keyword list given its evidence (the vector list weighs 1).

    Linear in the evidence: a keyword list whose best hit matches none of the question's
    informative terms (another language) adds nothing, one that matches all of them counts
    as much as the vectors.
    """
    return max(0.0, min(1.0, evidence))
