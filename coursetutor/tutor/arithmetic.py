"""Plain arithmetic written in a text, and whether it is right: "70 divided by 3 is equal to 24",
"3 + 6 + 3 = 15", "$50 / $10 = 5".

A tutor must not repeat a student's wrong computation as true, nor give away an exercise's result
by carrying out its last operation ("12 / 4 = 3 loads"). An equation is read only where both
sides are plain numbers joined by + − × ÷ (or their words); anything with a letter, a power, a
bracket or a percentage next to it is algebra or a formula, and is left alone. Pure functions
over plain text."""

from __future__ import annotations

import dataclasses
import re
from fractions import Fraction

__all__ = ["Equation", "asserted_wrong", "doubts", "equations", "slips", "wrong"]

_NUM = r"\d+(?:[.,]\d+)*"
# an operator between two numbers, as a symbol or words (English, Italian, German, French,
# Spanish, Chinese)
_OPS = (r"[-+*/\u00d7\u00f7\u2212\u22c5\u00b7]|x(?=\s)|divided\s+by|times|multiplied\s+by|plus|"
        r"minus|diviso|per|pi\u00f9|meno|geteilt\s+durch|mal|divis\u00e9\s+par|fois|"
        r"dividido\s+por|por|m\u00e1s|menos|\u9664\u4ee5|\u4e58\u4ee5|\u52a0|\u51cf")
_OP = rf"\s*(?:{_OPS})\s*"
# what says "is": a sign or words, before the result
_IS = (r"\s*(?:=|\u2248|is equal to|is equals? to|equals?|is|gives|makes|"
       r"\u00e8 uguale a|\u00e8|fa|ist gleich|ist|ergibt|est \u00e9gal \u00e0|font|est|"
       r"es igual a|es|da|\u7b49\u4e8e|\u662f)\s*")
_CURRENCY = r"[$\u20ac\u00a3]?"
_EQUATION = re.compile(
    rf"(?<![\w.,^(/)\u00b2\u00b3%$\u20ac\u00a3])(?P<left>{_CURRENCY}{_NUM}(?:{_OP}{_CURRENCY}{_NUM})+)"
    rf"(?P<is>{_IS})(?P<right>-?{_CURRENCY}{_NUM})(?![\w^(\u00b2\u00b3%]|[.,]\d)",
    re.IGNORECASE)
_TOKEN = re.compile(rf"{_CURRENCY}(?P<n>{_NUM})|(?P<op>{_OPS})", re.IGNORECASE)
# a sign just before or after: the numbers are part of a longer formula ("a + 2 + 3 = 6")
_BEFORE = re.compile(r"[-+*/=^\u00d7\u00f7\u2212\u22c5\u00b7<>]\s*$")
_AFTER = re.compile(r"\s*[-+*/^\u00d7\u00f7\u2212\u22c5\u00b7]\s*[\w(]")
_SYMBOL = {"\u2212": "-", "\u00d7": "*", "x": "*", "\u00f7": "/", "\u22c5": "*", "\u00b7": "*",
           "divided by": "/", "times": "*", "multiplied by": "*", "plus": "+", "minus": "-",
           "diviso": "/", "per": "*", "pi\u00f9": "+", "meno": "-", "geteilt durch": "/",
           "mal": "*", "divis\u00e9 par": "/", "fois": "*", "dividido por": "/", "por": "*",
           "m\u00e1s": "+", "menos": "-", "\u9664\u4ee5": "/", "\u4e58\u4ee5": "*",
           "\u52a0": "+", "\u51cf": "-"}


@dataclasses.dataclass(frozen=True)
class Equation:
    """One computation as written: its left side, the result it states, and its value."""

    text: str  # as written: "70 divided by 3 is equal to 24"
    left: str  # in symbols: "70 / 3"
    stated: str  # the result as written: "24"
    value: Fraction | None  # what the left side makes (None: divides by zero)

    @property
    def right(self) -> bool:
        """Does the stated result hold, to the precision it is written with?"""
        stated = _number(self.stated)
        if self.value is None or stated is None:
            return False
        decimals = len(self.stated.split(".", 1)[1]) if "." in self.stated else 0
        # "70 / 24 = 2.92" and "70 / 3 = 23" are rounded, not wrong
        return abs(self.value - stated) <= Fraction(1, 2) * Fraction(1, 10 ** decimals)


def _number(token: str) -> Fraction | None:
    """A number as written: "2,000" and "2000" are 2000, "2,5" is 2.5, "1.618" is 1.618."""
    token = token.lstrip("$\u20ac\u00a3")
    if re.fullmatch(r"-?\d{1,3}(?:,\d{3})+(?:\.\d+)?", token):
        token = token.replace(",", "")
    elif token.count(",") == 1 and "." not in token:
        token = token.replace(",", ".")
    try:
        return Fraction(token)
    except (ValueError, ZeroDivisionError):
        return None


def _evaluate(tokens: list[str]) -> Fraction | None:
    """The value of `number (op number)*` with × and ÷ before + and −; None on ÷ 0."""
    current = _number(tokens[0])
    total, sign = Fraction(0), 1
    for op, token in zip(tokens[1::2], tokens[2::2], strict=True):
        value = _number(token)
        if current is None or value is None or (op == "/" and value == 0):
            return None
        if op == "*":
            current *= value
        elif op == "/":
            current /= value
        else:
            total, sign, current = total + sign * current, (1 if op == "+" else -1), value
    return None if current is None else total + sign * current


def equations(text: str) -> list[Equation]:
    """Every plain computation `text` states, in order."""
    out: list[Equation] = []
    for m in _EQUATION.finditer(text):
        if _BEFORE.search(text, 0, m.start()) or _AFTER.match(text, m.end()):
            continue
        tokens: list[str] = []
        for t in _TOKEN.finditer(m.group("left")):
            if t.group("n") is not None:
                tokens.append(t.group("n"))
            else:
                word = " ".join(t.group("op").lower().split())
                tokens.append(_SYMBOL.get(word, word))
        if len(tokens) < 3 or len(tokens) % 2 == 0:
            continue
        stated = m.group("right").lstrip("$\u20ac\u00a3")
        out.append(Equation(m.group(0).strip(), " ".join(tokens), stated, _evaluate(tokens)))
    return out


def wrong(text: str) -> list[Equation]:
    """The computations of `text` whose stated result does not hold."""
    return [e for e in equations(text) if not e.right]


# what makes a sentence question a computation rather than state it: a question, a negation,
# a call to check it, or the student's own words reported ("70 ÷ 3 is not 24", "check
# 70 ÷ 3 = 24 again", "you wrote 70 ÷ 3 = 24")
_DOUBTS = re.compile(
    r"[?\uff1f]|\b(?:not|isn'?t|no|never|check|verify|recheck|re-check|double-check|wrong|"
    r"incorrect|mistake|error|you wrote|you said|you got|you found|your|non|hai scritto|"
    r"controlla|verifica|errore|sbagliat[oa]|nicht|kein|pr\u00fcf\w*|"
    r"falsch|fehler|pas|v\u00e9rifie\w*|erreur|faux|revisa|comprueba|error|incorrecto)\b"
    r"|\u4e0d|\u6ca1|\u9519|\u68c0\u67e5|\u6838\u5bf9|\uc544\ub2c8|\uc54a|\ud2c0\ub9b0|\ud655\uc778",
    re.IGNORECASE)


def doubts(text: str) -> bool:
    """Does `text` ask, negate, call for a check or report the student's words?"""
    return _DOUBTS.search(text) is not None


_SENTENCE_END = re.compile(r"(?<=[.!?\u3002\uff01\uff1f])\s+|\n+")


def slips(message: str) -> list[Equation]:
    """The computations that do not hold which a message states as true, sentence by
    sentence ("That seems too low, no? So 70 divided by 3 is equal to 24.")."""
    return [e for part in _SENTENCE_END.split(message) for e in asserted_wrong(part)]


def asserted_wrong(sentence: str) -> list[Equation]:
    """The computations that do not hold which `sentence` states as true: none when it asks
    about them, negates them or asks to check them."""
    found = wrong(sentence)
    return [] if not found or doubts(sentence) else found
