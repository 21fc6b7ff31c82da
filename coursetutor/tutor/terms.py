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

import dataclasses
import itertools
import re
from collections import Counter
from collections.abc import Sequence

from ..retrieval.language import ANY_STOPWORD
from ..store import Store
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


# a labelled result and its name: "Teorema 42 (di Rolle)", "定理 5.1.2 (Rolle 中值)"
_KINDS = (r"Teorema|Definizione|Corollario|Lemma|Proposizione|Theorem|Definition|Corollary|"
          r"Proposition|Satz|Théorème|定理|定义|引理|推论")
_RESULT = re.compile(rf"({_KINDS})\s*(\d*(?:\.\d+)*)\s*[(（]([^)）]{{1,60}})[)）]")
# a result named by its number alone ("根据 引理 5.1.1, 此处导数为 0"), no name after it
_CITED = re.compile(rf"(?<![A-Za-z])({_KINDS})\s*(\d+(?:\.\d+)*)(?!\.?\d)(?!\s*[(（])")
_NAMES_KEPT = 64  # courses whose result names are kept in memory


@dataclasses.dataclass(frozen=True)
class _Results:
    names: list[str]  # people's names, most frequent first
    labels: dict[str, str]  # "引理 5.1.1" (spaces taken out) -> "Fermat 中值"


_results: dict[tuple[str, str, str], _Results] = {}


def result_names(store: Store, tenant: str, course: str) -> list[str]:
    """The people's names the course's labelled results carry ("Teorema 42 (di Rolle)":
    Rolle; "定理 5.1.2 (Rolle 中值)": Rolle), most frequent first: the name of a result a
    question asks about ("롤의 정리") may be in no passage the original finds."""
    return _course_results(store, tenant, course).names


def result_labels(store: Store, tenant: str, course: str) -> dict[str, str]:
    """The names the course gives its numbered results: "引理 5.1.1" -> "Fermat 中值"."""
    return _course_results(store, tenant, course).labels


def cites_result(text: str) -> bool:
    """Does `text` name a numbered result by its number alone ("引理 5.1.1", "Teorema 41")?"""
    return bool(_CITED.search(text))


def named_results(text: str, labels: dict[str, str]) -> str:
    """`text` with the course's name after each numbered result it cites by number alone:
    "根据 引理 5.1.1 (Fermat 中值), 此处导数为 0", where the proof's sentence said "根据 引理
    5.1.1" and a student cannot know which lemma that is."""
    def name(match: re.Match[str]) -> str:
        found = labels.get(_key(match.group(1), match.group(2)))
        return f"{match.group(0)} ({found})" if found else match.group(0)

    return _CITED.sub(name, text) if labels else text


def _key(kind: str, number: str) -> str:
    return f"{kind.casefold()}{number}"


def _course_results(store: Store, tenant: str, course: str) -> _Results:
    """The course's result names and labels, read once per version of its documents."""
    documents = store.list_documents(tenant, course)
    key = (tenant, course, "|".join(sorted(f"{d.id}:{d.content_hash}" for d in documents)))
    if key not in _results:
        counts: Counter[str] = Counter()
        labels: dict[str, str] = {}
        lower: set[str] = set()  # "Criterio del Rapporto" is no name: "criterio" is a word
        for document in documents:
            for row in store.export_chunks(tenant, course, document.id):
                text = _LATEX.sub(" ", row.text)
                lower.update(w for w in _WORD.findall(text) if w.islower())
                for label in _RESULT.finditer(text):
                    counts.update(n for n in _NAME.findall(label.group(3))
                                  if len(n) >= 3 and not n.isupper())
                    if label.group(2):
                        labels.setdefault(_key(label.group(1), label.group(2)),
                                          label.group(3).strip())
        if len(_results) >= _NAMES_KEPT:
            _results.pop(next(iter(_results)))
        _results[key] = _Results([n for n, _ in counts.most_common() if n.lower() not in lower],
                                 labels)
    return _results[key]
