"""Short-term conversation state: the recent turns of a session, read on every turn.

The store keeps every turn. A TurnCache keeps the last few of each live session where any API
process reads them without a database query (Redis: recent_redis). NoTurnCache, the default of
one process, caches nothing, so every turn reads the store as before.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence

from ..store import Store
from ..types import Turn


class TurnCache(abc.ABC):
    """Recent turns per session, read through to the store on a miss."""

    @abc.abstractmethod
    def get(self, tenant: str, course: str, session_id: str) -> list[Turn] | None:
        """The session's cached recent turns, oldest first; None when none are cached."""

    @abc.abstractmethod
    def put(self, tenant: str, course: str, session_id: str, turns: Sequence[Turn]) -> None:
        """Cache `turns` (read from the store) as the session's recent turns."""

    @abc.abstractmethod
    def append(self, turn: Turn) -> None:
        """Add a turn the store just took to its session, if that session is cached (one
        that is not is read from the store next time, this turn included)."""

    def recent(self, store: Store, tenant: str, course: str, session_id: str,
               last: int) -> list[Turn]:
        """The session's last `last` turns: cached, else from the store (and then cached)."""
        turns = self.get(tenant, course, session_id)
        if turns is None:
            turns = store.list_turns(tenant, course, session_id, last=last)
            self.put(tenant, course, session_id, turns)
        return turns[max(0, len(turns) - last):]


class NoTurnCache(TurnCache):
    """Caches nothing: one process reads its store."""

    def get(self, tenant: str, course: str, session_id: str) -> list[Turn] | None:
        return None

    def put(self, tenant: str, course: str, session_id: str, turns: Sequence[Turn]) -> None:
        return None

    def append(self, turn: Turn) -> None:
        return None

