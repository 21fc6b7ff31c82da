"""Tenants, API keys, enrolments and ingest jobs (SQL shared by the SQLite and PostgreSQL
stores)."""

from __future__ import annotations

import dataclasses
import time
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from ..errors import ConflictError, NotFoundError
from ..types import ApiKey, Course, Job, Tenant, check_role
from .base import JobFile, QueueDepth
from .sql import Executor

KEY_COLUMNS = "id, tenant, role, student, name, secret_hash, created, revoked, expires"
JOB_COLUMNS = ("id, tenant, course, status, files_total, files_done, stage, current, embedded, "
               "to_embed, report, error, created, updated")
# the job fields a running ingest may change; column names come only from this list
JOB_UPDATABLE = ("status", "files_done", "stage", "current", "embedded", "to_embed", "report",
                 "error")


def _key(row: tuple[Any, ...]) -> ApiKey:
    values = list(row)
    values[2] = check_role(values[2])
    return ApiKey(*values)


class SQLAccess:
    """Store mixin: who may do what, and the ingest jobs they started."""

    _db: Executor
    _integrity_errors: tuple[type[Exception], ...]

    if TYPE_CHECKING:  # provided by the store

        def _tx(self) -> AbstractContextManager[Executor]: ...

        def get_course(self, tenant: str, course: str) -> Course: ...

        def _reader(self) -> Executor: ...

        def list_courses(self, tenant: str) -> list[Course]: ...

        def remove_course(self, tenant: str, course: str) -> None: ...

    # -- tenants ----------------------------------------------------------------------------
    def create_tenant(self, tenant: str, name: str = "") -> Tenant:
        now = time.time()
        try:
            with self._tx() as db:
                db.execute("INSERT INTO tenants (id, name, created) VALUES (?, ?, ?)",
                           (tenant, name or tenant, now))
        except self._integrity_errors as exc:
            raise ConflictError(f"tenant {tenant!r} already exists") from exc
        return Tenant(tenant, name or tenant, now)

    def ensure_tenant(self, tenant: str, name: str = "") -> Tenant:
        with self._tx() as db:
            self._add_tenant(db, tenant, time.time(), name)
        return self.get_tenant(tenant)

    @staticmethod
    def _add_tenant(db: Executor, tenant: str, created: float, name: str = "") -> None:
        """The tenant's row, unless it has one (inside the caller's transaction)."""
        db.execute("INSERT INTO tenants (id, name, created) VALUES (?, ?, ?) "
                   "ON CONFLICT (id) DO NOTHING", (tenant, name or tenant, created))

    def get_tenant(self, tenant: str) -> Tenant:
        row = self._db.execute("SELECT id, name, created FROM tenants WHERE id = ?",
                               (tenant,)).fetchone()
        if row is None:
            raise NotFoundError(f"tenant {tenant!r} does not exist")
        return Tenant(*row)

    def list_tenants(self) -> list[Tenant]:
        rows = self._db.execute("SELECT id, name, created FROM tenants ORDER BY id").fetchall()
        return [Tenant(*r) for r in rows]

    def remove_tenant(self, tenant: str) -> None:
        self.get_tenant(tenant)
        for course in self.list_courses(tenant):
            self.remove_course(tenant, course.id)
        with self._tx() as db:
            db.execute("DELETE FROM api_keys WHERE tenant = ?", (tenant,))
            db.execute("DELETE FROM jobs WHERE tenant = ?", (tenant,))
            db.execute("DELETE FROM tenants WHERE id = ?", (tenant,))

    # -- API keys ---------------------------------------------------------------------------
    def add_key(self, key: ApiKey) -> ApiKey:
        self.get_tenant(key.tenant)
        try:
            with self._tx() as db:
                db.execute(f"INSERT INTO api_keys ({KEY_COLUMNS}) VALUES "
                           "(?, ?, ?, ?, ?, ?, ?, ?, ?)", dataclasses.astuple(key))
        except self._integrity_errors as exc:
            raise ConflictError(f"key {key.id!r} already exists") from exc
        return key

    def find_key(self, key_id: str) -> ApiKey | None:
        row = self._reader().execute(f"SELECT {KEY_COLUMNS} FROM api_keys WHERE id = ?",
                               (key_id,)).fetchone()
        return _key(row) if row else None

    def list_keys(self, tenant: str | None = None) -> list[ApiKey]:
        if tenant is None:
            rows = self._db.execute(
                f"SELECT {KEY_COLUMNS} FROM api_keys ORDER BY created, id").fetchall()
        else:
            rows = self._db.execute(
                f"SELECT {KEY_COLUMNS} FROM api_keys WHERE tenant = ? ORDER BY created, id",
                (tenant,)).fetchall()
        return [_key(r) for r in rows]

    def revoke_key(self, key_id: str) -> ApiKey:
        with self._tx() as db:
            cur = db.execute(
                "UPDATE api_keys SET revoked = COALESCE(revoked, ?) WHERE id = ?",
                (time.time(), key_id))
            if cur.rowcount == 0:
                raise NotFoundError(f"key {key_id!r} does not exist")
        found = self.find_key(key_id)
        assert found is not None
        return found

    # -- enrolments -------------------------------------------------------------------------
    def enroll(self, tenant: str, course: str, student: str) -> None:
        self.get_course(tenant, course)
        with self._tx() as db:
            db.execute("INSERT INTO enrollments (tenant, course, student, created) "
                       "VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                       (tenant, course, student, time.time()))

    def unenroll(self, tenant: str, course: str, student: str) -> None:
        with self._tx() as db:
            cur = db.execute(
                "DELETE FROM enrollments WHERE tenant = ? AND course = ? AND student = ?",
                (tenant, course, student))
            if cur.rowcount == 0:
                raise NotFoundError(f"student {student!r} is not enrolled in {course!r}",
                                    code="student_not_enrolled", student=student, course=course)

    def list_students(self, tenant: str, course: str) -> list[str]:
        self.get_course(tenant, course)
        rows = self._db.execute(
            "SELECT student FROM enrollments WHERE tenant = ? AND course = ? ORDER BY student",
            (tenant, course)).fetchall()
        return [r[0] for r in rows]

    def student_courses(self, tenant: str, student: str) -> list[str]:
        rows = self._db.execute(
            "SELECT course FROM enrollments WHERE tenant = ? AND student = ? ORDER BY course",
            (tenant, student)).fetchall()
        return [r[0] for r in rows]

    def is_enrolled(self, tenant: str, course: str, student: str) -> bool:
        row = self._reader().execute(
            "SELECT 1 FROM enrollments WHERE tenant = ? AND course = ? AND student = ?",
            (tenant, course, student)).fetchone()
        return row is not None

    # -- ingest jobs ------------------------------------------------------------------------
    def add_job(self, job: Job) -> Job:
        self.get_course(job.tenant, job.course)
        with self._tx() as db:
            db.execute(f"INSERT INTO jobs ({JOB_COLUMNS}) VALUES "
                       "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", dataclasses.astuple(job))
        return job

    def update_job(self, job_id: str, **fields: Any) -> None:
        unknown = set(fields) - set(JOB_UPDATABLE)
        if unknown:
            raise ValueError(f"job fields {sorted(unknown)} cannot be updated")
        columns = [c for c in JOB_UPDATABLE if c in fields]
        assignments = ", ".join(f"{c} = ?" for c in columns)
        with self._tx() as db:
            db.execute(f"UPDATE jobs SET {assignments}, updated = ? WHERE id = ?",
                       (*(fields[c] for c in columns), time.time(), job_id))

    def get_job(self, tenant: str, job_id: str) -> Job:
        row = self._db.execute(f"SELECT {JOB_COLUMNS} FROM jobs WHERE tenant = ? AND id = ?",
                               (tenant, job_id)).fetchone()
        if row is None:
            raise NotFoundError(f"job {job_id!r} does not exist", code="job_not_found",
                                job=job_id)
        return Job(*row)

    def list_jobs(self, tenant: str, course: str) -> list[Job]:
        rows = self._db.execute(
            f"SELECT {JOB_COLUMNS} FROM jobs WHERE tenant = ? AND course = ? "
            "ORDER BY created DESC", (tenant, course)).fetchall()
        return [Job(*r) for r in rows]

    def fail_unfinished_jobs(self, message: str) -> int:
        """Mark jobs a stopped process left queued or running as failed; return how many."""
        with self._tx() as db:
            cur = db.execute(
                "UPDATE jobs SET status = 'failed', error = ?, updated = ? "
                "WHERE status IN ('queued', 'running')", (message, time.time()))
            return cur.rowcount

    # -- the ingest queue -------------------------------------------------------------------
    def add_job_files(self, job_id: str, files: list[JobFile]) -> None:
        with self._tx() as db:
            for f in files:
                db.execute("INSERT INTO job_files (job, ordinal, name, meta, result) "
                           "VALUES (?, ?, ?, ?, ?)", (job_id, f.ordinal, f.name, f.meta,
                                                      f.result))

    def job_files(self, job_id: str) -> list[JobFile]:
        rows = self._db.execute("SELECT ordinal, name, meta, result FROM job_files "
                                "WHERE job = ? ORDER BY ordinal", (job_id,)).fetchall()
        return [JobFile(*r) for r in rows]

    def set_job_file(self, job_id: str, ordinal: int, result: str) -> None:
        with self._tx() as db:
            db.execute("UPDATE job_files SET result = ? WHERE job = ? AND ordinal = ?",
                       (result, job_id, ordinal))

    def queued_jobs(self) -> list[Job]:
        rows = self._db.execute(f"SELECT {JOB_COLUMNS} FROM jobs WHERE status = 'queued' "
                                "ORDER BY created, id").fetchall()
        return [Job(*r) for r in rows]

    def claim_job(self, job_id: str) -> bool:
        with self._tx() as db:
            cur = db.execute("UPDATE jobs SET status = 'running', updated = ? "
                             "WHERE id = ? AND status = 'queued'", (time.time(), job_id))
            return cur.rowcount == 1

    def requeue_jobs(self) -> int:
        with self._tx() as db:
            cur = db.execute("UPDATE jobs SET status = 'queued', updated = ? "
                             "WHERE status = 'running'", (time.time(),))
            db.execute("DELETE FROM job_files WHERE job NOT IN "
                       "(SELECT id FROM jobs WHERE status IN ('queued', 'running'))")
            return cur.rowcount

    def cancel_job(self, tenant: str, job_id: str, message: str) -> Job:
        with self._tx() as db:
            cur = db.execute(
                "UPDATE jobs SET status = 'cancelled', stage = 'cancelled', error = ?, "
                "updated = ? WHERE tenant = ? AND id = ? AND status IN ('queued', 'running')",
                (message, time.time(), tenant, job_id))
            changed = cur.rowcount == 1
        job = self.get_job(tenant, job_id)
        if not changed:
            raise ConflictError(f"job {job_id!r} has already finished ({job.status})",
                                code="job_finished", job=job_id, status=job.status)
        return job

    def job_queue(self) -> list[QueueDepth]:
        rows = self._db.execute(
            "SELECT tenant, SUM(CASE WHEN status = 'queued' THEN 1 ELSE 0 END), "
            "SUM(CASE WHEN status = 'running' THEN 1 ELSE 0 END), MIN(created) FROM jobs "
            "WHERE status IN ('queued', 'running') GROUP BY tenant ORDER BY tenant").fetchall()
        return [QueueDepth(str(t), int(q), int(r), float(o)) for t, q, r, o in rows]
