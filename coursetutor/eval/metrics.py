"""Ranking metrics over lists of per-question hit flags."""

from __future__ import annotations

from collections.abc import Sequence


def recall_at(flags: Sequence[Sequence[bool]], k: int) -> float:
    """Share of questions with a relevant result in the top `k` (hit@k)."""
    if not flags:
        return 0.0
    return sum(any(f[:k]) for f in flags) / len(flags)


def mrr_at(flags: Sequence[Sequence[bool]], k: int) -> float:
    """Mean reciprocal rank of the first relevant result within the top `k`."""
    if not flags:
        return 0.0
    total = 0.0
    for f in flags:
        for rank, hit in enumerate(f[:k], start=1):
            if hit:
                total += 1.0 / rank
                break
    return total / len(flags)


def summarize(flags: Sequence[Sequence[bool]]) -> dict[str, float]:
    """R@1, R@5, R@10 and MRR@10, rounded to 4 places."""
    return {
        "R@1": round(recall_at(flags, 1), 4),
        "R@5": round(recall_at(flags, 5), 4),
        "R@10": round(recall_at(flags, 10), 4),
        "MRR@10": round(mrr_at(flags, 10), 4),
    }
