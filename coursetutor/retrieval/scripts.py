"""Writing systems by Unicode block: which script a letter is in, how many letters each holds.

The blocks are those of the scripts the embedding model (multilingual e5, XLM-R's vocabulary)
reads. A letter outside them counts as `OTHER`: text mostly in such a script is of no
language the detector can name.
"""

from __future__ import annotations

import bisect
import functools
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable

OTHER = "other"
# a language of its own for each script that (in practice) one language writes
SOLE_LANGUAGE = {
    "greek": "el", "armenian": "hy", "hebrew": "he", "thai": "th", "lao": "lo",
    "khmer": "km", "myanmar": "my", "georgian": "ka", "ethiopic": "am", "bengali": "bn",
    "gurmukhi": "pa", "gujarati": "gu", "oriya": "or", "tamil": "ta", "telugu": "te",
    "kannada": "kn", "malayalam": "ml", "sinhala": "si", "han": "zh", "kana": "ja",
    "hangul": "ko",
}
# scripts several languages write, told apart by their words and letters (function_words.py)
SHARED = ("latin", "cyrillic", "arabic", "devanagari")
# letters' worth of one character: a Chinese character or a syllable is nearer a word than a
# letter (an English word has ~4.7 letters, a Chinese one ~1.7 characters)
WEIGHT = {"han": 2, "kana": 2, "hangul": 2}

_BLOCKS: tuple[tuple[int, int, str], ...] = tuple(sorted([
    (0x0041, 0x005A, "latin"), (0x0061, 0x007A, "latin"), (0x00AA, 0x00AA, "latin"),
    (0x00BA, 0x00BA, "latin"), (0x00C0, 0x024F, "latin"), (0x0250, 0x02AF, "latin"),
    (0x1E00, 0x1EFF, "latin"), (0x2C60, 0x2C7F, "latin"), (0xA720, 0xA7FF, "latin"),
    (0xFF21, 0xFF3A, "latin"), (0xFF41, 0xFF5A, "latin"),
    (0x0370, 0x03FF, "greek"), (0x1F00, 0x1FFF, "greek"),
    (0x0400, 0x052F, "cyrillic"), (0x1C80, 0x1C8F, "cyrillic"), (0x2DE0, 0x2DFF, "cyrillic"),
    (0xA640, 0xA69F, "cyrillic"),
    (0x0530, 0x058F, "armenian"), (0xFB13, 0xFB17, "armenian"),
    (0x0590, 0x05FF, "hebrew"), (0xFB1D, 0xFB4F, "hebrew"),
    (0x0600, 0x06FF, "arabic"), (0x0750, 0x077F, "arabic"), (0x0870, 0x08FF, "arabic"),
    (0xFB50, 0xFDFF, "arabic"), (0xFE70, 0xFEFF, "arabic"),
    (0x0900, 0x097F, "devanagari"), (0xA8E0, 0xA8FF, "devanagari"),
    (0x0980, 0x09FF, "bengali"), (0x0A00, 0x0A7F, "gurmukhi"), (0x0A80, 0x0AFF, "gujarati"),
    (0x0B00, 0x0B7F, "oriya"), (0x0B80, 0x0BFF, "tamil"), (0x0C00, 0x0C7F, "telugu"),
    (0x0C80, 0x0CFF, "kannada"), (0x0D00, 0x0D7F, "malayalam"), (0x0D80, 0x0DFF, "sinhala"),
    (0x0E00, 0x0E7F, "thai"), (0x0E80, 0x0EFF, "lao"), (0x1000, 0x109F, "myanmar"),
    (0x10A0, 0x10FF, "georgian"), (0x1C90, 0x1CBF, "georgian"), (0x2D00, 0x2D2F, "georgian"),
    (0x1100, 0x11FF, "hangul"), (0x3130, 0x318F, "hangul"), (0xA960, 0xA97F, "hangul"),
    (0xAC00, 0xD7FF, "hangul"),
    (0x1200, 0x139F, "ethiopic"), (0x2D80, 0x2DDF, "ethiopic"),
    (0x1780, 0x17FF, "khmer"), (0x19E0, 0x19FF, "khmer"),
    (0x3040, 0x30FF, "kana"), (0x31F0, 0x31FF, "kana"), (0xFF66, 0xFF9F, "kana"),
    (0x3005, 0x3007, "han"), (0x3100, 0x312F, "han"), (0x31A0, 0x31BF, "han"),
    (0x3400, 0x4DBF, "han"), (0x4E00, 0x9FFF, "han"), (0xF900, 0xFAFF, "han"),
    (0x20000, 0x3134F, "han"),
]))
_STARTS = [start for start, _end, _name in _BLOCKS]


# blocks whose combining marks (Hindi's vowel signs, Thai's, Arabic's vowel points) are part of
# a word although Python's \w leaves them out ("क्या" would split into "क" and "य")
_MARK_BLOCKS = ((0x0300, 0x0370), (0x0483, 0x048A), (0x0591, 0x05C8), (0x0610, 0x06F0),
                (0x08D3, 0x0900), (0x0900, 0x0E00), (0x0E00, 0x1000), (0x1000, 0x10A0),
                (0x1780, 0x1800), (0x1AB0, 0x1B00), (0x1DC0, 0x1E00), (0x3099, 0x309B),
                (0xFE20, 0xFE30))
_MARKS = "".join(ch for start, end in _MARK_BLOCKS for ch in map(chr, range(start, end))
                 if unicodedata.category(ch).startswith("M"))
WORD = re.compile(f"(?:[^\\W\\d_]|[{_MARKS}])+")


@functools.lru_cache(maxsize=8192)
def script_of(ch: str) -> str | None:
    """The script of the letter `ch` ('latin', 'han', ...; `OTHER`), None for a non-letter."""
    if not ch.isalpha():
        return None
    i = bisect.bisect_right(_STARTS, ord(ch)) - 1
    if i >= 0 and ord(ch) <= _BLOCKS[i][1]:
        return _BLOCKS[i][2]
    return OTHER


def word_script(word: str) -> str | None:
    """The script of a word's first letter."""
    return next((s for s in map(script_of, word) if s is not None), None)


def script_mass(words: Iterable[str]) -> Counter[str]:
    """Weighted letters per script (`WEIGHT`) of `words`, leaving out single letters of
    alphabets (a formula's x or α). Chinese characters count as kana in a text whose kana are
    at least a tenth of its kana and Chinese characters (Japanese), as hangul where hangul are
    at least as many (Korean hanja)."""
    mass: dict[str, int] = {}
    for ch, n in Counter("".join(w for w in words if len(w) > 1 or word_script(w) in WEIGHT)
                         ).items():
        script = script_of(ch)
        if script is not None:
            mass[script] = mass.get(script, 0) + n * WEIGHT.get(script, 1)
    han = mass.pop("han", 0)
    if han and mass.get("kana", 0) * 10 >= mass.get("kana", 0) + han:
        mass["kana"] = mass.get("kana", 0) + han
    elif han and mass.get("hangul", 0) >= han:
        mass["hangul"] += han
    elif han:
        mass["han"] = han
    return Counter(mass)
