"""A session's recent turns in Redis, so any API process continues a conversation without a
database read.

One string key per session holds the last `keep` turns as JSON and expires `ttl` seconds after
the session's last turn (or read). A turn is appended write-through, after the store took it,
in a WATCH/MULTI transaction, so two processes adding turns to one session both land. A session
that is not cached (new, expired or evicted) is read from the store and cached again.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..store.redis import RedisLink
from ..types import Citation, Locator, Turn
from .recent import TurnCache

if TYPE_CHECKING:
    from redis.client import Pipeline


def encode(turns: Sequence[Turn]) -> str:
    """Turns as a JSON array of their fields."""
    return json.dumps([dataclasses.asdict(t) for t in turns], ensure_ascii=False)


def _turn(fields: dict[str, Any]) -> Turn:
    sources = tuple(Citation(**{**c, "locator": Locator(**c["locator"])})
                    for c in fields["sources"])
    return Turn(**{**fields, "sources": sources})


def decode(raw: str | bytes) -> list[Turn]:
    """The turns `encode` wrote."""
    return [_turn(d) for d in json.loads(raw)]


class RedisTurnCache(TurnCache):
    """The last `keep` turns of each session, kept `ttl_seconds` after its last use."""

    def __init__(self, link: RedisLink, ttl_seconds: int, keep: int) -> None:
        self._link = link
        self.ttl_seconds = ttl_seconds
        self.keep = keep

    def _key(self, tenant: str, course: str, session_id: str) -> str:
        return self._link.key("turns", tenant, course, session_id)

    def get(self, tenant: str, course: str, session_id: str) -> list[Turn] | None:
        with self._link.reached():
            raw = self._link.client.getex(self._key(tenant, course, session_id),
                                          ex=self.ttl_seconds)
        return None if raw is None else decode(raw)

    def put(self, tenant: str, course: str, session_id: str, turns: Sequence[Turn]) -> None:
        kept = list(turns)[max(0, len(turns) - self.keep):]
        with self._link.reached():
            self._link.client.set(self._key(tenant, course, session_id), encode(kept),
                                  ex=self.ttl_seconds)

    def append(self, turn: Turn) -> None:
        key = self._key(turn.tenant, turn.course, turn.session_id)

        def add(pipe: Pipeline) -> None:
            raw: Any = pipe.get(key)
            if raw is None:
                return
            turns = [*decode(raw), turn]
            pipe.multi()
            pipe.set(key, encode(turns[max(0, len(turns) - self.keep):]), ex=self.ttl_seconds)

        with self._link.reached():
            self._link.client.transaction(add, key)
