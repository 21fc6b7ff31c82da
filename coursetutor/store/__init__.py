"""Store backends, chosen by URL."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import ConfigError
from ..scoring.vectors import EXACT_LIMIT
from .base import ChunkRow, HybridResult, KeywordResult, Store
from .sqlite import SQLiteStore

if TYPE_CHECKING:
    from ..config import Settings

__all__ = ["ChunkRow", "HybridResult", "KeywordResult", "SQLiteStore", "Store", "open_store",
           "store_for"]

PG_SCHEMES = ("postgresql://", "postgres://")


def open_store(url: str, vector_exact_limit: int = EXACT_LIMIT,
               settings: Settings | None = None) -> Store:
    """Open the store at `url`: `sqlite:///path/to/file.db` or `postgresql://...` (the
    PostgreSQL pool sized by `settings`)."""
    if url.startswith("sqlite:///"):
        return SQLiteStore(url[len("sqlite:///") :], vector_exact_limit)
    if url == "sqlite://" or url == ":memory:":
        return SQLiteStore(":memory:", vector_exact_limit)
    if url.startswith(PG_SCHEMES):
        from .pg import PostgresStore

        if settings is None:
            return PostgresStore(url)
        return PostgresStore(
            url, pool_size=settings.pg_pool_size, pool_min=settings.pg_pool_min,
            idle_seconds=settings.pg_pool_idle_seconds, timeout=settings.pg_pool_timeout,
            ef_search=settings.pg_ef_search, common_terms=settings.pg_common_terms)
    scheme = url.split(":", 1)[0]
    raise ConfigError(
        f"unsupported store URL scheme {scheme!r}; use sqlite:///PATH or postgresql://...")


def store_for(settings: Settings) -> Store:
    """The store the settings name."""
    return open_store(settings.store_url, settings.vector_exact_limit, settings)
