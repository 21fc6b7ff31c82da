"""Fair turns between tenants: one ingest step at a time, round-robin by tenant.

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
