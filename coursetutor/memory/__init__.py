"""What the tutor remembers between turns beyond the store: a session's recent turns."""

from ..config import Settings
from .recent import NoTurnCache, TurnCache

__all__ = ["NoTurnCache", "TurnCache", "turn_cache"]


def turn_cache(settings: Settings) -> TurnCache:
    """The cache the settings ask for: Redis when `redis` is set, else none."""
    if not settings.redis:
        return NoTurnCache()
    from ..store.redis import connect
    from .recent_redis import RedisTurnCache

    return RedisTurnCache(connect(settings), settings.session_ttl_seconds,
                          settings.history_turns)
