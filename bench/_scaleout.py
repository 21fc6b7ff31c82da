"""Helpers for the scale-out benchmarks: PostgreSQL and Redis servers, the course copied into
PostgreSQL, database connections and statements sampled, process-tree CPU, and which process of
`serve --workers N` holds a connection.

Used by api_load.py (`--store postgresql`, `--redis`), ratelimit_check.py and kill_worker.py.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _common import log

PG_FOLDER = Path("/tmp/ct-load-pg")
REDIS_FOLDER = Path("/tmp/ct-load-redis")
CLK_TCK = os.sysconf("SC_CLK_TCK")

# the server's connections to its database, the sampler's own left out
ACTIVITY_SQL = ("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND pid <> pg_backend_pid()")


class Services:
    """PostgreSQL and Redis for a run: the ones given by URL, or throwaway servers in folders
    (started unless one already runs there; their data stays, so the next run reuses the
    copied course); `stop()` stops only the servers this object started."""

    def __init__(self, pg_url: str = "", redis_url: str = "", pg_folder: Path = PG_FOLDER,
                 redis_folder: Path = REDIS_FOLDER) -> None:
        self.pg_url, self.redis_url = pg_url, redis_url
        self.pg_folder, self.redis_folder = pg_folder, redis_folder
        self.in_folder: list[str] = []  # servers of our folders (ours to restart)
        self.started: list[str] = []  # the ones this object started (ours to stop)

    def postgres(self) -> str:
        if not self.pg_url:
            from coursetutor.dev import servers as devservers

            running = (self.pg_folder / "postgres" / "postmaster.pid").exists()
            self.pg_url = devservers.start_postgres(self.pg_folder)
            self.in_folder.append("postgres")
            if not running:
                self.started.append("postgres")
            log(f"PostgreSQL at {self.pg_url} (folder {self.pg_folder}"
                f"{', already running' if running else ''})")
        return self.pg_url

    def redis(self) -> str:
        if not self.redis_url:
            from coursetutor.dev import servers as devservers

            running = (self.redis_folder / "redis.port").exists()
            self.redis_url = devservers.start_redis(self.redis_folder)
            self.in_folder.append("redis")
            if not running:
                self.started.append("redis")
            log(f"Redis at {self.redis_url} (folder {self.redis_folder}"
                f"{', already running' if running else ''})")
        return self.redis_url

    def own_postgres(self) -> bool:
        return "postgres" in self.in_folder

    def postmaster_pid(self) -> int | None:
        """The PostgreSQL server's pid, for a server started in our folder."""
        if not self.own_postgres():
            return None
        with contextlib.suppress(OSError, ValueError, IndexError):
            return int((self.pg_folder / "postgres" / "postmaster.pid").read_text().split()[0])
        return None

    def enable_statements(self) -> bool:
        """pg_stat_statements in our own server (preloaded, which needs one restart);
        whether it is there. A server given by URL is left as it is."""
        import psycopg

        with psycopg.connect(self.postgres(), autocommit=True) as conn:
            preload = str(conn.execute("SHOW shared_preload_libraries").fetchone()[0])  # type: ignore[index]
            if "pg_stat_statements" not in preload and self.own_postgres():
                conn.execute("ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'")
                conn.execute("ALTER SYSTEM SET pg_stat_statements.track = 'top'")
                preload = "pg_stat_statements"
                restart = True
            else:
                restart = False
        if restart:
            from coursetutor.dev import servers as devservers

            port = int(self.pg_url.rsplit(":", 1)[1].split("/", 1)[0])
            devservers.stop_postgres(self.pg_folder)
            self.pg_url = devservers.start_postgres(self.pg_folder, port)
            log("PostgreSQL restarted with pg_stat_statements preloaded")
        if "pg_stat_statements" not in preload:
            return False
        with psycopg.connect(self.pg_url, autocommit=True) as conn:
            try:
                conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
            except psycopg.Error as exc:
                log(f"pg_stat_statements not available: {exc}")
                return False
        return True

    def stop(self) -> None:
        from coursetutor.dev import servers as devservers

        if "redis" in self.started:
            devservers.stop_redis(self.redis_folder)
        if "postgres" in self.started:
            devservers.stop_postgres(self.pg_folder)
        self.started.clear()


# --------------------------------------------------------------------------------------------
# the course in PostgreSQL


def pg_course_chunks(url: str, tenant: str, course: str) -> int:
    """Chunks stored for the course (0 when it or the schema does not exist)."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        try:
            row = conn.execute("SELECT (SELECT count(*) FROM chunks WHERE tenant = %s AND "
                               "course = %s)", (tenant, course)).fetchone()
        except psycopg.errors.UndefinedTable:
            return 0
    return int(row[0]) if row else 0


def cli(env: dict[str, str], cwd: Path, *args: str, timeout: float = 900) -> str:
    """`python -m coursetutor ARGS` with exactly these COURSETUTOR_* variables; its stdout."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("COURSETUTOR_")} | env
    done = subprocess.run([sys.executable, "-m", "coursetutor", *args], env=full, cwd=cwd,
                          capture_output=True, text=True, check=False, timeout=timeout)
    if done.returncode != 0:
        raise SystemExit(f"`coursetutor {' '.join(args)}` failed ({done.returncode}):\n"
                         f"{done.stderr.strip()[-2000:] or done.stdout.strip()[-2000:]}")
    return done.stdout


def copy_course(sqlite_db: Path, pg_url: str, tenant: str, course: str,
                chunks: int) -> dict[str, Any]:
    """The course in PostgreSQL: reused when it holds `chunks` chunks, else copied from the
    SQLite store with `coursetutor copy` (no re-embedding; the target must hold no course,
    so a partial copy of this course is removed first)."""
    have = pg_course_chunks(pg_url, tenant, course)
    if have >= chunks:
        log(f"reusing course {course} in PostgreSQL ({have:,} chunks)")
        return {"chunks": have, "copy_s": None}
    env = {"COURSETUTOR_DATA_DIR": str(sqlite_db.parent), "COURSETUTOR_STORE": pg_url}
    if have:
        log(f"removing a partial copy of {course} ({have:,} chunks) from PostgreSQL")
        cli(env, sqlite_db.parent, "--tenant", tenant, "remove", "--course", course)
    log(f"copying {course} into PostgreSQL with `coursetutor copy` (about a minute for 10k "
        "chunks)")
    t0 = time.perf_counter()
    out = cli(env, sqlite_db.parent, "copy", "--from", f"sqlite:///{sqlite_db}", "--to",
              pg_url, "--json")
    seconds = time.perf_counter() - t0
    counts = json.loads(out.strip().splitlines()[-1])
    log(f"copied in {seconds:.0f} s: {counts}")
    return {"chunks": pg_course_chunks(pg_url, tenant, course), "copy_s": seconds,
            "copied": counts}


# --------------------------------------------------------------------------------------------
# sampling the database


class PgActivity:
    """Every `every` seconds in a thread: the database's connections other than its own
    (`ACTIVITY_SQL`), labelled with the phase `phase()` names; peaks per phase."""

    def __init__(self, url: str, phase: Callable[[], str], every: float = 0.5) -> None:
        self.url, self.phase, self.every = url, phase, every
        self.samples: list[tuple[float, str, int]] = []
        self.errors = 0
        self.queries = 0  # our own statements, to take out of the database's counts
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="pg-activity", daemon=True)

    def __enter__(self) -> PgActivity:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)

    def _run(self) -> None:
        import psycopg

        t_start = time.perf_counter()
        conn = None
        while not self._stop.is_set():
            t0 = time.perf_counter()
            try:
                if conn is None:
                    conn = psycopg.connect(self.url, autocommit=True, connect_timeout=5)
                row = conn.execute(ACTIVITY_SQL).fetchone()
                self.queries += 1
                self.samples.append((round(t0 - t_start, 2), self.phase(), int(row[0])))  # type: ignore[index]
            except psycopg.Error:
                self.errors += 1
                with contextlib.suppress(Exception):
                    conn.close()  # type: ignore[union-attr]
                conn = None
            self._stop.wait(max(0.0, self.every - (time.perf_counter() - t0)))
        if conn is not None:
            conn.close()

    def peak(self, phase: str | None = None) -> int | None:
        values = [n for _, p, n in self.samples if phase is None or p == phase]
        return max(values) if values else None

    def count(self, phase: str) -> int:
        return sum(1 for _, p, _ in self.samples if p == phase)


STATEMENTS_SQL = """
SELECT s.query, s.calls, s.total_exec_time FROM pg_stat_statements s
WHERE s.dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND s.query NOT ILIKE '%%pg_stat_%%' AND s.query NOT ILIKE '%%pg_database%%'"""


def statements(url: str) -> dict[str, tuple[int, float]]:
    """pg_stat_statements of the database: query -> (calls, total ms), our own left out."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(STATEMENTS_SQL).fetchall()
    out: dict[str, tuple[int, float]] = {}
    for query, calls, ms in rows:
        c, t = out.get(query, (0, 0.0))
        out[query] = (c + int(calls), t + float(ms))
    return out


def statements_delta(before: dict[str, tuple[int, float]], after: dict[str, tuple[int, float]],
                     requests: int) -> list[dict[str, Any]]:
    """Per statement between two snapshots: calls, calls per request, mean ms; most calls
    first."""
    rows = []
    for query, (calls, ms) in after.items():
        c0, t0 = before.get(query, (0, 0.0))
        if calls - c0 > 0:
            rows.append({"query": " ".join(query.split()), "calls": calls - c0,
                         "per_request": (calls - c0) / max(requests, 1),
                         "mean_ms": (ms - t0) / (calls - c0)})
    return sorted(rows, key=lambda r: -r["calls"])


def statement_label(query: str, width: int = 90) -> str:
    """A short, one-line form of a statement for a report table."""
    text = query.replace("|", "/")
    if text.startswith("WITH") and "scope AS" in text:
        kind = "hybrid" if "fused AS" in text else "vector" if "vec AS" in text else "keyword"
        return f"search statement ({kind}: CTEs over courses, postings, embeddings, chunks)"
    return text if len(text) <= width else text[: width - 3] + "..."


# --------------------------------------------------------------------------------------------
# processes


def children(pid: int) -> list[int]:
    """Direct children of `pid` (from /proc)."""
    out: list[int] = []
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError):
                text = Path(f"/proc/{pid}/task/{task}/children").read_text()
                out += [int(c) for c in text.split()]
    return out


def descendants(pid: int) -> list[int]:
    """`pid`'s descendants, depth first."""
    out: list[int] = []
    for child in children(pid):
        out += [child, *descendants(child)]
    return out


def _cpu_fields(pid: int) -> tuple[float, float]:
    """(own CPU s, CPU s of its children it has reaped) of one process."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0, 0.0
    return ((int(fields[11]) + int(fields[12])) / CLK_TCK,
            (int(fields[13]) + int(fields[14])) / CLK_TCK)


def tree_cpu_s(pid: int) -> float:
    """CPU seconds of a process and all its descendants, the ended ones it reaped included
    (a PostgreSQL server's backends, the worker processes of `serve --workers N`)."""
    total = 0.0
    for p in [pid, *descendants(pid)]:
        own, reaped = _cpu_fields(p)
        total += own + reaped
    return total


def socket_owner(server_port: int, client_port: int, pids: list[int]) -> int | None:
    """Which of `pids` holds the server end of the TCP connection 127.0.0.1:client_port ->
    :server_port (from /proc/net/tcp and each process's open files)."""
    inode = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
            cols = line.split()
            local, remote = cols[1], cols[2]
            if (int(local.rsplit(":", 1)[1], 16) == server_port
                    and int(remote.rsplit(":", 1)[1], 16) == client_port):
                inode = cols[9]
                break
    if not inode or inode == "0":
        return None
    target = f"socket:[{inode}]"
    for pid in pids:
        with contextlib.suppress(OSError):
            for fd in os.listdir(f"/proc/{pid}/fd"):
                with contextlib.suppress(OSError):
                    if os.readlink(f"/proc/{pid}/fd/{fd}") == target:
                        return pid
    return None
