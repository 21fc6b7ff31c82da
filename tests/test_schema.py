"""The schema is written once (`store/schema/`) for both stores: each store built from it has
the schema its own former migration files built (kept in tests/data/legacy_schema/), and a store
made by those files goes on under the new series without a migration run twice."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from coursetutor.store.migrate import Dialect, from_legacy, has_statements, migrations, render
from coursetutor.store.sqlite import SQLiteStore
from tests.support import fresh_database

LEGACY = Path(__file__).parent / "data" / "legacy_schema"


def _legacy(dialect: str) -> list[tuple[int, str]]:
    return sorted((int(p.name[:4]), p.read_text(encoding="utf-8"))
                  for p in (LEGACY / dialect).glob("*.sql"))


def test_the_series_is_numbered_from_one_for_both_stores() -> None:
    for dialect in ("sqlite", "postgres"):
        numbers = [n for n, _ in migrations(dialect)]
        assert numbers == list(range(1, len(numbers) + 1))
    assert all(has_statements(sql) for _, sql in migrations("sqlite"))
    # PostgreSQL's first schema already held what SQLite reached by 0007
    empty = [n for n, sql in migrations("postgres") if not has_statements(sql)]
    assert empty == [4, 5, 6, 7]


def test_a_migration_is_spelled_once_and_typed_per_store() -> None:
    sql = ("CREATE TABLE notes (\n    id INTEGER PRIMARY KEY AUTOINCREMENT,\n"
           "    weight REAL NOT NULL,\n    vector BLOB,\n    generation BIGINT NOT NULL\n);\n"
           "-- sqlite:\nCREATE VIRTUAL TABLE notes_fts USING fts5(body);\n"
           "-- postgres:\nCREATE INDEX notes_weight ON notes (weight);\n")
    lite, pg = render(sql, "sqlite"), render(sql, "postgres")
    assert "id INTEGER PRIMARY KEY AUTOINCREMENT" in lite and "generation INTEGER" in lite
    assert "fts5" in lite and "notes_weight" not in lite
    assert "id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY" in pg
    assert "weight DOUBLE PRECISION" in pg and "vector BYTEA" in pg and "BIGINT NOT NULL" in pg
    assert "fts5" not in pg and "notes_weight" in pg
    assert not has_statements("-- only a comment\n\n")


def _sqlite_schema(path: Path) -> list[tuple[Any, ...]]:
    db = sqlite3.connect(path)
    try:
        rows = db.execute("SELECT type, name, tbl_name, sql FROM sqlite_master "
                          "WHERE name NOT LIKE 'sqlite_%' ORDER BY name").fetchall()
        return [(t, n, tbl, " ".join((sql or "").split())) for t, n, tbl, sql in rows]
    finally:
        db.close()


def _sqlite_legacy(path: Path, upto: int) -> None:
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
    for version, sql in _legacy("sqlite"):
        if version <= upto:
            for statement in sql.split(";\n"):
                if statement.strip():
                    db.execute(statement)
            db.execute("INSERT INTO schema_version (version) VALUES (?)", (version,))
    db.commit()
    db.close()


def _newer(dialect: Dialect) -> list[str]:
    """The series' migrations past the former files (0014): they apply on top of them."""
    last = max(from_legacy(v) if dialect == "postgres" else v for v, _ in _legacy(dialect))
    return [sql for version, sql in migrations(dialect) if version > last]


def test_sqlite_builds_the_schema_of_its_former_files(tmp_path: Path) -> None:
    _sqlite_legacy(tmp_path / "legacy.db", 99)
    db = sqlite3.connect(tmp_path / "legacy.db")
    for sql in _newer("sqlite"):
        db.executescript(sql)
    db.close()
    SQLiteStore(tmp_path / "new.db").close()
    assert _sqlite_schema(tmp_path / "new.db") == _sqlite_schema(tmp_path / "legacy.db")


@pytest.mark.parametrize("upto", [1, 7, 10, 14])
def test_a_sqlite_store_of_the_former_files_goes_on(tmp_path: Path, upto: int) -> None:
    _sqlite_legacy(tmp_path / "old.db", upto)
    store = SQLiteStore(tmp_path / "old.db")
    assert store.migrate() == migrations("sqlite")[-1][0]
    store.close()
    SQLiteStore(tmp_path / "new.db").close()
    assert _sqlite_schema(tmp_path / "old.db") == _sqlite_schema(tmp_path / "new.db")


# -- PostgreSQL ----------------------------------------------------------------

def _pg_schema(url: str) -> dict[str, list[tuple[Any, ...]]]:
    import psycopg

    with psycopg.connect(url) as conn:
        def rows(sql: str) -> list[tuple[Any, ...]]:
            return sorted(tuple(r) for r in conn.execute(sql).fetchall())

        return {
            "columns": rows("SELECT table_name, column_name, data_type, is_nullable, "
                            "column_default FROM information_schema.columns "
                            "WHERE table_schema = 'public'"),
            "indexes": rows("SELECT indexname, indexdef FROM pg_indexes "
                            "WHERE schemaname = 'public'"),
            "constraints": rows("SELECT conrelid::regclass::text, conname, "
                                "pg_get_constraintdef(oid) FROM pg_constraint "
                                "WHERE connamespace = 'public'::regnamespace"),
            "sequences": rows("SELECT sequence_name FROM information_schema.sequences "
                              "WHERE sequence_schema = 'public'"),
        }


def _pg_legacy(url: str, upto: int) -> None:
    import psycopg

    with psycopg.connect(url) as conn, conn.transaction():
        conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        for version, sql in _legacy("postgres"):
            if version <= upto:
                conn.execute(sql.encode())
                conn.execute("INSERT INTO schema_version (version) VALUES (%s)", (version,))


def _versions(url: str) -> list[int]:
    import psycopg

    with psycopg.connect(url) as conn:
        return [int(r[0]) for r in conn.execute(
            "SELECT DISTINCT version FROM schema_version ORDER BY version").fetchall()]


@pytest.fixture
def second_url(postgres_server: str) -> Iterator[str]:
    with fresh_database(postgres_server) as url:
        yield url


def test_postgres_builds_the_schema_of_its_former_files(postgres_url: str,
                                                        second_url: str) -> None:
    import psycopg

    from coursetutor.store.pg import PostgresStore

    _pg_legacy(second_url, 99)
    with psycopg.connect(second_url) as conn, conn.transaction():
        for sql in _newer("postgres"):
            conn.execute(sql.encode())
    PostgresStore(postgres_url).close()
    assert _pg_schema(postgres_url) == _pg_schema(second_url)


@pytest.mark.parametrize("upto", [2, 3, 5, 10])
def test_a_postgres_store_of_the_former_files_goes_on(postgres_url: str, second_url: str,
                                                      upto: int) -> None:
    from coursetutor.store.pg import PostgresStore

    _pg_legacy(postgres_url, upto)
    latest = migrations("postgres")[-1][0]
    store = PostgresStore(postgres_url)  # migrates on open
    try:
        assert store.migrate() == latest
    finally:
        store.close()
    assert _versions(postgres_url)[-1] == latest
    assert from_legacy(upto) in _versions(postgres_url)
    PostgresStore(second_url).close()
    assert _pg_schema(postgres_url) == _pg_schema(second_url)
