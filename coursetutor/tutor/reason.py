"""The reason a step of a worked solution gives, for a hint that shows it.

A step such as "In this case, we can apply Gauss-Newton since Remp is the squared sum of the
residuals r = (…)⊤" holds what to do and why. Asked for a hint from it, the small model
restated the reason wrongly ("because the residuals r are quadratic", "are the squared
differences between y and π(x)"), in words the hint's term check cannot hold against the
step. The reason as the solution words it is the hint (stages/plan.py): the student reads
what to look at and draws the step from it, and nothing in it is the model's own.

Pure functions over a step's text; the words that give a reason are `reason` in
wording.toml.
"""

from __future__ import annotations

import functools
import re

from ..retrieval.retriever import CJK_LANGUAGES
from .glossary import found, spelling
from .next_step import MASK
from .sentences import garbled
from .wording import reason_words

MIN_WORDS = 3  # words of two letters or more a reason must carry (CJK: characters / 2)
MAX_CHARS = 240  # a longer reason is a derivation, not something to look at
MIN_BEFORE = 2  # words before the reason: what the step does with it
_WORD = re.compile(r"[^\W\d_]{2,}")
_END = re.compile(r"[\s.;:。；：]+$")
# where the step's sentence ends, when another follows it in the same step
_NEXT = re.compile(r"(?<=[.!?])\s+(?=[A-Z])|(?<=[。！？])")


@functools.cache
def _pattern(language: str) -> re.Pattern[str] | None:
    words = sorted(reason_words(language), key=len, reverse=True)
    if not words:
        return None
    alternatives = "|".join(re.escape(w) for w in words)
    if language in CJK_LANGUAGES:
        return re.compile(f"(?:{alternatives})")
    return re.compile(rf"(?<![^\W_])(?:{alternatives})(?![^\W_])", re.IGNORECASE)


def premise(step: str, language: str) -> str:
    """The reason `step` gives, as it words it and without its last stop ("Remp is the
    squared sum of the residuals r = (…)⊤" of "we can apply Gauss-Newton since Remp is …");
    "" when it gives none or one that cannot be shown: with a hidden number (…) in it,
    garbled, too short or too long, or with nothing the step does with it."""
    reason, rest = _split(step, language)
    if not (_said(rest, language, MIN_BEFORE) and _said(reason, language, MIN_WORDS)):
        return ""
    if MASK in reason or len(reason) > MAX_CHARS or garbled(reason):
        return ""
    first = reason.split(" ", 1)[0]
    # a sentence's first word capitalised, not a variable ("f 在 [a,b] 上连续")
    return reason[:1].upper() + reason[1:] if first.isalpha() and first.islower() and len(
        first) > 1 and first.isascii() else reason


def named(step: str, task: str, language: str, target: str) -> str:
    """The term of the course's glossary that what `step` does with its reason names and
    that the exercise's `task` names too ("Gauss-Newton" of "we can apply Gauss-Newton since
    …", when the part says "Explain why Gauss-Newton is applicable"), spelled in the
    `target` language; "" when there is none. The task shows it to the student already, so
    a hint may name it: asked for the part's result, the hint that showed only the reason
    left out which method the reason is for."""
    _, rest = _split(step, language)
    tasked = {n for _, n in found(task, language)}
    for spelled, n in found(rest, language):
        if n in tasked:
            return spelled if target == language else spelling(n, target) or spelled
    return ""


def _split(step: str, language: str) -> tuple[str, str]:
    """(the reason `step` gives, what it does with it): ("", "") when it gives none."""
    pattern = _pattern(language)
    text = step.strip()
    found_at = pattern.search(text) if pattern else None
    if found_at is None:
        return "", ""
    before, after = text[:found_at.start()], text[found_at.end():]
    if not before.strip(" ,，、"):
        # "Since P, C": the reason runs to the comma that ends it, outside brackets
        cut = _clause_end(after)
        reason, rest = after[:cut], after[cut:]
    else:
        reason, rest = after, before
    reason = _END.sub("", _NEXT.split(reason.strip(" ,，、"), maxsplit=1)[0])
    return reason, rest.strip(" ,，、")


def _said(text: str, language: str, least: int) -> bool:
    """Does `text` carry `least` words (in Chinese or Japanese, twice as many characters)?"""
    if language in CJK_LANGUAGES:
        return sum(c.isalpha() for c in text) >= 2 * least
    return len(_WORD.findall(text)) >= least


def _clause_end(text: str) -> int:
    """Where the clause that opens `text` ends: its first comma outside brackets (the
    whole text when it has none)."""
    depth = 0
    for n, c in enumerate(text):
        depth += (c in "([{") - (c in ")]}")
        if depth == 0 and c in ",，":
            return n
    return len(text)
