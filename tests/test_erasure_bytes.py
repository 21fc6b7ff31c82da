"""An erased student leaves no bytes behind: after `forget_student` neither their id nor a
phrase they asked can be read anywhere under the data folder (the database, its WAL, files),
while the store is still open and after it closes."""

from __future__ import annotations

from pathlib import Path

from coursetutor.config import load_settings
from coursetutor.memory.privacy import forget_student
from coursetutor.store.sqlite import SQLiteStore
from coursetutor.store.summaries import Summary
from coursetutor.types import Turn

T, C = "default", "calculus"
STUDENT = "quokka-9173"  # an id no other value contains
PHRASE = "zebrafish integrals under moonlight"


def _bytes_holding(folder: Path, text: str) -> list[str]:
    needle = text.encode()
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")
                  if p.is_file() and needle in p.read_bytes())


def _fill(store: SQLiteStore, student: str, phrase: str) -> None:
    store.ensure_course(T, C, "Calculus", "en")
    store.enroll(T, C, student)
    for n in range(40):  # enough turns to spread over several pages
        session = store.start_session(T, C, student)
        turn = store.add_turn(Turn(session.id, 0, T, C, student, f"{phrase} {n}?",
                                   f"an answer about {phrase}", "lecture", "concept",
                                   "correct"))
        turn_id = f"{session.id}:{turn.ordinal}"
        store.summaries.put(Summary(T, C, student, session.id, "session",
                                    f"{student} asked about {phrase}", (turn_id,), ("limits",)))
        store.profiles.update(T, C, student, goals=f"{phrase} {n}")


def test_an_erased_student_leaves_no_bytes_under_the_data_folder(tmp_path: Path) -> None:
    data = tmp_path / "data"
    settings = load_settings(env={}, data_dir=data)
    store = SQLiteStore(data / "coursetutor.db")
    _fill(store, STUDENT, PHRASE)
    _fill(store, "other-student", "otters and series")
    assert _bytes_holding(data, STUDENT) and _bytes_holding(data, PHRASE)  # the probe sees them
    forget_student(store, settings, T, STUDENT)
    assert _bytes_holding(data, STUDENT) == []  # the store still open
    assert _bytes_holding(data, PHRASE) == []
    assert _bytes_holding(data, "other-student")  # the others' rows stay
    store.close()
    assert _bytes_holding(data, STUDENT) == [] and _bytes_holding(data, PHRASE) == []
    wal = data / "coursetutor.db-wal"
    assert not wal.exists() or wal.stat().st_size == 0  # no WAL left behind after a stop
