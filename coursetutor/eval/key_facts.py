"""Key facts: what a correct and complete reply to a course-pack question must say.

Each question of the set lists its key facts; a fact is a list of alternatives (the words,
numbers or formula a reply uses to state it, in the languages the reply may use and as the
page writes a formula). A fact is given when one alternative is in the reply, compared after
LaTeX is read as Unicode maths, Unicode NFKC, case folding and one space for every run of
blanks; an alternative that is a formula is also found in any notation (`\\nabla^2 f(x)^{-1}`,
`∇²f(x)⁻¹` and `∇2f (x)−1` are one formula).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from ..ingest.tex_unicode import to_unicode
from ..tutor.claims import formulas, skeleton

_BLANKS = re.compile(r"\s+")


def normalize(text: str) -> str:
    return _BLANKS.sub(" ", unicodedata.normalize("NFKC", to_unicode(text)).casefold()).strip()


def facts_given(text: str, facts: Sequence[Sequence[str]]) -> list[bool]:
    """For each fact, whether `text` states it (one of its alternatives)."""
    said = normalize(text)
    maths = skeleton(text)
    return [any(_given(alt, said, maths) for alt in alts if alt.strip()) for alts in facts]


def _given(alt: str, said: str, maths: str) -> bool:
    if normalize(alt) in said:
        return True
    return bool(formulas(alt)) and skeleton(alt) in maths


def recall(text: str, facts: Sequence[Sequence[str]]) -> float | None:
    """Share of the key facts `text` gives (None: the question has none)."""
    if not facts:
        return None
    given = facts_given(text, facts)
    return round(sum(given) / len(given), 4)


def removed_facts(removed: Sequence[str], kept: str, facts: Sequence[Sequence[str]]) -> int:
    """Statements the check took out that gave a key fact the reply no longer gives: a
    correct statement removed."""
    missing = [alts for alts, given in zip(facts, facts_given(kept, facts), strict=True)
               if not given]
    return sum(any(facts_given(statement, missing)) for statement in removed) if missing else 0
