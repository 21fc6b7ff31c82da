"""A student sees, exports and erases everything stored about them, on every store; retention
purges old turns and keeps summaries and profiles."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from coursetutor.config import Settings
from coursetutor.memory.privacy import export_student, forget_student, redis_patterns
from coursetutor.memory.retention import DAY, purge_expired_turns
from coursetutor.store import Store
from coursetutor.store.privacy import student_tables
from coursetutor.store.summaries import Summary
from coursetutor.types import ApiKey, Turn

from .support import open_backend

T = "default"
C = "calculus"
ZOE = "zoe-4711"  # an id no other value contains


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    s = open_backend(request.param, lambda: request.getfixturevalue("postgres_url"), tmp_path)
    for tenant, course in [(T, C), (T, "algebra"), ("other-tenant", C)]:
        s.ensure_course(tenant, course, course.title(), "en")
    yield s
    s.close()


def _bkt(previous: float | None) -> float:
    return 0.5 if previous is None else min(previous + 0.1, 0.99)


def remember(store: Store, student: str, course: str = C, tenant: str = T) -> str:
    """A student with something in every table that keeps students' data; the session id."""
    store.enroll(tenant, course, student)
    session = store.start_session(tenant, course, student)
    turn = store.add_turn(Turn(session.id, 0, tenant, course, student, f"{student} asks",
                               "an answer", "lecture", "concept", "correct"))
    turn_id = f"{session.id}:{turn.ordinal}"
    store.profiles.update(tenant, course, student, level=2, goals=f"goals of {student}")
    store.profiles.record_topics(tenant, course, student, ["limits"], turn_id)
    store.summaries.put(Summary(tenant, course, student, session.id, "session",
                                f"{student} did limits", (turn_id,), ("limits",)))
    store.mastery.observe(tenant, course, student, "limits", False, turn_id, _bkt)
    store.mastery.add_weak_area(tenant, course, student, "limits", "divides by zero", turn_id)
    return session.id


def _rows_holding(store: Store, text: str) -> list[tuple[str, list[str]]]:
    """Every row of every table (all columns, as text) that holds `text` (the schema read
    like the erasure reads it)."""
    db = store.profiles._db  # type: ignore[attr-defined]
    dialect = store.profiles._dialect  # type: ignore[attr-defined]
    if dialect == "sqlite":
        tables = [r[0] for r in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()]
    else:
        tables = [r[0] for r in db.execute(
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_schema = current_schema()").fetchall()]
    assert {t.name for t in student_tables(db, dialect)} >= {
        "sessions", "turns", "profiles", "studied_topics", "summaries", "api_keys",
        "enrollments"}
    found = []
    for table in tables:
        for row in db.execute(f"SELECT * FROM {table}").fetchall():
            values = [str(v) for v in row]
            if any(text in v for v in values):
                found.append((table, values))
    return found


def test_forgetting_a_student_leaves_no_trace_in_any_table(store: Store) -> None:
    remember(store, ZOE)
    remember(store, ZOE, "algebra")
    remember(store, "bob")
    remember(store, ZOE, tenant="other-tenant")
    store.add_key(ApiKey("k-zoe", T, "student", ZOE, "zoe's key", "hash", 1.0))
    before = {t for t, _ in _rows_holding(store, ZOE)}
    assert {"turns", "api_keys", "summaries", "studied_topics"} <= before

    gone = forget_student(store, Settings(), T, ZOE)

    assert gone.rows["turns"] == 2 and gone.rows["sessions"] == 2 and gone.sessions == 2
    assert gone.rows["api_keys"] == 1 and gone.rows["enrollments"] == 2
    # what is left of the name belongs to the other tenant's student
    assert all("other-tenant" in row for _, row in _rows_holding(store, ZOE))
    # the other tenant's student of the same name and the other student are untouched
    assert store.profiles.get("other-tenant", C, ZOE).goals == f"goals of {ZOE}"
    assert store.profiles.get(T, C, "bob").level == 2
    assert len(store.list_sessions(T, C, "bob")) == 1
    assert store.mastery.weak_areas(T, C, "bob")


def test_forgetting_in_one_course_keeps_the_others_and_the_enrolment(store: Store) -> None:
    remember(store, ZOE)
    remember(store, ZOE, "algebra")
    gone = forget_student(store, Settings(), T, ZOE, C)
    assert "enrollments" not in gone.rows and gone.rows["profiles"] == 1
    assert store.is_enrolled(T, C, ZOE)
    assert store.list_sessions(T, C, ZOE) == [] and store.profiles.get(T, C, ZOE).created == 0
    assert store.summaries.latest(T, C, ZOE) == []
    assert store.mastery.estimates(T, C, ZOE) == [] and store.mastery.weak_areas(T, C, ZOE) == []
    assert len(store.list_sessions(T, "algebra", ZOE)) == 1
    assert store.profiles.get(T, "algebra", ZOE).level == 2


def test_export_holds_every_table_about_the_student_and_nothing_of_others(
        store: Store) -> None:
    session_id = remember(store, ZOE)
    remember(store, "bob")
    remember(store, ZOE, tenant="other-tenant")
    store.add_key(ApiKey("k-zoe", T, "student", ZOE, "zoe's key", "secret-hash", 1.0))
    data = export_student(store, T, ZOE)
    tables = data["tables"]
    assert {"sessions", "turns", "profiles", "studied_topics", "summaries", "enrollments",
            "api_keys"} <= set(tables)
    assert [r["question"] for r in tables["turns"]] == [f"{ZOE} asks"]
    assert tables["sessions"][0]["id"] == session_id
    assert "secret_hash" not in tables["api_keys"][0]
    text = json.dumps(data, default=str)
    assert "bob" not in text and "other-tenant" not in text and "secret-hash" not in text
    # one course: tenant-wide tables (keys) are left out
    assert "api_keys" not in export_student(store, T, ZOE, C)["tables"]


def test_retention_purges_old_turns_and_keeps_summaries_and_profiles(store: Store) -> None:
    remember(store, ZOE)
    remember(store, ZOE, "algebra")
    assert purge_expired_turns(store, T) == {}  # no course keeps turns for a limited time
    store.profiles.set_retention_days(T, C, 30)
    assert purge_expired_turns(store, T, now=1e12) == {C: 1}
    (session,) = store.list_sessions(T, C, ZOE)
    assert store.list_turns(T, C, session.id) == []
    assert store.summaries.latest(T, C, ZOE) and store.profiles.get(T, C, ZOE).topics
    assert len(store.list_turns(T, "algebra", store.list_sessions(T, "algebra", ZOE)[0].id)) == 1
    # a turn younger than the retention stays
    remember(store, "bob")
    import time
    assert purge_expired_turns(store, T, C, now=time.time() + 29 * DAY) == {C: 0}


def test_redis_patterns_name_the_students_windows_and_sessions() -> None:
    assert redis_patterns("t", "a*b", ["s1"]) == [
        "*{student:t:a\\*b}*", "*:student:t:a\\*b", "*s1*"]


def test_forgetting_clears_the_students_redis_keys(store: Store, redis_url: str) -> None:
    import redis

    from coursetutor.memory.recent_redis import RedisTurnCache
    from coursetutor.store.redis import connect

    settings = Settings(redis=redis_url)
    link = connect(settings)
    cache = RedisTurnCache(link, 600, 6)
    session_id = remember(store, ZOE)
    bob_session = remember(store, "bob")
    for sid in (session_id, bob_session):
        cache.put(T, C, sid, store.list_turns(T, C, sid))
    client: Any = redis.Redis.from_url(redis_url)
    client.set(link.key("rate", "{student:default:" + ZOE + "}", "minute"), 1)
    client.set(link.key("budget", "{default}", "key:student:default:" + ZOE), 1)
    client.set(link.key("rate", "{student:default:" + ZOE + "x}", "minute"), 1)  # another one
    gone = forget_student(store, settings, T, ZOE)
    assert gone.cache_keys == 3
    names = [k.decode() for k in client.keys("*")]
    assert not any(ZOE + "}" in n or n.endswith(ZOE) or session_id in n for n in names)
    assert any(bob_session in n for n in names) and any(ZOE + "x" in n for n in names)
    for name in names:
        value = client.get(name) if client.type(name) == b"string" else b""
        assert ZOE.encode() + b"\"" not in (value or b"")
    client.close()
    link.client.close()


def test_forgetting_on_postgresql_vacuums_the_tables_rows_left(postgres_url: str,
                                                               tmp_path: Path) -> None:
    import psycopg

    store = open_backend("postgresql", lambda: postgres_url, tmp_path)
    try:
        store.ensure_course(T, C, C.title(), "en")
        remember(store, ZOE)
        gone = forget_student(store, Settings(), T, ZOE)
        with psycopg.connect(postgres_url) as conn:
            vacuumed = dict(conn.execute(
                "SELECT relname, last_vacuum IS NOT NULL FROM pg_stat_user_tables "
                "WHERE relname = ANY(%s)", (list(gone.rows),)).fetchall())
        assert set(vacuumed) == set(gone.rows) and all(vacuumed.values())
    finally:
        store.close()
