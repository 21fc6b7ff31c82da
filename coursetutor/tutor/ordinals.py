"""Which one of a numbered kind a sentence names: "second kind", "first-order", "seconda
specie", "第二类", "제2종", as numbers, in any language.

A statement that says "a discontinuity of the second kind" where its sentence defines the
first kind shares nearly every word and most of its embedding with that sentence; the
ordinal is the whole difference. Ordinals count only before a noun of kind, order or rank
("first, compute ..." is a discourse word, not a claim).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_EN = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5}
_IT = {"prim": 1, "second": 2, "terz": 3, "quart": 4, "quint": 5}
_DE = {"erst": 1, "zweit": 2, "dritt": 3, "viert": 4, "fünft": 5}
_FR = {"premi": 1, "deuxi": 2, "second": 2, "troisi": 3, "quatri": 4, "cinqui": 5}
_ES = {"primer": 1, "segund": 2, "tercer": 3, "cuart": 4, "quint": 5}
_CJK_DIGITS = {"一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9,
               "十": 10, "两": 2}
_KO = {"첫": 1, "두": 2, "세": 3, "네": 4, "다섯": 5}
_STEMS = {**_ES, **_FR, **_DE, **_IT, **_EN}  # the longer stems of one number first

# the nouns an ordinal ranks: kind, type, order, class, species, derivative, case...
_NOUNS = (r"kind|type|order|class|sort|species|derivative|case|degree|condition|"
          r"specie|tipo|ordine|classe|grado|derivata|caso|art|ordnung|klasse|ableitung|grades?|"
          r"espèce|ordre|dérivée|cas|clase|orden|derivada|especie")
_LATIN = re.compile(
    rf"\b({'|'.join(sorted(_STEMS, key=len, reverse=True))})[a-zèéà]*[\s-]+(?:{_NOUNS})\b",
    re.IGNORECASE)
_CJK = re.compile(r"第\s*([一二三四五六七八九十两]+|\d+)\s*[类類种種型阶階级級]")
_KO_NUMBERED = re.compile(r"제\s*(\d+)\s*[종형계류]")
_KO_WORDS = re.compile(r"(첫|두|세|네|다섯)\s*번째\s*(?:종류|유형|형태)")


def _cjk_number(text: str) -> int:
    if text.isdigit():
        return int(text)
    if text == "十":
        return 10
    if text.startswith("十"):
        return 10 + _CJK_DIGITS.get(text[1:], 0)
    if "十" in text:
        tens, _, ones = text.partition("十")
        return _CJK_DIGITS.get(tens, 0) * 10 + _CJK_DIGITS.get(ones, 0)
    return _CJK_DIGITS.get(text, 0)


def _stem_number(word: str) -> int:
    word = word.casefold()
    return next(n for stem, n in sorted(_STEMS.items(), key=lambda kv: -len(kv[0]))
                if word.startswith(stem))


def ordinals(text: str) -> set[int]:
    """The ranks `text` names ("second kind" -> {2})."""
    found = {_stem_number(m.group(1)) for m in _LATIN.finditer(text)}
    found |= {_cjk_number(m.group(1)) for m in _CJK.finditer(text)}
    found |= {int(m.group(1)) for m in _KO_NUMBERED.finditer(text)}
    found |= {_KO[m.group(1)] for m in _KO_WORDS.finditer(text)}
    return found - {0}


def unbacked_ordinals(statement: str, sentences: Sequence[str], question: str = "",
                      elsewhere: Sequence[str] = ()) -> set[int]:
    """The ranks `statement` names that its `sentences` do not: wherever they name another
    rank (the question asking of the second kind does not make a sentence of the first
    kind say it), and where they name none, unless the question does and no sentence of
    the evidence `elsewhere` names it (then the statement gave the question's kind to a
    sentence about something else: "第二类间断点是指 … f∈C[a,b]" from the sentence after the
    definition of the second kind)."""
    named = set().union(*(ordinals(s) for s in sentences)) if sentences else set()
    ranks = ordinals(statement) - named
    if named:
        return ranks
    other = set().union(*(ordinals(s) for s in elsewhere)) if elsewhere else set()
    return ranks - (ordinals(question) - other)
