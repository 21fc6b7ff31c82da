"""Rate limits shared by every API process of a deployment, kept in Redis.

Windows: one sorted set per key and window holds the accepted requests, scored by their time.
One Lua script drops the entries that left each window, refuses when a window is full (retry
once its oldest entry leaves) and otherwise records the request in every limited window: one
atomic step, so two processes never both take a window's last slot. The semantics and the
messages are MemoryRateLimiter's.

Stream slots are leases: a member per open stream in a sorted set per key, scored by the time
its lease ends; taking a slot first drops the expired ones. While a stream runs, a thread of the
process that opened it renews that process's leases every third of LEASE_SECONDS, so a long
answer keeps its slot; when the process dies (killed, machine lost) nobody renews them and the
slots are free again within LEASE_SECONDS. A counter (INCR on open, DECR on close) would leak
the slots of a dead process for good; one fixed expiry would have to outlast the slowest answer
(a queued local model takes minutes) and would then hold a dead process's slots that long.

Time is Redis's own clock (TIME inside the scripts) unless a clock is given, so processes on
machines whose clocks disagree still count one window.
"""

from __future__ import annotations

import logging
import math
import threading
import uuid
from collections.abc import Callable

from ..errors import RateLimitError, RedisUnavailableError
from ..store.redis import RedisLink
from .ratelimit import Limits, MemoryRateLimiter, RateLimiter

log = logging.getLogger("coursetutor.api")

LEASE_SECONDS = 60.0

# ARGV[1] is the time, or '' for Redis's clock; returns it as text, exactly
_NOW = """
local now_text = ARGV[1]
if now_text == '' then
  local t = redis.call('TIME')
  now_text = t[1] .. '.' .. string.format('%06d', tonumber(t[2]))
end
local now = tonumber(now_text)
"""

# KEYS: a sorted set per limited window; ARGV: now, request id, then span and cap per window.
# Returns {0} when counted, else {window number, its oldest entry's time, now}.
_HIT = _NOW + """
for i, key in ipairs(KEYS) do
  local span = tonumber(ARGV[2 * i + 1])
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - span)
  if redis.call('ZCARD', key) >= tonumber(ARGV[2 * i + 2]) then
    local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
    return {i, oldest[2], now_text}
  end
end
for i, key in ipairs(KEYS) do
  redis.call('ZADD', key, now, ARGV[2])
  redis.call('PEXPIRE', key, math.ceil(tonumber(ARGV[2 * i + 1]) * 1000))
end
return {0}
"""

# KEYS[1]: the key's leases; ARGV: now, slot id, lease seconds, cap (0: unlimited)
_OPEN = _NOW + """
local lease = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local cap = tonumber(ARGV[4])
if cap > 0 and redis.call('ZCARD', KEYS[1]) >= cap then
  return 0
end
redis.call('ZADD', KEYS[1], now + lease, ARGV[2])
redis.call('PEXPIRE', KEYS[1], math.ceil(lease * 1000))
return 1
"""

# KEYS[1]: the key's leases; ARGV: now, lease seconds, the slot ids to renew (if still held)
_RENEW = _NOW + """
local lease = tonumber(ARGV[2])
for i = 3, #ARGV do
  redis.call('ZADD', KEYS[1], 'XX', now + lease, ARGV[i])
end
redis.call('PEXPIRE', KEYS[1], math.ceil(lease * 1000))
return 1
"""


class RedisRateLimiter(RateLimiter):
    """Sliding-window logs and leased stream slots in Redis (every API process)."""

    def __init__(self, link: RedisLink, clock: Callable[[], float] | None = None,
                 lease_seconds: float = LEASE_SECONDS) -> None:
        self._link = link
        self._clock = clock
        self.lease_seconds = lease_seconds
        self._hit = link.client.register_script(_HIT)
        self._open = link.client.register_script(_OPEN)
        self._renew = link.client.register_script(_RENEW)
        self._lock = threading.Lock()
        self._held: dict[str, list[str]] = {}  # key id -> this process's open slots
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None

    def _now(self) -> str:
        return "" if self._clock is None else repr(self._clock())

    def _key(self, key_id: str, what: str) -> str:
        return self._link.key("rate", "{" + key_id + "}", what)  # one hash slot per key id

    def hit(self, key_id: str, limits: Limits) -> None:
        caps = {"minute": limits.per_minute, "hour": limits.per_hour}
        windows = [(name, span) for name, span in MemoryRateLimiter.WINDOWS if caps[name] > 0]
        if not windows:
            return
        args: list[str] = [self._now(), uuid.uuid4().hex[:16]]
        for name, span in windows:
            args += [str(span), str(caps[name])]
        with self._link.reached():
            found = self._hit(keys=[self._key(key_id, name) for name, _ in windows], args=args)
        if int(found[0]) == 0:
            return
        name, span = windows[int(found[0]) - 1]
        wait = max(1, math.ceil(float(found[1]) + span - float(found[2])))
        raise RateLimitError(
            f"rate limit: {caps[name]} requests per {name} for {limits.per}; retry in {wait} s",
            wait)

    def open_stream(self, key_id: str, limits: Limits) -> None:
        slot = uuid.uuid4().hex[:16]
        with self._link.reached():
            taken = self._open(keys=[self._key(key_id, "streams")],
                               args=[self._now(), slot, str(self.lease_seconds),
                                     str(max(0, limits.streams))])
        if not int(taken):
            raise RateLimitError(
                f"rate limit: {limits.streams} answers at a time for {limits.per}; "
                "wait for one to finish", 1)
        with self._lock:
            self._held.setdefault(key_id, []).append(slot)
            if self._renewer is None:
                self._renewer = threading.Thread(target=self._renew_loop, daemon=True,
                                                 name="rate-leases")
                self._renewer.start()

    def close_stream(self, key_id: str) -> None:
        with self._lock:
            slots = self._held.get(key_id, [])
            if not slots:
                return
            slot = slots.pop()
            if not slots:
                del self._held[key_id]
        try:
            with self._link.reached():
                self._link.client.zrem(self._key(key_id, "streams"), slot)
        except RedisUnavailableError as exc:
            # called while a stream ends, often after an error: its lease frees it anyway
            log.warning("stream slot not given back (its lease expires): %s", exc)

    def renew(self) -> None:
        """Extend the leases of this process's open streams."""
        with self._lock:
            held = {k: list(v) for k, v in self._held.items()}
        with self._link.reached():
            for key_id, slots in held.items():
                self._renew(keys=[self._key(key_id, "streams")],
                            args=[self._now(), str(self.lease_seconds), *slots])

    def _renew_loop(self) -> None:
        while not self._stop.wait(self.lease_seconds / 3):
            try:
                self.renew()
            except RedisUnavailableError as exc:
                log.warning("stream leases not renewed: %s", exc)

    def close(self) -> None:
        """Stop renewing; slots still open expire with their leases."""
        self._stop.set()
        if self._renewer is not None:
            self._renewer.join(timeout=5)
