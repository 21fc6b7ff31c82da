"""Compute budgets shared by every API process of a deployment, kept in Redis.

Each bucket is a hash (`level`, `at`); one Lua script refills the buckets of a request, refuses
when one cannot cover the estimate (returning how long until it can) and otherwise takes it
from all of them: one atomic step, so two processes never both spend a bucket's last seconds.
The semantics and the messages are MemoryComputeBudget's. Time is Redis's own clock.
"""

from __future__ import annotations

from ..store.redis import RedisLink
from .budget import Buckets, ComputeBudget, refused

# KEYS: a hash per limited bucket; ARGV: seconds to take, force (1: take even into debt), then
# the rate (seconds per minute) of each bucket. Returns {0} when taken, else {bucket number,
# seconds to wait as text}.
_TAKE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local amount = tonumber(ARGV[1])
local force = ARGV[2] == '1'
local levels = {}
for i, key in ipairs(KEYS) do
  local rate = tonumber(ARGV[i + 2])
  local level = tonumber(redis.call('HGET', key, 'level') or rate)
  local at = tonumber(redis.call('HGET', key, 'at') or now)
  level = math.min(rate, level + (now - at) * rate / 60)
  levels[i] = level
  local need = math.min(amount, rate)
  if not force and level < need then
    return {i, tostring((need - level) * 60 / rate)}
  end
end
for i, key in ipairs(KEYS) do
  redis.call('HSET', key, 'level', tostring(levels[i] - amount), 'at', tostring(now))
  redis.call('EXPIRE', key, 3600)
end
return {0}
"""


class RedisComputeBudget(ComputeBudget):
    """The buckets of every API process, in Redis."""

    def __init__(self, link: RedisLink) -> None:
        super().__init__()
        self._link = link
        self._take = link.client.register_script(_TAKE)

    def _run(self, buckets: Buckets, seconds: float, force: bool) -> None:
        named = buckets.named()
        # both buckets of a request share its tenant's hash slot (one script, one slot)
        slot = "{" + buckets.tenant + "}"
        keys = [self._link.key("budget", slot, name) for _kind, name, _rate in named]
        args = [repr(seconds), "1" if force else "0", *(repr(rate) for *_, rate in named)]
        with self._link.reached():
            found = self._take(keys=keys, args=args)
        if int(found[0]):
            kind, _name, rate = named[int(found[0]) - 1]
            raise refused(kind, rate, float(found[1]))

    def take(self, buckets: Buckets, seconds: float) -> None:
        self._run(buckets, seconds, force=False)

    def adjust(self, buckets: Buckets, seconds: float) -> None:
        self._run(buckets, seconds, force=True)
