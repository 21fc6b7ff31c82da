"""Ingest jobs: uploads are stored, then ingested one job at a time on a background thread.

With Redis, jobs_rq runs them on `coursetutor worker` processes instead.
"""

from __future__ import annotations

import shutil
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ..ingest import Progress
from ..ingest.report import outcome, report_json, short
from ..store import Store
from ..types import FileMeta, Job
from ..workspace import Workspace
from .metrics import Metrics

__all__ = ["IngestJobs", "report_json"]


class IngestJobs:
    """Runs ingest jobs in order on one thread, so two never write one course at once."""

    def __init__(self, uploads: Path, metrics: Metrics) -> None:
        self.uploads = uploads
        self._executor = ThreadPoolExecutor(1, thread_name_prefix="ingest")
        self._metrics = metrics
        self._store: Store | None = None  # the ingest thread's own connection

    def folder(self) -> tuple[str, Path]:
        """A fresh job id and the folder its uploaded files go to."""
        job_id = "j_" + uuid.uuid4().hex[:16]
        path = self.uploads / job_id
        path.mkdir(parents=True)
        return job_id, path

    def submit(self, ws: Workspace, job_id: str, course: str,
               items: list[tuple[Path, FileMeta]], folder: Path) -> Job:
        now = time.time()
        job = ws.store.add_job(Job(job_id, ws.tenant, course, "queued", len(items),
                                   created=now, updated=now))
        self._executor.submit(self._run, ws, job, items, folder)
        return job

    def _run(self, ws: Workspace, job: Job, items: list[tuple[Path, FileMeta]],
             folder: Path) -> None:
        if self._store is None:
            self._store = ws.store.reopen()
        store = self._store
        ws = Workspace(ws.settings, store=store, embedder=ws.embedder)
        done: set[str] = set()

        def progress(p: Progress) -> None:
            if p.stage in ("stored", "skipped", "failed"):
                done.add(p.path)
            store.update_job(job.id, stage=p.stage, current=Path(p.path).name,
                             files_done=len(done), embedded=p.embedded, to_embed=p.to_embed)

        try:
            store.update_job(job.id, status="running", stage="parsing")
            report = ws.ingest(job.course, items, progress)
            fields = outcome(report, folder)
            store.update_job(job.id, **fields)
            status = str(fields["status"])
        except Exception as exc:  # the job records it; the API process goes on
            store.update_job(job.id, status="failed", stage="failed",
                             error=short(str(exc), folder))
            status = "failed"
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        self._metrics.jobs.labels(status).inc()

    def shutdown(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
