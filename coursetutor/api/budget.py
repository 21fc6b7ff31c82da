"""Compute budgets: how much embedding and generation time a key and a tenant may spend.

A request's count against the rate limits says nothing about its cost: one search with a long
query costs a hundred short ones. So each key and each tenant also has a token bucket of
compute seconds (`api_cpu_key_seconds_per_minute`, `api_cpu_tenant_seconds_per_minute`): it
holds at most one minute's worth and refills at that rate. A request first reserves what it is
estimated to cost (a search from its text's length in tokens, at the average cost per token
measured so far; a tutor turn at the average turn so far); when the bucket of its key or its
tenant cannot cover that it is refused with 429 and `Retry-After`, before any work starts.
When the work is done, the difference between the measured cost and the estimate is charged
too, so a bucket may go into debt and the next request waits for it to refill.

This process's buckets live here; buckets shared by several processes are in budget_redis.
"""

from __future__ import annotations

import abc
import dataclasses
import math
import threading
import time
from collections.abc import Callable

from ..config import Settings
from ..errors import ComputeBudgetError

# the first estimates, before anything was measured: a search costs about 4 ms of CPU per
# token to embed on one core (2 s for 512 tokens, 0.03 s for a short one); a tutor turn's time
# follows the model and the answer, not the question, so it is estimated per turn
FIRST_PER_TOKEN = {"search": 0.004, "ask": 2.0}
PER_REQUEST = frozenset({"ask"})  # kinds estimated per request rather than per token
FLOOR = {"search": 0.002, "ask": 0.5}
LEARN = 0.3  # weight of each new measurement in the running average cost


@dataclasses.dataclass(frozen=True)
class Buckets:
    """The two budgets one request draws on, each as seconds per minute (0: unlimited), and
    how many requests of the key may compute at once (0: any number)."""

    key_id: str
    tenant: str
    key_rate: float
    tenant_rate: float
    key_concurrent: int = 0

    @classmethod
    def of(cls, settings: Settings, key_id: str, tenant: str) -> Buckets:
        return cls(key_id, tenant, settings.api_cpu_key_seconds_per_minute,
                   settings.api_cpu_tenant_seconds_per_minute, settings.api_cpu_key_concurrent)

    def named(self) -> list[tuple[str, str, float]]:
        """(kind, bucket name, seconds per minute) of the limited buckets."""
        found = [("key", "key:" + self.key_id, self.key_rate),
                 ("tenant", "tenant:" + self.tenant, self.tenant_rate)]
        return [b for b in found if b[2] > 0]


@dataclasses.dataclass
class Charge:
    """What a request reserved; `settle` charges its measured cost."""

    budget: ComputeBudget
    buckets: Buckets
    kind: str
    tokens: int
    estimate: float
    counted: bool = False  # counted among the key's requests computing now
    settled: bool = False

    def settle(self, seconds: float) -> None:
        """Charge the measured cost (once): the difference to the estimate."""
        if self.settled:
            return
        self.settled = True
        if self.counted:
            self.budget.release(self.buckets)
        self.budget.learn(self.kind, self.tokens, seconds)
        if self.buckets.named():
            self.budget.adjust(self.buckets, seconds - self.estimate)


class ComputeBudget(abc.ABC):
    """Token buckets of compute seconds per key and per tenant."""

    def __init__(self) -> None:
        self._per_token = dict(FIRST_PER_TOKEN)
        self._learn_lock = threading.Lock()
        self._running: dict[str, int] = {}  # key -> its requests computing now (this process)

    def estimate(self, kind: str, tokens: int) -> float:
        """Seconds a `kind` request of `tokens` tokens is expected to cost."""
        units = 1 if kind in PER_REQUEST else max(1, tokens)
        with self._learn_lock:
            return max(FLOOR[kind], self._per_token[kind] * units)

    def learn(self, kind: str, tokens: int, seconds: float) -> None:
        """Fold one measurement into the running cost per token."""
        if seconds <= 0:
            return
        units = 1 if kind in PER_REQUEST else max(1, tokens)
        with self._learn_lock:
            old = self._per_token[kind]
            self._per_token[kind] = (1 - LEARN) * old + LEARN * seconds / units

    def reserve(self, buckets: Buckets, kind: str, tokens: int) -> Charge:
        """Take the estimated cost from both buckets, or raise ComputeBudgetError (nothing
        taken) when either cannot cover it."""
        estimate = self.estimate(kind, tokens)
        # searches count against the key's concurrency (answers have their stream slots)
        counted = kind == "search"
        if counted:
            self._enter(buckets)
        try:
            if buckets.named():
                self.take(buckets, estimate)
        except BaseException:
            if counted:
                self.release(buckets)
            raise
        return Charge(self, buckets, kind, tokens, estimate, counted)

    def _enter(self, buckets: Buckets) -> None:
        """Count a request of the key computing now, or refuse one over the cap: a key's
        bucket holds a minute's worth, and requests admitted all at once would spend it on
        every thread of the process before the first is measured."""
        cap = buckets.key_concurrent
        with self._learn_lock:
            running = self._running.get(buckets.key_id, 0)
            if 0 < cap <= running:
                raise ComputeBudgetError(
                    f"compute budget: {cap} searches at a time for this key; retry in 1 s",
                    1, "key")
            self._running[buckets.key_id] = running + 1

    def release(self, buckets: Buckets) -> None:
        """A request `reserve` admitted has finished computing."""
        with self._learn_lock:
            left = self._running.get(buckets.key_id, 0) - 1
            if left > 0:
                self._running[buckets.key_id] = left
            else:
                self._running.pop(buckets.key_id, None)

    @abc.abstractmethod
    def take(self, buckets: Buckets, seconds: float) -> None:
        """Take `seconds` from every limited bucket, or from none and raise."""

    @abc.abstractmethod
    def adjust(self, buckets: Buckets, seconds: float) -> None:
        """Take `seconds` more (give back when negative) from every limited bucket, even
        into debt."""

    def close(self) -> None:
        """Release what the budget holds when the app stops."""
        return None  # nothing, in memory


def refused(kind: str, rate: float, wait: float) -> ComputeBudgetError:
    """The 429 of a bucket that cannot cover a request for `wait` more seconds."""
    after = max(1, math.ceil(wait))
    return ComputeBudgetError(
        f"compute budget: {rate:g} seconds of embedding and generation per minute for this "
        f"{kind} are spent; retry in {after} s", after, kind)


class MemoryComputeBudget(ComputeBudget):
    """The buckets of this process (one API worker)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self._clock = clock
        self._lock = threading.Lock()
        self._level: dict[str, tuple[float, float]] = {}  # name -> (seconds left, at)

    def _now_level(self, name: str, rate: float, now: float) -> float:
        capacity = rate  # one minute's worth
        level, at = self._level.get(name, (capacity, now))
        return min(capacity, level + (now - at) * rate / 60.0)

    def take(self, buckets: Buckets, seconds: float) -> None:
        now = self._clock()
        with self._lock:
            levels = {name: self._now_level(name, rate, now)
                      for _kind, name, rate in buckets.named()}
            for kind, name, rate in buckets.named():
                if levels[name] < min(seconds, rate):
                    need = min(seconds, rate) - levels[name]
                    raise refused(kind, rate, need * 60.0 / rate)
            for _kind, name, _rate in buckets.named():
                self._level[name] = (levels[name] - seconds, now)

    def adjust(self, buckets: Buckets, seconds: float) -> None:
        now = self._clock()
        with self._lock:
            for _kind, name, rate in buckets.named():
                self._level[name] = (self._now_level(name, rate, now) - seconds, now)

    def level(self, name: str, rate: float) -> float:
        """Seconds left in a bucket now (for tests and metrics)."""
        with self._lock:
            return self._now_level(name, rate, self._clock())
