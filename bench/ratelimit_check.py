"""Per-key rate limits across the processes of `coursetutor serve --workers 2`.

    python bench/ratelimit_check.py [--limit 20] [--factor 3] [--concurrency 6]
                                    [--redis-url URL] [--modes redis,memory] [--json OUT]

A student key whose limit is `--limit` (N) requests a minute (`api_rate_student_per_minute`;
the hourly limit lifted) sends `--factor` x N requests of `GET /v1/me`, each on a new
connection, `--concurrency` at a time, so the kernel hands them to both processes. Which
process answered each one is read from /proc (the process holding the server end of the
connection, looked up while it is still open). Two servers, one after the other, each with a
fresh key:

- `redis` (`COURSETUTOR_REDIS` set; a throwaway Redis in /tmp/ct-load-redis unless
  --redis-url): the limit holds for the deployment, so exactly N requests get 200 and the rest
  429, each 429 with a `Retry-After` of 1-60 s, whichever process answered;
- `memory` (no Redis): each process counts on its own, so each lets N through and the
  deployment up to 2N. It goes on past factor x N, one request at a time, until both processes
  have answered more than N (at most 10 N requests), so both limits are reached.

Prints PASS/FAIL per mode and a table per process; exit status 1 when a check fails.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from _common import log
from _scaleout import REDIS_FOLDER, Services, descendants, socket_owner
from api_load import (
    RESULTS,
    Server,
    create_key,
    settings_env,
    terminate_on_sigterm,
)


async def one_request(port: int, key: str, pids: list[int]) -> dict[str, Any]:
    """GET /v1/me on a new connection; status, Retry-After, error type and the answering pid."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(f"GET /v1/me HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                     f"Authorization: Bearer {key}\r\n\r\n".encode())
        head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
        headers = {}
        for line in head[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        client_port = writer.get_extra_info("sockname")[1]
        # the connection is still open (keep-alive): its server end shows who answered
        pid = socket_owner(port, client_port, pids)
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()
    status = int(head[0].split()[1])
    kind = ""
    with contextlib.suppress(ValueError, KeyError, TypeError):
        kind = str(json.loads(body)["error"]["type"])
    return {"status": status, "retry_after": headers.get("retry-after"), "type": kind,
            "pid": pid, "t": time.time()}


async def send(port: int, key: str, pids: list[int], n: int,
               concurrency: int) -> list[dict[str, Any]]:
    gate = asyncio.Semaphore(concurrency)

    async def one() -> dict[str, Any]:
        async with gate:
            return await one_request(port, key, pids)

    return list(await asyncio.gather(*(one() for _ in range(n))))


def by_pid(replies: list[dict[str, Any]]) -> dict[str, Counter[int]]:
    out: dict[str, Counter[int]] = {}
    for r in replies:
        out.setdefault(str(r["pid"]), Counter())[r["status"]] += 1
    return out


def run_mode(mode: str, args: argparse.Namespace, data_dir: Path, redis_url: str,
             notes: list[str]) -> dict[str, Any]:
    """One server (2 processes) with a fresh key; the requests; the checks."""
    n = args.limit
    wanted = {"llm_backend": "none", "api_rate_student_per_minute": str(n),
              "api_rate_student_per_hour": "0", "api_reconnect_every": "0"}
    if mode == "redis":
        wanted["redis"] = redis_url
    key = create_key(data_dir, "student", student=f"rl-{mode}-{int(time.time())}")
    server = Server(data_dir, settings_env(wanted, notes), RESULTS / f"ratelimit_{mode}.log",
                    empty=True, workers=2)
    server.start(args.start_timeout)
    try:
        time.sleep(1.0)  # both worker processes up (readyz answered from one of them)
        workers = descendants(server.pid)
        replies = asyncio.run(send(server.port, key, [server.pid, *workers],
                                   args.factor * n, args.concurrency))
        if mode == "memory":
            # go on until both processes have answered more than N (both limits reached)
            while len(replies) < 10 * n:
                counts = Counter(r["pid"] for r in replies)
                if len(counts) >= 2 and all(c > n for c in counts.values()):
                    break
                replies += asyncio.run(send(server.port, key, [server.pid, *workers], 1, 1))
    finally:
        server.stop()
    return check(mode, n, args.factor * n, replies)


def check(mode: str, n: int, planned: int, replies: list[dict[str, Any]]) -> dict[str, Any]:
    statuses = Counter(r["status"] for r in replies)
    limited = [r for r in replies if r["status"] == 429]
    retry = [int(r["retry_after"]) for r in limited
             if r["retry_after"] and r["retry_after"].isdigit()]
    pids = by_pid(replies)
    answered = [p for p in pids if p != "None"]
    checks: dict[str, bool] = {
        "both processes answered": len(answered) >= 2,
        "every reply 200 or 429": set(statuses) <= {200, 429},
        "every 429 has Retry-After (1-60 s)": (len(retry) == len(limited)
                                               and all(1 <= s <= 60 for s in retry)),
        "every 429 has error type rate_limit": all(r["type"] == "rate_limit" for r in limited),
    }
    if mode == "redis":
        checks[f"exactly N = {n} answered 200"] = statuses[200] == n
        checks[f"the other {planned - n} answered 429"] = statuses[429] == len(replies) - n
    else:
        checks[f"each process let min(N, its requests) through (N = {n})"] = all(
            c[200] == min(n, sum(c.values())) for c in pids.values())
        checks[f"the deployment let up to 2N = {2 * n} through"] = statuses[200] <= 2 * n
    return {"mode": mode, "limit": n, "requests": len(replies), "planned": planned,
            "statuses": dict(statuses), "by_pid": {p: dict(c) for p, c in pids.items()},
            "retry_after": {"min": min(retry, default=None), "max": max(retry, default=None)},
            "checks": checks, "passed": all(checks.values()), "replies": replies}


def report(results: list[dict[str, Any]], notes: list[str]) -> str:
    out = ["# Rate limits across the processes of `coursetutor serve --workers 2`", ""]
    for r in results:
        where = ("in Redis (shared by the processes)" if r["mode"] == "redis"
                 else "in memory (each process its own)")
        out += [f"## {r['mode']}: limits {where}, N = {r['limit']} requests a minute: "
                f"{'PASS' if r['passed'] else 'FAIL'}", "",
                f"{r['requests']} requests of GET /v1/me, each on a new connection "
                f"({r['planned']} planned"
                + (", then one at a time until both processes had answered more than N"
                   if r["requests"] > r["planned"] else "")
                + f"): {r['statuses'].get(200, 0)} x 200, {r['statuses'].get(429, 0)} x 429"
                + (f"; Retry-After {r['retry_after']['min']}-{r['retry_after']['max']} s"
                   if r["retry_after"]["min"] is not None else ""), "",
                "| process (pid) | requests | 200 | 429 |", "|---|---:|---:|---:|"]
        for pid, c in sorted(r["by_pid"].items()):
            out.append(f"| {pid} | {sum(c.values())} | {c.get(200, 0)} | {c.get(429, 0)} |")
        out.append("")
        out += [f"- {'ok  ' if ok else 'FAIL'} {name}" for name, ok in r["checks"].items()]
        out.append("")
    out += [f"note: {n}" for n in notes]
    verdict = all(r["passed"] for r in results)
    out.append(f"Overall: {'PASS' if verdict else 'FAIL'}")
    return "\n".join(out)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--limit", type=int, default=20, help="N: the key's requests per minute")
    p.add_argument("--factor", type=int, default=3, help="send factor x N requests")
    p.add_argument("--concurrency", type=int, default=6, help="connections open at once")
    p.add_argument("--modes", default="redis,memory", help="redis, memory or both")
    p.add_argument("--redis-url", default="", help="default: a Redis in --redis-folder")
    p.add_argument("--redis-folder", type=Path, default=REDIS_FOLDER)
    p.add_argument("--start-timeout", type=float, default=180)
    p.add_argument("--json", type=Path, default=None)
    args = p.parse_args(argv)
    if args.limit < 1 or args.factor < 2:
        p.error("--limit must be >= 1 and --factor >= 2")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    terminate_on_sigterm()
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    services = Services(redis_url=args.redis_url, redis_folder=args.redis_folder)
    notes: list[str] = []
    results = []
    with tempfile.TemporaryDirectory(prefix="coursetutor-ratelimit-") as tmp:
        try:
            redis_url = services.redis() if "redis" in modes else ""
            for mode in modes:
                log(f"{mode}: 2 processes, limit {args.limit} a minute")
                results.append(run_mode(mode, args, Path(tmp), redis_url, notes))
                log(f"{mode}: {results[-1]['statuses']} by process {results[-1]['by_pid']}")
        except KeyboardInterrupt:
            return 130
        finally:
            services.stop()
    print(report(results, notes))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=1))
    return 0 if all(r["passed"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
