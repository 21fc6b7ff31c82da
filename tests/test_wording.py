"""Polarity words and dangling endings, per language."""

from __future__ import annotations

import pytest

from coursetutor.tutor.wording import dangles, polarity, unbacked_polarity


@pytest.mark.parametrize(("claim", "language", "cut"), [
    ("The update rule is given by [1].", "en", True),
    ("La somma della serie di Mengoli è definita come [1] [2].", "it", True),
    ("The direction solves \\( H d = -g [2]", "en", True),  # the formula was never closed
    ("The cost is $O(n^3)$ per step [1].", "en", False),
    ("Newton-Raphson needs one step for a quadratic form [1].", "en", False),
    ("第二类间断点定义为 [1]。", "zh", True),
    ("函数在该点连续 [1]。", "zh", False),
    ("뉴턴 방법은 한 번에 수렴합니다 [1].", "ko", False),
])
def test_dangles(claim: str, language: str, cut: bool) -> None:
    assert dangles(claim, language) is cut


def test_polarity_words_by_language() -> None:
    assert polarity("It converges from any starting point, not only near x* [1].", "en") == {
        "any", "not", "only"}
    assert polarity("La serie non converge mai.", "it") == {"non", "mai"}
    assert polarity("函数在该点不连续。", "zh") == {"不"}
    assert polarity("Nothing here", "xx") == set()


def test_unbacked_polarity() -> None:
    assert unbacked_polarity("It always converges.", "It converges near the minimum.",
                             "en") == {"always"}
    assert unbacked_polarity("It does not converge.", "It may not converge.", "en") == set()
