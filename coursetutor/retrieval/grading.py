"""Is the retrieved evidence good enough to answer? (the corrective-RAG grade)

    vector_part = clip((cos_1 - COS_FLOOR) / COS_SPAN, 0, 1)
    evidence    = (1 - KEYWORD_SHARE) * vector_part + KEYWORD_SHARE * keyword_evidence

cos_1 is the best passage's cosine to the question, keyword_evidence the share of the
question's BM25 IDF mass matched by the best keyword hit. e5 cosines sit high (unrelated text
scores 0.72-0.80), hence the floor. On ClapNQ (answerable passages as the course) this score
separates answerable from unanswerable questions with an AUROC of 0.985, against 0.92 for the
keyword evidence alone.

Chinese, Japanese and Korean questions on passages in the same script: e5 scores any two
texts of one CJK language higher still (DRCD questions on other articles' paragraphs: median
0.85 against 0.78 in English), while the character-bigram keywords stay precise (median
evidence 0.53 on their own paragraphs against 0.20 on others). There the floor is 0.81 and
the keywords weigh half (`cjk=True`): on 200 + 200 DRCD and KorQuAD questions asked of a
course with and without their article, unanswerable ones graded `correct` fell from 37% and
4.5% to 1.5% and 1.0%, answerable ones graded `incorrect` went from 0% and 2.0% to 0.5% and
2.5% (docs/evaluation.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from ..types import Hit

Grade = Literal["correct", "ambiguous", "incorrect"]
GRADES: tuple[Grade, ...] = ("correct", "ambiguous", "incorrect")

COS_FLOOR = 0.80
COS_SPAN = 0.10
KEYWORD_SHARE = 0.2
CROSS_LINGUAL_SHIFT = 0.04
CJK_COS_FLOOR = 0.81
CJK_KEYWORD_SHARE = 0.5


def evidence_score(hits: Sequence[Hit], keyword_evidence: float,
                   cross_lingual: bool = False, cjk: bool = False) -> float:
    """How well the hits support an answer, in [0, 1] (0 when nothing was found).

    A question in another language than the passages scores lower cosines for the same
    support; `cross_lingual` lowers the floor by CROSS_LINGUAL_SHIFT. A Chinese, Japanese or
    Korean question on passages of its own language (`cjk`) scores higher cosines for the same
    support: the floor is CJK_COS_FLOOR and the keywords weigh CJK_KEYWORD_SHARE.
    """
    if not hits:
        return 0.0
    best_cos = max((h.scores.get("vector") or 0.0) for h in hits)
    floor = CJK_COS_FLOOR if cjk and not cross_lingual else COS_FLOOR
    floor -= CROSS_LINGUAL_SHIFT if cross_lingual else 0.0
    share = CJK_KEYWORD_SHARE if cjk and not cross_lingual else KEYWORD_SHARE
    vector_part = min(1.0, max(0.0, (best_cos - floor) / COS_SPAN))
    return (1 - share) * vector_part + share * max(0.0, min(1.0, keyword_evidence))


def grade(score: float, correct_at: float, incorrect_below: float) -> Grade:
    """`correct` at or above `correct_at`, `incorrect` below `incorrect_below`, else ambiguous."""
    if score >= correct_at:
        return "correct"
    if score < incorrect_below:
        return "incorrect"
    return "ambiguous"


def auroc(positives: Sequence[float], negatives: Sequence[float]) -> float:
    """Probability that a random positive scores above a random negative (ties count half)."""
    if not positives or not negatives:
        return float("nan")
    wins = 0.0
    for p in positives:
        for n in negatives:
            wins += 1.0 if p > n else 0.5 if p == n else 0.0
    return wins / (len(positives) * len(negatives))
