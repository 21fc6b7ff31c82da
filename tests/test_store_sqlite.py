"""What only the SQLite backend has: numbered migrations, the file itself, store URLs."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from coursetutor.errors import ConfigError, StoreError
from coursetutor.store import SQLiteStore, open_store
from coursetutor.store.sqlite import migrations


def versions(path: Path) -> list[int]:
    db = sqlite3.connect(path)
    try:
        return [v for (v,) in db.execute("SELECT version FROM schema_version ORDER BY version")]
    finally:
        db.close()


def test_migrations_are_numbered_from_one() -> None:
    numbers = [n for n, _ in migrations()]
    assert numbers == list(range(1, len(numbers) + 1))
    assert all(sql.strip() for _, sql in migrations())


def test_new_store_is_at_the_latest_schema_version(tmp_path: Path) -> None:
    latest = migrations()[-1][0]
    store = SQLiteStore(tmp_path / "sub" / "dir" / "t.db")
    assert store.migrate() == latest
    store.close()
    assert versions(tmp_path / "sub" / "dir" / "t.db") == list(range(1, latest + 1))


def test_reopening_applies_no_migration_twice(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    first = SQLiteStore(path)
    first.ensure_course("t", "c", "Course")
    first.close()
    again = SQLiteStore(path)
    assert again.migrate() == migrations()[-1][0]
    assert [c.title for c in again.list_courses("t")] == ["Course"]
    again.close()
    assert versions(path) == [n for n, _ in migrations()]


def test_store_from_a_newer_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    SQLiteStore(path).close()
    db = sqlite3.connect(path)
    db.execute("INSERT INTO schema_version (version) VALUES (999)")
    db.commit()
    db.close()
    latest = migrations()[-1][0]
    with pytest.raises(StoreError) as exc:
        SQLiteStore(path)
    assert str(exc.value) == (
        f"store schema version 999 is newer than this coursetutor ({latest}); upgrade coursetutor"
    )


def test_unopenable_file_is_a_store_error(tmp_path: Path) -> None:
    path = tmp_path / "not-a-db.db"
    path.write_bytes(b"this is not a sqlite database" * 100)
    with pytest.raises(StoreError) as exc:
        SQLiteStore(path)
    assert str(exc.value) == f"cannot open store {path}: file is not a database"


@pytest.mark.parametrize("url", ["sqlite://", ":memory:"])
def test_open_store_in_memory(url: str) -> None:
    store = open_store(url)
    assert isinstance(store, SQLiteStore)
    assert store.path == ":memory:"
    store.close()


def test_open_store_file(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path}/data/t.db")
    assert isinstance(store, SQLiteStore)
    assert store.path == f"{tmp_path}/data/t.db"
    store.close()
    assert (tmp_path / "data" / "t.db").is_file()


@pytest.mark.parametrize(
    ("url", "scheme"),
    [("mysql://x", "mysql"), ("ct.db", "ct.db")],
)
def test_open_store_unknown_scheme(url: str, scheme: str) -> None:
    with pytest.raises(ConfigError) as exc:
        open_store(url)
    assert str(exc.value) == (f"unsupported store URL scheme {scheme!r}; "
                              "use sqlite:///PATH or postgresql://...")


def test_readers_of_threads_that_ended_are_closed(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "readers.db")
    store.ensure_course("t", "c", "C", "en")

    def read() -> None:
        assert store.course_language("t", "c") == "en"

    for _ in range(5):
        thread = threading.Thread(target=read)
        thread.start()
        thread.join()
    # each new reader closes those of dead threads: only the last thread's is left
    assert store.connections() == 2
    store.close()


def test_closing_leaves_a_live_threads_reader_to_that_thread(tmp_path: Path) -> None:
    # closing a connection under a query another thread runs crashes the process: the
    # reader of a live thread is closed when that thread ends, not by `close`
    store = SQLiteStore(tmp_path / "readers.db")
    store.ensure_course("t", "c", "C", "en")
    opened, closed = threading.Event(), threading.Event()
    seen: list[str] = []

    def read() -> None:
        seen.append(store.course_language("t", "c"))
        opened.set()
        closed.wait(10)
        seen.append(store.course_language("t", "c"))  # its query in flight during close

    thread = threading.Thread(target=read)
    thread.start()
    assert opened.wait(10)
    store.close()
    closed.set()
    thread.join()
    assert seen == ["en", "en"]
