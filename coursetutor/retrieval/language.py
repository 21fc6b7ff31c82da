"""A small, dependency-free language guesser: script first, then stop-word votes."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping

from ..errors import InputError

_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)

STOPWORDS: dict[str, frozenset[str]] = {
    "en": frozenset(
        "the of and to in is are was were what which who how why when does do did that this "
        "with for from by on as be it an or not can".split()
    ),
    "de": frozenset(
        "der die das und ist sind war waren wie was wer welche welcher warum wann den dem des "
        "ein eine einer mit von zu im auf für nicht auch sich als wird wurde".split()
    ),
    "it": frozenset(
        "il lo la le gli di che è sono era erano come cosa chi quale quali perché quando del "
        "della dei delle un una con per non si anche nel nella al alla".split()
    ),
    "fr": frozenset(
        "le la les des du de et est sont était qui que quoi comment pourquoi quand un une avec "
        "pour dans sur pas ne au aux".split()
    ),
    "es": frozenset(
        "el la los las de del y es son era que qué quién cómo por qué cuándo un una con para "
        "en no se al lo".split()
    ),
}
# a stop word of any language (a claim or reply may mix them)
ANY_STOPWORD: frozenset[str] = frozenset().union(*STOPWORDS.values())


def script_language(text: str) -> str | None:
    """Return 'zh', 'ja' or 'ko' when the text is mainly in that script, else None."""
    counts = {"zh": 0, "ja": 0, "ko": 0, "other": 0}
    for ch in text:
        if not ch.isalpha():
            continue
        name = unicodedata.name(ch, "")
        if name.startswith("CJK UNIFIED"):
            counts["zh"] += 1
        elif name.startswith(("HIRAGANA", "KATAKANA")):
            counts["ja"] += 1
        elif name.startswith("HANGUL"):
            counts["ko"] += 1
        else:
            counts["other"] += 1
    total = sum(counts.values())
    if not total:
        return None
    if counts["ja"] and counts["ja"] + counts["zh"] > counts["other"]:
        return "ja"
    best = max(("zh", "ko"), key=lambda k: counts[k])
    return best if counts[best] * 2 >= total else None


def detect_language(text: str, default: str = "en") -> str:
    """Guess the language of `text` (ISO 639-1), falling back to `default`."""
    by_script = script_language(text)
    if by_script:
        return by_script
    words = [w.lower() for w in _WORD.findall(text)]
    votes = {lang: sum(w in stop for w in words) for lang, stop in STOPWORDS.items()}
    best = max(votes, key=lambda k: votes[k])
    if votes[best] == 0 or list(votes.values()).count(votes[best]) > 1:
        return default
    return best


_CODE = re.compile(r"^[a-z]{2,3}$")


def check_language(value: str) -> str:
    """A language code as the store keeps it: 'zh-CN' -> 'zh', 'IT' -> 'it'."""
    code = value.strip().replace("_", "-").split("-", 1)[0].lower()
    if not _CODE.match(code):
        raise InputError(f"language must be a language code such as en, it or zh, got {value!r}")
    return code


def majority_language(texts: Iterable[str], default: str) -> str:
    """The language most of `texts` are in (one vote per text that can be told), else
    `default`; ties go to the language met first."""
    votes = Counter(lang for lang in (detect_language(t, default="") for t in texts) if lang)
    return votes.most_common(1)[0][0] if votes else default


def search_language(question: str, course: str, languages: Mapping[str, int]) -> str:
    """The language to search a course in for a question in `question`: the question's own
    when the course has chunks in it (no translation then), else the course's language.

    `languages` is the course's chunks per language (Store.course_languages)."""
    return question if languages.get(question, 0) > 0 else course
