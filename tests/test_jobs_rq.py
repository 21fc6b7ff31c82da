"""Ingest jobs with Redis: uploads queued as one RQ task per file, run by a burst worker in
this process, written under the course's lock, counted across tasks, and finished by the last
one; and the `coursetutor worker` command."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from coursetutor.api.ratelimit import MemoryRateLimiter
from coursetutor.cli import cli
from coursetutor.ingest import Ingestor
from coursetutor.retrieval import EmbeddingModel
from coursetutor.store import SQLiteStore
from coursetutor.store.redis import RedisLink, connect
from coursetutor.tasks.lock import course_lock, lock_key
from coursetutor.tasks.worker import LANES, IngestWorker, WorkerContext, lane
from coursetutor.workspace import Workspace

from .api_support import COURSE, COURSE_B, TENANT_B, Api, assert_clean, error_of, open_api
from .support import Sample
from .test_api_courses import CORRUPT_PDF, REGULA_FALSI, SAMPLE_DOCS, doc_ids, upload

SECANT = (b"# Secant method\n\nThe secant method replaces the derivative in Newton's method by "
          b"the slope through the last two iterates, so it needs no derivative at all.\n")


@pytest.fixture
def api(sample: Sample, embedder: EmbeddingModel, tmp_path: Path,
        redis_url: str) -> Iterator[Api]:
    with open_api(sample, embedder, tmp_path / "data", redis=redis_url,
                  redis_prefix="t") as found:
        yield found


@pytest.fixture
def link(api: Api) -> RedisLink:
    return connect(api.settings)


@pytest.fixture
def worker_ws(api: Api, embedder: EmbeddingModel) -> Iterator[Workspace]:
    """The workspace of a worker process: its own store connection, the same files."""
    store = api.store.reopen()
    yield Workspace(api.settings, store=store, embedder=embedder)
    store.close()


def work(ws: Workspace, link: RedisLink) -> bool:
    """Run a burst worker until the queue is empty; whether it ran any task."""
    return IngestWorker(WorkerContext(ws, link)).work(burst=True)


def queued(link: RedisLink) -> int:
    """Tasks waiting in the ingest lanes."""
    return sum(int(link.client.llen(f"rq:queue:t:ingest:{i}")) for i in range(LANES))


def job_of(api: Api, job_id: str) -> dict[str, Any]:
    found: dict[str, Any] = api.call("teacher", "GET", f"/v1/jobs/{job_id}").json()
    return found


def staged(api: Api) -> list[Path]:
    folder = api.settings.files_path / "staging"
    return sorted(folder.rglob("*")) if folder.exists() else []


def test_an_upload_is_queued_for_the_workers(api: Api, worker_ws: Workspace,
                                             link: RedisLink) -> None:
    response = upload(api, "teacher", [("regula-falsi.md", REGULA_FALSI),
                                       ("broken.pdf", CORRUPT_PDF)],
                      type="lecture", topic="root finding", difficulty="3")
    assert response.status_code == 202
    job_id = response.json()["id"]
    time.sleep(0.2)  # no thread of the API process takes it
    assert job_of(api, job_id)["status"] == "queued"
    assert queued(link) == 2
    assert [p.name for p in staged(api)] == [job_id, "broken.pdf", "regula-falsi.md"]

    assert work(worker_ws, link)
    job = job_of(api, job_id)
    report = job.pop("report")
    assert {k: v for k, v in job.items() if k not in ("created", "updated", "current")} == {
        "id": job_id, "course": COURSE, "status": "done", "files_total": 2, "files_done": 2,
        "stage": "done", "embedded": 1, "to_embed": 1, "error": "", "error_code": ""}
    good, bad = report["files"]
    assert (good["name"], good["status"], good["document"], good["chunks"],
            good["embedded"]) == ("regula-falsi.md", "added", "regula-falsi-md", 1, 1)
    assert (bad["name"], bad["status"], bad["chunks"]) == ("broken.pdf", "failed", 0)
    assert bad["message"].startswith("broken.pdf") and "\n" not in bad["message"]
    assert_clean(bad["message"], api.settings.data_dir)
    totals = report["totals"]
    assert [totals[k] for k in ("files", "failed", "chunks", "embedded")] == [2, 1, 1, 1]

    hits = api.call("student", "GET", f"/v1/courses/{COURSE}/search",
                    params={"q": "regula falsi secant line bracket", "k": 1}).json()["hits"]
    assert hits[0]["document"] == f"{COURSE}:regula-falsi-md"
    stored = api.call("student", "GET", f"/v1/documents/{COURSE}:regula-falsi-md/file")
    assert stored.content == REGULA_FALSI
    assert staged(api) == []


def test_two_files_of_one_course_are_two_tasks(api: Api, worker_ws: Workspace,
                                               link: RedisLink) -> None:
    job_id = upload(api, "teacher", [("secant.md", SECANT),
                                     ("regula-falsi.md", REGULA_FALSI)]).json()["id"]
    assert queued(link) == 2
    work(worker_ws, link)
    job = job_of(api, job_id)
    assert (job["status"], job["files_done"], job["embedded"]) == ("done", 2, 2)
    assert [(f["name"], f["status"]) for f in job["report"]["files"]] == [
        ("secant.md", "added"), ("regula-falsi.md", "added")]
    assert doc_ids(api, "teacher") == sorted([*SAMPLE_DOCS, "regula-falsi-md", "secant-md"])


def test_every_file_failing_fails_the_job(api: Api, worker_ws: Workspace,
                                          link: RedisLink) -> None:
    job_id = upload(api, "teacher", [("broken.pdf", CORRUPT_PDF)]).json()["id"]
    work(worker_ws, link)
    job = job_of(api, job_id)
    assert (job["status"], job["error"], job["files_done"]) == (
        "failed", "no file could be ingested", 1)
    assert [f["status"] for f in job["report"]["files"]] == ["failed"]
    assert doc_ids(api, "teacher") == SAMPLE_DOCS


def test_files_with_one_document_id_fail_before_any_task(api: Api, worker_ws: Workspace,
                                                        link: RedisLink) -> None:
    job_id = upload(api, "teacher", [("secant method.md", SECANT),
                                     ("secant-method.md", SECANT)]).json()["id"]
    assert queued(link) == 1
    work(worker_ws, link)
    job = job_of(api, job_id)
    assert job["status"] == "done"
    first, second = job["report"]["files"]
    assert (first["status"], second["status"]) == ("added", "failed")
    assert "same document id 'secant-method-md' as" in second["message"]
    assert_clean(second["message"], api.settings.data_dir)


def test_a_task_that_crashes_fails_its_file_not_the_job(
        api: Api, worker_ws: Workspace, link: RedisLink,
        monkeypatch: pytest.MonkeyPatch) -> None:
    prepare = Ingestor.prepare

    def crash_on_secant(self: Ingestor, *args: Any, **kwargs: Any) -> Any:
        if args[3].name == "secant.md":
            raise RuntimeError("a bug")
        return prepare(self, *args, **kwargs)

    monkeypatch.setattr(Ingestor, "prepare", crash_on_secant)
    job_id = upload(api, "teacher", [("secant.md", SECANT),
                                     ("regula-falsi.md", REGULA_FALSI)]).json()["id"]
    work(worker_ws, link)
    job = job_of(api, job_id)
    assert (job["status"], job["files_done"]) == ("done", 2)
    crashed, good = job["report"]["files"]
    assert (crashed["name"], crashed["status"], crashed["message"]) == (
        "secant.md", "failed",
        "secant.md: internal error (RuntimeError); the worker log has the details")
    assert good["status"] == "added"
    assert staged(api) == []


def test_the_workers_take_tenants_in_turns(api: Api, worker_ws: Workspace, link: RedisLink,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    assert lane(api.settings, "default") != lane(api.settings, TENANT_B)
    order: list[tuple[str, str]] = []
    write = Ingestor.write

    def recorded(self: Ingestor, tenant: str, course: str, prepared: Any, notify: Any) -> Any:
        order.append((tenant, Path(prepared.result.path).name))
        return write(self, tenant, course, prepared, notify)

    monkeypatch.setattr(Ingestor, "write", recorded)
    big = upload(api, "teacher", [(f"part-{i}.md", SECANT.replace(b"Secant", f"Part {i}"
                                                                 .encode()))
                                  for i in range(3)]).json()["id"]
    small = upload(api, "teacher_b", [("regula-falsi.md", REGULA_FALSI)],
                   course=COURSE_B).json()["id"]
    work(worker_ws, link)
    assert job_of(api, big)["status"] == "done"
    assert api.call("teacher_b", "GET", f"/v1/jobs/{small}").json()["status"] == "done"
    # B's one file is not left until A's three are done
    assert order.index((TENANT_B, "regula-falsi.md")) < 3


def test_a_cancelled_job_ingests_nothing_more_and_stays_cancelled(
        api: Api, worker_ws: Workspace, link: RedisLink) -> None:
    job_id = upload(api, "teacher", [("secant.md", SECANT),
                                     ("regula-falsi.md", REGULA_FALSI)]).json()["id"]
    for who, status in (("teacher_b", 404), ("student", 403)):
        assert api.call(who, "DELETE", f"/v1/jobs/{job_id}").status_code == status
    cancelled = api.call("teacher", "DELETE", f"/v1/jobs/{job_id}")
    assert (cancelled.status_code, cancelled.json()["status"]) == (200, "cancelled")
    work(worker_ws, link)
    job = job_of(api, job_id)
    assert (job["status"], job["error"], job["files_done"]) == (
        "cancelled", "cancelled by a teacher", 2)
    assert [f["message"] for f in job["report"]["files"]] == [
        "secant.md: not ingested, the job was cancelled",
        "regula-falsi.md: not ingested, the job was cancelled"]
    assert doc_ids(api, "teacher") == SAMPLE_DOCS
    assert staged(api) == []
    assert api.call("teacher", "DELETE", f"/v1/jobs/{job_id}").status_code == 409


def test_the_course_lock_is_held_while_a_document_is_written(
        api: Api, worker_ws: Workspace, link: RedisLink,
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(worker_ws.store, SQLiteStore)
    replace = worker_ws.store.replace_document
    taken_while_writing: list[bool] = []

    def write(*args: Any, **kwargs: Any) -> int:
        other = link.client.lock(lock_key(link, "default", COURSE), timeout=5)
        taken_while_writing.append(bool(other.acquire(blocking=False)))
        return replace(*args, **kwargs)

    monkeypatch.setattr(worker_ws.store, "replace_document", write)
    upload(api, "teacher", [("secant.md", SECANT), ("regula-falsi.md", REGULA_FALSI)])
    work(worker_ws, link)
    assert taken_while_writing == [False, False]
    assert link.client.lock(lock_key(link, "default", COURSE)).acquire(blocking=False)


def test_a_dead_workers_course_lock_expires(link: RedisLink) -> None:
    with course_lock(link, "default", COURSE, seconds=1):
        assert not link.client.lock(lock_key(link, "default", COURSE)).acquire(blocking=False)
    with course_lock(link, "default", "other", seconds=1):
        pass  # other courses are not locked by it
    dead = link.client.lock(lock_key(link, "default", COURSE), timeout=1)
    assert dead.acquire(blocking=False)  # a worker takes it, then dies without releasing it
    started = time.monotonic()
    with course_lock(link, "default", COURSE, seconds=5):
        waited = time.monotonic() - started
    assert 0.5 < waited < 3


def test_a_redis_that_is_down_at_upload_is_503(sample: Sample, embedder: EmbeddingModel,
                                               tmp_path: Path) -> None:
    with open_api(sample, embedder, tmp_path / "data", redis="redis://127.0.0.1:1/0",
                  limiter=MemoryRateLimiter()) as api:
        refused = upload(api, "teacher", [("secant.md", SECANT)])
        jobs = api.store.list_jobs("default", COURSE)
    found = error_of(refused)
    assert (refused.status_code, found["type"]) == (503, "redis_unavailable")
    assert found["message"].startswith("Redis at 127.0.0.1:1/0 cannot be reached")
    assert [j.status for j in jobs] == ["failed"]
    assert jobs[0].error.startswith("Redis at 127.0.0.1:1/0 cannot be reached")
    assert staged(api) == []


def test_readyz_checks_redis(api: Api, sample: Sample, embedder: EmbeddingModel,
                            tmp_path: Path) -> None:
    ready = api.client.get("/readyz").json()
    assert ready["redis"] == "ok"
    with open_api(sample, embedder, tmp_path / "down", redis="redis://127.0.0.1:1/0",
                  limiter=MemoryRateLimiter()) as down:
        response = down.client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["redis"].startswith("Redis at 127.0.0.1:1/0 cannot be reached")


# -- coursetutor worker ----------------------------------------------------------------------


def test_the_worker_command_needs_redis(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["--data-dir", str(tmp_path), "worker", "--burst"])
    assert (result.exit_code, result.output) == (
        1, "Error: coursetutor worker takes its jobs from Redis: set redis "
           "(COURSETUTOR_REDIS=redis://host:6379/0)\n")


def test_the_worker_command_says_when_redis_is_down(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["--data-dir", str(tmp_path), "worker", "--burst"],
                                env={"COURSETUTOR_REDIS": "redis://127.0.0.1:1/0"})
    assert result.exit_code == 1
    assert result.output.startswith("Error: Redis at 127.0.0.1:1/0 cannot be reached: ")
    assert result.output.count("\n") == 1


def test_the_worker_command_runs_the_queue(api: Api, link: RedisLink) -> None:
    job_id = upload(api, "teacher", [("secant.md", SECANT)]).json()["id"]
    own_lane = lane(api.settings, "default")
    result = CliRunner().invoke(cli, ["--data-dir", str(api.settings.data_dir), "worker",
                                      "--burst", "--queue", own_lane],
                                env={"COURSETUTOR_REDIS": api.settings.redis,
                                     "COURSETUTOR_REDIS_PREFIX": "t"})
    assert result.exit_code == 0, result.output
    assert f"Ingest worker on queue {own_lane} of Redis 127.0.0.1:" in result.output
    assert job_of(api, job_id)["status"] == "done"
