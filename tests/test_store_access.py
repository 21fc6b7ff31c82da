"""Tenants, API keys, enrolments, ingest jobs and course settings, on every store backend."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

from coursetutor.errors import ConflictError, NotFoundError
from coursetutor.store import Store, sql_access
from coursetutor.types import ApiKey, Course, Job, Role, Tenant

from .support import Clock, open_backend

T = "uni"
OTHER = "college"
C = "calculus"
DEFAULT = Tenant("default", "default", 0.0)  # every fresh store has the default tenant


@pytest.fixture(params=["sqlite", "postgresql"])
def store(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Store]:
    """A fresh, empty store of each backend, its access SQL on a predictable clock."""
    monkeypatch.setattr(sql_access, "time", Clock())
    s = open_backend(request.param, lambda: request.getfixturevalue("postgres_url"), tmp_path)
    yield s
    s.close()


@pytest.fixture
def courses(store: Store) -> Store:
    """Tenants `uni` (calculus, algebra) and `college` (calculus)."""
    store.create_tenant(T, "University")
    store.create_tenant(OTHER)
    for tenant, course in [(T, C), (T, "algebra"), (OTHER, C)]:
        store.ensure_course(tenant, course, course.title(), "en")
    return store


def key(id: str, tenant: str = T, role: Role = "teacher", created: float = 10.0,
        student: str = "") -> ApiKey:
    return ApiKey(id, tenant, role, student, f"{role} key", f"hash-{id}", created)


def job(id: str, tenant: str = T, course: str = C, status: str = "queued",
        created: float = 10.0) -> Job:
    return Job(id, tenant, course, status, files_total=3, created=created, updated=created)


# -- tenants -------------------------------------------------------------------


def test_create_and_get_tenant(store: Store) -> None:
    assert store.create_tenant(T, "University") == Tenant(T, "University", 1000.0)
    assert store.create_tenant(OTHER) == Tenant(OTHER, OTHER, 1001.0)
    assert store.get_tenant(T) == Tenant(T, "University", 1000.0)
    assert store.list_tenants() == [Tenant(OTHER, OTHER, 1001.0), DEFAULT,
                                    Tenant(T, "University", 1000.0)]


def test_create_tenant_twice_is_a_conflict(store: Store) -> None:
    store.create_tenant(T, "University")
    with pytest.raises(ConflictError, match="already exists"):
        store.create_tenant(T, "Another name")
    assert store.get_tenant(T) == Tenant(T, "University", 1000.0)
    # the store stays usable after the failed insert (no transaction left open)
    assert store.create_tenant(OTHER).id == OTHER


def test_ensure_tenant_creates_once(store: Store) -> None:
    first = store.ensure_tenant(T, "University")
    assert first == Tenant(T, "University", 1000.0)
    assert store.ensure_tenant(T, "Renamed") == first
    assert store.ensure_tenant("default") == DEFAULT


def test_unknown_tenant_is_not_found(store: Store) -> None:
    with pytest.raises(NotFoundError, match="tenant 'nobody' does not exist"):
        store.get_tenant("nobody")
    with pytest.raises(NotFoundError):
        store.remove_tenant("nobody")
    with pytest.raises(NotFoundError):
        store.add_key(key("k1", tenant="nobody"))


def test_list_tenants_of_a_fresh_store(store: Store) -> None:
    assert store.list_tenants() == [DEFAULT]


def test_remove_tenant_removes_its_courses_keys_and_jobs(courses: Store) -> None:
    s = courses
    for k in [key("k-uni"), key("k-college", tenant=OTHER)]:
        s.add_key(k)
    for j in [job("j-uni"), job("j-uni-2", course="algebra"), job("j-college", tenant=OTHER)]:
        s.add_job(j)
    s.enroll(T, C, "alice")
    s.enroll(OTHER, C, "alice")
    session = s.start_session(T, C, "alice")
    s.remove_tenant(T)
    with pytest.raises(NotFoundError):
        s.get_tenant(T)
    assert s.list_courses(T) == []
    assert s.list_keys(T) == []
    assert s.find_key("k-uni") is None
    for tenant, job_id in [(T, "j-uni"), (T, "j-uni-2")]:
        with pytest.raises(NotFoundError):
            s.get_job(tenant, job_id)
    assert s.student_courses(T, "alice") == []
    with pytest.raises(NotFoundError):
        s.get_session(T, C, session.id)
    # the other tenant keeps everything
    assert [t.id for t in s.list_tenants()] == [OTHER, "default"]
    assert s.list_courses(OTHER) == [Course(OTHER, C, "Calculus", "en")]
    assert [k.id for k in s.list_keys()] == ["k-college"]
    assert s.get_job(OTHER, "j-college") == job("j-college", tenant=OTHER)
    assert s.student_courses(OTHER, "alice") == [C]
    # the id can be taken again, empty
    s.create_tenant(T)
    assert s.list_courses(T) == [] and s.list_keys(T) == []


# -- API keys ------------------------------------------------------------------


def test_add_find_and_list_keys(courses: Store) -> None:
    s = courses
    keys = [key("k-b", created=20.0), key("k-a", role="admin", created=20.0),
            key("k-s", role="student", student="alice", created=5.0),
            key("k-other", tenant=OTHER, created=1.0)]
    assert [s.add_key(k) for k in keys] == keys
    assert s.find_key("k-s") == keys[2]
    assert s.find_key("missing") is None
    # by creation time, then id
    assert s.list_keys(T) == [keys[2], keys[1], keys[0]]
    assert s.list_keys(OTHER) == [keys[3]]
    assert s.list_keys() == [keys[3], keys[2], keys[1], keys[0]]
    assert s.list_keys("nobody") == []


def test_revoke_key_keeps_the_first_revocation(courses: Store) -> None:
    s = courses
    s.add_key(key("k1"))
    s.add_key(key("k2"))
    revoked = s.revoke_key("k1")
    assert revoked == dataclasses.replace(key("k1"), revoked=1002.0)
    assert s.revoke_key("k1") == revoked
    assert s.find_key("k1") == revoked
    assert s.find_key("k2") == key("k2")
    assert s.list_keys(T) == [revoked, key("k2")]


def test_revoke_unknown_key_is_not_found(courses: Store) -> None:
    with pytest.raises(NotFoundError, match="key 'nope' does not exist"):
        courses.revoke_key("nope")


# -- enrolments ----------------------------------------------------------------


def test_enroll_is_idempotent(courses: Store) -> None:
    s = courses
    for student in ["carol", "alice", "alice", "bob"]:
        s.enroll(T, C, student)
    s.enroll(T, "algebra", "alice")
    s.enroll(OTHER, C, "dave")
    assert s.list_students(T, C) == ["alice", "bob", "carol"]
    assert s.list_students(T, "algebra") == ["alice"]
    assert s.list_students(OTHER, C) == ["dave"]
    assert s.student_courses(T, "alice") == ["algebra", C]
    assert s.student_courses(T, "dave") == []
    assert s.student_courses(OTHER, "dave") == [C]
    assert [s.is_enrolled(T, C, who) for who in ["alice", "bob", "dave"]] == [True, True, False]
    assert s.is_enrolled(OTHER, C, "alice") is False


def test_enroll_in_unknown_course_is_not_found(courses: Store) -> None:
    with pytest.raises(NotFoundError):
        courses.enroll(T, "history", "alice")
    with pytest.raises(NotFoundError):
        courses.enroll("nobody", C, "alice")
    with pytest.raises(NotFoundError):
        courses.list_students(T, "history")


def test_unenroll(courses: Store) -> None:
    s = courses
    s.enroll(T, C, "alice")
    s.enroll(T, C, "bob")
    s.unenroll(T, C, "alice")
    assert s.list_students(T, C) == ["bob"]
    assert not s.is_enrolled(T, C, "alice")
    with pytest.raises(NotFoundError, match="'alice' is not enrolled"):
        s.unenroll(T, C, "alice")
    with pytest.raises(NotFoundError):
        s.unenroll(OTHER, C, "bob")
    assert s.list_students(T, C) == ["bob"]


def test_enrolments_go_with_their_course(courses: Store) -> None:
    s = courses
    s.enroll(T, C, "alice")
    s.enroll(T, "algebra", "alice")
    s.remove_course(T, C)
    assert s.student_courses(T, "alice") == ["algebra"]
    assert not s.is_enrolled(T, C, "alice")
    s.ensure_course(T, C, "Calculus again")
    assert s.list_students(T, C) == []


# -- ingest jobs ---------------------------------------------------------------


def test_add_and_get_job(courses: Store) -> None:
    s = courses
    j = job("j1")
    assert s.add_job(j) == j
    assert s.get_job(T, "j1") == j
    with pytest.raises(NotFoundError, match="job 'j1' does not exist"):
        s.get_job(OTHER, "j1")
    with pytest.raises(NotFoundError):
        s.get_job(T, "j2")
    with pytest.raises(NotFoundError):
        s.add_job(job("j3", course="history"))


def test_update_job_sets_its_fields(courses: Store) -> None:
    s = courses
    s.add_job(job("j1"))
    s.add_job(job("j2"))
    s.update_job("j1", status="running", stage="embedding", current="notes.md",
                 files_done=1, embedded=12, to_embed=40)
    s.update_job("j1", status="done", files_done=3, report='{"chunks": 52}', error="")
    assert s.get_job(T, "j1") == Job("j1", T, C, "done", 3, files_done=3, stage="embedding",
                                     current="notes.md", embedded=12, to_embed=40,
                                     report='{"chunks": 52}', error="", created=10.0,
                                     updated=1003.0)  # after two tenants and one update
    assert s.get_job(T, "j2") == job("j2")


def test_update_job_refuses_unknown_fields(courses: Store) -> None:
    courses.add_job(job("j1"))
    with pytest.raises(ValueError, match=r"\['tenant'\] cannot be updated"):
        courses.update_job("j1", status="running", tenant=OTHER)
    assert courses.get_job(T, "j1") == job("j1")


def test_list_jobs_newest_first(courses: Store) -> None:
    s = courses
    for j in [job("old", created=1.0), job("new", created=3.0), job("mid", created=2.0),
              job("algebra", course="algebra", created=4.0), job("other", tenant=OTHER)]:
        s.add_job(j)
    assert [j.id for j in s.list_jobs(T, C)] == ["new", "mid", "old"]
    assert [j.id for j in s.list_jobs(OTHER, C)] == ["other"]
    assert s.list_jobs(T, "history") == []


def test_fail_unfinished_jobs(courses: Store) -> None:
    s = courses
    statuses = {"q": "queued", "r": "running", "d": "done", "f": "failed", "o": "queued"}
    for id, status in statuses.items():
        s.add_job(job(id, tenant=OTHER if id == "o" else T, status=status))
    s.update_job("f", error="disk full")
    assert s.fail_unfinished_jobs("the server stopped") == 3
    after = {id: s.get_job(OTHER if id == "o" else T, id) for id in statuses}
    assert {id: (j.status, j.error) for id, j in after.items()} == {
        "q": ("failed", "the server stopped"), "r": ("failed", "the server stopped"),
        "d": ("done", ""), "f": ("failed", "disk full"), "o": ("failed", "the server stopped"),
    }
    assert after["d"] == job("d", status="done")
    assert s.fail_unfinished_jobs("again") == 0


def test_jobs_go_with_their_course(courses: Store) -> None:
    s = courses
    s.add_job(job("j1"))
    s.add_job(job("j2", course="algebra"))
    s.remove_course(T, C)
    with pytest.raises(NotFoundError):
        s.get_job(T, "j1")
    assert s.get_job(T, "j2") == job("j2", course="algebra")


# -- course settings -----------------------------------------------------------


def test_course_settings_and_language(courses: Store) -> None:
    s = courses
    s.ensure_course(T, "analisi", "Analisi", "it")
    assert s.course_settings(T, "analisi") == Course(T, "analisi", "Analisi", "it", 0, 0, False)
    assert s.course_language(T, "analisi") == "it"
    assert s.course_language(OTHER, C) == "en"
    for call in [s.course_settings, s.course_language]:
        with pytest.raises(NotFoundError, match="course 'analisi' does not exist"):
            call(OTHER, "analisi")


def test_set_course_policy(courses: Store) -> None:
    s = courses
    allowed = s.set_course_policy(T, C, True)
    assert allowed == Course(T, C, "Calculus", "en", 0, 0, True)
    assert s.get_course(T, C) == allowed
    assert s.course_settings(T, C).allow_solutions is True
    assert s.get_course(OTHER, C).allow_solutions is False
    assert s.set_course_policy(T, C, False) == Course(T, C, "Calculus", "en", 0, 0, False)
    with pytest.raises(NotFoundError):
        s.set_course_policy(T, "history", True)
    # the policy survives ensure_course
    s.set_course_policy(T, C, True)
    assert s.ensure_course(T, C, "Calculus I").allow_solutions is True


def test_a_duplicate_key_id_is_a_conflict_in_both_stores(store: Store) -> None:
    key = ApiKey("dupdupdupdup", "default", "teacher", "", "first", "hash", 1.0)
    store.add_key(key)
    with pytest.raises(ConflictError, match="key 'dupdupdupdup' already exists"):
        store.add_key(dataclasses.replace(key, name="second"))
    assert store.find_key(key.id) == key
