"""Keyword tokenization for BM25: Unicode words, Snowball stems, CJK characters and bigrams.

For Chinese, Japanese and Korean every character and every overlapping pair of characters is a
term. Measured on XQuAD-R zh (1,190 questions, BM25 R@1 / hybrid R@1): bigrams alone
0.719 / 0.757, bigrams + characters 0.733 / 0.765, jieba words 0.716 / 0.771, jieba words +
bigrams 0.726 / 0.761. Bigrams + characters need no dictionary and serve all three scripts.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable

_TOKEN = re.compile(r"\w+", re.UNICODE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")


def has_cjk(text: str) -> bool:
    """Does `text` hold Chinese, Japanese or Korean characters?"""
    return _CJK.search(text) is not None

SNOWBALL = {
    "en": "english",
    "de": "german",
    "it": "italian",
    "fr": "french",
    "es": "spanish",
    "pt": "portuguese",
    "nl": "dutch",
    "sv": "swedish",
    "da": "danish",
    "no": "norwegian",
    "fi": "finnish",
    "ru": "russian",
    "hu": "hungarian",
    "ro": "romanian",
    "tr": "turkish",
}


@functools.lru_cache(maxsize=32)
def stemmer_for(language: str) -> Callable[[list[str]], list[str]] | None:
    """Return a list-stemming function for `language`, or None if no stemmer exists."""
    algorithm = SNOWBALL.get(language)
    if algorithm is None:
        return None
    try:
        import Stemmer
    except ImportError:  # pragma: no cover - PyStemmer is a core dependency
        return None
    return Stemmer.Stemmer(algorithm).stemWords  # type: ignore[no-any-return]


def normalize(text: str) -> str:
    """NFKC-normalize and case-fold."""
    return unicodedata.normalize("NFKC", text).casefold()


def cjk_terms(run: str) -> list[str]:
    """Every character of a CJK run, then its overlapping character bigrams."""
    return list(run) + [run[i : i + 2] for i in range(len(run) - 1)]


def tokenize(text: str, language: str = "en", stem: bool = True) -> list[str]:
    """Split `text` into BM25 terms: stemmed words for alphabetic scripts, bigrams for CJK."""
    text = normalize(text)
    terms: list[str] = []
    words: list[str] = []
    pos = 0
    for match in _CJK.finditer(text):
        words.extend(_TOKEN.findall(text[pos : match.start()]))
        terms.extend(cjk_terms(match.group()))
        pos = match.end()
    words.extend(_TOKEN.findall(text[pos:]))
    words = [w for w in words if w.strip("_")]
    stemmer = stemmer_for(language) if stem else None
    if stemmer is not None and words:
        words = stemmer(words)
    return words + terms
