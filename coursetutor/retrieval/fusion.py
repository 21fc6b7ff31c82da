"""Rank fusion: weighted reciprocal rank fusion and the keyword-evidence weight.

RRF (Cormack, Clarke & Büttcher 2009):  score(d) = sum over lists i of  w_i / (k + rank_i(d))
with 1-based ranks and k = 60.
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


def keyword_evidence(matched_idf: float, query_idf: float) -> float:
    """Share of the query's IDF mass that the best keyword hit matches (0..1).

    A question whose informative terms do not occur in the course (another language,
    paraphrase) gets a weak keyword list, and fusion should lean on vectors.
    """
    if query_idf <= 0:
        return 0.0
    return max(0.0, min(1.0, matched_idf / query_idf))


def keyword_weight(evidence: float) -> float:
    """RRF weight of the keyword list given its evidence (the vector list weighs 1)."""
    return evidence
