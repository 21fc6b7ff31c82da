"""What the tutor remembers between turns beyond the store: a session's recent turns."""

from .turns import NoTurnCache, TurnCache, turn_cache

__all__ = ["NoTurnCache", "TurnCache", "turn_cache"]
