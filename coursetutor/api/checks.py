"""Course health checks on a background thread of the API process, one at a time.

A check asks the model a question or two per section, so it can take minutes: the request
that starts it only queues it, and the page polls its progress. Checks live in the memory of
the process that runs them (the last KEEP); a restart forgets them, and a teacher runs the
check again.
"""

from __future__ import annotations

import dataclasses
import threading
import time
import uuid
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any

from ..errors import CoursetutorError, NotFoundError, Param
from ..health import check_course, check_dict
from ..llm.router import Router
from ..tutor import Tutor
from ..workspace import Workspace
from .errors import scrub

__all__ = ["CheckRun", "CourseChecks"]

KEEP = 50  # finished checks kept in memory, oldest forgotten first
UNFINISHED = ("queued", "running")
STOP_SECONDS = 10.0  # how long a stopping server waits for the running check


@dataclasses.dataclass
class CheckRun:
    """One check of a course: its progress, then its report or error."""

    id: str
    tenant: str
    course: str
    status: str = "queued"  # queued, running, done, failed
    done: int = 0
    total: int = 0
    report: dict[str, Any] | None = None
    error: str = ""
    created: float = 0.0
    updated: float = 0.0
    error_code: str = ""  # the error as a code a page translates ("": none it knows)
    error_params: dict[str, Param] = dataclasses.field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "course": self.course, "status": self.status,
                "sections_done": self.done, "sections_total": self.total,
                "created": self.created, "updated": self.updated, "report": self.report,
                "error": self.error, "error_code": self.error_code,
                "error_params": dict(self.error_params)}


class CourseChecks:
    """Runs course checks in order on one thread (the model answers one at a time anyway)."""

    def __init__(self, keep: int = KEEP) -> None:
        self._executor = ThreadPoolExecutor(1, thread_name_prefix="check")
        self._runs: dict[str, CheckRun] = {}
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._keep = keep
        self._futures: list[Future[None]] = []

    def submit(self, ws: Workspace, router: Router, course: str, k: int, max_sections: int,
               answer: bool) -> CheckRun:
        """Queue a check of `course`, or return the one already queued or running."""
        with self._lock:
            for run in self._runs.values():
                if run.tenant == ws.tenant and run.course == course and \
                        run.status in UNFINISHED:
                    return dataclasses.replace(run)
            now = time.time()
            run = CheckRun("c_" + uuid.uuid4().hex[:16], ws.tenant, course, created=now,
                           updated=now)
            self._runs[run.id] = run
            self._forget_old()
        future = self._executor.submit(self._run, run, Tutor(ws, router), k, max_sections,
                                       answer)
        with self._lock:
            self._futures = [f for f in self._futures if not f.done()] + [future]
        return dataclasses.replace(run)

    def get(self, tenant: str, course: str, check_id: str) -> CheckRun:
        """A copy of the check; another tenant's or course's does not exist."""
        with self._lock:
            run = self._runs.get(check_id)
            if run is None or run.tenant != tenant or run.course != course:
                raise NotFoundError(f"check {check_id!r} does not exist",
                                    code="check_not_found", check=check_id)
            return dataclasses.replace(run)

    def latest(self, tenant: str, course: str) -> CheckRun | None:
        """The course's most recent check, if this process ran one."""
        with self._lock:
            mine = [r for r in self._runs.values() if r.tenant == tenant and r.course == course]
            return dataclasses.replace(max(mine, key=lambda r: r.created)) if mine else None

    def _update(self, run: CheckRun, **fields: Any) -> None:
        with self._lock:
            for name, value in fields.items():
                setattr(run, name, value)
            run.updated = time.time()

    def _run(self, run: CheckRun, tutor: Tutor, k: int, max_sections: int,
             answer: bool) -> None:
        self._update(run, status="running")
        try:
            report = check_course(tutor, run.course, k, max_sections, answer,
                                  progress=lambda d, t: self._update(run, done=d, total=t),
                                  stop=self._stopping.is_set)
        except Exception as exc:  # the check records it; the API process goes on
            coded = exc if isinstance(exc, CoursetutorError) else None
            self._update(run, status="failed", error=scrub(str(exc)) or type(exc).__name__,
                         error_code=coded.code if coded else "",
                         error_params=dict(coded.params) if coded else {})
            return
        self._update(run, status="done", report=check_dict(report))

    def _forget_old(self) -> None:
        finished = sorted((r for r in self._runs.values() if r.status not in UNFINISHED),
                          key=lambda r: r.created)
        for run in finished[: max(0, len(self._runs) - self._keep)]:
            del self._runs[run.id]

    def shutdown(self, timeout: float = STOP_SECONDS) -> None:
        """Stop the running check at its next section and wait for it (up to `timeout`),
        so it never reads the store after it closes."""
        self._stopping.set()
        self._executor.shutdown(wait=False, cancel_futures=True)
        with self._lock:
            futures = list(self._futures)
        wait(futures, timeout)
