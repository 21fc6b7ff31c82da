"""`coursetutor eval memory --reuse`: pairs, the threshold rule and the course run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from coursetutor.config import Settings
from coursetutor.eval.memory_reuse import (
    GRID,
    TARGET,
    Scored,
    Side,
    XQuestion,
    choose,
    course_run,
    embed_side,
    load,
    negative_pairs,
    rate,
    sweep,
)
from coursetutor.retrieval import EmbeddingModel
from coursetutor.tutor.reuse_key import meaning

DATASETS = Path(__file__).resolve().parents[2] / "shared" / "datasets"


def q(qid: str, text: str, paragraph: str = "p1", answer: tuple[int, int] = (0, 5)) -> XQuestion:
    return XQuestion(qid, paragraph, "Article", text, answer)


def side(questions: list[XQuestion], vectors: list[list[float]], language: str = "en") -> Side:
    rows = np.array(vectors, dtype=np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return Side(questions, [meaning(x.text, language) for x in questions], rows)


def test_negatives_leave_out_overlapping_answers_and_twin_texts() -> None:
    english = side([q("a", "Who won?", answer=(0, 5)), q("b", "Who lost?", answer=(10, 15)),
                    q("c", "who won", answer=(20, 25)), q("d", "Where?", answer=(3, 8)),
                    q("e", "Who won?", "p2")], [[1, 0]] * 5)
    pairs, left_out = negative_pairs(english)
    assert left_out == {"same_answer": 2, "same_text": 2}  # a-d both ways; a-c both ways
    assert sorted(pairs) == [(0, 1), (1, 0), (1, 2), (1, 3), (2, 1), (2, 3), (3, 1), (3, 2)]


def test_the_threshold_is_the_lowest_within_the_target_on_tuning_articles() -> None:
    tuning = [Scored(0.90, "", False)] + [Scored(0.5, "", False)] * 199  # 0.5% above 0.85
    assert rate(tuning, 0.85, part=False) == pytest.approx(TARGET)
    assert choose([tuning], TARGET) == GRID[0]
    assert choose([tuning]) == 0.9  # within half the target: none above
    worse = [*tuning, Scored(0.88, "", False)]  # 2 of 201 above 0.85, 1 above 0.88
    assert choose([worse], TARGET) == 0.88
    held = [Scored(0.99, "", True)] * 10  # the held-out articles never choose
    assert choose([worse + held], TARGET) == 0.88
    gated = [Scored(0.99, "scope", False)] * 10
    assert choose([[*gated, Scored(0.5, "", False)]]) == GRID[0]
    assert rate(gated, 0.9, gate=False) == 1.0 and rate(gated, 0.9) == 0.0


def test_the_course_run_tells_right_from_wrong_reuse() -> None:
    english = side([q("a", "Who won the match?", answer=(0, 5)),
                    q("b", "Where was the match?", answer=(10, 15))], [[1, 0, 0], [0, 1, 0]])
    german = side([q("a", "Wer gewann das Spiel?", answer=(0, 5)),
                   q("b", "Wer gewann?", answer=(10, 15))], [[1, 0.01, 0], [1, 0.02, 0]], "de")
    chinese = side([q("a", "谁赢了比赛？"), q("b", "比赛在哪里？", answer=(10, 15))],
                   [[0, 0, 1], [0.1, 1, 0]], "zh")
    out = course_run(Settings(reuse_threshold=0.9, reuse_threshold_cross_script=0.85),
                     {"en": english, "de": german, "zh": chinese})
    assert out["de"] == {"asked": 2, "reused_right": 0.5, "reused_wrong": 0.5}
    assert out["zh"] == {"asked": 2, "reused_right": 0.5, "reused_wrong": 0.0}
    assert out["en"] == {"asked": 2, "reused_right": 0.0, "reused_wrong": 0.0}


@pytest.mark.skipif(not (DATASETS / "xquadr-en.json").is_file(), reason="no datasets folder")
def test_xquadr_questions_line_up_across_languages(embedder: EmbeddingModel) -> None:
    found = load(DATASETS, limit=12)
    n = len(found["en"])
    assert n >= 12 and [x.id for x in found["de"]] == [x.id for x in found["en"]]
    assert found["zh"][0].paragraph == found["en"][0].paragraph
    sides = {lang: embed_side(embedder, lang, found[lang]) for lang in ("en", "de", "zh")}
    result = sweep(sides)
    assert result["pairs"]["positives_per_language"] == n
    assert set(result["all"]["false_reuse"]) == {"en-en", "de-en", "zh-en"}
    assert result["chosen"]["threshold"] in GRID
