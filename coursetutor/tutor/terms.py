"""The course's own terms for a question in another language: the names and repeated
phrases of the passages its original words find.

The small model translates a Korean question on an English course with its names guessed
("뉴턴-랩슨" as "Newton-Laplace", "헤시안" as "Hamiltonian", "발산" as "emerge"), and every
later stage (the search, the answer, its check) then reads another question. e5 matches the
original to the right passages across languages; the terms of those passages, given to the
translator as the course's vocabulary, let it write "Newton-Raphson" and "Hessian". Only
terms in a Latin script are collected: the course's language is the one translated into.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Sequence

from ..retrieval.language import ANY_STOPWORD
from ..types import Hit

MAX_TERMS = 24  # terms given to the translator at most
# a capitalised word or an acronym, with its hyphenated parts: "Newton-Raphson", "GD"
_NAME = re.compile(r"(?<![\w'’-])[A-Z][\w'’]*(?:-[A-Z]?[\w'’]+)*")
_WORD = re.compile(r"[^\W\d_]{3,}")
_LATEX = re.compile(r"\$[^$]*\$|\\[A-Za-z]+")  # formulas and commands: no terms in them
_ENDS = (".", ":", "!", "?", ";")
_LABEL = re.compile(r"\s?\d{0,2}:")


def course_terms(hits: Sequence[Hit], most: int = MAX_TERMS) -> list[str]:
    """The names of the passages (capitalised words and acronyms, not as a sentence's first
    word, and never written in lower case there), most frequent first, then the two-word
    phrases they repeat ("descent direction", "step size"); at most `most`."""
    names: Counter[str] = Counter()
    phrases: Counter[str] = Counter()
    lower: set[str] = set()
    for hit in hits:
        text = _LATEX.sub(" ", hit.chunk.text)
        for match in _NAME.finditer(text):
            name, before = match.group(0), text[: match.start()].rstrip()
            first = not before or before.endswith(_ENDS)
            label = bool(_LABEL.match(text, match.end()))  # a slide's "Note:", "Problem 1:"
            if (name.isupper() and not 2 <= len(name) <= 5) or first or label or len(name) < 2:
                continue
            if name.lower() not in ANY_STOPWORD:
                names[name] += 1
        words = [w.lower() for w in _WORD.findall(text)]
        lower.update(w for w in _WORD.findall(text) if w.islower())
        for a, b in itertools.pairwise(words):
            if a not in ANY_STOPWORD and b not in ANY_STOPWORD:
                phrases[f"{a} {b}"] += 1
    ranked = [t for t, _ in names.most_common() if t.lower() not in lower or t.isupper()]
    ranked += [t for t, n in phrases.most_common() if n >= 2]
    seen: set[str] = set()
    out: list[str] = []
    for term in ranked:
        key = term.lower().replace("-", " ")
        if key not in seen:
            seen.add(key)
            out.append(term)
    return out[:most]
