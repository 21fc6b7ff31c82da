"""What is kept of each student: a session's recent turns (`recent.py`, in Redis when set),
the course's topics and the student's profile, mastery and weak areas, the teacher's insights,
retention and privacy (export, forget). The tables are the store's; this package reads and
words them."""

from ..config import Settings
from .recent import NoTurnCache, TurnCache
from .topics import chunk_topics, course_topics, material_topics

__all__ = ["NoTurnCache", "TurnCache", "chunk_topics", "course_topics", "material_topics",
           "turn_cache"]


def turn_cache(settings: Settings) -> TurnCache:
    """The cache the settings ask for: Redis when `redis` is set, else none."""
    if not settings.redis:
        return NoTurnCache()
    from ..store.redis import connect
    from .recent_redis import RedisTurnCache

    return RedisTurnCache(connect(settings), settings.session_ttl_seconds,
                          settings.history_turns)
