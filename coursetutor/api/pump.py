"""Tutor turns run on worker threads; their events reach the event loop through a queue.

The worker owns the tutor's generator: when the client goes away it stops taking events and
closes the generator, which stops the model mid-answer.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any

from ..types import StreamEvent
from .metrics import Metrics

_END = object()
KEEPALIVE = object()  # what `next` returns when nothing came within its timeout
STOP_SECONDS = 10.0  # how long a stopping server waits for the turns it cancelled


class EventPump:
    """One turn's events, produced on a worker thread and consumed by the event loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self.cancelled = threading.Event()

    def _put(self, item: object) -> None:
        try:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, item)
        except RuntimeError:  # the loop is gone (server shutting down): nobody is listening
            self.cancelled.set()

    def run(self, make: Callable[[], Iterator[StreamEvent]]) -> None:
        """Worker side: produce every event, an exception, then the end marker."""
        events: Iterator[StreamEvent] | None = None
        try:
            if self.cancelled.is_set():
                return
            events = make()
            for event in events:
                self._put(event)
                if self.cancelled.is_set():
                    break
        except Exception as exc:
            self._put(exc)
        finally:
            close = getattr(events, "close", None)
            if close is not None:
                close()  # GeneratorExit inside the tutor ends the model's generation
            self._put(_END)

    async def next(self, timeout: float | None = None) -> Any:
        """The next event, None at the end, KEEPALIVE when `timeout` seconds passed without
        one; an error the turn raised is raised here."""
        try:
            item = await asyncio.wait_for(self._queue.get(), timeout)
        except TimeoutError:
            return KEEPALIVE
        if item is _END:
            return None
        if isinstance(item, Exception):
            raise item
        return item


class AskPool:
    """A bounded set of tutor workers; asks beyond it wait in a visible queue."""

    def __init__(self, workers: int, metrics: Metrics) -> None:
        self.workers = workers
        self._executor = ThreadPoolExecutor(workers, thread_name_prefix="tutor")
        self._metrics = metrics
        self._lock = threading.Lock()
        self.waiting = 0  # asks queued for a worker
        self.running = 0
        self._live: dict[Future[None], EventPump] = {}

    def busy(self) -> bool:
        """Whether a new ask would have to wait for a worker."""
        with self._lock:
            return self.running + self.waiting >= self.workers

    def start(self, make: Callable[[], Iterator[StreamEvent]]) -> EventPump:
        pump = EventPump(asyncio.get_running_loop())
        queued = time.perf_counter()
        self._metrics.queue_depth.inc()
        with self._lock:
            self.waiting += 1

        def work() -> None:
            self._metrics.queue_depth.dec()
            self._metrics.queue_seconds.observe(time.perf_counter() - queued)
            with self._lock:
                self.waiting -= 1
                self.running += 1
            try:
                pump.run(make)
            finally:
                with self._lock:
                    self.running -= 1

        future = self._executor.submit(work)
        with self._lock:
            self._live[future] = pump
        future.add_done_callback(self._forget)
        return pump

    def _forget(self, future: Future[None]) -> None:
        with self._lock:
            self._live.pop(future, None)

    def shutdown(self, timeout: float = STOP_SECONDS) -> None:
        """Cancel every turn and wait for the running ones to stop (at their next event), so
        none reads the store after it closes."""
        with self._lock:
            live = dict(self._live)
        for pump in live.values():
            pump.cancelled.set()
        self._executor.shutdown(wait=False, cancel_futures=True)
        wait(live, timeout)
