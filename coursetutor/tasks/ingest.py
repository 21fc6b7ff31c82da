"""The task of one uploaded file: parse and embed it, write it into its course under the
course's lock, count it in its job, and finish the job when it is the last file."""

from __future__ import annotations

import logging
import shutil
import time
from pathlib import Path
from typing import Any

from ..config import Settings
from ..errors import CoursetutorError, JobCancelledError
from ..ingest import FileResult, Ingestor, IngestReport, Progress
from ..ingest.pipeline import failed_result
from ..ingest.report import outcome
from ..tutor.warm import warm
from ..types import FileMeta
from ..workspace import Workspace
from .job_counts import JobProgress
from .lock import course_lock
from .worker import current

log = logging.getLogger("coursetutor.tasks")

STAGING = "staging"  # under files_path: on a volume every API process and worker share


def staging(settings: Settings, job_id: str) -> Path:
    """The folder of a job's uploaded files until its tasks have read them."""
    return settings.files_path / STAGING / job_id


def ingest_file(job_id: str, tenant: str, course: str, index: int, name: str,
                meta: dict[str, Any]) -> None:
    """The RQ task of file `index` of a job (`name` in its staging folder)."""
    ctx = current()
    ws = ctx.workspace.for_tenant(tenant)
    progress = JobProgress(ctx.link, job_id)
    path = staging(ws.settings, job_id) / name
    notify = _Mirror(ws, progress, job_id, name)
    counts = progress.add()
    if cancelled(ws, job_id):
        finish(ws, progress, job_id, course, index,
               FileResult(str(path), "failed", message=f"{name}: not ingested, the job was "
                                                       "cancelled", code="job_cancelled",
                          params={"file": name}))
        return
    ws.store.update_job(job_id, status="running", stage="parsing", current=name,
                        files_done=counts.done)
    ingestor = Ingestor(ws.store, ws.embedder, ws.settings)
    try:
        language = ws.store.get_course(tenant, course).language
        prepared = ingestor.prepare(tenant, course, language, path, FileMeta(**meta), notify)
        with course_lock(ctx.link, tenant, course, ws.settings.ingest_lock_seconds):
            result = ingestor.write(tenant, course, prepared, notify)
    except CoursetutorError as exc:
        result = failed_result(path, exc)
        notify(Progress(str(path), result.status, result.pages))
    finish(ws, progress, job_id, course, index, result)
    if result.document_id and result.status not in ("failed", "skipped"):
        # its evidence sentences' vectors, once the file is reported stored: they are a
        # cache, which a turn fills for itself where this stops short
        warm(ws, course, [result.document_id])


def cancelled(ws: Workspace, job_id: str) -> bool:
    """Whether a teacher cancelled the job."""
    return ws.store.get_job(ws.tenant, job_id).status == "cancelled"


def file_failed(job: Any, connection: Any, exc_type: type[BaseException] | None = None,
                exc: BaseException | None = None, traceback: Any = None) -> None:
    """RQ's failure callback: a task that raised, timed out or whose worker died (found later
    by another worker) reports its file failed, so the job still finishes."""
    job_id, tenant, course, index, name, _meta = job.args
    ctx = current()
    ws = ctx.workspace.for_tenant(tenant)
    kind = exc_type.__name__ if exc_type else "error"
    path = str(staging(ws.settings, job_id) / name)
    if kind == "AbandonedJobError":
        result = FileResult(path, "failed", message=f"{name}: the worker stopped while ingesting "
                            "it; upload it again", code="worker_stopped", params={"file": name})
    elif kind == "JobTimeoutException":
        result = FileResult(path, "failed", message=f"{name}: ingesting it took longer than "
                            f"{job.timeout} s", code="file_timeout",
                            params={"file": name, "seconds": job.timeout})
    else:
        result = FileResult(path, "failed", message=f"{name}: internal error ({kind}); the "
                            "worker log has the details", code="internal", params={"file": name})
    log.error("ingest of %s in job %s failed: %s", name, job_id, result.message)
    finish(ws, JobProgress(ctx.link, job_id), job_id, course, index, result)


def finish(ws: Workspace, progress: JobProgress, job_id: str, course: str, index: int,
           result: FileResult) -> None:
    """Count the file; the last file of the job writes the job's outcome."""
    folder = staging(ws.settings, job_id)
    done, total = progress.record(index, result)
    Path(result.path).unlink(missing_ok=True)
    if done != total or done < 0:
        return  # nothing more goes to the store: the last task's outcome must come last
    job = ws.store.get_job(ws.tenant, job_id)
    report = IngestReport(course, progress.results(), seconds=time.time() - job.created)
    fields = outcome(report, folder)
    if job.status == "cancelled":  # the report of what went in; the job stays cancelled
        fields = {k: v for k, v in fields.items() if k not in ("status", "stage", "error")}
    ws.store.update_job(job_id, **fields)
    shutil.rmtree(folder, ignore_errors=True)


class _Mirror:
    """Counts one file's embedding in the job and mirrors the job's progress into the store."""

    def __init__(self, ws: Workspace, progress: JobProgress, job_id: str, name: str) -> None:
        self.ws, self.progress, self.job_id, self.name = ws, progress, job_id, name
        self.embedded = self.to_embed = 0

    def __call__(self, p: Progress) -> None:
        more = more_todo = 0
        if p.stage == "embedding":
            more, more_todo = p.embedded - self.embedded, p.to_embed - self.to_embed
            self.embedded, self.to_embed = p.embedded, p.to_embed
        counts = self.progress.add(more, more_todo)
        if p.stage in ("parsed", "embedding") and cancelled(self.ws, self.job_id):
            raise JobCancelledError(f"{self.name}: not ingested, the job was cancelled")
        self.ws.store.update_job(self.job_id, stage=p.stage,
                                 current=self.name, files_done=counts.done,
                                 embedded=counts.embedded, to_embed=counts.to_embed)
