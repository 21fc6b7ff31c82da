"""A translation that leaves out a textbook term is made through English (reply_language.py)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from coursetutor.tutor.reply_language import translate_reply

ROLLE = "la derivata della funzione in c è zero"


class _Translator:
    """A model that translates by a table: (language named in the prompt, text) -> text."""

    def __init__(self, table: dict[tuple[str, str], str]) -> None:
        self.table = table
        self.asked: list[tuple[str, str]] = []

    def complete(self, role: str, messages: Any, params: Any, log: Any) -> SimpleNamespace:
        system, text = messages[0].content, messages[-1].content
        language = next(name for name in ("Korean", "English", "Chinese") if name in system)
        self.asked.append((language, text))
        return SimpleNamespace(text=self.table.get((language, text), ""))


def test_a_translation_that_lost_a_term_is_made_through_english() -> None:
    model = _Translator({
        ("Korean", ROLLE): "c에서 함수의 최소값은 0입니다.",  # "derivata" (도함수) lost
        ("English", ROLLE): "the derivative of the function at c is zero",
        ("Korean", "the derivative of the function at c is zero"): "c에서 함수의 도함수는 0입니다.",
    })
    out = translate_reply(model, ROLLE, "Korean (한국어)", [], source="it")  # type: ignore[arg-type]
    assert out == "c에서 함수의 도함수는 0입니다."
    assert [language for language, _ in model.asked] == ["Korean", "English", "Korean"]


def test_through_english_only_when_it_loses_no_more() -> None:
    model = _Translator({
        ("Korean", ROLLE): "c에서 함수의 최소값은 0입니다.",
        ("English", ROLLE): "it is zero at c",
        ("Korean", "it is zero at c"): "c에서 값은 0입니다.",  # 함수 lost too
    })
    out = translate_reply(model, ROLLE, "Korean (한국어)", [], source="it")  # type: ignore[arg-type]
    assert out == "c에서 함수의 최소값은 0입니다."


def test_a_whole_translation_or_one_from_english_is_made_once() -> None:
    whole = _Translator({("Korean", ROLLE): "c에서 함수의 도함수는 0입니다."})
    assert translate_reply(whole, ROLLE, "Korean (한국어)", [],  # type: ignore[arg-type]
                           source="it") == "c에서 함수의 도함수는 0입니다."
    assert len(whole.asked) == 1
    english = "the derivative of the function at c is zero"
    lossy = _Translator({("Korean", english): "c에서 함수의 값은 0입니다."})
    assert translate_reply(lossy, english, "Korean (한국어)", [],  # type: ignore[arg-type]
                           source="en") == "c에서 함수의 값은 0입니다."
    assert len(lossy.asked) == 1  # from English already: nothing to go through


def test_a_translation_that_ran_away_is_made_through_english() -> None:
    model = _Translator({
        ("Korean", ROLLE): "c에서 함수의 도함수는 0입니다. [2]",  # a marker the text has not
        ("English", ROLLE): "the derivative of the function at c is zero",
        ("Korean", "the derivative of the function at c is zero"): "c에서 함수의 도함수는 0입니다.",
    })
    out = translate_reply(model, ROLLE, "Korean (한국어)", [], source="it")  # type: ignore[arg-type]
    assert out == "c에서 함수의 도함수는 0입니다."
