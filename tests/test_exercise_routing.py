"""A concept question whose best passage is an exercise is exercise help only when it asks
what the exercise asks, not when the exercise's title has its words."""

from __future__ import annotations

import pytest

from coursetutor.tutor.categorize import Categorization
from coursetutor.tutor.evidence import Evidence
from coursetutor.tutor.stages.find import _about_an_exercise
from coursetutor.types import Chunk, Hit, Locator

EXERCISE = ("Let `f(x) = x^3 - 2x - 5` (a classic test equation with a single real root). "
            "a) Starting from `x_0 = 2` and `x_1 = 3`, compute the secant iterates `x_2`, "
            "`x_3`, `x_4` and `x_5`. Give `x_2` also as an exact fraction.")


def _evidence(doc_type: str) -> Evidence:
    chunk = Chunk(id="c1", tenant="t", course="c", document_id="d1",
                  document_title="Exercise sheet 1: Root finding", doc_type=doc_type,  # type: ignore[arg-type]
                  topic="", section_path=("Exercise 4: The secant method",), difficulty=0,
                  language="en", locator=Locator(page=1), text=EXERCISE, content_hash="h",
                  ordinal=1)
    return Evidence([Hit(chunk, 1.0, {}, {}, Locator(page=1))], 0.9, "correct")


@pytest.mark.parametrize(("question", "exercise"), [
    ("What is the secant method?", False),  # the title's words: the lecture answers it
    ("What does the secant method need to start?", False),
    ("Starting from x_0 = 2 and x_1 = 3, what are the secant iterates?", True),
    ("Compute x_2 as an exact fraction", True),
])
def test_a_question_is_exercise_help_when_it_asks_what_the_exercise_asks(
        question: str, exercise: bool) -> None:
    cat = Categorization("lecture", "definition", True, "en")
    assert _about_an_exercise(cat, _evidence("exercise"), question, "en") is exercise


def test_a_lecture_passage_first_is_never_exercise_help() -> None:
    cat = Categorization("lecture", "concept", True, "en")
    assert not _about_an_exercise(cat, _evidence("lecture"),
                                  "Compute x_2 as an exact fraction", "en")
