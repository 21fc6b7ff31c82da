"""The next step of an exercise's worked solution, for a hint that names it.

The hidden solution is cut into its steps (its lines, or its sentences where a PDF ran
them together); a step is done when the exercise gives it or the student already wrote it
(its numbers are given, or for a step without numbers most of its words are in their
messages); the first step left is the
next one. Its computed numbers are masked before the model reads it, so a hint can name the
quantity to compute, the theorem to apply or the line to write, never the result (the
rung's leak check runs on the reply as before).

`uses_solution` is the evaluation's test of a hint: does it name something the steps left
use (two of their words, or one that neither the exercise nor the student brought)? A
lexical proxy, blind to synonyms. Pure functions over plain text.
"""

from __future__ import annotations

import dataclasses
import functools
import re

from ..retrieval.tokenize import tokenize
from .leak import NUMBER, numbers
from .sentences import garbled, units

DONE_SHARE = 0.6  # a step with this share of its words in what the student wrote is done
KEPT = {0.0, 1.0, 2.0, -1.0}  # numbers every formula writes ("x^2", "n+1"): never masked
RESTATED = 0.9  # a step with this share of its words in the exercise only restates it
MASK = "\u2026"
USED = 2  # words of the steps left a hint must share to name one (else one of their own)
MIN_WORDS = 2  # a line with fewer words (a table row, a bare result) is not a step
# a heading or label line: "## Solution 1: Bisection", "Solution 2:", "Soluzione 3."
_LABEL = re.compile(
    r"^\s*(?:#+\s.*|(?:solution|soluzione|lösung|solución|解答|答案|풀이|해답)\s*\d*\s*[:.：]?\s*)$",
    re.IGNORECASE)
_LEADS_IN = re.compile(r"(?:[:\uff1a]|\b(?:is|are|gives|becomes|reads|è|sono|diventa))\s*$")
_URL = re.compile(r"https?://|www\.")  # a page's header, not a step
_TABLE_RULE = re.compile(r"^\s*\|?[\s:|-]+\|?\s*$")
_LETTERS = re.compile(r"[^\W\d_]{2,}")
# the pieces of a formula: "f'(x)", "cos(x_n)", "x_{n+1}", "x_0"
_MATH = re.compile(r"[A-Za-z]+'*\([^()\s]{1,12}\)|[A-Za-z]_\{?\w{1,6}\}?")
_SPACE = re.compile(r"[\s`$]+")
_RESULT = re.compile(r"=\s*[$\u20ac\u00a3]?\s*(" + NUMBER.pattern + r")[^=]*$")
_DOTS = re.compile(r"\.(?:[ \t]\.){2}")
_BRACE = re.compile(r"\|\s*\{z\s*\}")  # a PDF's \underbrace, drawn as "| {z }"
_BARE = re.compile(r"^\s*[-\d.,]+\s*$", re.MULTILINE)  # a result alone on its line
# words of every hint: they say nothing about this exercise's solution
_COMMON = frozenset(tokenize(
    "the a an and or of to in on for with by is are be it this that what which how many much "
    "each you your can do does did we our then so now next step first find compute use get "
    "number value answer question know think about have has from at as if there their they "
    "il la le lo gli un una e o di da in con per che come quanto quanti questo cosa passo "
    "primo trova calcola usa valore risposta domanda sai pensa "
    "why not exercise part sheet esercizio parte perché", "en"))


@dataclasses.dataclass(frozen=True)
class Step:
    """The next step of a worked solution, its computed numbers masked."""

    text: str
    number: int  # 1-based, of `total`
    total: int
    later: tuple[str, ...] = ()  # the steps after it, masked the same way


def steps(solution: str, language: str = "en") -> list[str]:
    """The steps of a worked solution: its sentences (lines joined where one goes on on
    the next); headings, table rules and lines of hardly a word left out."""
    lines: list[str] = []
    # a PDF's spaced ellipsis ("π(x(1)), . . . , π(x(n))") is no sentence end; "⋯" is
    # not the mask "…" either
    solution = _DOTS.sub("\u22ef", _BRACE.sub(" ", solution))
    for unit in units(_BARE.sub("", solution), language):
        if lines and _LEADS_IN.search(lines[-1]):  # "Newton's iteration is" + its formula
            lines[-1] = f"{lines[-1]} {unit}"
        else:
            lines.append(unit)
    return [ln for ln in lines if not _LABEL.match(ln) and not _TABLE_RULE.match(ln)
            and len(_LETTERS.findall(NUMBER.sub(" ", ln))) >= MIN_WORDS]


@functools.lru_cache(maxsize=256)
def _terms(text: str, language: str) -> frozenset[str]:
    """The words of `text` that can name something (the exercise's and the student's
    messages are read once for all the steps they are compared with)."""
    return frozenset(t for t in tokenize(text, language)
                     if len(t) >= 3 or not t.isascii()) - _COMMON


def done(step: str, exercise: str, said: str, language: str = "en") -> bool:
    """Did the exercise or the student already give this step? A computed step is done
    when its result (or, without one, each of its numbers) is given (words alone say too
    little), a formula step when the
    student wrote its formulas, another one when the student wrote most of its words (or
    it only restates the exercise, which asks for it in the same words)."""
    given = numbers(f"{exercise}\n{said}")
    result = _RESULT.search(step)
    if result and numbers(result.group(1)) - KEPT:  # what it computes: "24 / 3 = 8"
        return bool(numbers(result.group(1)) & given)
    values = [numbers(t) for t in NUMBER.findall(step) if numbers(t) - KEPT]
    if values:
        return all(v & given for v in values)  # "10,000" is known as 10000 (or as 10.0)
    pieces = {_SPACE.sub("", m) for m in _MATH.findall(step)}
    words = _terms(step, language)
    asked = _SPACE.sub("", exercise)
    if (all(p in asked for p in pieces) and words
            and len(words & _terms(exercise, language)) >= RESTATED * len(words)):
        return True  # it restates the exercise (its title, its data)
    if pieces:  # a formula step: done when the student wrote its formulas
        written = _SPACE.sub("", said)
        return sum(p in written for p in pieces) >= DONE_SHARE * len(pieces)
    return not words or len(words & _terms(said, language)) >= DONE_SHARE * len(words)


def mask(step: str, given: str) -> str:
    """The step with every number the exercise and the student did not give replaced."""
    known = numbers(given) | KEPT

    def hide(m: re.Match[str]) -> str:
        return m.group() if numbers(m.group()) & known else MASK

    return NUMBER.sub(hide, step)


def next_step(solution: str, exercise: str, said: str, language: str = "en") -> Step | None:
    """The first step of `solution` that neither `exercise` nor the student's messages
    (`said`) already give, masked; None when the solution has no step left, or when that
    step cannot be read (a formula run flat by the PDF, a glyph soup: a small model
    misreads it, so the hint goes without)."""
    found = steps(solution, language)
    known = f"{exercise}\n{said}"
    for n, step in enumerate(found, start=1):
        if not done(step, exercise, said, language):
            if garbled(step) or _URL.search(step):
                return None
            return Step(mask(step, known), n, len(found),
                        tuple(mask(s, known) for s in found[n:] if not garbled(s)))
    return None


def uses_solution(reply: str, solution: str, exercise: str, said: str,
                  language: str = "en") -> bool:
    """Does `reply` name something the solution's steps left use: a word of theirs that
    neither the exercise nor the student brought (a quantity, an operation, a theorem),
    or two of their words ("how many pencils fit in a box")?"""
    known = f"{exercise}\n{said}"
    left = [s for s in steps(solution, language) if not done(s, exercise, said, language)]
    if not left:
        return False
    shared = _terms(reply, language) & frozenset().union(*(_terms(s, language) for s in left))
    return len(shared) >= USED or bool(shared - _terms(known, language))


PART_WORDS = 2  # words a question must share with an exercise's part to ask about it


def closest_part(question: str, parts: dict[str, str], language: str = "en") -> str | None:
    """The part of an exercise a question asks about without naming it: the one sharing
    the most words with it ("Why is the risk not convex?" and "(c) Show that Remp is not
    convex in general"), at least two and more than any other part; None otherwise."""
    asked = _terms(question, language)
    shared = sorted(((len(asked & _terms(text, language)), letter)
                     for letter, text in parts.items()), reverse=True)
    if not shared or shared[0][0] < PART_WORDS or (
            len(shared) > 1 and shared[1][0] == shared[0][0]):
        return None
    return shared[0][1]


def asks_part(question: str, part: str, language: str = "en") -> bool:
    """Does the question ask what an exercise's part (or its opening) says: two of its
    words?"""
    return len(_terms(question, language) & _terms(part, language)) >= PART_WORDS
