"""Rate limits: requests per minute and per hour, and concurrent streams, per limited party:
a key, a student (all of a student's keys share one budget) or a client address (failed
authentications and signed-URL fetches, which no key pays for).

This process's limits live here; limits shared by several processes are in ratelimit_redis.
"""

from __future__ import annotations

import abc
import dataclasses
import math
import threading
import time
from collections import deque
from collections.abc import Callable

from ..config import Settings
from ..errors import RateLimitError
from ..types import Role


@dataclasses.dataclass(frozen=True)
class Limits:
    """One party's limits; 0 means unlimited. `per` names the party in messages."""

    per_minute: int
    per_hour: int
    streams: int
    per: str = dataclasses.field(default="this key", compare=False)

    @classmethod
    def for_role(cls, settings: Settings, role: Role) -> Limits:
        return cls(getattr(settings, f"api_rate_{role}_per_minute"),
                   getattr(settings, f"api_rate_{role}_per_hour"),
                   getattr(settings, f"api_rate_{role}_streams"),
                   "this student" if role == "student" else "this key")

    @classmethod
    def for_address(cls, settings: Settings, what: str) -> Limits:
        """Limits per client address of `what`: 'failed_auth' or 'signed_url'."""
        return cls(getattr(settings, f"api_rate_{what}_per_minute"),
                   getattr(settings, f"api_rate_{what}_per_hour"), 0,
                   "this client address")


class RateLimiter(abc.ABC):
    """Counts requests and open streams per limited party (`key_id`: a key, a student or an
    address, as `deps` names them)."""

    @abc.abstractmethod
    def hit(self, key_id: str, limits: Limits) -> None:
        """Count one request, or raise RateLimitError when a window is full."""

    @abc.abstractmethod
    def open_stream(self, key_id: str, limits: Limits) -> None:
        """Take a stream slot, or raise RateLimitError when all are taken."""

    @abc.abstractmethod
    def close_stream(self, key_id: str) -> None:
        """Give back a slot `open_stream` took for this key."""

    def close(self) -> None:
        """Release what the limiter holds (threads, connections) when the app stops."""
        return None  # nothing, in memory


class MemoryRateLimiter(RateLimiter):
    """Sliding-window logs in this process (one API worker)."""

    WINDOWS = (("minute", 60.0), ("hour", 3600.0))

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._log: dict[tuple[str, str], deque[float]] = {}
        self._streams: dict[str, int] = {}

    def hit(self, key_id: str, limits: Limits) -> None:
        now = self._clock()
        caps = {"minute": limits.per_minute, "hour": limits.per_hour}
        with self._lock:
            for name, span in self.WINDOWS:
                cap = caps[name]
                if cap <= 0:
                    continue
                log = self._log.setdefault((key_id, name), deque())
                while log and log[0] <= now - span:
                    log.popleft()
                if len(log) >= cap:
                    wait = max(1, math.ceil(log[0] + span - now))
                    raise RateLimitError(
                        f"rate limit: {cap} requests per {name} for {limits.per}; "
                        f"retry in {wait} s", wait)
            for name, _span in self.WINDOWS:
                if caps[name] > 0:
                    self._log[(key_id, name)].append(now)

    def open_stream(self, key_id: str, limits: Limits) -> None:
        with self._lock:
            open_now = self._streams.get(key_id, 0)
            if 0 < limits.streams <= open_now:
                raise RateLimitError(
                    f"rate limit: {limits.streams} answers at a time for {limits.per}; "
                    "wait for one to finish", 1)
            self._streams[key_id] = open_now + 1

    def close_stream(self, key_id: str) -> None:
        with self._lock:
            left = self._streams.get(key_id, 0) - 1
            if left > 0:
                self._streams[key_id] = left
            else:
                self._streams.pop(key_id, None)
