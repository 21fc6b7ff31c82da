"""Does a page's extracted text look garbled? Small pure rules over the text alone.

A PDF's text layer can be there and still be useless to the tutor: formulas typeset as
pictures leave blanks and stray punctuation behind ("if   is bounded ,   ."), fonts without a
Unicode map give private-use glyphs (U+E000-U+F8FF), replacement or control characters, and a
page of symbols has hardly any letters. Each rule names what it saw, so a teacher knows what to fix.
"""

from __future__ import annotations

import re

__all__ = [
    "FEW_LETTERS",
    "GAPS",
    "PRIVATE_USE",
    "REPLACEMENT",
    "gap_count",
    "garble_reasons",
    "letter_ratio",
]

PRIVATE_USE = "private-use glyphs"
REPLACEMENT = "replacement or control characters"
GAPS = "formula gaps"
FEW_LETTERS = "few letters"

MIN_CHARS = 40  # shorter texts say too little to judge
MIN_ODD_GLYPHS = 3  # private-use or replacement characters on one page
MIN_GAPS = 4
GAPS_PER_1000 = 8.0  # blanks per 1,000 visible characters
MIN_LETTER_RATIO = 0.5  # letters and digits among visible characters

# a blank where something was: two or more spaces inside a line, a comma or full stop standing
# alone between blanks ("bounded , then", "converges  ."; a colon alone is ordinary maths,
# "f : X -> Y"), or the marker the PDF loader writes where it found such a blank. One space
# between two Chinese characters is no sign: stored text joins wrapped lines with a space.
_GAP = re.compile(r"(?<=\S)[ \t]{2,}(?=\S)|(?<=[ \t])[,.;!?，。；、](?=[ \t]|$)"
                  r"|\[formula missing\]", re.M)
_CID = re.compile(r"\(cid:\d+\)")  # glyphs without a Unicode map, as some extractors write them


def _private_use(text: str) -> int:
    return sum(1 for ch in text if "\ue000" <= ch <= "\uf8ff")


def _unmapped(text: str) -> int:
    """Replacement characters, "(cid:N)" and control characters other than line breaks and
    tabs: glyphs a font gave no Unicode for (big brackets of a matrix often come out as
    U+0010-U+0013)."""
    control = sum(1 for ch in text if ch < " " and ch not in "\t\n\r")
    return text.count("\ufffd") + len(_CID.findall(text)) + control


def _visible(text: str) -> int:
    return sum(1 for ch in text if not ch.isspace())


def gap_count(text: str) -> int:
    """Blanks where a formula or symbol was: inner runs of 2+ spaces and lone punctuation."""
    return len(_GAP.findall(text))


def letter_ratio(text: str) -> float:
    """Letters and digits among the visible characters (1.0 for a text with none)."""
    visible = _visible(text)
    if not visible:
        return 1.0
    return sum(1 for ch in text if ch.isalnum()) / visible


def garble_reasons(text: str) -> tuple[str, ...]:
    """Why `text` looks garbled, in a fixed order; empty when it looks like readable text.

    Texts under MIN_CHARS visible characters are never judged (a title page, a figure).
    """
    visible = _visible(text)
    if visible < MIN_CHARS:
        return ()
    reasons: list[str] = []
    if _private_use(text) >= MIN_ODD_GLYPHS:
        reasons.append(PRIVATE_USE)
    if _unmapped(text) >= MIN_ODD_GLYPHS:
        reasons.append(REPLACEMENT)
    gaps = gap_count(text)
    if gaps >= MIN_GAPS and gaps * 1000 / visible >= GAPS_PER_1000:
        reasons.append(GAPS)
    if letter_ratio(text) < MIN_LETTER_RATIO:
        reasons.append(FEW_LETTERS)
    return tuple(reasons)
