"""When and how long to retry a backend call: exponential backoff with full jitter.

A call is retried only while it has produced nothing: a streamed reply that has yielded
text is never started again, so the caller never sees the same words twice.
"""

from __future__ import annotations

import dataclasses
import random as random_module
import time
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

from ..errors import BackendUnavailableError

T = TypeVar("T")


class TransientError(Exception):
    """A failure worth another attempt; `RetryPolicy` turns it into BackendUnavailableError.

    Raise it `from` the original error: that error becomes the final error's cause.
    """

    def __init__(self, reason: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after


def is_retryable_status(status: int) -> bool:
    """True for HTTP statuses that may succeed later: 429 and 5xx (but 501 Not Implemented)."""
    return status == 429 or (status >= 500 and status != 501)


def parse_retry_after(value: str | None) -> float | None:
    """Seconds asked for by a `Retry-After: <seconds>` header; None when absent or not seconds."""
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None  # an HTTP date: fall back to our own backoff
    return seconds if seconds >= 0 else None


@dataclasses.dataclass(frozen=True)
class RetryPolicy:
    """Up to `retries` more attempts after the first, waiting between them."""

    retries: int = 3
    base: float = 0.5
    cap: float = 8.0
    sleep: Callable[[float], None] = time.sleep
    random: Callable[[], float] = random_module.random

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after failed attempt `attempt` (0 is the first).

        Full jitter (Brooker, "Exponential Backoff and Jitter", AWS 2015):
        uniform(0, min(cap, base * 2**attempt)); a server's Retry-After wins, capped at `cap`.
        """
        if retry_after is not None:
            return min(self.cap, retry_after)
        return self.random() * min(self.cap, self.base * 2.0**attempt)

    def call(self, fn: Callable[[], T]) -> T:
        """Return `fn()`, calling it again after each TransientError while retries remain."""
        attempt = 0
        while True:
            try:
                return fn()
            except TransientError as exc:
                self._after_failure(exc, attempt)
            attempt += 1

    def stream(self, attempt_fn: Callable[[], Iterable[T]]) -> Iterator[T]:
        """Yield from `attempt_fn()`, starting it again after a TransientError until it yields."""
        attempt = 0
        while True:
            started = False
            try:
                for item in attempt_fn():
                    started = True
                    yield item
                return
            except TransientError as exc:
                if started:  # never start a reply again once part of it was passed on
                    raise BackendUnavailableError(exc.reason) from exc.__cause__
                self._after_failure(exc, attempt)
            attempt += 1

    def _after_failure(self, exc: TransientError, attempt: int) -> None:
        """Wait before the next attempt, or raise BackendUnavailableError when none is left."""
        if attempt >= self.retries:
            tries = f" ({attempt + 1} attempts)" if attempt else ""
            raise BackendUnavailableError(f"{exc.reason}{tries}") from exc.__cause__
        self.sleep(self.delay(attempt, exc.retry_after))
