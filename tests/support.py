"""Constants and helpers the test modules share (fixtures live in conftest.py)."""

from __future__ import annotations

import dataclasses
import sqlite3
from collections.abc import Callable
from pathlib import Path

import coursetutor
from coursetutor.ingest import IngestReport, Manifest
from coursetutor.store import Store
from coursetutor.types import Chunk

SAMPLE_DIR = Path(coursetutor.__file__).parent / "sample_course"
SAMPLE_MANIFEST = SAMPLE_DIR / "course.toml"
SAMPLE_COURSE = "numerical-methods-101"
TENANT = "default"

ListChunks = Callable[[Store, str, str], list[Chunk]]


@dataclasses.dataclass(frozen=True)
class Sample:
    """The sample course ingested into a closed SQLite file; copy it before writing to it."""

    db_path: Path
    manifest: Manifest
    report: IngestReport


def copy_db(source: Path, target: Path) -> Path:
    """Copy a SQLite database consistently (backup API), creating the target's folder."""
    target.parent.mkdir(parents=True, exist_ok=True)
    src, dst = sqlite3.connect(source), sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()
    return target
