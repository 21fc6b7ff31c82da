"""The live TutorialVQA's figures from its records: the tier bar decides which ranking counts,
and the sweep reads every bar from one run."""

from __future__ import annotations

from coursetutor.eval.live import Record, best_bar, hit_at, sweep, table
from coursetutor.tutor.tiers import Bar

HIT, MISS = (True,), (False,)


def record(qid: str, delay: float, in_class: tuple[bool, ...], widened: tuple[bool, ...],
           score: float, share: float) -> Record:
    return Record(qid, delay, MISS, in_class, widened, score, share, False)


# two questions asked in their lecture (the class ranking is right), two elsewhere (the
# widened ranking is right); the class's share of the course's best tells them apart
RECORDS = [
    record("a", 30.0, HIT, MISS, 0.9, 0.8),
    record("b", 600.0, HIT, MISS, 0.2, 0.5),
    record("a", -1.0, MISS, HIT, 0.6, 0.4),
    record("b", -1.0, MISS, HIT, 0.1, 0.1),
]


def test_the_bar_picks_the_ranking_that_counts() -> None:
    own = RECORDS[:2]
    assert hit_at(own, 1, "live", Bar(0.0, 0.45)) == 1.0
    assert hit_at(own, 1, "live", Bar(0.35, 0.45)) == 0.5  # "b": evidence under the bar
    assert hit_at(own, 1, "plain") == 0.0
    rows = table(RECORDS, Bar(0.0, 0.45))
    assert (rows["overall"]["with"]["hit@1"], rows["elsewhere"]["with"]["hit@1"],
            rows["elsewhere"]["class_tier"]) == (1.0, 1.0, 0.0)


def test_the_sweep_reads_every_bar_and_the_best_mean_is_the_first_of_its_equals() -> None:
    rows = sweep(RECORDS, ratios=(0.0, 0.3, 0.45, 0.6))
    assert len(rows) == 4 * 17
    at = {(r["threshold"], r["ratio"]): r for r in rows}
    assert at[(0.0, 0.0)] == {"threshold": 0.0, "ratio": 0.0, "in_lecture": 1.0,
                              "elsewhere": 0.0, "mean": 0.5}
    assert at[(0.0, 0.45)]["mean"] == 1.0 and at[(0.0, 0.6)]["in_lecture"] == 0.5
    assert best_bar(rows) == at[(0.0, 0.45)]  # thresholds 0 to 0.2 tie there: the lowest


def test_without_questions_asked_elsewhere_the_mean_is_the_lectures() -> None:
    rows = sweep(RECORDS[:2], ratios=(0.45,))
    assert all(r["mean"] == r["in_lecture"] and r["elsewhere"] == 0.0 for r in rows)
