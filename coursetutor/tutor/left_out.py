"""What the statements left out of the sentences they restate: the named terms of a cited
evidence sentence (a condition, a rule, a theorem's name) that no statement and not the
question holds.

"What is damped Newton-Raphson?" has one evidence sentence, "Relaxed/Damped Newton-Raphson:
Use step size α > 0 with x[t+1] = x[t] + αd[t] to satisfy Wolfe conditions (or just Armijo
rule)", and the small model restated its first half ("… uses a step size α > 0") and closed
the reply: the conditions the step size must meet, which a student asked about damping
needs, were never said. The compose stage asks for one more statement about the names left
out, from that sentence alone, and checks it like any other.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..retrieval.language import ANY_STOPWORD
from .claims import SourceText, is_acronym, names
from .sentences import Line


def names_left_out(said: Sequence[str], cited: Sequence[Line],
                   question: str) -> tuple[Line, tuple[str, ...]] | None:
    """The first of the `cited` lines whose named terms (Wolfe, Armijo) neither a statement
    `said` nor the `question` holds, with those names; None when every cited line's names
    were said. German capitalises every noun: there only acronyms are names."""
    told = SourceText([*said, question])
    for line in cited:
        body = _without_label(line.text)
        found = [n for n in names(body) if (line.language != "de" or is_acronym(n))
                 and n.casefold() not in ANY_STOPWORD
                 and not _opens_clause(n, body) and not _is_label(n, body)]
        left = tuple(dict.fromkeys(n for n in found if not told.has_name(n)))
        if left:
            return line, left
    return None


def _opens_clause(name: str, text: str) -> bool:
    """The name is the capitalised first word after a colon ("…-Raphson: Use step size")."""
    at = text.find(name)
    return at > 0 and text[:at].rstrip().endswith((":", "\uff1a", ";"))


def _is_label(name: str, text: str) -> bool:
    """The name is a label a colon closes ("(Attenzione: se … non esiste …)", "Note: …"):
    it says what kind of remark follows, not a term the remark is about."""
    return any(text[at + len(name):].lstrip().startswith((":", "\uff1a"))
               for at in _places(name, text))


def _places(name: str, text: str) -> list[int]:
    out, at = [], text.find(name)
    while at >= 0:
        out.append(at)
        at = text.find(name, at + 1)
    return out


LABEL_WORDS = 6  # a sentence's label before its colon, at most: "Relaxed/Damped Newton-Raphson:"


def _without_label(text: str) -> str:
    """The sentence after the label it opens with: the term it defines is what it is about,
    not a name the statements left out (a Korean question translated "damping" where the
    slide's label says "Damped")."""
    label, colon, rest = text.partition(":")
    return rest if colon and rest.strip() and len(label.split()) <= LABEL_WORDS else text
