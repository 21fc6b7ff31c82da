"""The numbers LaTeX prints: sections by class (`book` and `report` count chapters, `article`
starts at sections, `beamer` prints none), appendices lettered, `secnumdepth` obeyed, and
theorem counters as `\\newtheorem` defines them (shared, reset by a sectioning level)."""

from __future__ import annotations

import collections
import dataclasses

from .latex_text import FRAME_LEVEL, THEOREM_NAMES, roman

CHAPTER_CLASSES = frozenset({"book", "report", "scrbook", "scrreprt", "memoir"})


@dataclasses.dataclass(frozen=True)
class TheoremKind:
    name: str  # as printed: "Teorema"
    counter: str  # the counter it steps (shared with another kind, or its own)
    numbered: bool = True


@dataclasses.dataclass
class Numbering:
    """A document's counters as they stand while it is read."""

    doc_class: str = "article"
    appendix: bool = False
    secnumdepth: int = -1  # -1: the class's own
    counts: collections.Counter[int] = dataclasses.field(default_factory=collections.Counter)
    kinds: dict[str, TheoremKind] = dataclasses.field(default_factory=dict)
    parents: dict[str, int | None] = dataclasses.field(default_factory=dict)
    theorems: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)

    @property
    def top(self) -> int:
        """The highest numbered level: chapters in a book, sections in an article."""
        return 1 if self.doc_class in CHAPTER_CLASSES else 2

    def start_appendix(self) -> None:
        self.appendix = True
        self.counts[self.top] = 0

    def number(self, level: int) -> str:
        """The printed number of the current heading at `level` ('' when it has none)."""
        depth = self.secnumdepth if self.secnumdepth >= 0 else (2 if self.top == 1 else 3)
        if self.doc_class == "beamer" or level < self.top or level - 1 > depth:
            return ""
        parts = [self.counts[lv] for lv in range(self.top, level + 1)]
        first = chr(ord("A") + parts[0] - 1) if self.appendix and parts[0] else str(parts[0])
        return ".".join([first, *map(str, parts[1:])])

    def step(self, level: int) -> str:
        """A new numbered heading at `level`: deeper counters and the theorem counters it
        resets start again; returns its number."""
        self.counts[level] += 1
        for deeper in range(level + 1, FRAME_LEVEL):
            self.counts[deeper] = 0
        for counter, parent in self.parents.items():
            if parent is not None and parent >= level:
                self.theorems[counter] = 0
        return roman(self.counts[level]) if level == 0 else self.number(level)

    def define(self, env: str, name: str, shared: str | None, parent: int | None,
               numbered: bool) -> None:
        """`\\newtheorem{env}[shared]{name}[parent]` (or its starred, unnumbered form)."""
        counter = shared or env
        self.parents.setdefault(counter, parent)
        self.kinds[env] = TheoremKind(name, counter, numbered)

    def is_theorem(self, env: str) -> bool:
        return env in self.kinds or env in THEOREM_NAMES

    def theorem(self, env: str) -> tuple[str, str]:
        """A theorem environment begins: its printed name and number ('' if unnumbered)."""
        kind = self.kinds.get(env) or TheoremKind(THEOREM_NAMES.get(env, env), env, False)
        if not kind.numbered or self.doc_class == "beamer":
            return kind.name, ""
        self.theorems[kind.counter] += 1
        parent = self.parents.get(kind.counter)
        prefix = self.number(parent) if parent is not None else ""
        count = self.theorems[kind.counter]
        return kind.name, f"{prefix}.{count}" if prefix else str(count)
