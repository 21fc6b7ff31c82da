"""Words that decide what a claim says: its polarity and causal words, the opposites it may
have turned round, and an ending that dangles.

Pure functions over a claim and its language, with the word lists in `wording.toml`. The
answer check's overlap counts content words; these are the small words it drops ("not",
"any", "only"), the reasons it cannot see given ("because") and the sentence endings it
cannot judge ("is given by [1].").
"""

from __future__ import annotations

import functools
import re
import tomllib
from importlib import resources
from typing import Any

from ..retrieval.retriever import CJK_LANGUAGES
from ..retrieval.tokenize import has_cjk
from .markers import MARKER

_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?", re.UNICODE)


@functools.cache
def _lists() -> dict[str, dict[str, frozenset[str]]]:
    return {lang: {key: frozenset(words) for key, words in table.items()
                   if key not in ("opposites", "symbols")}
            for lang, table in _toml().items()}


@functools.cache
def _toml() -> dict[str, dict[str, list[Any]]]:
    raw = (resources.files("coursetutor.tutor") / "wording.toml").read_text(encoding="utf-8")
    return tomllib.loads(raw)


@functools.cache
def _opposites(language: str) -> tuple[tuple[str, str], ...]:
    pairs = [(str(a), str(b)) for a, b in _toml().get(language, {}).get("opposites", [])]
    return tuple(pairs) + tuple((b, a) for a, b in pairs)


def _starts(text: str, language: str) -> set[str]:
    """The word beginnings of `language`'s opposite pairs that `text` has."""
    lowered = MARKER.sub(" ", text).casefold()
    if language in CJK_LANGUAGES:
        return {a for a, _ in _opposites(language) if a in lowered}
    words = _WORD.findall(lowered)
    return {a for a, _ in _opposites(language) if any(w.startswith(a) for w in words)}


def opposed(claim: str, passage: str, language: str) -> set[str]:
    """The words of `claim` whose opposite `passage` says instead ("converges" where the
    passage has "diverges" and never "converges"); a word right after a negation says its
    opposite ("non converge" is what "diverge" says)."""
    said = _meant(claim, language)
    if not said:
        return set()
    there = _meant(passage, language)
    return {a for a, b in _opposites(language) if a in said and a not in there and b in there}


def _meant(text: str, language: str) -> set[str]:
    """The opposite pairs' word beginnings `text` means: those it says, each one that a
    negation precedes (within LITOTES_REACH words; right before it in CJK) turned round."""
    said = _starts(text, language)
    if not said:
        return said
    lowered = MARKER.sub(" ", text).casefold()
    negation = _words(language, "negation")
    pairs = dict(_opposites(language))
    out: set[str] = set()
    if language in CJK_LANGUAGES:
        for a in said:
            plain = lowered
            for w in negation:
                plain = plain.replace(f"{w}{a}", " ")
            out |= ({pairs[a]} if plain != lowered else set()) | ({a} if a in plain else set())
        return out
    words = _WORD.findall(lowered)
    for i, word in enumerate(words):
        for a in said:
            if word.startswith(a):
                before = words[max(0, i - LITOTES_REACH):i]
                out.add(pairs[a] if any(w in negation for w in before) else a)
    return out


def answers_polar(claim: str, question: str, passage: str, language: str) -> bool:
    """Does `claim` give the verdict of `passage` on a word of the question, where the
    passage says its opposite: "La serie armonica non converge." (or "… diverge.") for "La
    serie armonica converge?" from "… Cauchy non è rispettato quindi e la serie diverge."?
    The words are the question's; what the claim says is the passage's answer to it."""
    asked = _starts(question, language)
    there = _starts(passage, language)
    said = _starts(claim, language)
    denied = negates(claim, language) and not negates(question, language)
    return any(a in asked and b in there and a not in there
               and (b in said or (a in said and denied))
               for a, b in _opposites(language))


def has_opposites(text: str, language: str) -> bool:
    """Whether `text` holds a word of an opposite pair (the check then compares it)."""
    return bool(_starts(text, language))


def _words(language: str, key: str) -> frozenset[str]:
    return _lists().get(language, {}).get(key, frozenset())


_FOR_ALL = re.compile(r"∀|\\forall\b")


def reason_words(language: str) -> frozenset[str]:
    """The words after which a step of a worked solution gives its reason (reason.py)."""
    return _words(language, "reason")


def polarity(text: str, language: str) -> set[str]:
    """The polarity words of `text` in `language`: negations, quantifiers, restrictions."""
    return _find(text, language, "polarity")


def _find(text: str, language: str, key: str) -> set[str]:
    """The words of list `key` that `text` holds."""
    wanted = _words(language, key)
    if not wanted:
        return set()
    lowered = MARKER.sub(" ", text).casefold()
    if language in CJK_LANGUAGES:  # words not split by spaces: found as substrings
        return {w for w in wanted if w in lowered}
    return {w for w in _WORD.findall(lowered) if w in wanted}


def negates(text: str, language: str) -> bool | None:
    """Whether `text` negates something in `language` (None: no negation list for it).

    Compared across languages, where the words cannot be: a statement that negates a sentence
    that does not, or the other way round, says the opposite of it."""
    wanted = _words(language, "negation")
    if not wanted:
        return None
    lowered = _lowered(text)
    if language in CJK_LANGUAGES:
        for word in _words(language, "not_negation"):
            lowered = lowered.replace(word, " ")
        return any(w in lowered for w in wanted)
    return any(w in wanted for w in _WORD.findall(lowered))


def _lowered(text: str) -> str:
    """`text` without citation markers, case-folded, with a typographic apostrophe plain."""
    return MARKER.sub(" ", text).casefold().replace("\u2019", "'")


def causal(text: str, language: str) -> set[str]:
    """The causal words of `text` in `language` ("because", "therefore", "因为")."""
    return _find(text, language, "causal")


def unbacked_polarity(claim: str, passage: str, language: str) -> set[str]:
    """The polarity words of `claim` that `passage` does not have, its causal words when
    `passage` gives no reason at all (any causal word backs any other: "因为" and "因此"), and
    the words `passage` says the opposite of (`opposed`)."""
    out = polarity(claim, language) - polarity(passage, language)
    if _FOR_ALL.search(passage):  # "x≤α ∀ x∈ A" says "every", "tutti", "所有" in symbols
        out -= _words(language, "universal")
    if _find(claim, language, "condition") and _find(passage, language, "condition"):
        out -= _words(language, "always")  # a result holds whenever its hypothesis does
    if out & _words(language, "negation") and litotes(claim, passage, language):
        out -= _words(language, "negation")
    out |= opposed(claim, passage, language) | _blamed(claim, passage, language)
    reasons = causal(claim, language)
    if reasons and not causal(passage, language):
        out |= reasons
    return out


def _blamed(claim: str, passage: str, language: str) -> set[str]:
    """The bad qualities `claim` names, negating nothing, where `passage` names only good
    ones ("poor convergence speed" from "much better convergence speed")."""
    praise, blame = _words(language, "praise"), _words(language, "blame")
    if not blame or negates(claim, language):
        return set()
    bad = _begun(claim, blame)
    return bad if bad and _begun(passage, praise) and not _begun(passage, blame) else set()


def _begun(text: str, beginnings: frozenset[str]) -> set[str]:
    """The words of `text` that begin with one of `beginnings`."""
    return {w for w in _WORD.findall(_lowered(text)) if w.startswith(tuple(beginnings))}


LITOTES_REACH = 2  # words after a negation that may name the good quality it denies


def litotes(claim: str, passage: str, language: str) -> bool:
    """Does each negation of `claim` deny a good quality ("not well chosen", "non adatto")
    where `passage` names a bad one ("for 'bad' starting points")? Languages with `praise`
    and `blame` lists (English, Italian)."""
    praise, blame = _words(language, "praise"), _words(language, "blame")
    negation = _words(language, "negation")
    if not praise:
        return False
    words = _WORD.findall(_lowered(claim))
    denials = [i for i, w in enumerate(words) if w in negation]
    bad = bool(_begun(passage, blame))
    return bool(denials) and bad and all(
        any(w.startswith(tuple(praise)) for w in words[i + 1:i + 1 + LITOTES_REACH])
        for i in denials)


# a negated predicate in Chinese or Japanese: 不存在, 没有, 非零, 无界, 未定义
_CJK_NEGATED = re.compile(r"[不没沒非无無未]([\u3400-\u9fff]{2})")


def dropped_negation(claim: str, passage: str) -> set[str]:
    """The predicates `passage` negates that `claim` states without the negation: "左右极限
    存在" from "至少一侧极限不存在" (Chinese and Japanese, where a negation is one character
    fused to what it negates)."""
    out = set()
    for m in _CJK_NEGATED.finditer(passage):
        predicate = m.group(1)
        if predicate in claim and not re.search(f"[不没沒非无無未]{predicate}", claim):
            out.add(m.group())
    return out


def _unclosed_maths(text: str) -> bool:
    """A formula opened (`\\(`, `\\[`, `$`) and never closed: the sentence was cut in the maths."""
    opened = text.count("\\(") + text.count("\\[")
    closed = text.count("\\)") + text.count("\\]")
    return opened > closed or text.replace("\\$", "").count("$") % 2 == 1


def spelled_symbols(text: str, language: str) -> str:
    """The words that say the logic symbols of `text` in `language` ("任意 所有 存在" for
    "∀ε>0, ∃ N"): a statement that spells them out says what its sentence says."""
    return " ".join(word for symbol, *words in _toml().get(language, {}).get("symbols", [])
                    if symbol in text for word in words)


def points_at(text: str) -> bool:
    """Does `text` end on a word that sends the reader elsewhere ("described in", "see",
    "descritta nel", "见"), in any language? An evidence id the model wrote after it is
    where it sends (statements.py)."""
    bare = text.rstrip(" .,:;\u3002\uff1a").casefold()
    words = _WORD.findall(bare)
    for table in _lists().values():
        pointing = table.get("pointing", frozenset())
        if any(bare.endswith(w) for w in pointing if has_cjk(w)):
            return True
        if words and bare[-1:].isalpha() and words[-1] in pointing:
            return True
    return False


def dangles(claim: str, language: str) -> bool:
    """The claim stops before it says what it set out to: its last word (citation markers and
    the full stop aside) is one a sentence does not end on ("is given by [1].", "è definita
    come."), or a formula it opened is never closed."""
    bare = MARKER.sub(" ", claim).strip().rstrip(".!?\u3002\uff01\uff1f ").strip()
    if not bare:
        return True
    if _unclosed_maths(bare):
        return True
    ending = _words(language, "dangling")
    if not ending:
        return False
    if has_cjk(bare[-1:]):
        return any(bare.endswith(w) for w in ending if has_cjk(w)) and not any(
            bare.endswith(w) for w in _words(language, "not_dangling"))
    words = _WORD.findall(bare.casefold())
    return bool(words) and bare[-1].isalpha() and words[-1] in ending
