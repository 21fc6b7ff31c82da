"""The progress-aware rerank and the tier score: pure functions over hits."""

from __future__ import annotations

import pytest

from coursetutor.retrieval.class_rerank import (
    Focus,
    ProgressWeights,
    age,
    factor,
    in_focus,
    rerank,
    slide_page,
    tier_score,
)
from coursetutor.types import Chunk, Hit, Locator

W = ProgressWeights(class_boost=0.5, recency_boost=0.4, half_life=60.0, slide_boost=0.3,
                    slide_window=2)
FOCUS = Focus("class-c1", now=600.0, page=12, slides_document="deck")


def hit(doc: str, score: float, locator: Locator, cos: float = 0.85,
        bm25: float | None = 2.0) -> Hit:
    chunk = Chunk(f"{doc}:{locator}", "t", "c", doc, doc.title(), "transcript", "", (), 2,
                  "en", locator, "text", f"h-{doc}-{locator}", 0)
    return Hit(chunk, score, {}, {"vector": cos, "bm25": bm25}, locator)


def test_material_outside_the_class_keeps_its_score() -> None:
    h = hit("lecture-3", 2.0, Locator(page=4))
    assert factor(h, FOCUS, W) == 1.0
    assert not in_focus(h, FOCUS)


def test_what_was_just_said_gets_the_whole_recency_boost() -> None:
    h = hit("class-c1", 1.0, Locator(start=580.0, end=600.0))
    assert age(h, FOCUS) == 0.0
    assert factor(h, FOCUS, W) == pytest.approx(1 + 0.5 + 0.4)


def test_recency_halves_every_half_life() -> None:
    h = hit("class-c1", 1.0, Locator(start=500.0, end=540.0))
    assert age(h, FOCUS) == 60.0
    assert factor(h, FOCUS, W) == pytest.approx(1 + 0.5 + 0.2)


@pytest.mark.parametrize(("anchor", "share"), [("slide-12", 1.0), ("slide-11", 2 / 3),
                                               ("slide-14", 1 / 3), ("slide-15", 0.0),
                                               ("intro", 0.0)])
def test_slide_pages_near_the_current_one(anchor: str, share: float) -> None:
    h = hit("class-c1", 1.0, Locator(start=0.0, end=10.0, anchor=anchor))
    recency = 0.4 * 2.0 ** (-590.0 / 60.0)
    assert factor(h, FOCUS, W) == pytest.approx(1 + 0.5 + recency + 0.3 * share)


def test_deck_pages_count_as_the_class() -> None:
    h = hit("deck", 1.0, Locator(page=13))
    assert slide_page(h, FOCUS) == 13
    assert in_focus(h, FOCUS)
    assert factor(h, FOCUS, W) == pytest.approx(1 + 0.3 * 2 / 3)


def test_rerank_orders_by_boosted_score_and_explains_it() -> None:
    old = hit("lecture-3", 2.0, Locator(page=1))
    said = hit("class-c1", 1.5, Locator(start=590.0, end=600.0))
    out = rerank([old, said], FOCUS, W)
    assert [h.chunk.document_id for h in out] == ["class-c1", "lecture-3"]
    assert out[0].score == pytest.approx(1.5 * 1.9)
    assert out[0].scores["fused"] == 1.5
    assert out[0].scores["progress"] == pytest.approx(1.9)
    assert out[1].scores["progress"] == 1.0


def test_recency_does_not_drown_content() -> None:
    """A passage said just now that barely matches stays below one that matches well."""
    weak_now = hit("class-c1", 0.5, Locator(start=590.0, end=600.0))
    strong_old = hit("class-c1", 1.5, Locator(start=0.0, end=20.0))
    assert [h.score for h in rerank([weak_now, strong_old], FOCUS, W)] == pytest.approx(
        [1.5 * factor(strong_old, FOCUS, W), 0.5 * 1.9])


def test_tier_score_is_the_grade_of_the_class_passages() -> None:
    other = hit("lecture-3", 3.0, Locator(page=1), cos=0.90, bm25=10.0)
    mine = hit("class-c1", 1.0, Locator(start=0.0, end=5.0), cos=0.85, bm25=5.0)
    # vector part (0.85 - 0.80) / 0.10 = 0.5; keyword evidence 0.6 scaled by 5 / 10
    assert tier_score([other, mine], FOCUS, 0.6) == pytest.approx(0.8 * 0.5 + 0.2 * 0.3)
    assert tier_score([other], FOCUS, 0.6) == 0.0
