"""Ingest jobs: uploads are staged, queued in the store and ingested by this process's ingest
threads, fairly between tenants.

The queue is the store's `jobs` table with each job's staged files (`job_files`): a job and
the result of each of its files are written as they happen, so a restarted server takes its
jobs up again at their first file without a result. Each tenant with work gets a thread of its
own (up to `ingest_tenants_at_once`), and the threads take turns step by step (turns.py), so
one tenant's large upload cannot keep another's small one waiting. A job can be cancelled
between two steps; its staged folder is removed when it ends, however it ends, and folders no
job owns are removed at start-up.

With Redis, jobs_rq runs them on `coursetutor worker` processes instead.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import shutil
import threading
import time
import uuid
from pathlib import Path

from ..config import Settings
from ..errors import InputError, JobCancelledError
from ..ingest import FileResult, IngestReport, Progress
from ..ingest.pipeline import id_clashes
from ..ingest.report import outcome, report_json, short
from ..retrieval import EmbeddingModel
from ..store import Store
from ..store.base import JobFile
from ..store.private import FOLDER_MODE, private_dir
from ..tutor.warm import warm
from ..types import FileMeta, Job
from ..workspace import Workspace
from .fair_turns import FairSlots, Turns
from .metrics import Metrics

__all__ = ["CANCELLED", "IngestJobs", "recover", "report_json", "uploads_folder"]

log = logging.getLogger("coursetutor.api")

CANCELLED = "cancelled by a teacher"
STOPPED = "not finished: the server stopped; the job goes on where it was at the next start"
STOP_SECONDS = 30.0  # how long a stopping server waits for its ingest threads
POLL_SECONDS = 1.0  # how often idle threads look for jobs other processes queued
# ingest threads run at a lower CPU priority than the threads answering searches and asks: an
# upload then takes the cores they leave idle, and a student's search does not wait for it
INGEST_NICE = 10


def recover(store: Store, uploads: Path) -> int:
    """At start-up, before any ingest thread runs: put the jobs a stopped server left running
    back in the queue and remove staged folders no unfinished job owns; returns how many jobs
    were requeued."""
    requeued = store.requeue_jobs()
    keep = {j.id for j in store.queued_jobs()}
    if uploads.is_dir():
        for folder in uploads.iterdir():
            if folder.name not in keep:
                shutil.rmtree(folder, ignore_errors=True)
    return requeued


def uploads_folder(settings: Settings) -> Path:
    """Where uploads wait for their job (without Redis)."""
    return Path(settings.data_dir) / "uploads"


def file_result(text: str) -> FileResult:
    return FileResult(**json.loads(text))


SEARCHES_FIRST_S = 0.25  # the longest an ingest batch waits for the searches in flight


class IngestJobs:
    """Queues uploads in the store and runs them on this process's ingest threads."""

    def __init__(self, uploads: Path, metrics: Metrics) -> None:
        self.uploads = uploads
        self._metrics = metrics
        self.turns = Turns()
        # the server's searches: an ingest batch waits for those in flight (app.py sets it)
        self.searches: FairSlots | None = None
        self._cond = threading.Condition()
        self._active: dict[str, str] = {}  # job id -> tenant, running in this process
        self._served: dict[str, float] = {}  # tenant -> when it last started a job here
        self._threads: list[threading.Thread] = []
        self._stop = threading.Event()
        self._ws: Workspace | None = None

    def folder(self) -> tuple[str, Path]:
        """A fresh job id and the folder its uploaded files go to."""
        job_id = "j_" + uuid.uuid4().hex[:16]
        uploads = private_dir(self.uploads)
        if uploads.stat().st_mode & 0o077:  # staged by an earlier version with the umask's mode
            with contextlib.suppress(OSError):
                uploads.chmod(FOLDER_MODE)
        path = uploads / job_id
        path.mkdir(mode=FOLDER_MODE)
        return job_id, path

    def start(self, ws: Workspace) -> None:
        """Start the ingest threads (they read the queue through their own connections)."""
        if self._threads:
            return
        self._ws = ws
        for i in range(ws.settings.ingest_tenants_at_once):
            thread = threading.Thread(target=self._loop, name=f"ingest-{i}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def submit(self, ws: Workspace, job_id: str, course: str,
               items: list[tuple[Path, FileMeta]], folder: Path) -> Job:
        now = time.time()
        files = [JobFile(i, path.name, json.dumps(dataclasses.asdict(meta)))
                 for i, (path, meta) in enumerate(items)]
        job = Job(job_id, ws.tenant, course, "queued", len(items), created=now, updated=now)
        try:
            ws.store.add_job_files(job_id, files)
            job = ws.store.add_job(job)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        self.start(ws)
        with self._cond:
            self._cond.notify_all()
        return job

    def cancel(self, ws: Workspace, job_id: str) -> Job:
        """Cancel a queued or running job of the workspace's tenant: a running one stops
        after its current step, and a queued one never starts."""
        job = ws.store.cancel_job(ws.tenant, job_id, CANCELLED)
        with self._cond:
            running_here = job_id in self._active
        if not running_here:
            # queued (or running in another process, which stops at its next step)
            shutil.rmtree(self.uploads / job_id, ignore_errors=True)
        return job

    def shutdown(self, timeout: float = STOP_SECONDS) -> None:
        """Stop the ingest threads and wait for them: a running job stops after its current
        step, stays 'running' with its staged files and is taken up again at the next start
        (`recover`). The threads' stores are closed by the threads, never under them."""
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
        deadline = time.monotonic() + timeout
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))
            if thread.is_alive():
                log.warning("ingest thread %s still ran %.0f s after the stop", thread.name,
                            timeout)

    # -- the ingest threads -------------------------------------------------------------------
    def _loop(self) -> None:
        assert self._ws is not None
        store = self._ws.store.reopen()  # at full priority: opening may wait on a lock
        with contextlib.suppress(OSError, AttributeError):  # Linux: per thread
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), INGEST_NICE)
        try:
            while not self._stop.is_set():
                job = self._next(store)
                if job is not None:
                    self._run(store, self._ws.embedder, self._ws.settings, job)
        finally:
            store.close()

    def _next(self, store: Store) -> Job | None:
        """Claim the oldest job of the tenant served longest ago that no thread of this
        process is running, or wait a while for one."""
        with self._cond:
            busy = set(self._active.values())
            waiting = [j for j in store.queued_jobs() if j.tenant not in busy]
            waiting.sort(key=lambda j: (self._served.get(j.tenant, 0.0), j.created))
            for job in waiting:
                if store.claim_job(job.id):
                    self._active[job.id] = job.tenant
                    self._served[job.tenant] = time.monotonic()
                    return job
            self._cond.wait(POLL_SECONDS)
        return None

    def _run(self, store: Store, embedder: EmbeddingModel, settings: Settings,
             job: Job) -> None:
        ws = Workspace(settings, store=store, embedder=embedder).for_tenant(job.tenant)
        folder = self.uploads / job.id
        status = "failed"
        try:
            status = _JobRun(ws, job, folder, self.turns, self._stop, self.searches).run()
        except Exception as exc:  # the job records it; the API process goes on
            log.exception("ingest job %s failed", job.id)
            store.update_job(job.id, status="failed", stage="failed",
                             error=short(str(exc), folder))
        finally:
            if status != "stopped":  # a stopped job's files wait for the next start
                shutil.rmtree(folder, ignore_errors=True)
            with self._cond:
                self._active.pop(job.id, None)
                self._cond.notify_all()
        if status != "stopped":
            self._metrics.jobs.labels(status).inc()


class _JobRun:
    """One job on one ingest thread: its files in order, each in the tenant's turn."""

    def __init__(self, ws: Workspace, job: Job, folder: Path, turns: Turns,
                 stop: threading.Event, searches: FairSlots | None = None) -> None:
        self.ws, self.job, self.folder, self.turns, self.stop = ws, job, folder, turns, stop
        self.searches = searches
        self.store = ws.store
        self.files = self.store.job_files(job.id)
        self.results = [file_result(f.result) for f in self.files if f.result is not None]
        self.embedded = sum(r.embedded for r in self.results)
        self.current = (0, 0)  # (pages, chunks) of the file being ingested

    def cancelled(self) -> bool:
        return self.store.get_job(self.job.tenant, self.job.id).status == "cancelled"

    def run(self) -> str:
        """Ingest every file without a result; returns the job's final status, or 'stopped'
        when the server stops first (the job stays 'running' in the store)."""
        items = [(self.folder / f.name, FileMeta(**json.loads(f.meta))) for f in self.files]
        clashes = id_clashes(items)
        self.store.update_job(self.job.id, stage="parsing", files_done=len(self.results))
        for f, item in zip(self.files, items, strict=True):
            if f.result is not None:
                continue
            if self.stop.is_set():
                return "stopped"
            if self.cancelled():
                break
            result = clashes.get(f.ordinal) or self._file(*item)
            if result.message.endswith(STOPPED):
                return "stopped"  # the file is ingested again, whole, at the next start
            if result.message.endswith(CANCELLED) or self.cancelled():
                break
            self.results.append(result)
            self.embedded += result.embedded
            self.store.set_job_file(self.job.id, f.ordinal, json.dumps(
                dataclasses.asdict(result)))
            item[0].unlink(missing_ok=True)
        report = IngestReport(self.job.course, self.results,
                              seconds=time.time() - self.job.created)
        if self.cancelled():
            self.store.update_job(self.job.id, files_done=len(self.results),
                                  report=report_json(report, self.folder))
            return "cancelled"
        fields = outcome(report, self.folder)
        self.store.update_job(self.job.id, **fields)
        return str(fields["status"])

    def _file(self, path: Path, meta: FileMeta) -> FileResult:
        self.current = (0, 0)
        with self.turns.turn(self.job.tenant):
            report = self.ws.ingest(self.job.course, [(path, meta)], self._progress)
            result = report.files[0]
            if result.document_id and result.status not in ("failed", "skipped"):
                # the evidence sentences' vectors, between the tenant's turns like embedding;
                # a stop or a cancel leaves the rest to the turns that meet them
                warm(self.ws, self.job.course, [result.document_id], self._warming)
        return result

    def _warming(self, _done: int, _total: int) -> bool:
        self.turns.pass_on(self.job.tenant)
        return self.stop.is_set() or self.cancelled()

    def _progress(self, p: Progress) -> None:
        if p.stage == "parsed":
            self.current = (p.pages, p.chunks)
            self._check_caps(p.path)
        # no status here: a cancel between two steps must not be overwritten
        self.store.update_job(self.job.id, stage=p.stage,
                              current=Path(p.path).name,
                              files_done=len(self.results),
                              embedded=self.embedded + (p.embedded if p.stage == "embedding"
                                                        else 0),
                              to_embed=self.embedded + p.to_embed)
        if p.stage in ("parsed", "embedding"):
            if self.stop.is_set():
                raise JobCancelledError(STOPPED, code="server_stopped")
            if self.cancelled():
                raise JobCancelledError(CANCELLED, code="job_cancelled")
            self.turns.pass_on(self.job.tenant)  # between two steps, others go first
            if self.searches is not None:  # and the searches in flight finish first
                self.searches.quiet(SEARCHES_FIRST_S)

    def _check_caps(self, path: str) -> None:
        """Refuse a file that would take the upload over its page or chunk cap."""
        settings = self.ws.settings
        pages = sum(r.pages for r in self.results) + self.current[0]
        chunks = sum(r.chunks for r in self.results) + self.current[1]
        for what, count, cap in (("pages", pages, settings.ingest_max_pages_per_upload),
                                 ("chunks", chunks, settings.ingest_max_chunks_per_upload)):
            if count > cap:
                raise InputError(
                    f"{Path(path).name}: with this file the upload has {count} {what}, over "
                    f"the limit of {cap} {what} per upload (ingest_max_{what}_per_upload); "
                    "upload it separately",
                    code="upload_too_many_pages" if what == "pages" else "upload_too_many_chunks",
                    file=Path(path).name, count=count, limit=cap)
