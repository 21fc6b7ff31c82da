"""`coursetutor copy` and `coursetutor migrate`: moving a deployment between stores."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from coursetutor.cli import cli
from coursetutor.errors import ConflictError
from coursetutor.store import SQLiteStore, Store, open_store
from coursetutor.store.classes import TranscriptEvent
from coursetutor.store.copy import copy_store
from coursetutor.store.lti import LtiLink, Platform, ToolKey
from coursetutor.store.mastery import BKTParams
from coursetutor.store.migrate import migrations
from coursetutor.store.summaries import Summary
from coursetutor.types import ApiKey, Job, SearchFilters, Turn

from .test_store_contract import BISECT, EXERCISE, MODEL, NEWTON, SUMMARY, add, doc, vec

T, C = "uni-a", "calculus"
ALL = SearchFilters(T, C)


def fill(store: Store) -> None:
    """A course with documents, vectors, an enrolment, a session with turns, a job, a key."""
    store.ensure_course(T, C, "Calculus", "en")
    store.set_course_policy(T, C, True)
    add(store, doc("lec", tenant=T), [NEWTON, BISECT], [vec(1, 0, 0, 0), vec(0, 1, 0, 0)])
    add(store, doc("ex", tenant=T, doc_type="exercise", difficulty=3), [EXERCISE],
        [vec(1, 0, 1, 0)])
    add(store, doc("sum", tenant=T, doc_type="summary", difficulty=1), [SUMMARY],
        [vec(0, 0, 0, 1)])
    store.ensure_course("uni-b", "algebra", "Algebra", "it")
    store.enroll(T, C, "ana")
    session = store.start_session(T, C, "ana")
    for question in ("What is Newton's method?", "And bisection?"):
        store.add_turn(Turn(session.id, 0, T, C, "ana", question, "It ... [1]", "lecture",
                            "concept", "correct", "", "", True))
    store.end_session(T, C, session.id)
    store.summaries.put(Summary(T, C, "ana", session.id, "session", "Newton and bisection.",
                                (f"{session.id}:1", f"{session.id}:2"), ("Newton's method",)))
    store.mastery.observe(T, C, "ana", "Newton's method", False, f"{session.id}:1",
                          lambda known: 0.15)
    store.mastery.add_weak_area(T, C, "ana", "Newton's method", "Starts where f' is zero.",
                                f"{session.id}:1")
    store.mastery.weaken(T, C, "ana", "Newton's method", f"{session.id}:2")
    store.mastery.set_params(T, C, BKTParams(0.2, 0.1, 0.1, 0.2))
    store.add_job(Job("j_1", T, C, "done", 2, 2, "done", "", 4, 4, '{"files": []}', "",
                      10.0, 11.0))
    store.add_key(ApiKey("abc123abc123", T, "teacher", "", "prof", "hash", 5.0))
    live = store.classes.start_class(T, C, "Lecture 1", "lec")
    store.classes.set_slide(T, C, live.id, 2, "teacher")
    store.classes.add_event(T, C, live.id, TranscriptEvent(0.5, 2.0, "Newton", "Ana"),
                            raw_text="new ton", page=2)
    store.classes.add_event(T, C, live.id, TranscriptEvent(2.0, 3.0, "and", final=False))
    fill_lti(store)


LINEITEM = "https://lms.example/lineitems/9"


def fill_lti(store: Store) -> None:
    """An LMS platform with a user, a course link with a grade book column, a sent score,
    and the tool's signing keys (one retired)."""
    store.lti.add_tool_key(ToolKey("old", "-----OLD PEM-----", 1.0, 2.0))
    store.lti.add_tool_key(ToolKey("new", "-----NEW PEM-----", 2.0))
    store.lti.add_platform(Platform("p1", T, "https://lms.example", "c1", ("d1",),
                                    "https://lms.example/jwks", "https://lms.example/auth",
                                    "https://lms.example/token", ("https://lms.example",), 3.0))
    store.lti.set_user("p1", "7", T, "lti-p1-7")
    store.lti.set_link(LtiLink("p1", "ctx", "", T, C))
    store.lti.set_link(LtiLink("p1", "ctx", "rl", T, C, "https://lms.example/members",
                               LINEITEM, grades=True, topic="Newton's method"))
    store.lti.set_score(LINEITEM, T, C, "lti-p1-7", 42.5, sent=4.0)


def snapshot(store: Store) -> dict[str, object]:
    """Everything the store holds that a copy must keep, comparable across backends."""
    out: dict[str, object] = {"tenants": [t.id for t in store.list_tenants()]}
    for tenant in out["tenants"]:  # type: ignore[attr-defined]
        for course in store.list_courses(tenant):
            key = f"{tenant}/{course.id}"
            out[key] = course
            out[key + "/documents"] = store.list_documents(tenant, course.id)
            out[key + "/chunks"] = [store.export_chunks(tenant, course.id, d.id)
                                    for d in store.list_documents(tenant, course.id)]
            out[key + "/students"] = store.list_students(tenant, course.id)
            sessions = store.all_sessions(tenant, course.id)
            out[key + "/sessions"] = sessions
            out[key + "/turns"] = [store.list_turns(tenant, course.id, s.id) for s in sessions]
            out[key + "/jobs"] = store.list_jobs(tenant, course.id)
            out[key + "/summaries"] = store.summaries.for_course(tenant, course.id)
            out[key + "/mastery"] = store.mastery.records(tenant, course.id)
            classes = store.classes.list_classes(tenant, course.id)
            out[key + "/classes"] = classes
            out[key + "/class_events"] = [store.classes.list_events(tenant, course.id, c.id)
                                           for c in classes]
    out["keys"] = store.list_keys()
    out["lti/tool_keys"] = store.lti.tool_keys()
    platforms = store.lti.list_platforms()
    out["lti/platforms"] = platforms
    out["lti/users"] = [store.lti.users(p.id) for p in platforms]
    for tenant in out["tenants"]:  # type: ignore[attr-defined]
        for course in store.list_courses(tenant):
            out[f"{tenant}/{course.id}/lti_links"] = store.lti.course_links(tenant, course.id)
            out[f"{tenant}/{course.id}/lti_scores"] = store.lti.scores(tenant, course.id)
    vectors = {(m, k): v.tolist() for m, batch in store.iter_vectors() for k, v in batch.items()}
    out["vectors"] = sorted(vectors.items())
    return out


def normalized(chunks: object) -> object:
    """Chunk rows with their terms sorted (a store keeps term counts, not their order)."""
    return [[(r.id, r.text, r.locator, r.ordinal, r.vector_key, sorted(r.terms)) for r in rows]
            for rows in chunks]  # type: ignore[attr-defined]


def same(a: dict[str, object], b: dict[str, object]) -> None:
    assert a.keys() == b.keys()
    for key in a:
        if key.endswith("/chunks"):
            assert normalized(a[key]) == normalized(b[key]), key
        elif key == "vectors":
            assert [k for k, _ in a[key]] == [k for k, _ in b[key]]  # type: ignore[attr-defined]
            for (_, va), (_, vb) in zip(a[key], b[key], strict=True):  # type: ignore[call-overload]
                assert np.allclose(va, vb, atol=1e-6)
        else:
            assert a[key] == b[key], key


def test_copy_sqlite_to_postgresql_and_back(tmp_path: Path, postgres_url: str) -> None:
    source = SQLiteStore(tmp_path / "a.db")
    fill(source)
    pg = open_store(postgres_url)
    back = SQLiteStore(tmp_path / "b.db")
    try:
        report = copy_store(source, pg)
        assert (report.courses, report.documents, report.chunks, report.sessions, report.turns,
                report.jobs, report.keys, report.enrolments) == (2, 3, 4, 1, 2, 1, 1, 1)
        assert report.vectors == 4
        assert (report.classes, report.class_events) == (1, 2)
        assert (report.summaries, report.mastery) == (1, 1)
        same(snapshot(source), snapshot(pg))
        # search works on the copy without re-embedding, and finds the same chunks
        for store in (source, pg):
            assert [c for c, _ in store.vector_search(ALL, MODEL, vec(1, 0, 0, 0), 2)] == [
                "newton", "ex-newton"]
            assert store.keyword_search(ALL, ["newton"], 5).hits[0][0] in {
                "newton", "ex-newton", "sum-newton"}
        copy_store(pg, back)
        same(snapshot(source), snapshot(back))
    finally:
        for s in (source, pg, back):
            s.close()


def test_copy_keeps_lti_registrations(tmp_path: Path) -> None:
    source, target = SQLiteStore(tmp_path / "a.db"), SQLiteStore(tmp_path / "b.db")
    try:
        fill(source)
        report = copy_store(source, target)
        assert (report.lti_platforms, report.lti_keys, report.lti_users, report.lti_links,
                report.lti_scores) == (1, 2, 1, 2, 1)
        same(snapshot(source), snapshot(target))
        link = target.lti.find_link("p1", "ctx", "rl")
        assert link is not None and (link.grades, link.topic, link.lineitem_url) == (
            True, "Newton's method", LINEITEM)
        assert target.lti.user_sub(T, "p1", "lti-p1-7") == "7"
        assert target.lti.last_score(LINEITEM, "lti-p1-7") == 42.5
        assert [(k.kid, k.retired) for k in target.lti.tool_keys()] == [("new", None),
                                                                        ("old", 2.0)]
    finally:
        source.close()
        target.close()


def test_copy_refuses_a_target_with_courses(tmp_path: Path) -> None:
    source, target = SQLiteStore(tmp_path / "a.db"), SQLiteStore(tmp_path / "b.db")
    fill(source)
    target.ensure_course(T, "other")
    with pytest.raises(ConflictError, match="copy into an empty store"):
        copy_store(source, target)
    assert [c.id for c in target.list_courses(T)] == ["other"]


def test_copy_and_migrate_commands(tmp_path: Path, postgres_url: str) -> None:
    source = SQLiteStore(tmp_path / "a.db")
    fill(source)
    source.close()
    runner = CliRunner()
    env = {"COURSETUTOR_DATA_DIR": str(tmp_path)}
    done = runner.invoke(cli, ["migrate", "--store", postgres_url], env=env)
    assert done.exit_code == 0, done.output
    latest = migrations("postgres")[-1][0]
    assert f"schema version {latest} (up to date)" in done.output
    args = ["copy", "--from", f"sqlite:///{tmp_path / 'a.db'}", "--to", postgres_url, "--json"]
    done = runner.invoke(cli, args, env=env)
    assert done.exit_code == 0, done.output
    assert '"chunks": 4' in done.output
    again = runner.invoke(cli, args, env=env)
    assert again.exit_code == 1
    assert again.output.strip().splitlines()[-1].startswith("Error: the target store already")


def test_copy_to_a_dead_server_is_one_line(tmp_path: Path) -> None:
    SQLiteStore(tmp_path / "a.db").close()
    done = CliRunner().invoke(cli, ["copy", "--from", f"sqlite:///{tmp_path / 'a.db'}", "--to",
                                    "postgresql://coursetutor:secret@127.0.0.1:1/x"],
                              env={"COURSETUTOR_DATA_DIR": str(tmp_path)})
    assert done.exit_code == 1
    line = done.output.strip().splitlines()[-1]
    assert line.startswith("Error: cannot connect to PostgreSQL at postgresql://coursetutor@")
    assert "secret" not in done.output
