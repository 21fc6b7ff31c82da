"""Fair turns between tenants: one ingest step at a time, round-robin by tenant (`Turns`),
and a few searches at a time, the next to the tenant served longest ago (`FairSlots`).

Each tenant with a running job has a thread of its own, but only the thread holding the turn
computes (parsing a file, embedding one batch, writing one document): the ingest threads of a
process then use about one core, whatever the number of tenants, and the turn goes to the
waiting tenant served longest ago. A tenant's 20,000-chunk upload therefore advances one batch
at a time between the batches of every other tenant's jobs instead of before them.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator


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
    many heavy searches at once waits for its own earlier ones, not the other tenants: while
    another tenant has searched in the last `window` seconds, no tenant holds every slot (one
    stays free for the others), so their next search starts at once rather than behind a
    heavy one already running. Alone, a tenant may use them all. Threads that wait hold no
    CPU (nor the interpreter's lock); a request that waits with `waiting_slot` holds no
    thread either, so a burst of one tenant's searches cannot fill the server's thread pool
    and keep another tenant's request from even starting."""

    def __init__(self, slots: int, window: float = 30.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.slots = max(1, slots)
        self.window = window
        self._clock = clock
        self._cond = threading.Condition()
        self._busy = 0
        self._holding: dict[str, int] = {}  # tenant -> slots it computes in
        self._waiting: dict[str, int] = {}
        self._served: dict[str, int] = {}
        self._seen: dict[str, float] = {}  # tenant -> when it last asked for a slot
        self._ticks = itertools.count(1)
        self._sleepers: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []

    def _cap(self, tenant: str, now: float) -> int:
        """The slots `tenant` may hold: all but one while another tenant is about."""
        if self.slots == 1:
            return 1
        others = any(t != tenant and (self._holding.get(t) or self._waiting.get(t)
                                      or now - at < self.window)
                     for t, at in self._seen.items())
        return self.slots - 1 if others else self.slots

    def _next(self) -> str | None:
        now = self._clock()
        ready = [t for t in self._waiting if self._holding.get(t, 0) < self._cap(t, now)]
        return min(ready, key=lambda t: (self._served.get(t, 0), t)) if ready else None

    def quiet(self, timeout: float) -> None:
        """Wait until no search computes or waits, for at most `timeout` seconds: background
        work (an ingest's next batch) lets the searches in flight finish first."""
        with self._cond:
            self._cond.wait_for(lambda: not self._busy and not self._waiting, timeout)

    @contextlib.contextmanager
    def slot(self, tenant: str) -> Iterator[None]:
        """Hold one of the slots inside the block, once it is `tenant`'s turn."""
        with self._cond:
            self._arrive(tenant)
            while not self._may_take(tenant):
                self._cond.wait(self.window)
            self._take(tenant)
        try:
            yield
        finally:
            self._release(tenant)

    @contextlib.asynccontextmanager
    async def waiting_slot(self, tenant: str) -> AsyncIterator[None]:
        """`slot` for a coroutine: it waits on the event loop (no thread held while queued)
        and computes in the block, typically on a worker thread."""
        loop = asyncio.get_running_loop()
        with self._cond:
            self._arrive(tenant)
        try:
            while True:
                with self._cond:
                    if self._may_take(tenant):
                        self._take(tenant)
                        break
                    woken: asyncio.Future[None] = loop.create_future()
                    self._sleepers.append((loop, woken))
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(woken, self.window)
        except BaseException:  # cancelled while queued (the client went away)
            with self._cond:
                self._leave(tenant)
                self._notify()
            raise
        try:
            yield
        finally:
            self._release(tenant)

    # -- the bookkeeping both share; called with the condition held -------------------
    def _arrive(self, tenant: str) -> None:
        now = self._clock()
        self._seen[tenant] = now
        for t in [t for t, at in self._seen.items() if now - at > self.window
                  and not self._holding.get(t) and not self._waiting.get(t)]:
            del self._seen[t]  # forgotten once quiet for the window
        self._waiting[tenant] = self._waiting.get(tenant, 0) + 1
        self._notify()  # a tenant seen changes the others' caps

    def _may_take(self, tenant: str) -> bool:
        return self._busy < self.slots and self._next() == tenant

    def _leave(self, tenant: str) -> None:
        self._waiting[tenant] -= 1
        if not self._waiting[tenant]:
            del self._waiting[tenant]

    def _take(self, tenant: str) -> None:
        self._leave(tenant)
        self._busy += 1
        self._holding[tenant] = self._holding.get(tenant, 0) + 1
        self._served[tenant] = next(self._ticks)
        self._notify()  # a slot may still be free for the next tenant

    def _release(self, tenant: str) -> None:
        with self._cond:
            self._busy -= 1
            self._holding[tenant] -= 1
            if not self._holding[tenant]:
                del self._holding[tenant]
            self._notify()

    def _notify(self) -> None:
        """Wake every waiter, threads and coroutines, to see whose turn it is."""
        self._cond.notify_all()
        sleepers, self._sleepers = self._sleepers, []
        for loop, woken in sleepers:
            with contextlib.suppress(RuntimeError):  # its loop has closed
                loop.call_soon_threadsafe(_wake, woken)


def _wake(woken: asyncio.Future[None]) -> None:
    if not woken.done():
        woken.set_result(None)
