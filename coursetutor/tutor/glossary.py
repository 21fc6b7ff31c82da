"""The terms a translation is told to write: a glossary of mathematics, optimisation and
machine learning across the tutor's languages (glossary.toml).

The bundled model translates the words of a sentence well and its terms of art badly, most of
all into Korean: "positive definite" became 양의 정방행렬 ("positive square matrix"), 收敛
(converges) 발전 ("develops"), 有上界 (bounded above) 상한을 가진다 ("has a supremum"). A
Korean student then reads a false statement under a correct citation. Given the textbook term
for each term its text holds ("positive definite → 양의 정부호"), it writes that term.
"""

from __future__ import annotations

import functools
import re
import tomllib
from collections.abc import Sequence
from importlib import resources

from ..retrieval.tokenize import has_cjk

MAX_TERMS = 12  # terms told per translation at most: a long list drowns the text
MIN_CJK = 2  # characters of a Chinese, Japanese or Korean spelling looked for in a text
# languages whose terms stand as they are, or take a suffix: 수렴 → 수렴합니다
_SUFFIXED = frozenset({"zh", "ja", "ko"})


@functools.cache
def _terms() -> tuple[dict[str, tuple[str, ...]], ...]:
    table = tomllib.loads((resources.files("coursetutor.tutor") / "glossary.toml")
                          .read_text(encoding="utf-8"))
    return tuple({language: tuple(spellings) for language, spellings in term.items()}
                 for term in table["term"])


@functools.cache
def _patterns(language: str) -> tuple[tuple[re.Pattern[str], int], ...]:
    """Every spelling of `language` as a pattern with its term's index, longest first."""
    spellings = [(spelling, n) for n, term in enumerate(_terms())
                 for spelling in term.get(language, ())
                 if not has_cjk(spelling) or len(spelling) >= MIN_CJK]
    spellings.sort(key=lambda pair: -len(pair[0]))
    return tuple((_pattern(spelling), n) for spelling, n in spellings)


def _pattern(spelling: str) -> re.Pattern[str]:
    body = r"[\s-]+".join(re.escape(part) for part in spelling.split())
    if has_cjk(spelling):
        return re.compile(body)
    return re.compile(rf"(?<![\w-]){body}(?![\w-])", re.IGNORECASE)


def found(text: str, language: str) -> list[tuple[str, int]]:
    """The glossary's terms in `text`, written in `language`: each as the text spells it,
    with its term's index, in the order of the text; a longer term hides the shorter ones in
    it ("quadratic convergence", not also "convergence")."""
    taken: list[tuple[int, int]] = []
    out: list[tuple[int, str, int]] = []
    for pattern, n in _patterns(language):
        for match in pattern.finditer(text):
            start, end = match.span()
            if any(start < b and a < end for a, b in taken):
                continue
            taken.append((start, end))
            out.append((start, match.group(0), n))
    return [(spelled, n) for _, spelled, n in sorted(out)]


def renderings(text: str, source: str, target: str,
               most: int = MAX_TERMS) -> list[tuple[str, str]]:
    """(the term as `text` spells it in `source`, the term in `target`) for each glossary
    term of the text that the target language spells otherwise; at most `most`, each term
    once. Into a language of Latin letters only a term the text spells in its first form
    is told: "converges → convergenza" would put a noun where a verb goes, where Korean
    makes 수렴 a verb with a suffix."""
    if not source or source == target:
        return []
    inflects = target not in _SUFFIXED
    seen: set[int] = set()
    out: list[tuple[str, str]] = []
    for spelled, n in found(text, source):
        term = _terms()[n]
        written = term.get(target, ())
        if n in seen or not written or spelled.casefold() in (w.casefold() for w in written):
            continue
        if inflects and spelled.casefold() != term[source][0].casefold():
            continue
        seen.add(n)
        out.append((spelled, written[0]))
    return out[:most]


def dropped(translated: str, source_text: str, source: str, target: str) -> list[str]:
    """The glossary terms of `source_text` that its translation leaves out, in `target`'s
    first spelling: "감쇠 뉴턴-랩슨 방법에서 스텝 크기는 …?" came back as "What is the condition
    for the step size in the Newton-Raphson method?", without "damped"."""
    if not source or source == target:
        return []
    there = {n for _, n in found(translated, target)}
    out: list[str] = []
    for _, n in found(source_text, source):
        written = _terms()[n].get(target, ())
        if written and n not in there and written[0] not in out:
            out.append(written[0])
    return out


def spelling(n: int, language: str) -> str:
    """Term `n` as `language` writes it: in a language of Latin letters its shortest
    spelling, which stands in a sentence without the article a longer one needs
    ("Gauss-Newton", not "metodo di Gauss-Newton"); in another its first. "" when the
    glossary has none."""
    spellings = _terms()[n].get(language, ())
    if not spellings:
        return ""
    return spellings[0] if language in _SUFFIXED else min(spellings, key=len)


def written_in(name: str, text: str) -> bool:
    """Does `text` hold the glossary's term that `name` (English) names, in any language's
    spelling? "Gauss-Newton" is kept in "高斯-牛顿法适用于这里", as the glossary tells the
    translation to write it."""
    folded = text.casefold()
    return any(spelling in folded for _, n in found(name, "en") for spelling in _spellings(n))


@functools.cache
def _spellings(n: int) -> frozenset[str]:
    """Every spelling of term `n` in every language, case-folded."""
    return frozenset(s.casefold() for spellings in _terms()[n].values() for s in spellings)


# how the terms are told: to the translation of a reply, and within the prompt that
# translates a question (there, told as the reply's, the model answered "리만 적분에서 상합은
# 어떻게 정의되나요?" instead of translating it)
FOR_REPLY = "Translate these terms as the textbooks of the language do:"
FOR_QUESTION = "Words to use in the translation:"


def instruction(pairs: Sequence[tuple[str, str]], lead: str = FOR_REPLY) -> str:
    """The sentence that tells a translator the terms: "" when there are none."""
    if not pairs:
        return ""
    told = "; ".join(f"{spelled} → {written}" for spelled, written in pairs)
    return f"{lead} {told}."
