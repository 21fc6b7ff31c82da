"""Names across scripts (retrieval/names.py) and the search that uses them."""

from __future__ import annotations

import pytest

from coursetutor.retrieval.names import other_spellings, with_spellings


@pytest.mark.parametrize(("text", "language", "spellings"), [
    ("柯西收敛准则是什么？", "zh", ["Cauchy"]),  # Chinese notes write "Cauchy 收敛原理"
    ("What does the Cauchy convergence criterion say?", "zh", ["柯西"]),
    ("롤의 정리는 무엇을 말하나요?", "zh", ["Rolle", "罗尔"]),
    ("롤의 정리는 무엇을 말하나요?", "it", ["Rolle"]),
    ("컨트롤 이론", "ko", []),  # 롤 inside another word is no name
    ("Cosa dice il teorema di De L'Hôpital?", "it", ["Hospital"]),
    ("Cos'è la proprietà archimedea?", "it", ["Archimedes", "archimedeo"]),
    ("the Weierstraß theorem", "en", []),  # ß and ss are one spelling
    ("Newton-Raphson", "en", []),
    ("a Gaussian distribution", "en", []),  # a whole word only
])
def test_other_spellings_in_the_course_s_scripts(text: str, language: str,
                                                 spellings: list[str]) -> None:
    assert other_spellings(text, language) == spellings


def test_every_script_without_a_language() -> None:
    assert other_spellings("Cauchy") == ["柯西", "코시", "コーシー"]


def test_a_query_with_the_other_spellings() -> None:
    assert with_spellings("柯西收敛准则是什么？", "zh") == "柯西收敛准则是什么？ Cauchy"
    assert with_spellings("What is the bisection method?", "en") == (
        "What is the bisection method?")
