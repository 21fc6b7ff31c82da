"""Constants and helpers the test modules share (fixtures live in conftest.py)."""

from __future__ import annotations

import contextlib
import dataclasses
import sqlite3
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import urlsplit

import coursetutor
from coursetutor.ingest import IngestReport, Manifest
from coursetutor.store import SQLiteStore, Store, open_store
from coursetutor.tutor.sentences import Line
from coursetutor.types import Chunk, Hit, Locator

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


class Clock:
    """Whole seconds from 1000, one tick per reading: ordering by time is never a tie."""

    def __init__(self) -> None:
        self.now = 999.0

    def time(self) -> float:
        self.now += 1
        return self.now


@contextlib.contextmanager
def fresh_database(server: str) -> Iterator[str]:
    """URL of a fresh database with the vector extension on the PostgreSQL `server`,
    dropped afterwards."""
    import psycopg

    name = f"test_{uuid.uuid4().hex}"
    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    url = urlsplit(server)._replace(path=f"/{name}").geturl()
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        yield url
    finally:
        with psycopg.connect(server, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def open_backend(backend: str, where: Callable[[], str], folder: Path) -> Store:
    """A fresh store of `backend`: PostgreSQL at the URL `where()` gives (a fixture's), or
    SQLite in `folder`."""
    if backend == "postgresql":
        return open_store(where())
    return SQLiteStore(folder / "store.db")


def evidence_line(sid: str, text: str, language: str = "zh", page: int = 11) -> Line:
    """One evidence sentence of a lecture passage, as the statement check reads it."""
    chunk = Chunk(id="c1", tenant="t", course="c", document_id="d1", document_title="T",
                  doc_type="lecture", topic="", section_path=(), difficulty=0,
                  language=language, locator=Locator(page=page), text=text,
                  content_hash="h1", ordinal=1)
    return Line(sid, Hit(chunk, 1.0, {}, {}, Locator(page=page)), text, 1.0)
