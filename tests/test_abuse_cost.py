"""Abuse of cost: long texts refused before any embedding, compute budgets per key and tenant,
a durable ingest queue that resumes after a restart, takes tenants in turns, caps chunks,
can be cancelled and leaves no staged files, and a vector cache no tenant can probe."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from fastapi.testclient import TestClient

from coursetutor.api import create_app
from coursetutor.api.budget import Buckets, MemoryComputeBudget
from coursetutor.api.budget_redis import RedisComputeBudget
from coursetutor.api.fair_turns import FairSlots, Turns
from coursetutor.config import load_settings
from coursetutor.errors import ComputeBudgetError
from coursetutor.ingest import FileResult
from coursetutor.retrieval import EmbeddingModel
from coursetutor.store import SQLiteStore
from coursetutor.store.base import JobFile
from coursetutor.store.redis import connect
from coursetutor.types import FileMeta, Job
from coursetutor.workspace import Workspace

from .api_support import COURSE, COURSE_B, TENANT_B, Api, coded, error_of, open_api
from .support import Sample
from .test_api_courses import REGULA_FALSI, eventually, upload

SECRET = (b"# Notes\n\nThe examiner's hidden formula for the final grade is forty percent "
          b"homework plus sixty percent oral exam.\n")
WRONG_GUESS = (b"# Notes\n\nThe examiner's hidden formula for the final grade is fifty percent "
               b"homework plus fifty percent oral exam.\n")
STEPS = "# Fixed-point iteration\n\n" + "\n\n".join(
    f"## Step {i}\n\nIteration {i} of the fixed point map moves the estimate x_{i} closer to "
    f"the root when the derivative of g stays below one near it, step {i}." for i in
    range(1, 9))
SMALL_CHUNKS: dict[str, Any] = {"embed_batch_size": 1, "chunk_target_tokens": 30,
                                "chunk_max_tokens": 40}


class CountingEmbedder(EmbeddingModel):
    """The real embedder, counting the texts it embeds; passage batches after the first
    wait for `release` once `hold` is set."""

    def __init__(self, inner: EmbeddingModel) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.dim = inner.dim
        self.query_cache_size = 0
        self.texts: list[str] = []
        self.batches = 0
        self.hold = threading.Event()
        self.waiting = threading.Event()
        self.release = threading.Event()

    def embed_batch(self, texts: list[str], is_query: bool) -> npt.NDArray[np.float32]:
        self.texts += texts
        if not is_query:
            self.batches += 1
            if self.hold.is_set() and self.batches > 1:
                self.waiting.set()
                self.release.wait(30)
        return self.inner.embed_batch(texts, is_query)

    def token_count(self, text: str) -> int:
        return self.inner.token_count(text)


@pytest.fixture
def counting(embedder: EmbeddingModel) -> CountingEmbedder:
    return CountingEmbedder(embedder)


@pytest.fixture
def api(sample: Sample, counting: CountingEmbedder, tmp_path: Path) -> Iterator[Api]:
    with open_api(sample, counting, tmp_path / "data", api_max_query_tokens=64,
                  api_secret="test-secret") as found:
        yield found


def search(api: Api, who: str, q: str, course: str = COURSE) -> Any:
    return api.call(who, "GET", f"/v1/courses/{course}/search", params={"q": q})


def wait_for_job(api: Api, job_id: str, who: str = "teacher") -> dict[str, Any]:
    """Poll the job (as `who`, of its tenant) until it ends."""
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        response = api.call(who, "GET", f"/v1/jobs/{job_id}")
        if response.status_code == 429:  # polled faster than the rate limit on a slow machine
            time.sleep(float(response.headers.get("Retry-After", "1")))
            continue
        job: dict[str, Any] = response.json()
        if job["status"] in ("done", "failed", "cancelled"):
            return job
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} did not finish in 180 s")


def staged(api: Api) -> list[str]:
    folder = api.settings.data_dir / "uploads"
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


# -- text length -----------------------------------------------------------------------------


@pytest.mark.parametrize("size", [50, 5000])
def test_a_query_over_the_token_limit_is_422_before_any_embedding(
        api: Api, counting: CountingEmbedder, size: int) -> None:
    response = search(api, "student", "bisection " * size)
    assert response.status_code == 422
    (problem,) = error_of(response)["fields"]
    assert problem["field"] == "q"
    if size == 50:  # longer ones are refused by their length in characters already
        assert re.fullmatch(r"\d+ tokens is over the limit of 64 tokens "
                            r"\(api_max_query_tokens\)", problem["reason"])
    assert counting.texts == []


def test_a_question_over_the_token_limit_is_422_before_any_embedding(
        api: Api, counting: CountingEmbedder) -> None:
    response = api.ask("student", "How does bisection work? " * 40)
    assert response.status_code == 422
    assert [p["field"] for p in error_of(response)["fields"]] == ["question"]
    assert counting.texts == []


def test_a_query_at_the_token_limit_is_searched(api: Api, counting: CountingEmbedder) -> None:
    response = search(api, "student", "bisection bracket " * 10)
    assert response.status_code == 200
    assert len(counting.texts) == 1


def test_a_long_title_is_not_embedded_whole(api: Api, counting: CountingEmbedder) -> None:
    title = "Regula falsi, the method of false position " * 6
    job_id = upload(api, "teacher", [("regula-falsi.md", REGULA_FALSI)],
                    title=title).json()["id"]
    assert wait_for_job(api, job_id)["status"] == "done"
    # the passage once (its evidence sentences are embedded after it, without the title)
    (text,) = [t for t in counting.texts if t.startswith(title[:200])]
    assert text.startswith(title[:200] + "\n") and all(title not in t for t in counting.texts)


# -- compute budgets -------------------------------------------------------------------------


def test_budget_buckets_refill_at_their_rate() -> None:
    now = [0.0]
    budget = MemoryComputeBudget(clock=lambda: now[0])
    buckets = Buckets("k1", "t1", key_rate=6.0, tenant_rate=0.0)
    budget.take(buckets, 5.0)
    with pytest.raises(ComputeBudgetError) as refused:
        budget.take(buckets, 2.0)
    # 1 s left, 1 s short: at 6 s per minute that is 10 s
    assert (refused.value.retry_after, refused.value.bucket) == (10, "key")
    now[0] = 10.0
    budget.take(buckets, 2.0)
    budget.adjust(buckets, 3.0)  # it cost 3 s more than estimated: into debt
    assert budget.level("key:k1", 6.0) == pytest.approx(-3.0)


def test_a_key_computes_at_most_its_cap_of_searches_at_once() -> None:
    budget = MemoryComputeBudget(clock=lambda: 0.0)
    buckets = Buckets("k1", "t1", key_rate=0.0, tenant_rate=0.0, key_concurrent=2)
    first, _second = (budget.reserve(buckets, "search", 10) for _ in range(2))
    with pytest.raises(ComputeBudgetError) as refused:
        budget.reserve(buckets, "search", 10)
    assert (refused.value.retry_after, str(refused.value)) == (
        1, "compute budget: 2 searches at a time for this key; retry in 1 s")
    budget.reserve(Buckets("k2", "t1", 0.0, 0.0, 2), "search", 10)  # another key
    budget.reserve(buckets, "ask", 10)  # answers are held to their stream slots instead
    first.settle(0.01)
    first.settle(0.01)  # once only
    budget.reserve(buckets, "search", 10)
    with pytest.raises(ComputeBudgetError):
        budget.reserve(buckets, "search", 10)


def test_a_tenant_budget_is_shared_by_its_keys_only() -> None:
    budget = MemoryComputeBudget(clock=lambda: 0.0)
    budget.take(Buckets("k1", "t1", 0.0, 6.0), 6.0)
    with pytest.raises(ComputeBudgetError) as refused:
        budget.take(Buckets("k2", "t1", 0.0, 6.0), 1.0)
    assert refused.value.bucket == "tenant"
    budget.take(Buckets("k3", "t2", 0.0, 6.0), 1.0)


def test_redis_buckets_are_shared_by_every_process(redis_url: str) -> None:
    link = connect(load_settings(env={}, redis=redis_url, redis_prefix="budget-test"))
    one, other = RedisComputeBudget(link), RedisComputeBudget(link)  # two API processes
    buckets = Buckets(f"k-{time.time_ns()}", "t1", key_rate=6.0, tenant_rate=0.0)
    one.take(buckets, 5.0)
    with pytest.raises(ComputeBudgetError) as refused:
        other.take(buckets, 2.0)
    assert (refused.value.bucket, refused.value.retry_after) == ("key", 10)
    other.adjust(buckets, -3.0)  # it cost 3 s less than estimated: given back
    one.take(buckets, 2.0)


def test_a_spent_key_budget_is_429_with_retry_after_before_embedding(
        sample: Sample, counting: CountingEmbedder, tmp_path: Path) -> None:
    with open_api(sample, counting, tmp_path / "data",
                  api_cpu_key_seconds_per_minute=0.001) as api:
        statuses = []
        for i in range(6):
            response = search(api, "student", f"bisection bracket halves {i}")
            statuses.append(response.status_code)
            if response.status_code == 429:
                break
        embedded = len(counting.texts)
        assert statuses[0] == 200 and statuses[-1] == 429
        assert int(response.headers["Retry-After"]) >= 1
        assert error_of(response)["type"] == "compute_budget"
        assert "for this key are spent" in error_of(response)["message"]
        assert embedded == len(statuses) - 1  # the refused search embedded nothing
        # another key is not affected; the metric counts the refusal
        assert search(api, "teacher", "bisection bracket").status_code == 200
        assert api.metric('coursetutor_budget_refused_total{bucket="key",kind="search"}') == 1


def test_a_spent_tenant_budget_refuses_every_key_of_that_tenant_only(
        sample: Sample, counting: CountingEmbedder, tmp_path: Path) -> None:
    with open_api(sample, counting, tmp_path / "data", api_cpu_key_seconds_per_minute=0,
                  api_cpu_tenant_seconds_per_minute=0.001) as api:
        for i in range(6):
            if search(api, "student", f"bisection {i}").status_code == 429:
                break
        response = search(api, "teacher", "bisection")
        assert response.status_code == 429
        assert "for this tenant are spent" in error_of(response)["message"]
        assert search(api, "teacher_b", "anything", course=COURSE_B).status_code == 200


# -- the ingest queue ------------------------------------------------------------------------


def stage_job(store: SQLiteStore, uploads: Path, job_id: str, files: list[tuple[str, bytes]],
              status: str, results: dict[int, FileResult] | None = None) -> Path:
    """A job as a server that stopped mid-way left it: in the store, its files staged."""
    folder = uploads / job_id
    folder.mkdir(parents=True)
    rows = []
    for i, (name, data) in enumerate(files):
        result = (results or {}).get(i)
        if result is None:
            (folder / name).write_bytes(data)
        meta = json.dumps(dataclasses.asdict(FileMeta(source_name=name)))
        rows.append(JobFile(i, name, meta, json.dumps(dataclasses.asdict(result))
                            if result else None))
    store.add_job_files(job_id, rows)
    now = time.time()
    store.add_job(Job(job_id, "default", COURSE, status, len(files), created=now, updated=now))
    return folder


@contextlib.contextmanager
def reopen_api(before: Api, embedder: EmbeddingModel) -> Iterator[Api]:
    """A new server over the data folder a stopped one left (store, files, uploads)."""
    store = SQLiteStore(before.settings.data_dir / "coursetutor.db")
    app = create_app(before.settings,
                     workspace=Workspace(before.settings, store=store, embedder=embedder))
    try:
        with TestClient(app) as client:
            yield Api(client, app, store, before.settings, before.keys, before.key_ids)
    finally:
        store.close()


@contextlib.contextmanager
def stopped_server(sample: Sample, embedder: EmbeddingModel, data: Path) -> Iterator[Api]:
    """A server that ran and stopped; its store is open for the test to leave jobs in."""
    with open_api(sample, embedder, data) as before:
        pass
    store = SQLiteStore(data / "coursetutor.db")
    try:
        yield dataclasses.replace(before, store=store)
    finally:
        store.close()


def test_a_restart_resumes_a_job_at_its_first_file_without_a_result(
        sample: Sample, counting: CountingEmbedder, tmp_path: Path) -> None:
    with stopped_server(sample, counting, tmp_path / "data") as before:
        done = FileResult("regula-falsi.md", "added", "regula-falsi-md", 1, 1, 1)
        folder = stage_job(before.store, before.settings.data_dir / "uploads", "j_left",
                           [("regula-falsi.md", REGULA_FALSI), ("notes.md", SECRET)],
                           "running", {0: done})
    with reopen_api(before, counting) as api:
        job = wait_for_job(api, "j_left")
        assert eventually(lambda: not folder.exists())
    assert job["status"] == "done" and job["error"] == ""
    assert [(f["name"], f["status"]) for f in job["report"]["files"]] == [
        ("regula-falsi.md", "added"), ("notes.md", "added")]
    assert job["files_done"] == 2
    # only the file without a result was ingested again: its passage, then its sentence
    assert counting.texts and all("hidden formula" in t for t in counting.texts)


def test_a_server_that_stops_mid_job_waits_for_its_thread_and_resumes_the_job(
        sample: Sample, counting: CountingEmbedder, tmp_path: Path) -> None:
    counting.hold.set()
    with open_api(sample, counting, tmp_path / "data", **SMALL_CHUNKS) as before:
        job_id = upload(before, "teacher", [("fixed-point.md", STEPS.encode()),
                                            ("regula-falsi.md", REGULA_FALSI)]).json()["id"]
        assert counting.waiting.wait(30)  # embedding the first file, a batch at a time
        threading.Timer(0.5, counting.release.set).start()  # once the stop has begun
        jobs = before.app.state.coursetutor.jobs
    # the server stopped: its ingest thread ended before the store closed under it
    assert not any(t.is_alive() for t in jobs._threads)
    with contextlib.closing(SQLiteStore(before.settings.data_dir / "coursetutor.db")) as store:
        assert store.get_job("default", job_id).status == "running"
    assert staged(before) == [job_id]  # the staged files wait for the next start
    with reopen_api(before, counting) as api:
        job = wait_for_job(api, job_id)
        assert eventually(lambda: staged(api) == [])
    assert job["status"] == "done"
    assert [f["status"] for f in job["report"]["files"]] == ["added", "added"]


def test_staged_folders_no_job_owns_are_removed_at_start_up(
        sample: Sample, embedder: EmbeddingModel, tmp_path: Path) -> None:
    with stopped_server(sample, embedder, tmp_path / "data") as before:
        uploads = before.settings.data_dir / "uploads"
        (uploads / "j_orphan").mkdir(parents=True)
        (uploads / "j_orphan" / "left.md").write_bytes(b"# left behind\n")
        failed = stage_job(before.store, uploads, "j_failed", [("a.md", REGULA_FALSI)],
                           "queued")
        before.store.update_job("j_failed", status="failed")
    with reopen_api(before, embedder) as api:
        assert staged(api) == []
    assert not failed.exists()


def test_one_tenants_large_upload_does_not_hold_up_anothers_small_one(
        sample: Sample, counting: CountingEmbedder, tmp_path: Path) -> None:
    counting.hold.set()
    with open_api(sample, counting, tmp_path / "data", **SMALL_CHUNKS) as api:
        big = upload(api, "teacher", [("fixed-point.md", STEPS.encode())]).json()["id"]
        assert counting.waiting.wait(30)  # the big job is embedding, a batch at a time
        small = upload(api, "teacher_b", [("regula-falsi.md", REGULA_FALSI)],
                       course=COURSE_B).json()["id"]
        time.sleep(0.3)  # B's thread now waits for its turn
        counting.release.set()
        finished: dict[str, tuple[float, Any]] = {}
        deadline = time.monotonic() + 60
        while len(finished) < 2 and time.monotonic() < deadline:
            for who, job_id in (("teacher", big), ("teacher_b", small)):
                response = api.call(who, "GET", f"/v1/jobs/{job_id}")
                if response.status_code == 429:  # polled past the rate limit: ask again
                    continue
                job = response.json()
                if job["status"] in ("done", "failed") and job_id not in finished:
                    finished[job_id] = (time.monotonic(), job)
            time.sleep(0.05)
        turns = api.app.state.coursetutor.jobs.turns.order
    assert {j["status"] for _, j in finished.values()} == {"done"}
    assert finished[small][0] < finished[big][0]
    assert finished[big][1]["report"]["files"][0]["chunks"] > 4
    # B's file went between two of A's batches, not after all of them
    assert turns.index(TENANT_B) < len(turns) - 1
    assert turns[turns.index(TENANT_B) + 1:].count("default") >= 2


def test_turns_go_round_robin_between_waiting_tenants() -> None:
    turns = Turns()
    turns.take("a")

    def step(tenant: str) -> None:
        turns.take(tenant)
        turns.give()

    threads = []
    for tenant in ("b", "a"):  # b waits first, then a (again)
        threads.append(threading.Thread(target=step, args=(tenant,)))
        threads[-1].start()
        assert eventually(lambda t=tenant: t in turns._waiting)  # type: ignore[misc]
    turns.give()
    for thread in threads:
        thread.join(5)
    assert turns.order == ["a", "b", "a"]


def test_a_free_search_slot_goes_to_the_tenant_served_longest_ago() -> None:
    slots = FairSlots(1)
    order: list[str] = []
    held = threading.Event()
    release = threading.Event()

    def first() -> None:
        with slots.slot("a"):
            held.set()
            release.wait(5)

    def search(tenant: str) -> None:
        with slots.slot(tenant):
            order.append(tenant)

    threads = [threading.Thread(target=first)]
    threads[0].start()
    assert held.wait(5)
    for tenant in ("a", "a", "a", "b"):  # a's burst queues first, then b's one search
        threads.append(threading.Thread(target=search, args=(tenant,)))
        threads[-1].start()
        assert eventually(lambda: sum(slots._waiting.values()) == len(threads) - 1)
    release.set()
    for thread in threads:
        thread.join(5)
    assert order[0] == "b" and order.count("a") == 3  # b goes before a's queued burst


def test_a_tenant_alone_uses_every_slot_and_leaves_one_free_while_another_is_about() -> None:
    now = [0.0]
    slots = FairSlots(2, window=30.0, clock=lambda: now[0])
    inside: list[str] = []
    release = threading.Event()

    def search(tenant: str) -> None:
        with slots.slot(tenant):
            inside.append(tenant)
            release.wait(5)

    def start(tenant: str) -> threading.Thread:
        thread = threading.Thread(target=search, args=(tenant,))
        thread.start()
        return thread

    threads = [start("a"), start("a")]
    assert eventually(lambda: inside == ["a", "a"])  # alone: both slots
    release.set()
    for thread in threads:
        thread.join(5)
    release.clear()
    inside.clear()
    with slots.slot("b"):  # b searched a moment ago
        pass
    now[0] = 5.0
    threads = [start("a"), start("a"), start("a")]
    assert eventually(lambda: inside == ["a"] and sum(slots._waiting.values()) == 2)
    threads.append(start("b"))  # the slot a may not take is b's at once
    assert eventually(lambda: inside == ["a", "b"])
    release.set()
    for thread in threads:
        thread.join(5)
    assert inside == ["a", "b", "a", "a"]
    release.clear()
    inside.clear()
    now[0] = 60.0  # b quiet for longer than the window: a has both slots again
    threads = [start("a"), start("a")]
    assert eventually(lambda: inside == ["a", "a"])
    release.set()
    for thread in threads:
        thread.join(5)


def test_a_search_queued_on_the_event_loop_holds_no_thread_and_leaves_when_cancelled() -> None:
    slots = FairSlots(1)
    order: list[str] = []

    async def search(tenant: str, hold: asyncio.Event | None = None) -> None:
        async with slots.waiting_slot(tenant):
            order.append(tenant)
            if hold is not None:
                await hold.wait()

    async def main() -> None:
        hold = asyncio.Event()
        first = asyncio.create_task(search("a", hold))
        await asyncio.sleep(0.01)
        burst = [asyncio.create_task(search("a")) for _ in range(3)]
        gone = asyncio.create_task(search("c"))
        await asyncio.sleep(0.01)
        b = asyncio.create_task(search("b"))
        await asyncio.sleep(0.01)
        assert threading.active_count() == before  # queued on the loop: no thread each
        gone.cancel()  # the client went away while queued
        with contextlib.suppress(asyncio.CancelledError):
            await gone
        assert "c" not in slots._waiting
        hold.set()
        await asyncio.wait_for(asyncio.gather(first, b, *burst), 5)

    before = threading.active_count()
    asyncio.run(main())
    assert order[:2] == ["a", "b"] and order.count("a") == 4  # b before a's queued burst
    assert not slots._busy and not slots._waiting


def test_queued_searches_leave_the_request_threads_to_other_requests(
    sample: Sample, counting: CountingEmbedder, tmp_path: Path,
) -> None:
    # two request threads, one search slot: before, each queued search held a thread, so a
    # tenant's burst left no thread for another tenant's request to even start on
    with open_api(sample, counting, tmp_path / "data", api_threads=2,
                  api_search_slots=1) as api:
        slots = api.app.state.coursetutor.searches
        results: list[int] = []
        with slots.slot("default"):  # the one slot computes one of A's searches
            burst = [threading.Thread(target=lambda who=who: results.append(
                search(api, who, "bisection method").status_code))
                for who in ("student", "teacher", "admin")]
            for thread in burst:
                thread.start()
            assert eventually(lambda: sum(slots._waiting.values()) == 3)
            started = time.monotonic()
            me = api.call("teacher_b", "GET", "/v1/me")
            assert me.status_code == 200 and time.monotonic() - started < 5
        for thread in burst:
            thread.join(30)
        assert results == [200, 200, 200]


def test_an_ingest_batch_waits_for_the_searches_in_flight() -> None:
    slots = FairSlots(2)
    done = threading.Event()
    with slots.slot("b"):
        waiter = threading.Thread(target=lambda: (slots.quiet(5), done.set()))
        waiter.start()
        time.sleep(0.1)
        assert not done.is_set()  # the batch waits while b's search computes
    assert done.wait(5)
    started = time.monotonic()
    with slots.slot("b"):
        bounded = threading.Thread(target=slots.quiet, args=(0.2,))
        bounded.start()
        bounded.join(5)
    assert time.monotonic() - started < 2  # never longer than its bound


@pytest.mark.parametrize(("cap", "message"), [
    ({"ingest_max_chunks_per_file": 3},
     r"fixed-point.md: 1\d chunks is over the limit of 3 chunks per file "
     r"\(ingest_max_chunks_per_file\); split the file"),
    ({"ingest_max_chunks_per_upload": 9},
     r"fixed-point.md: with this file the upload has 1\d chunks, over the limit of 9 chunks "
     r"per upload \(ingest_max_chunks_per_upload\); upload it separately"),
])
def test_a_file_over_a_chunk_cap_fails_with_a_clear_line(
        sample: Sample, counting: CountingEmbedder, tmp_path: Path, cap: dict[str, Any],
        message: str) -> None:
    with open_api(sample, counting, tmp_path / "data", **SMALL_CHUNKS, **cap) as api:
        job_id = upload(api, "teacher", [("regula-falsi.md", REGULA_FALSI),
                                         ("fixed-point.md", STEPS.encode())]).json()["id"]
        job = wait_for_job(api, job_id)
    good, capped = job["report"]["files"]
    assert (good["status"], capped["status"], job["status"]) == ("added", "failed", "done")
    assert re.fullmatch(message, capped["message"])
    assert not any("Step" in t for t in counting.texts)  # refused before embedding


# -- cancel ----------------------------------------------------------------------------------


def test_cancel_a_running_job(sample: Sample, counting: CountingEmbedder,
                              tmp_path: Path) -> None:
    counting.hold.set()
    with open_api(sample, counting, tmp_path / "data", **SMALL_CHUNKS) as api:
        job_id = upload(api, "teacher", [("fixed-point.md", STEPS.encode()),
                                         ("regula-falsi.md", REGULA_FALSI)]).json()["id"]
        assert counting.waiting.wait(30)
        for who, status in (("teacher_b", 404), ("student", 403)):
            assert api.call(who, "DELETE", f"/v1/jobs/{job_id}").status_code == status
        response = api.call("teacher", "DELETE", f"/v1/jobs/{job_id}")
        counting.release.set()
        assert response.status_code == 200
        assert (response.json()["status"], response.json()["error"]) == (
            "cancelled", "cancelled by a teacher")
        assert eventually(lambda: staged(api) == [], 30)
        job = api.call("teacher", "GET", f"/v1/jobs/{job_id}").json()
        again = api.call("teacher", "DELETE", f"/v1/jobs/{job_id}")
        docs = [d["document"] for d in api.call(
            "teacher", "GET", f"/v1/courses/{COURSE}/documents").json()["documents"]]
    assert job["status"] == "cancelled"
    assert "fixed-point-md" not in docs and "regula-falsi-md" not in docs
    assert again.status_code == 409
    assert error_of(again) == coded("conflict", f"job '{job_id}' has already finished (cancelled)",
                                    "job_finished", job=job_id, status="cancelled")
    assert (job["error"], job["error_code"]) == ("cancelled by a teacher", "job_cancelled")


def test_cancel_a_queued_job_removes_its_files(sample: Sample, counting: CountingEmbedder,
                                                tmp_path: Path) -> None:
    counting.hold.set()
    with open_api(sample, counting, tmp_path / "data", **SMALL_CHUNKS) as api:
        first = upload(api, "teacher", [("fixed-point.md", STEPS.encode())]).json()["id"]
        assert counting.waiting.wait(30)
        queued = upload(api, "teacher", [("regula-falsi.md", REGULA_FALSI)]).json()["id"]
        assert api.call("teacher", "GET", f"/v1/jobs/{queued}").json()["status"] == "queued"
        assert api.call("teacher", "DELETE", f"/v1/jobs/{queued}").status_code == 200
        assert staged(api) == [first]
        counting.release.set()
        assert wait_for_job(api, first)["status"] == "done"
        time.sleep(0.5)
        job = api.call("teacher", "GET", f"/v1/jobs/{queued}").json()
        assert eventually(lambda: staged(api) == [])
    assert (job["status"], job["report"]) == ("cancelled", None)


def test_a_finished_job_cannot_be_cancelled(api: Api) -> None:
    job_id = upload(api, "teacher", [("regula-falsi.md", REGULA_FALSI)]).json()["id"]
    assert wait_for_job(api, job_id)["status"] == "done"
    assert eventually(lambda: staged(api) == [])
    response = api.call("teacher", "DELETE", f"/v1/jobs/{job_id}")
    assert response.status_code == 409
    assert api.call("teacher", "DELETE", "/v1/jobs/j_0000000000000000").status_code == 404


def test_staged_files_are_removed_after_a_failed_job(api: Api) -> None:
    job_id = upload(api, "teacher", [("broken.pdf", b"%PDF-1.7 broken")]).json()["id"]
    assert wait_for_job(api, job_id)["status"] == "failed"
    assert eventually(lambda: staged(api) == [])


# -- the vector cache ------------------------------------------------------------------------


def test_another_tenants_exact_text_gets_the_report_of_a_wrong_guess(api: Api) -> None:
    hidden = upload(api, "teacher", [("notes.md", SECRET)], title="Notes").json()["id"]
    assert wait_for_job(api, hidden)["status"] == "done"
    reports = []
    for guess in (SECRET, WRONG_GUESS):
        job_id = upload(api, "teacher_b", [("notes.md", guess)], course=COURSE_B,
                        title="Notes").json()["id"]
        job = wait_for_job(api, job_id, who="teacher_b")
        reports.append(job["report"]["files"][0])
        api.call("teacher_b", "DELETE", f"/v1/courses/{COURSE_B}/documents/notes-md")
    assert reports[0] == reports[1]
    assert reports[0]["embedded"] == reports[0]["chunks"] == 1
    # within a tenant the cache still saves the work
    again = upload(api, "teacher", [("copy.md", SECRET)], title="Notes").json()["id"]
    assert wait_for_job(api, again)["report"]["files"][0]["embedded"] == 0
