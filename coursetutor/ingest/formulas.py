"""Formulas missing from a PDF's text layer: find the blanks they leave and mark them.

Notes typeset with formula fonts that carry no text mapping come out of the text layer with
a blank where each formula was ("设区间套   ，其中  ."): spaces between two Chinese
characters, before a punctuation mark, or between two punctuation marks. A page with a few
such blanks is reported, read by OCR when the extra is installed, and otherwise each blank
is replaced by GAP, so neither a student nor the model takes the sentence for complete.
"""

from __future__ import annotations

import re

GAP = "[formula missing]"  # what a blank becomes in the stored text
MIN_GAPS = 3  # blanks on one page before it counts as missing its formulas

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_BLANK = re.compile(
    rf"(?<=[{_CJK}]) {{3,}}(?=[{_CJK}])"  # between two Chinese characters
    r"|(?<=\S) {2,}(?=[,;:，。；：!?)\]]|\.(?!\.))"  # before a punctuation mark
    r"|(?<=[,，;；(]) +(?=[,，;；。)]|\.(?!\.))"  # between two punctuation marks
    r"|(?<=\() *(?=\))"  # empty brackets
)
# on a page already missing formulas, a wide space between two words is one more blank
_WIDE = re.compile(rf"{_BLANK.pattern}|(?<=[\w,;:]) {{3,}}(?=\w)")
_MARKED = re.compile(rf" *{re.escape(GAP)} *")


def count_blanks(page: str) -> int:
    """How many blanks left by missing formulas `page` has."""
    return sum(1 for _ in _BLANK.finditer(page))


def missing_formulas(page: str) -> bool:
    """True when `page` has at least MIN_GAPS blanks where formulas were."""
    return count_blanks(page) >= MIN_GAPS


def mark_blanks(page: str) -> str:
    """`page` (one missing its formulas) with every blank replaced by GAP."""
    return _WIDE.sub(f" {GAP} ", page)


def has_gap(text: str) -> bool:
    """True when `text` holds a marked blank: it must not be quoted as it stands."""
    return GAP in text


def without_gaps(text: str) -> str:
    """`text` without its GAP markers (what is embedded and indexed)."""
    return _MARKED.sub(" ", text)
