"""Class progress (slide, running summary, topics) and the question rewrite it feeds."""

from __future__ import annotations

import pytest

from coursetutor.live.rewrite import is_referring, key_words, with_progress
from coursetutor.live.standing import (
    Spoken,
    build_progress,
    class_document,
    recent,
    spoken_of,
    summarize,
    topics_of,
)
from coursetutor.types import Locator

SAID = [
    Spoken("Welcome back. Today we look at kernel methods.", 0.0, 20.0, 10),
    Spoken("A kernel function computes an inner product in a feature space.", 700.0, 730.0, 11),
    Spoken("The Gaussian kernel and the polynomial kernel are the two kernels we use.",
           1100.0, 1130.0, 12),
    Spoken("The polynomial kernel has a degree; the Gaussian kernel has a width.",
           1140.0, 1170.0, 12),
]
TITLES = {10: "Overview", 11: "Kernel functions", 12: "Gaussian and polynomial kernels"}


def test_recent_keeps_the_last_fifteen_minutes_in_order() -> None:
    assert [s.start for s in recent(SAID, 1200.0)] == [700.0, 1100.0, 1140.0]
    assert [s.start for s in recent(SAID, 710.0)] == [0.0, 700.0]  # not what is said later


def test_progress_at_a_moment() -> None:
    p = build_progress("c1", 1200.0, SAID, slide_titles=TITLES)
    assert (p.slide_page, p.slide_title) == (12, "Gaussian and polynomial kernels")
    assert p.topics == ("Gaussian and polynomial kernels", "Kernel functions")
    assert "Welcome back" not in p.summary and "Gaussian kernel" in p.summary
    assert p.document_id == class_document("c1") == "class-c1"
    assert p.line() == "now: slide 12 — Gaussian and polynomial kernels"
    assert p.focus().now == 1200.0 and p.focus().page == 12


def test_the_teachers_slide_wins_over_the_last_one_spoken_over() -> None:
    p = build_progress("c1", 1200.0, SAID, slide_page=11, slide_titles=TITLES)
    assert p.line() == "now: slide 11 — Kernel functions"


def test_no_slide_known_yet() -> None:
    p = build_progress("c1", 30.0, [Spoken("Hello everyone and welcome to class.", 0, 5)])
    assert p.slide_page is None and p.line() == "" and p.topics == ()


def test_summary_is_extractive_and_bounded() -> None:
    text = summarize([s.text for s in SAID], chars=160)
    assert len(text) <= 160
    assert all(part.strip() in " ".join(s.text for s in SAID) for part in text.split(". "))
    assert summarize([]) == ""


def test_spoken_of_a_transcript_chunk() -> None:
    s = spoken_of("x", Locator(start=3.0, end=9.0, anchor="slide-4"))
    assert s == Spoken("x", 3.0, 9.0, 4)
    assert spoken_of("x", Locator(page=2)) is None
    assert topics_of([Spoken("x", 0, 1, 99)], TITLES) == ()


@pytest.mark.parametrize(("question", "referring"), [
    ("and the other one?", True),
    ("why does that diverge?", True),
    ("what did he just say?", True),
    ("kernels?", True),
    ("e l'altro?", True),
    ("How does the secant method converge for a smooth function?", False),
    ("how do i change the canvas size?", False),
])
def test_referring_questions(question: str, referring: bool) -> None:
    language = "it" if question.startswith("e ") else "en"
    assert is_referring(question, language) is referring


def test_a_referring_question_gets_the_progress() -> None:
    p = build_progress("c1", 1200.0, SAID, slide_titles=TITLES)
    out = with_progress("and the other one?", p)
    assert out.startswith("and the other one? Gaussian and polynomial kernels")
    assert "kernel" in out.split("kernels", 1)[1]
    standalone = "How does the secant method converge for a smooth function?"
    assert with_progress(standalone, p) == standalone
    assert with_progress("and the other one?", None) == "and the other one?"


def test_key_words_are_the_most_repeated() -> None:
    assert key_words("kernel kernels width kernel degree width", "en", 2) == ["kernel", "width"]
