"""Fair turns between tenants: one ingest step at a time, round-robin by tenant (`Turns`),
and a few searches at a time, the next to the tenant served longest ago (`FairSlots`).

Each tenant with a running job has a thread of its own, but only the thread holding the turn
computes (parsing a file, embedding one batch, writing one document): the ingest threads of a
process then use about one core, whatever the number of tenants, and the turn goes to the
waiting tenant served longest ago. A tenant's 20,000-chunk upload therefore advances one batch
at a time between the batches of every other tenant's jobs instead of before them.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
from collections.abc import Iterator


class Turns:
    """A baton handed round-robin between the tenants that wait for it."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._holder: str | None = None
        self._waiting: dict[str, int] = {}
        self._served: dict[str, int] = {}  # tenant -> tick of its last turn
        self._ticks = itertools.count(1)
        self.order: list[str] = []  # tenants in the order they got turns (the last 1,000)

    def _next(self) -> str | None:
        if not self._waiting:
            return None
        return min(self._waiting, key=lambda t: (self._served.get(t, 0), t))

    def take(self, tenant: str) -> None:
        """Wait for `tenant`'s turn."""
        with self._cond:
            self._waiting[tenant] = self._waiting.get(tenant, 0) + 1
            while self._holder is not None or self._next() != tenant:
                self._cond.wait()
            self._waiting[tenant] -= 1
            if not self._waiting[tenant]:
                del self._waiting[tenant]
            self._holder = tenant
            self._served[tenant] = next(self._ticks)
            self.order = [*self.order[-999:], tenant]

    def give(self) -> None:
        """End the current turn."""
        with self._cond:
            self._holder = None
            self._cond.notify_all()

    def pass_on(self, tenant: str) -> None:
        """Between two steps of `tenant`: let a waiting tenant go first, then go on."""
        with self._cond:
            if not self._waiting:
                return
        self.give()
        self.take(tenant)

    @contextlib.contextmanager
    def turn(self, tenant: str) -> Iterator[None]:
        """Hold `tenant`'s turn inside the block."""
        self.take(tenant)
        try:
            yield
        finally:
            self.give()


class FairSlots:
    """`slots` computations at a time (a search: its query's tokens, embedding and ranking),
    the next free slot going to the waiting tenant served longest ago. A tenant that sends
    many heavy searches at once waits for its own earlier ones, not the other tenants: their
    next search takes the first slot that frees, behind at most the computations already
    running. Threads that wait hold no CPU (nor the interpreter's lock)."""

    def __init__(self, slots: int) -> None:
        self.slots = max(1, slots)
        self._cond = threading.Condition()
        self._busy = 0
        self._waiting: dict[str, int] = {}
        self._served: dict[str, int] = {}
        self._ticks = itertools.count(1)

    def _next(self) -> str | None:
        if not self._waiting:
            return None
        return min(self._waiting, key=lambda t: (self._served.get(t, 0), t))

    def quiet(self, timeout: float) -> None:
        """Wait until no search computes or waits, for at most `timeout` seconds: background
        work (an ingest's next batch) lets the searches in flight finish first."""
        with self._cond:
            self._cond.wait_for(lambda: not self._busy and not self._waiting, timeout)

    @contextlib.contextmanager
    def slot(self, tenant: str) -> Iterator[None]:
        """Hold one of the slots inside the block, once it is `tenant`'s turn."""
        with self._cond:
            self._waiting[tenant] = self._waiting.get(tenant, 0) + 1
            while self._busy >= self.slots or self._next() != tenant:
                self._cond.wait()
            self._waiting[tenant] -= 1
            if not self._waiting[tenant]:
                del self._waiting[tenant]
            self._busy += 1
            self._served[tenant] = next(self._ticks)
            self._cond.notify_all()  # a slot may still be free for the next tenant
        try:
            yield
        finally:
            with self._cond:
                self._busy -= 1
                self._cond.notify_all()
