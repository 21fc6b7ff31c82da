"""The ingest queue in the store (both backends): staged files and their results, claiming,
requeueing after a restart, cancelling, and the queue per tenant."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from coursetutor.api.jobs import recover
from coursetutor.errors import ConflictError, NotFoundError
from coursetutor.store import Store, sql_access
from coursetutor.store.base import JobFile, QueueDepth
from coursetutor.types import Job

from .support import Clock, open_backend

T, OTHER, C = "uni", "college", "calculus"


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path,
          monkeypatch: pytest.MonkeyPatch) -> Iterator[Store]:
    """Tenants `uni` and `college` with a course each, on a predictable clock."""
    monkeypatch.setattr(sql_access, "time", Clock())
    s = open_backend(request.param, lambda: request.getfixturevalue("postgres_url"), tmp_path)
    for tenant in (T, OTHER):
        s.create_tenant(tenant)
        s.ensure_course(tenant, C, "Calculus", "en")
    yield s
    s.close()


def job(id: str, tenant: str = T, status: str = "queued", created: float = 10.0) -> Job:
    return Job(id, tenant, C, status, files_total=2, created=created, updated=created)


FILES = [JobFile(0, "a.md", '{"doc_type": "lecture"}'), JobFile(1, "b.md", "{}")]


def test_files_of_a_job_and_their_results(store: Store) -> None:
    store.add_job_files("j1", FILES)
    store.add_job(job("j1"))
    store.set_job_file("j1", 1, '{"status": "added"}')
    assert store.job_files("j1") == [FILES[0], JobFile(1, "b.md", "{}", '{"status": "added"}')]
    assert store.job_files("nothing") == []


def test_claiming_takes_a_queued_job_once(store: Store) -> None:
    store.add_job(job("old", created=1.0))
    store.add_job(job("new", tenant=OTHER, created=2.0))
    store.add_job(job("done", status="done", created=0.5))
    assert [j.id for j in store.queued_jobs()] == ["old", "new"]
    assert store.claim_job("old") is True
    assert store.claim_job("old") is False  # another thread or process was first
    assert store.get_job(T, "old").status == "running"
    assert [j.id for j in store.queued_jobs()] == ["new"]


def test_a_restart_requeues_running_jobs_and_forgets_finished_ones_files(
        store: Store, tmp_path: Path) -> None:
    for id, status in (("run", "running"), ("wait", "queued"), ("fin", "done")):
        store.add_job_files(id, FILES)
        store.add_job(job(id, status=status))
    uploads = tmp_path / "uploads"
    for folder in ("run", "wait", "fin", "orphan"):
        (uploads / folder).mkdir(parents=True)
        (uploads / folder / "a.md").write_text("# a\n")
    assert recover(store, uploads) == 1
    assert [j.id for j in store.queued_jobs()] == ["run", "wait"]
    assert store.job_files("run") == FILES and store.job_files("fin") == []
    assert sorted(p.name for p in uploads.iterdir()) == ["run", "wait"]


def test_cancel_a_job(store: Store) -> None:
    store.add_job(job("q"))
    store.add_job(job("r", status="running"))
    store.add_job(job("d", status="done"))
    for id in ("q", "r"):
        cancelled = store.cancel_job(T, id, "cancelled by a teacher")
        assert (cancelled.status, cancelled.stage, cancelled.error) == (
            "cancelled", "cancelled", "cancelled by a teacher")
    assert store.claim_job("q") is False
    with pytest.raises(ConflictError, match="job 'd' has already finished \\(done\\)"):
        store.cancel_job(T, "d", "x")
    with pytest.raises(NotFoundError, match="job 'q' does not exist"):
        store.cancel_job(OTHER, "q", "x")
    assert store.get_job(T, "d").status == "done"


def test_the_queue_per_tenant(store: Store) -> None:
    store.add_job(job("a1", created=5.0))
    store.add_job(job("a2", status="running", created=3.0))
    store.add_job(job("b1", tenant=OTHER, created=7.0))
    store.add_job(job("a3", status="failed", created=1.0))
    assert store.job_queue() == [QueueDepth(OTHER, 1, 0, 7.0), QueueDepth(T, 1, 1, 3.0)]
