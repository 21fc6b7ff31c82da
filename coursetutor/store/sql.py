"""What the SQL shared by the SQLite and PostgreSQL stores needs from a connection.

The shared mixins (`sql_access.py`, `sql_sessions.py`) write standard SQL with `?`
placeholders and always bind their values. SQLite's connection runs it as it is; the
PostgreSQL store runs it through `QmarkConnection`, which swaps `?` for psycopg's `%s`.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from typing import Any, Protocol


class Rows(Protocol):
    """The result of one statement."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


class Executor(Protocol):
    """Runs one statement with bound parameters."""

    def execute(self, sql: str, parameters: Sequence[Any] = ..., /) -> Rows: ...


class Result:
    """Rows read in full, so the connection can go back to its pool at once."""

    def __init__(self, rows: list[tuple[Any, ...]], rowcount: int) -> None:
        self._rows = rows
        self.rowcount = rowcount

    def fetchone(self) -> Any:
        return self._rows[0] if self._rows else None

    def fetchall(self) -> list[Any]:
        return list(self._rows)

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return iter(self._rows)


@functools.lru_cache(maxsize=512)
def to_pyformat(sql: str) -> str:
    """`?` placeholders as `%s` (the shared SQL has no `%` and no `?` inside literals)."""
    if "%" in sql:
        raise ValueError("shared SQL must not contain '%'")
    return sql.replace("?", "%s")


def redact(url: str) -> str:
    """The URL without its password (after the user name or as a `password` parameter), for
    messages."""
    base, sep, query = url.partition("?")
    if query:  # libpq also takes ?password=...
        kept = [p for p in query.split("&") if p.split("=", 1)[0].lower() != "password"]
        query, sep = "&".join(kept), "?" if kept else ""
    if "@" in base and "://" in base:
        scheme, rest = base.split("://", 1)
        creds, host = rest.rsplit("@", 1)
        base = f"{scheme}://{creds.split(':', 1)[0]}@{host}"
    return base + sep + query
