"""Where each paragraph of a document's LaTeX or Markdown source is printed in its PDF.

A paragraph's words (its formulas reduced to the words they print, `\\text{...}` and operator
names, markup dropped) and each page's text layer are cut into word 2- and 3-grams (single
letters and digits left out: a formula's variables come out of a text layer as glyph runs;
n-grams of one repeated word too, what is left of a formula's cases). A paragraph scores each
page with the inverse page frequencies of the n-grams they share, less its median over the
pages, so that common phrases match nowhere in particular:

    score(u, p) = sum over g in grams(u) & grams(p) of log((N + 1) / df(g)) - median_p(...)

The pages are chosen in reading order: the path of non-decreasing pages with the highest
total score (dynamic programming, each page skipped costs `JUMP`), so a phrase that also
occurs on a far page cannot pull a paragraph away from its neighbours. A paragraph with too
little evidence (a formula alone, a short item) takes the page of the paragraphs around it
when they agree, and those before the first page's or after the last page's paragraphs
take that page. Between a paragraph found on page a and one on page a + 1, the page break is
where page a's text runs out: the paragraphs between them that fit in the characters page a
prints after the first one's last n-gram stay on it, the others go to a + 1 (formulas count
when the text layer has them). Otherwise a paragraph has no page. Paragraphs are placed in
pieces, each display formula and each group of sentences of about `PIECE_CHARS` one piece,
so a paragraph across a page break is cut there.
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
import math
import re
import unicodedata
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

GRAMS = (2, 3)
JUMP = 0.1  # cost of each page skipped between two paragraphs
EVIDENCE = 1.5  # a placement needs this many n-grams found on one page alone (in log(N + 1))
PIECE_CHARS = 240  # a paragraph longer than this is placed in pieces of about this size

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_WORD = re.compile(rf"[{_CJK}]|[^\W\d_{_CJK}]{{2,}}|\d{{2,}}")
_MATH = re.compile(r"\$\$.+?\$\$|(?<!\\)\$(?:\\.|[^$\\])*\$", re.DOTALL)
_DISPLAY = re.compile(r"\$\$.+?\$\$", re.DOTALL)
_PRINTED = re.compile(r"\\(?:text|mbox|mathrm|operatorname|textrm|textit|textbf|mathit)\*?"
                      r"\{([^{}]*)\}|\\(lim|liminf|limsup|sin|cos|tan|cot|sec|csc|arcsin|"
                      r"arccos|arctan|sinh|cosh|tanh|log|ln|lg|exp|max|min|sup|inf|det|dim|"
                      r"ker|deg|gcd|arg|Pr|hom|mod|bmod|pmod)(?![A-Za-z])")
_COMMAND = re.compile(r"\\[A-Za-z@]+\*?")
_ENVIRONMENT = re.compile(r"\\(?:begin|end)\{[^{}]*\}(?:\{[^{}]*\})?")
_LAYOUT = frozenset({
    "frac", "dfrac", "tfrac", "left", "right", "big", "Big", "bigg", "Bigg", "mathbb", "mathrm",
    "mathbf", "mathcal", "mathit", "mathsf", "mathtt", "mathscr", "mathfrak", "boldsymbol",
    "bm", "text", "textbf", "textit", "textrm", "mbox", "operatorname", "displaystyle",
    "textstyle", "limits", "nolimits", "quad", "qquad", "hline", "overline", "underline",
    "overbrace", "underbrace", "widetilde", "widehat", "hat", "tilde", "bar", "vec", "dot",
})
_UNPRINTED = re.compile(r"[\s{}$^_&~\\*#>]|\[formula missing\]")
_SENTENCE_END = re.compile(r"[.!?;:。！？；](?=\s)|[。！？；]")

Matrix = npt.NDArray[np.float64]


def printed_words(formula: str) -> str:
    """The words a formula prints: its text and operator names (`\\lim`, `\\text{se}`)."""
    return " ".join(m.group(2) if m.group(1) is None else m.group(1)
                    for m in _PRINTED.finditer(formula))


def source_words(text: str) -> list[str]:
    """A source paragraph's words as a PDF prints them, case-folded, in order."""
    text = _MATH.sub(lambda m: f" {printed_words(m.group())} ", unicodedata.normalize(
        "NFKC", text))
    return page_words(_COMMAND.sub(" ", text))


def page_words(text: str) -> list[str]:
    """A page's words, case-folded: CJK characters one by one, other words of two letters
    or more, numbers of two digits or more."""
    return [w.casefold() for w in _WORD.findall(unicodedata.normalize("NFKC", text))]


def grams(words: Sequence[str]) -> set[tuple[str, ...]]:
    """The word n-grams of `words` (n in GRAMS), but those of one word repeated ("con con":
    what is left of a formula's cases)."""
    return {g for n in GRAMS for i in range(len(words) - n + 1)
            if len(set(g := tuple(words[i : i + n]))) > 1}


def scores(units: Sequence[Sequence[str]], pages: Sequence[Sequence[str]]) -> Matrix:
    """score[u, p]: the inverse page frequencies of the n-grams unit u shares with page p,
    less the unit's median over the pages (with three pages or more)."""
    n = len(pages)
    where: dict[tuple[str, ...], list[int]] = collections.defaultdict(list)
    for p, words in enumerate(pages):
        for g in grams(words):
            where[g].append(p)
    out = np.zeros((len(units), n))
    for u, words in enumerate(units):
        for g in grams(words):
            found = where.get(g)
            if found:
                out[u, found] += math.log((n + 1) / len(found))
    if n >= 3:
        out -= np.median(out, axis=1, keepdims=True)
    return np.maximum(out, 0.0)


def monotone_path(score: Matrix, jump: float = JUMP) -> list[int]:
    """The non-decreasing page (0-based) per unit with the highest total score, each page
    skipped between two units costing `jump`."""
    m, n = score.shape
    if m == 0:
        return []
    cols = np.arange(n)
    best = score[0].copy()
    back = np.zeros((m, n), dtype=np.int64)
    for i in range(1, m):
        shifted = best + jump * cols
        run = np.maximum.accumulate(shifted)
        back[i] = np.maximum.accumulate(np.where(shifted >= run, cols, 0))
        best = run - jump * cols + score[i]
    path = [int(np.argmax(best))]
    for i in range(m - 1, 0, -1):
        path.append(int(back[i, path[-1]]))
    return path[::-1]


@dataclasses.dataclass(frozen=True)
class Page:
    """A page's words, and for each the printed characters up to its end."""

    words: list[str]
    ends: list[int]
    size: int  # printed (not blank) characters on the page

    @classmethod
    def of(cls, text: str) -> Page:
        text = unicodedata.normalize("NFKC", text)
        printed = list(itertools.accumulate((not c.isspace() for c in text), initial=0))
        found = list(_WORD.finditer(text))
        return cls([m.group().casefold() for m in found], [printed[m.end()] for m in found],
                   printed[-1])

    def room_after(self, unit: set[tuple[str, ...]]) -> tuple[int, str]:
        """The printed characters after the last of `unit`'s n-grams on this page (of those
        found once on it, when there are: a phrase the unit shares with what follows it
        says nothing of where it ends), and the word that ends it."""
        at: dict[tuple[str, ...], list[int]] = collections.defaultdict(list)
        for n in GRAMS:
            for i in range(len(self.words) - n + 1):
                g = tuple(self.words[i : i + n])
                if g in unit:
                    at[g].append(i + n - 1)
        once = [ends[0] for ends in at.values() if len(ends) == 1]
        last = max(once or [i for ends in at.values() for i in ends], default=-1)
        if last < 0:
            return self.size, ""
        return self.size - self.ends[last], self.words[last]


def printed_size(text: str, formulas: bool = True) -> int:
    """About how many characters `text` prints (its formulas' too when `formulas`): a
    command prints one glyph (`\\alpha`, `\\int`) or none (`\\frac`, `\\mathbb`)."""
    if not formulas:
        text = _MATH.sub(" ", text)
    text = _COMMAND.sub(lambda m: "" if m.group()[1:].rstrip("*") in _LAYOUT else "x",
                        _ENVIRONMENT.sub("", text))
    return len(_UNPRINTED.sub("", text))


def printed_after(text: str, word: str, formulas: bool = True) -> int:
    """About how many characters `text` prints after the last time it prints `word`."""
    at = unicodedata.normalize("NFKC", text).casefold().rfind(word) if word else -1
    return printed_size(text[at + len(word):], formulas) if at >= 0 else 0


@dataclasses.dataclass(frozen=True)
class Placement:
    """The 0-based page of each unit (None: it cannot be told) and how many units found
    their page by evidence of their own."""

    pages: list[int | None]
    evidence: int


def place(units: Sequence[Sequence[str]], pages: Sequence[Page],
          texts: Sequence[str] | None = None, formulas: bool = True) -> Placement:
    """Each unit's page: the best monotone path, kept where the unit has evidence, filled
    from its neighbours elsewhere (with `texts`, each unit's source, by the characters they
    print; `formulas`: whether the pages print formulas)."""
    if not units or not pages:
        return Placement([None] * len(units), 0)
    score = scores(units, [p.words for p in pages])
    path = monotone_path(score)
    need = EVIDENCE * math.log(len(pages) + 1)
    found: list[int | None] = [p if score[u, p] >= need else None for u, p in enumerate(path)]
    sizes = None if texts is None else [printed_size(t, formulas) for t in texts]

    def room(unit: int) -> int:
        left, word = pages[path[unit]].room_after(grams(units[unit]))
        tail = printed_after(texts[unit], word, formulas) if texts is not None else 0
        return left - tail  # what the unit itself prints after its last n-gram

    return Placement(fill(found, sizes, room, len(pages) - 1),
                     sum(p is not None for p in found))


def fill(found: Sequence[int | None], sizes: Sequence[int] | None = None,
         room: Callable[[int], int] | None = None, last: int | None = None
         ) -> list[int | None]:
    """Units without evidence between two on one page take that page; between one on page
    a and one on page a + 1, those that fit in the `room(j)` characters page a has left after
    the unit j before them take a, the others a + 1 (all take a without `sizes`). Units
    before the first unit with evidence take its page when it is page 0, those after the
    last one take its page when it is `last`, the last page."""
    out = list(found)
    placed = [i for i, p in enumerate(found) if p is not None]
    if not placed:
        return out
    if found[placed[0]] == 0:
        out[: placed[0]] = [0] * placed[0]
    if last is not None and found[placed[-1]] == last:
        out[placed[-1] + 1 :] = [last] * (len(found) - placed[-1] - 1)
    for j, k in itertools.pairwise(placed):
        a, b = found[j], found[k]
        assert a is not None and b is not None
        gap = range(j + 1, k)
        if b - a > 1 or not gap:
            continue
        if b == a or sizes is None or room is None:
            out[j + 1 : k] = [a] * len(gap)
            continue
        left, used = room(j), 0
        for u in gap:
            used += sizes[u]
            out[u] = a if used - sizes[u] / 2 < left else b
    return out


def pieces(text: str, size: int = PIECE_CHARS) -> list[str]:
    """`text` cut around its display formulas (a page often breaks before or after one) and
    at sentence ends outside formulas into pieces of about `size` characters (a code block
    is one piece)."""
    if text.startswith("```"):
        return [text]
    out: list[str] = []
    start = 0
    for m in _DISPLAY.finditer(text):
        out.extend(_sentences(text[start:m.start()], size))
        out.append(m.group())
        start = m.end()
    out.extend(_sentences(text[start:], size))
    return [p for p in out if p] or [text]


def _sentences(text: str, size: int) -> list[str]:
    """`text` (no display formula) cut at sentence ends outside its formulas."""
    text = text.strip()
    if len(text) <= size * 1.5:
        return [text]
    formulas = [(m.start(), m.end()) for m in _MATH.finditer(text)]
    cuts = [m.end() for m in _SENTENCE_END.finditer(text)
            if not any(a <= m.start() < b for a, b in formulas)]
    out, start = [], 0
    for cut in cuts:
        if cut - start >= size and len(text) - cut >= size // 2:
            out.append(text[start:cut].strip())
            start = cut
    out.append(text[start:].strip())
    return out
