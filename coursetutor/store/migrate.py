"""The schema's migrations, one file per change for both stores (`store/schema/NNNN_*.sql`).

A file is written once, in SQLite's spelling; for PostgreSQL a few column types are renamed
(`render`). Where the two stores differ (full-text and vector search, the first schemas) a file
has sections: the lines after `-- sqlite:` are for SQLite only, those after `-- postgres:` for
PostgreSQL only, up to the next section line; a section may be empty when one store already has
the change. Versions are one series for both stores.

The PostgreSQL store once numbered its own files (1-10); `from_legacy` reads such a version as
the version of this series it stands for.
"""

from __future__ import annotations

import re
from importlib import resources
from typing import Literal

Dialect = Literal["sqlite", "postgres"]

SECTION = re.compile(r"^-- (sqlite|postgres):\s*$")
# SQLite spelling -> PostgreSQL spelling; BIGINT is an INTEGER in SQLite (its integers are 64-bit)
TYPES: dict[Dialect, tuple[tuple[re.Pattern[str], str], ...]] = {
    "sqlite": ((re.compile(r"\bBIGINT\b"), "INTEGER"),),
    "postgres": (
        (re.compile(r"\bINTEGER PRIMARY KEY AUTOINCREMENT\b"),
         "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY"),
        (re.compile(r"\bREAL\b"), "DOUBLE PRECISION"),
        (re.compile(r"\bBLOB\b"), "BYTEA"),
    ),
}
LEGACY_POSTGRES = 10  # the last version of the PostgreSQL store's own series
LEGACY_SHIFT = 4  # its versions 4-10 are 8-14 here (4-7 are in its first schema); 1-3 are 1-3


def render(sql: str, dialect: Dialect) -> str:
    """A migration file's SQL for one store: its shared lines and its own section, typed."""
    kept: list[str] = []
    section: str | None = None
    for line in sql.splitlines():
        found = SECTION.match(line)
        if found:
            section = found.group(1)
            continue
        if section is None or section == dialect:
            kept.append(line)
    text = "\n".join(kept).strip()
    for pattern, spelling in TYPES[dialect]:
        text = pattern.sub(spelling, text)
    return text


def has_statements(sql: str) -> bool:
    """Whether rendered SQL holds more than comments and blank lines."""
    return any(line.strip() and not line.lstrip().startswith("--")
               for line in sql.splitlines())


def migrations(dialect: Dialect) -> list[tuple[int, str]]:
    """The numbered migrations shipped with the package, in order, rendered for `dialect`."""
    folder = resources.files("coursetutor.store") / "schema"
    found = []
    for entry in folder.iterdir():
        if entry.name.endswith(".sql"):
            version = int(entry.name.split("_", 1)[0])
            found.append((version, render(entry.read_text(encoding="utf-8"), dialect)))
    return sorted(found)


def from_legacy(version: int) -> int:
    """The version of this series a PostgreSQL store recorded under its own numbering stands
    for: 1-3 are the same, 4-10 are 8-14."""
    return version + LEGACY_SHIFT if version > 3 else version
