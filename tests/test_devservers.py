"""The test servers: a fresh PostgreSQL database with pgvector and an empty Redis per test."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from coursetutor.dev import servers as devservers
from coursetutor.errors import CoursetutorError


@pytest.fixture
def server_folder() -> Iterator[Path]:
    """A folder for servers of the test's own (world-reachable, unlike pytest's tmp_path)."""
    folder = Path(tempfile.mkdtemp(prefix="coursetutor-test-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize("run", [1, 2])
def test_postgres_url_is_a_fresh_database_with_pgvector(postgres_url: str, run: int) -> None:
    import psycopg

    with psycopg.connect(postgres_url) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)
        assert conn.execute("SELECT '[1,2,3]'::vector::text").fetchone() == ("[1,2,3]",)
        # Fails on the second run unless each test gets its own database.
        conn.execute("CREATE TABLE items (id int PRIMARY KEY, v vector(3))")
        conn.execute("INSERT INTO items VALUES (1, '[1,0,0]'), (2, '[0,1,0]')")
        conn.execute("CREATE INDEX ON items USING hnsw (v vector_cosine_ops)")
        nearest = conn.execute("SELECT id FROM items ORDER BY v <=> '[0,1,0.1]' LIMIT 1")
        assert nearest.fetchone() == (2,)


@pytest.mark.parametrize("run", [1, 2])
def test_redis_url_is_empty_and_working(redis_url: str, run: int) -> None:
    redis = pytest.importorskip("redis")
    with redis.Redis.from_url(redis_url) as client:
        assert client.ping() is True
        assert client.get("key") is None  # set by the other run, flushed since
        client.set("key", "value")
        assert client.get("key") == b"value"


def test_start_postgres_twice_returns_the_running_server(server_folder: Path) -> None:
    pytest.importorskip("psycopg")
    try:
        first = devservers.start_postgres(server_folder)
    except CoursetutorError as exc:
        pytest.skip(f"cannot start PostgreSQL here: {exc}")
    try:
        assert first.startswith("postgresql://coursetutor@127.0.0.1:")
        assert first.endswith("/coursetutor")
        assert devservers.start_postgres(server_folder) == first
    finally:
        devservers.stop_postgres(server_folder)
    devservers.stop_postgres(server_folder)  # not running: nothing to do


def test_start_redis_twice_returns_the_running_server(server_folder: Path) -> None:
    try:
        first = devservers.start_redis(server_folder)
    except CoursetutorError as exc:
        pytest.skip(f"cannot start Redis here: {exc}")
    try:
        assert first.startswith("redis://127.0.0.1:")
        assert devservers.start_redis(server_folder) == first
    finally:
        devservers.stop_redis(server_folder)
    devservers.stop_redis(server_folder)
    assert not (server_folder / "redis.port").exists()
