"""A real crash: `coursetutor ingest` killed with SIGKILL mid-batch leaves a consistent store."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from coursetutor.retrieval import EmbeddingModel
from coursetutor.store import SQLiteStore
from coursetutor.types import SearchFilters

from .support import TENANT

FILES = 40
SECTIONS = ("Definition", "Example", "Pitfalls")  # one chunk each: chunks never cross headings
COURSE = "crash-course"
WORDS = (
    "matrix vector norm basis kernel image rank trace determinant eigenvalue spectrum "
    "orthogonal projection gradient hessian jacobian integral series limit sequence bound "
    "error residual pivot factor solver mesh grid spline node weight quadrature interval"
).split()


def write_course(folder: Path) -> list[Path]:
    """Forty small Markdown notes, each with three distinct sections."""
    rng = random.Random(7)
    folder.mkdir()
    files = []
    for i in range(FILES):
        body = [f"# Note {i}: {rng.choice(WORDS)} and {rng.choice(WORDS)}"]
        for name in SECTIONS:
            words = " ".join(rng.choice(WORDS) for _ in range(25))
            body.append(f"## {name}\n\nIn note {i} the {name.lower()} is about {words}.")
        path = folder / f"note-{i:02d}.md"
        path.write_text("\n\n".join(body) + "\n", encoding="utf-8")
        files.append(path)
    return files


def ingest_command(data_dir: Path, files: list[Path]) -> list[str]:
    return [sys.executable, "-m", "coursetutor", "--data-dir", str(data_dir), "ingest",
            *map(str, files), "--course", COURSE, "--json"]


def environment() -> dict[str, str]:
    return {**os.environ, "COURSETUTOR_EMBED_THREADS": "1", "OMP_NUM_THREADS": "1"}


def stored_documents(db: Path) -> int:
    """Documents committed so far, read through a read-only connection."""
    if not db.exists():
        return 0
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
    except sqlite3.OperationalError:
        return 0
    try:
        return int(con.execute("SELECT COUNT(*) FROM documents").fetchone()[0])
    except sqlite3.OperationalError:  # the schema is not there yet
        return 0
    finally:
        con.close()


def check_consistent(db: Path) -> dict[str, list[int]]:
    """Integrity and referential checks; returns each document's chunk ordinals."""
    con = sqlite3.connect(db)
    try:
        assert con.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert con.execute("PRAGMA foreign_key_check").fetchall() == []
        orphans = con.execute(
            "SELECT COUNT(*) FROM chunks k LEFT JOIN documents d ON d.tenant = k.tenant "
            "AND d.course = k.course AND d.id = k.document_id WHERE d.id IS NULL"
        ).fetchone()[0]
        assert orphans == 0
        unembedded = con.execute(
            "SELECT COUNT(*) FROM chunks k LEFT JOIN vectors v ON v.key = k.vector_key "
            "WHERE v.key IS NULL"
        ).fetchone()[0]
        assert unembedded == 0
        ordinals: dict[str, list[int]] = {
            doc: [] for (doc,) in con.execute("SELECT id FROM documents WHERE course = ?",
                                              (COURSE,))
        }
        for doc, ordinal in con.execute(
            "SELECT document_id, ordinal FROM chunks WHERE course = ? ORDER BY document_id, "
            "ordinal", (COURSE,)
        ):
            ordinals[doc].append(ordinal)
        return ordinals
    finally:
        con.close()


@pytest.mark.slow
def test_ingest_killed_mid_batch(tmp_path: Path, embedder: EmbeddingModel) -> None:
    files = write_course(tmp_path / "notes")
    data_dir = tmp_path / "data"
    db = data_dir / "coursetutor.db"
    log = tmp_path / "killed.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(ingest_command(data_dir, files), cwd=tmp_path,
                                env=environment(), stdout=out, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 180
            while stored_documents(db) < 1:
                assert proc.poll() is None, f"ingest ended before the kill:\n{log.read_text()}"
                assert time.monotonic() < deadline, "no document stored within 180 s"
                time.sleep(0.01)
            os.kill(proc.pid, signal.SIGKILL)
        finally:
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL

    killed = check_consistent(db)
    assert 1 <= len(killed) < FILES, "the kill did not land mid-batch"
    # each stored document has all three of its chunks, numbered 0, 1, 2
    assert killed == {doc: [0, 1, 2] for doc in killed}

    done = subprocess.run(ingest_command(data_dir, files), cwd=tmp_path, env=environment(),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert [(f["document_id"], f["status"]) for f in report["files"]] == [
        (f"note-{i:02d}-md", "unchanged" if f"note-{i:02d}-md" in killed else "added")
        for i in range(FILES)
    ]
    assert all(f["embedded"] == 0 for f in report["files"] if f["status"] == "unchanged")
    assert report["totals"]["chunks"] == FILES * len(SECTIONS)

    final = check_consistent(db)
    assert final == {f"note-{i:02d}-md": [0, 1, 2] for i in range(FILES)}
    store = SQLiteStore(db)
    try:
        docs = store.list_documents(TENANT, COURSE)
        assert [(d.id, d.chunks) for d in docs] == [(f"note-{i:02d}-md", 3) for i in range(FILES)]
        # the whole course is searchable: every chunk has its vector
        zero = np.zeros(embedder.dim, dtype=np.float32)
        found = store.vector_search(SearchFilters(TENANT, COURSE), embedder.model_id, zero, 1000)
        assert len(found) == FILES * len(SECTIONS)
    finally:
        store.close()
