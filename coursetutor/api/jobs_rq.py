"""Ingest jobs with Redis: uploads go to a staging folder under files_path (a volume every
API process and worker shares, as it already holds the documents' original files) and each
file becomes a task on the tenant's lane of the RQ queue `<redis_prefix>:ingest:N`, run by
`coursetutor worker`."""

from __future__ import annotations

import dataclasses
import shutil
import time
from pathlib import Path

from rq import Callback, Queue

from ..config import Settings
from ..errors import RedisUnavailableError
from ..ingest.pipeline import id_clashes
from ..store.redis import RedisLink
from ..tasks.ingest import STAGING, file_failed, ingest_file
from ..tasks.job_counts import JOB_TTL, JobProgress
from ..tasks.worker import lane
from ..types import FileMeta, Job
from ..workspace import Workspace
from .jobs import CANCELLED, IngestJobs
from .metrics import Metrics

# a file still running after this fails; a dead worker's file is found failed after it too
FILE_TIMEOUT_SECONDS = 3600


class RedisIngestJobs(IngestJobs):
    """Stages uploads like IngestJobs, but queues one task per file for the workers."""

    def __init__(self, link: RedisLink, settings: Settings, metrics: Metrics) -> None:
        super().__init__(settings.files_path / STAGING, metrics)
        self.link = link
        self.settings = settings

    def start(self, ws: Workspace) -> None:
        """Nothing to start: the workers run the tasks."""

    def cancel(self, ws: Workspace, job_id: str) -> Job:
        """Cancel the job: its tasks not yet started skip their file, a running one stops at
        its next step, and the last one removes the staging folder."""
        return ws.store.cancel_job(ws.tenant, job_id, CANCELLED)

    def submit(self, ws: Workspace, job_id: str, course: str,
               items: list[tuple[Path, FileMeta]], folder: Path) -> Job:
        now = time.time()
        job = ws.store.add_job(Job(job_id, ws.tenant, course, "queued", len(items),
                                   created=now, updated=now))
        clashes = id_clashes(items)
        tasks = [Queue.prepare_data(
            ingest_file, (job_id, ws.tenant, course, i, path.name, dataclasses.asdict(meta)),
            timeout=FILE_TIMEOUT_SECONDS, result_ttl=0, failure_ttl=JOB_TTL,
            description=f"ingest {path.name} ({job_id})", on_failure=Callback(file_failed))
            for i, (path, meta) in enumerate(items) if i not in clashes]
        try:
            JobProgress(self.link, job_id).open(len(items), clashes)
            with self.link.reached():
                Queue(lane(self.settings, ws.tenant), connection=self.link.client
                      ).enqueue_many(tasks)
        except RedisUnavailableError as exc:
            ws.store.update_job(job_id, status="failed", stage="failed", error=str(exc))
            shutil.rmtree(folder, ignore_errors=True)
            raise
        return job
