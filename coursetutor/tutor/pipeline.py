"""The runner of a turn's stages: it books each stage's time under its name, passes the
stage's events on, and ends the turn early when a stage answers with a `Reply`.

A stage is a function from its typed input to its typed output, or to a `Reply` when it
finishes the turn itself (a canned reply, "not covered"); a streaming stage is a generator
of events that returns its output. Stages book nothing themselves: `Pipeline.step` and
`Pipeline.stream` do, so that the timings of every turn have the same names."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Generator, Mapping
from typing import Protocol, TypeVar

from ..llm.router import CallRecord
from ..types import Citation, MetaEvent, StreamEvent
from .categorize import Categorization
from .check import CheckResult
from .evidence import Evidence

In = TypeVar("In")
Out = TypeVar("Out")
Events = Generator[StreamEvent, None, Out]


@dataclasses.dataclass(frozen=True)
class Reply:
    """A turn's reply, ready to be recorded: its text, what it cites and how it ended.

    `meta` is the meta event still to send (None when the turn already sent it); `text` is
    still to stream unless `shown`, and `tail` after it."""

    cat: Categorization
    evidence: Evidence | None
    text: str
    cited: tuple[Citation, ...] = ()
    meta: MetaEvent | None = None
    shown: bool = False  # the student has seen `text`, but for its `tail`
    tail: tuple[str, ...] = ()
    level: str = ""
    key: str = ""  # the exercise the reply helps with
    complete: bool = True
    covered: bool = True
    grade: str | None = None  # None: the evidence's
    note: str = ""
    tier: str = ""  # during a class: the tier the passages came from
    context_over: bool = False
    context: tuple[str, ...] = ()  # the chunk ids of the prompt's sources
    check: CheckResult | None = None
    content: frozenset[str] = frozenset()  # brackets the sources write themselves
    laps: Mapping[str, float] = dataclasses.field(default_factory=dict)


class Lapped(Protocol):
    """A stage output that measured parts of its own work (ms by name)."""

    @property
    def laps(self) -> Mapping[str, float]: ...


class Finished(Exception):
    """A stage answered the turn: the remaining stages are skipped."""

    def __init__(self, reply: Reply) -> None:
        super().__init__("the turn is answered")
        self.reply = reply


@dataclasses.dataclass
class Pipeline:
    """One turn's run: the model calls it made and the time each stage took (ms)."""

    started: float
    log: list[CallRecord] = dataclasses.field(default_factory=list)
    timings: dict[str, float] = dataclasses.field(default_factory=dict)

    def step(self, name: str, stage: Callable[[In], Out | Reply], inp: In) -> Out:
        """Run a stage that streams nothing."""
        since = time.perf_counter()
        out = stage(inp)
        self.book(name, since)
        self._laps(out)
        return self._go_on(out)

    def stream(self, name: str, stage: Callable[[In], Events[Out | Reply]],
               inp: In) -> Events[Out]:
        """Run a stage that streams events, passing them on."""
        since = time.perf_counter()
        out = yield from stage(inp)
        self.book(name, since)
        self._laps(out)
        return self._go_on(out)

    def book(self, name: str, since: float) -> None:
        if name:
            self.timings[name] = round((time.perf_counter() - since) * 1000, 1)

    def _laps(self, out: object) -> None:
        laps: Mapping[str, float] | None = getattr(out, "laps", None)
        if laps:
            self.timings.update(laps)

    def elapsed_ms(self) -> float:
        return round((time.perf_counter() - self.started) * 1000, 1)

    @staticmethod
    def _go_on(out: Out | Reply) -> Out:
        if isinstance(out, Reply):
            raise Finished(out)
        return out
