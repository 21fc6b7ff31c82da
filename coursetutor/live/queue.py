"""The per-class serial queue: a class's jobs run in arrival order, one at a time; different
classes run in parallel, with no lock shared between them.

In one process (`SerialQueues`) each class has a lane: a job is appended to its class's lane
and, when the lane is idle, a thread of a small pool drains it, handing every job waiting
there to the handler at once (a burst of events is indexed once). With Redis
(`RedisSerialQueues`) the lane is a Redis list, so the order is the order jobs reached Redis
from any process; whichever process takes the class's Redis lock drains the list, and a job's
result is posted back under its id for the process that waits for it.
"""

from __future__ import annotations

import collections
import concurrent.futures
import dataclasses
import json
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any, Literal

from ..errors import ConflictError, CoursetutorError, InputError, NotFoundError, StoreError
from ..store.classes import TranscriptEvent
from ..store.redis import RedisLink

JobKind = Literal["events", "slide", "end"]
# errors a job may end with, by name, so a result crosses processes
ERRORS: dict[str, type[CoursetutorError]] = {
    "conflict": ConflictError, "not_found": NotFoundError, "input": InputError,
    "store": StoreError}
LOCK_SECONDS = 30  # a class's Redis lock lapses this long after its holder dies
RESULT_SECONDS = 120  # a job's posted result waits this long for its reader


@dataclasses.dataclass(frozen=True)
class Job:
    """One unit of a class's serial queue: events, a teacher's slide change, or the end."""

    tenant: str
    course: str
    class_id: str
    kind: JobKind
    events: tuple[TranscriptEvent, ...] = ()
    page: int = 0
    received: float = 0.0  # when it arrived (epoch seconds)
    id: str = dataclasses.field(default_factory=lambda: uuid.uuid4().hex)

    @property
    def lane(self) -> str:
        return f"{self.tenant}\x1f{self.class_id}"

    def dumps(self) -> str:
        return json.dumps(dataclasses.asdict(self))

    @classmethod
    def loads(cls, text: str) -> Job:
        data = json.loads(text)
        data["events"] = tuple(TranscriptEvent(**e) for e in data["events"])
        return cls(**data)


@dataclasses.dataclass(frozen=True)
class JobResult:
    """What a job did: the numbers of its stored events, the slide after it, or its error."""

    id: str
    seqs: tuple[int, ...] = ()
    slide_page: int | None = None
    error: str = ""  # a key of ERRORS, empty when it succeeded
    message: str = ""

    def unwrap(self) -> JobResult:
        """This result, or its error raised."""
        if self.error:
            raise ERRORS.get(self.error, StoreError)(self.message)
        return self

    @classmethod
    def failed(cls, job_id: str, exc: BaseException) -> JobResult:
        kind = next((k for k, cls_ in ERRORS.items() if isinstance(exc, cls_)), "store")
        return cls(job_id, error=kind, message=str(exc) if isinstance(
            exc, CoursetutorError) else f"processing the class's events failed: {exc!r}")


Handler = Callable[[list[Job]], list[JobResult]]


class SerialQueues:
    """Per-class lanes in this process's memory."""

    def __init__(self, handler: Handler, workers: int = 8) -> None:
        self.handler = handler
        self._pool = concurrent.futures.ThreadPoolExecutor(workers, "coursetutor-class")
        self._lock = threading.Lock()  # guards the bookkeeping below, never a job's work
        self._lanes: dict[str, collections.deque[Job]] = {}
        self._futures: dict[str, concurrent.futures.Future[JobResult]] = {}

    def submit(self, job: Job) -> None:
        """Queue `job` behind its class's earlier jobs."""
        with self._lock:
            self._futures[job.id] = concurrent.futures.Future()
            lane = self._lanes.get(job.lane)
            if lane is not None:
                lane.append(job)
                return
            self._lanes[job.lane] = collections.deque([job])
        self._pool.submit(self._drain, job.lane)

    def _drain(self, name: str) -> None:
        while True:
            with self._lock:
                lane = self._lanes[name]
                if not lane:
                    del self._lanes[name]
                    return
                jobs = list(lane)
                lane.clear()
            self._settle(jobs, self._run(jobs))

    def _run(self, jobs: list[Job]) -> list[JobResult]:
        try:
            return self.handler(jobs)
        except Exception as exc:  # a job's failure is its waiter's error, not the lane's end
            return [JobResult.failed(j.id, exc) for j in jobs]

    def _settle(self, jobs: list[Job], results: list[JobResult]) -> None:
        with self._lock:  # left for `wait` to take (every job submitted is waited for)
            futures = [self._futures.get(j.id) for j in jobs]
        for future, result in zip(futures, results, strict=True):
            if future is not None:
                future.set_result(result)

    def wait(self, job_id: str, timeout: float) -> JobResult:
        """The job's result (StoreError when it is not done within `timeout` seconds)."""
        with self._lock:
            future = self._futures.get(job_id)
        if future is None:
            raise NotFoundError(f"no queued job {job_id!r}")
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError as exc:
            raise StoreError(f"the class's events were not processed within {timeout:g} s"
                             ) from exc
        finally:
            with self._lock:
                self._futures.pop(job_id, None)

    def run(self, job: Job, timeout: float) -> JobResult:
        """Queue `job`, wait for it and raise its error, if any."""
        self.submit(job)
        return self.wait(job.id, timeout).unwrap()

    def close(self) -> None:
        self._pool.shutdown(wait=True)


class RedisSerialQueues(SerialQueues):
    """Per-class lanes in Redis, drained by whichever process holds the class's lock."""

    def __init__(self, handler: Handler, link: RedisLink, workers: int = 8) -> None:
        super().__init__(handler, workers)
        self.link = link

    def _keys(self, lane: str) -> tuple[str, str]:
        tenant, class_id = lane.split("\x1f", 1)
        return (self.link.key("class", tenant, class_id, "jobs"),
                self.link.key("class", tenant, class_id, "lock"))

    def _result_key(self, job_id: str) -> str:
        return self.link.key("class", "result", job_id)

    def submit(self, job: Job) -> None:
        jobs, _ = self._keys(job.lane)
        with self.link.reached():
            self.link.client.rpush(jobs, job.dumps())
        self._pool.submit(self._drain, job.lane)

    def _drain(self, name: str) -> None:
        jobs_key, lock_key = self._keys(name)
        client = self.link.client
        while True:
            lock = client.lock(lock_key, timeout=LOCK_SECONDS, blocking=False)
            with self.link.reached():
                if not lock.acquire():
                    return  # its holder drains the list, and looks again once it lets go
                try:
                    self._drain_held(jobs_key, lock)
                finally:
                    lock.release()
                if not client.llen(jobs_key):
                    return

    def _drain_held(self, jobs_key: str, lock: Any) -> None:
        client = self.link.client
        while True:
            raw: list[bytes] | None = client.lpop(jobs_key, 64)  # type: ignore[assignment]
            if not raw:
                return
            jobs = [Job.loads(r.decode()) for r in raw]
            results = self._run(jobs)
            pipe = client.pipeline()
            for result in results:
                pipe.rpush(self._result_key(result.id), json.dumps(dataclasses.asdict(result)))
                pipe.expire(self._result_key(result.id), RESULT_SECONDS)
            pipe.execute()
            lock.extend(LOCK_SECONDS, replace_ttl=True)

    def wait(self, job_id: str, timeout: float) -> JobResult:
        deadline = time.monotonic() + timeout
        key = self._result_key(job_id)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise StoreError(f"the class's events were not processed within {timeout:g} s")
            with self.link.reached():
                found = self.link.client.blpop([key], timeout=min(left, 2.0))
            if found:
                data = json.loads(found[1])
                data["seqs"] = tuple(data["seqs"])
                return JobResult(**data)
