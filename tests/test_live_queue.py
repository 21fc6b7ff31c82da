"""The per-class serial queue: one class's jobs in arrival order and one at a time; other
classes in parallel; in one process and across processes with Redis."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

import pytest

from coursetutor.config import Settings
from coursetutor.errors import ConflictError, StoreError
from coursetutor.live.queue import Job, JobResult, RedisSerialQueues, SerialQueues
from coursetutor.store.classes import TranscriptEvent
from coursetutor.store.redis import connect


class Recorder:
    """A handler that records the jobs it ran and checks no class ran two batches at once."""

    def __init__(self, pause: float = 0.002) -> None:
        self.pause = pause
        self.ran: list[str] = []
        self.overlaps = 0
        self.batches = 0
        self._busy: set[str] = set()
        self._lock = threading.Lock()

    def __call__(self, jobs: list[Job]) -> list[JobResult]:
        lane = jobs[0].lane
        with self._lock:
            self.overlaps += lane in self._busy
            self._busy.add(lane)
            self.batches += 1
        time.sleep(self.pause)
        with self._lock:
            self.ran += [j.events[0].text for j in jobs]
            self._busy.discard(lane)
        return [JobResult(j.id, (int(j.events[0].text.split("-")[1]),)) for j in jobs]


def job(class_id: str, n: int) -> Job:
    return Job("default", "c", class_id, "events", (TranscriptEvent(n, n + 1, f"{class_id}-{n}"),))


def post_concurrently(submit: Callable[[Job], None], class_id: str, n: int,
                      threads: int = 8) -> list[str]:
    """Post n jobs from several threads at once; returns the order they were submitted in."""
    order: list[str] = []
    lock = threading.Lock()
    counter = iter(range(n))
    start = threading.Barrier(threads)

    def worker() -> None:
        start.wait()
        while True:
            with lock:  # what "arrival" means: the order the queue was reached
                i = next(counter, None)
                if i is None:
                    return
                j = job(class_id, i)
                submit(j)
                order.append(j.events[0].text)

    pool = [threading.Thread(target=worker) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    return order


@pytest.fixture
def memory_queues() -> Iterator[tuple[SerialQueues, Recorder]]:
    recorder = Recorder()
    queues = SerialQueues(recorder, workers=4)
    yield queues, recorder
    queues.close()


def test_concurrent_posts_of_one_class_run_in_arrival_order(
        memory_queues: tuple[SerialQueues, Recorder]) -> None:
    queues, recorder = memory_queues
    order = post_concurrently(queues.submit, "a", 200)
    deadline = time.monotonic() + 10
    while len(recorder.ran) < 200 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert recorder.ran == order
    assert recorder.overlaps == 0
    assert recorder.batches < 200  # jobs that waited were handed over together


def test_two_classes_run_in_parallel(memory_queues: tuple[SerialQueues, Recorder]) -> None:
    queues, _ = memory_queues
    b_ran = threading.Event()

    def handler(jobs: list[Job]) -> list[JobResult]:
        if jobs[0].class_id == "a":  # class a waits until class b has run: no global lock
            assert b_ran.wait(5), "class b never ran while class a was busy"
        else:
            b_ran.set()
        return [JobResult(j.id) for j in jobs]

    queues.handler = handler
    first, second = job("a", 1), job("b", 1)
    queues.submit(first)
    queues.submit(second)
    assert queues.wait(second.id, 5) == JobResult(second.id)
    assert queues.wait(first.id, 5) == JobResult(first.id)


def test_a_failing_job_reports_its_error_and_the_lane_goes_on(
        memory_queues: tuple[SerialQueues, Recorder]) -> None:
    queues, _ = memory_queues

    def handler(jobs: list[Job]) -> list[JobResult]:
        if any(j.events[0].text == "a-1" for j in jobs):
            raise ConflictError("class 'a' has ended")
        return [JobResult(j.id, (7,)) for j in jobs]

    queues.handler = handler
    with pytest.raises(ConflictError, match="has ended"):
        queues.run(job("a", 1), 5)
    assert queues.run(job("a", 2), 5).seqs == (7,)


def test_a_job_not_done_in_time_is_a_store_error(
        memory_queues: tuple[SerialQueues, Recorder]) -> None:
    queues, recorder = memory_queues
    recorder.pause = 0.5
    j = job("a", 1)
    queues.submit(j)
    with pytest.raises(StoreError, match=r"within 0\.05 s"):
        queues.wait(j.id, 0.05)


def test_a_job_survives_its_trip_through_json() -> None:
    j = Job("t", "c", "k", "events", (TranscriptEvent(1.5, 2.0, "héllo", "Ana", False),),
            received=12.5)
    assert Job.loads(j.dumps()) == j


def test_with_redis_two_processes_keep_one_order_per_class(redis_url: str) -> None:
    link = connect(Settings(redis=redis_url, redis_prefix="ct-test"))
    recorder = Recorder()
    # two processes' queues over one Redis, sharing nothing else
    one, two = (RedisSerialQueues(recorder, link, workers=2),
                RedisSerialQueues(recorder, link, workers=2))
    flip = iter(range(10_000))

    def submit(j: Job) -> None:
        (one if next(flip) % 2 else two).submit(j)

    try:
        order_a = post_concurrently(submit, "a", 60, threads=4)
        order_b = post_concurrently(submit, "b", 20, threads=2)
        last = job("a", 60)
        one.submit(last)
        assert two.wait(last.id, 10).seqs == (60,)  # a result reaches any process
        deadline = time.monotonic() + 10
        while len(recorder.ran) < 81 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert [r for r in recorder.ran if r.startswith("a-")] == [*order_a, "a-60"]
        assert [r for r in recorder.ran if r.startswith("b-")] == order_b
        assert recorder.overlaps == 0
    finally:
        one.close()
        two.close()
