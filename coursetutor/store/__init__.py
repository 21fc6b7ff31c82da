"""Store backends, chosen by URL."""

from __future__ import annotations

from ..errors import ConfigError
from ..retrieval.vectors import EXACT_LIMIT
from .base import ChunkRow, KeywordResult, Store
from .sqlite import SQLiteStore

__all__ = ["ChunkRow", "KeywordResult", "SQLiteStore", "Store", "open_store"]


def open_store(url: str, vector_exact_limit: int = EXACT_LIMIT) -> Store:
    """Open the store at `url` (`sqlite:///path/to/file.db`)."""
    if url.startswith("sqlite:///"):
        return SQLiteStore(url[len("sqlite:///") :], vector_exact_limit)
    if url == "sqlite://" or url == ":memory:":
        return SQLiteStore(":memory:", vector_exact_limit)
    scheme = url.split(":", 1)[0]
    raise ConfigError(f"unsupported store URL scheme {scheme!r}; use sqlite:///PATH")
