"""Scale-out: two `coursetutor serve` processes on one PostgreSQL store and one Redis, one of
them killed (SIGKILL) in the middle of a streamed answer (bench/kill_worker.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from coursetutor.store import SQLiteStore, open_store
from coursetutor.store.copy import copy_store

from .support import Sample, copy_db

KILL_WORKER = Path(__file__).resolve().parents[1] / "bench" / "kill_worker.py"


@pytest.mark.slow
def test_killing_a_process_mid_answer_leaves_the_other_serving_and_the_store_whole(
        postgres_url: str, redis_url: str, sample: Sample, smollm_path: Path,
        tmp_path: Path) -> None:
    source = SQLiteStore(copy_db(sample.db_path, tmp_path / "sample.db"))
    target = open_store(postgres_url)
    try:
        copy_store(source, target)  # the ingested sample course, without embedding it again
    finally:
        target.close()
        source.close()
    out = tmp_path / "kill.json"
    done = subprocess.run(
        [sys.executable, str(KILL_WORKER), "--pg-url", postgres_url, "--redis-url", redis_url,
         "--model", str(smollm_path), "--students", "1", "--max-tokens", "24",
         "--context-tokens", "300", "--log-dir", str(tmp_path), "--json", str(out)],
        capture_output=True, text=True, timeout=900, check=False)
    assert out.is_file(), done.stderr[-4000:]
    checks = json.loads(out.read_text())["checks"]
    assert checks == dict.fromkeys(checks, True), done.stdout
    assert done.returncode == 0
    assert {"A was killed while a stream on it was mid-answer",
            "follow-up on B in the interrupted session",
            "follow-up on restarted A in a session of B",
            "documents, chunks, embeddings, postings, vectors, terms unchanged",
            "no connection left idle in a transaction"} <= set(checks)
