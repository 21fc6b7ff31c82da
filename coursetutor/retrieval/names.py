"""A name in every script the course and its students write it in (names.toml): lecture notes
in Chinese write "Cauchy 收敛原理", and a question about 柯西收敛准则 shares no keyword with
it; searched with "Cauchy" too, the theorem ranks first instead of fourth."""

from __future__ import annotations

import functools
import re
import tomllib
import unicodedata
from importlib import resources

__all__ = ["other_spellings", "with_spellings"]

# a letter of the same script right before a name's characters: part of another word
_BEFORE = {"hangul": r"\uac00-\ud7af", "kana": r"\u30a0-\u30ff"}


def _fold(text: str) -> str:
    """Latin letters in lower case without accents ("L'Hôpital" -> "l'hopital", "Weierstraß"
    -> "weierstrass"); other scripts as they are (Hangul decomposed would match nothing)."""
    return "".join(_fold_char(c) for c in text.replace("ß", "ss")).lower()


def _fold_char(c: str) -> str:
    if ord(c) >= 0x250:
        return c
    return "".join(x for x in unicodedata.normalize("NFKD", c) if not unicodedata.combining(x))


def _script(spelling: str) -> str:
    """"latin", "hangul", "kana" or "han"."""
    first = spelling[0]
    if ord(first) < 0x250:
        return "latin"
    if "\uac00" <= first <= "\ud7af":
        return "hangul"
    if "\u30a0" <= first <= "\u30ff":
        return "kana"
    return "han"


# the scripts a course in each language writes names in: its own and, in Chinese, Japanese
# and Korean notes, the Latin one too ("Cauchy 收敛原理")
SCRIPTS = {"zh": ("latin", "han"), "ko": ("latin", "hangul"), "ja": ("latin", "kana")}


def _pattern(spelling: str) -> str:
    script = _script(spelling)
    if script == "latin":
        return rf"(?<![^\W\d_]){re.escape(_fold(spelling))}(?![^\W\d_])"
    if script in _BEFORE:
        return rf"(?<![{_BEFORE[script]}]){re.escape(spelling)}"
    return re.escape(spelling)


@functools.cache
def _table() -> tuple[tuple[tuple[str, ...], re.Pattern[str]], ...]:
    data = tomllib.loads((resources.files("coursetutor.retrieval") / "names.toml")
                         .read_text(encoding="utf-8"))
    rows = []
    for spellings in data["names"]:
        found = re.compile("|".join(_pattern(s) for s in spellings))
        rows.append((tuple(spellings), found))
    return tuple(rows)


def other_spellings(text: str, language: str = "") -> list[str]:
    """The spellings of the names `text` holds that it does not write itself, in the scripts
    a course in `language` writes names in (every script when `language` is "")."""
    scripts = SCRIPTS.get(language, ("latin",)) if language else None
    folded = _fold(text)
    out: list[str] = []
    for spellings, found in _table():
        written = {_fold(m.group(0)) for m in found.finditer(folded)}
        if written:
            out.extend(s for s in spellings if _fold(s) not in written and s not in out
                       and (scripts is None or _script(s) in scripts))
    return out


def with_spellings(query: str, language: str = "") -> str:
    """`query` followed by the other spellings of the names it holds, as a course in
    `language` writes them ("柯西收敛准则是什么？ Cauchy" for Chinese notes); `query` itself
    when it holds none."""
    more = other_spellings(query, language)
    return f"{query} {' '.join(more)}" if more else query
