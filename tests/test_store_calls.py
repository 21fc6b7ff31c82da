"""One read of the course and the learner per turn: an API question with the model off makes
at most a dozen store calls, counted by wrapping the real store (SQLite, and PostgreSQL when
its test server is there)."""

from __future__ import annotations

from pathlib import Path

from coursetutor.api import create_app
from coursetutor.config import load_settings
from coursetutor.retrieval import EmbeddingModel
from coursetutor.store import Store
from coursetutor.store.copy import copy_store
from coursetutor.workspace import Workspace

from .api_support import COURSE, add_callers, prepare_data
from .store_calls import counting
from .support import Sample

LIMIT = 12  # store calls for one question, authentication and course check included


def _ask_counted(store: Store, embedder: EmbeddingModel, data_dir: Path) -> dict[str, int]:
    """The store calls of a student's second question in a session (the first one started
    it), by name."""
    from fastapi.testclient import TestClient

    keys, _ = add_callers(store)  # type: ignore[arg-type]
    proxy, counter = counting(store)
    config = load_settings(env={}, data_dir=data_dir, llm_backend="none", reuse=False)
    app = create_app(config, workspace=Workspace(config, store=proxy, embedder=embedder))
    headers = {"Authorization": f"Bearer {keys['student']}"}
    with TestClient(app) as client:
        first = client.post(f"/v1/courses/{COURSE}/ask", headers=headers,
                            json={"question": "How does the bisection method work?"})
        assert first.status_code == 200, first.text
        session = first.json()["session_id"]
        counter.reset()
        second = client.post(f"/v1/courses/{COURSE}/ask", headers=headers,
                             json={"question": "When does Newton's method fail?",
                                   "session_id": session})
        assert second.status_code == 200, second.text
        assert second.json()["sources"], second.json()
    return dict(counter.calls)


def test_an_api_question_reads_the_store_at_most_a_dozen_times(
        sample: Sample, embedder: EmbeddingModel, tmp_path: Path) -> None:
    store = prepare_data(sample, tmp_path / "data")
    try:
        calls = _ask_counted(store, embedder, tmp_path / "data")
    finally:
        store.close()
    assert sum(calls.values()) <= LIMIT, " ".join(f"{k}={v}" for k, v in sorted(calls.items()))
    assert calls.get("record_turn") == 1, calls  # the turn is still recorded


def test_the_same_on_postgresql(sample: Sample, embedder: EmbeddingModel, tmp_path: Path,
                                postgres_url: str) -> None:
    from coursetutor.store.pg import PostgresStore

    source = prepare_data(sample, tmp_path / "data")
    target = PostgresStore(postgres_url)
    try:
        copy_store(source, target)
        calls = _ask_counted(target, embedder, tmp_path / "data")
    finally:
        source.close()
        target.close()
    assert sum(calls.values()) <= LIMIT, " ".join(f"{k}={v}" for k, v in sorted(calls.items()))
    assert calls.get("record_turn") == 1, calls
