"""In-class retrieval under load: 50 students asking while a lecture's transcript is fed.

The in-class path is what a turn does before any generation: the class's progress read from
the store, the question rewritten with it, the tiered search (one course search, the
progress-aware rerank, the tier decision). The baseline is the plain hybrid search of the same
questions under the same load, alternating request by request in the same threads, so a noisy
neighbour slows both alike. A feeder thread replays the sample course's recorded lecture into
a running class at --speed times real time the whole while (each batch searchable on return).
Target: in-class p95 <= 100 ms at 50 concurrent students.

`--think S` gives each student a pause between questions (exponential, mean S seconds, as in a
closed-loop user model): 50 students asking back to back (`--think 0`) saturate 2 cores with
queueing, which says how much the machine can take, not how long one question waits in class.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from _common import ensure_threads, git_state, log, percentile, thread_setting

from coursetutor.config import load_settings
from coursetutor.ingest import load_manifest
from coursetutor.live.intake import read_recording
from coursetutor.live.rewrite import with_progress
from coursetutor.live.session import LiveClasses
from coursetutor.live.standing import class_progress
from coursetutor.tutor.tiers import TierInput, bar_of, tiered_search, weights_of
from coursetutor.workspace import Workspace

SAMPLE = Path(__file__).resolve().parents[1] / "coursetutor" / "sample_course"
COURSE = "numerical-methods-101"
QUESTIONS = (
    "How does the bisection method work?",
    "why does that diverge?",
    "and the other one?",
    "What is the order of convergence of the secant method?",
    "When does Newton's method fail?",
    "what did he just say about the derivative?",
    "Come funziona il metodo di bisezione?",
)


def in_class(ws: Workspace, class_id: str, question: str) -> int:
    """The in-class retrieval path of one question; the number of hits."""
    progress = class_progress(ws.store, ws.tenant, COURSE, class_id)
    query = with_progress(question, progress, "en")
    out = tiered_search(ws, TierInput(query, COURSE, progress, k=6), weights_of(ws.settings),
                        bar_of(ws.settings))
    return len(out.hits)


def feed(classes: LiveClasses, ws: Workspace, class_id: str, speed: float,
         stop: threading.Event, lags: list[float]) -> None:
    """Replay the recorded lecture in real time / `speed`, batch by batch, until stopped."""
    events = read_recording(SAMPLE / "lecture-01-video.srt")
    offset = 0.0
    while not stop.is_set():
        started = time.perf_counter()
        for event in events:
            if stop.is_set():
                return
            due = started + event.start / speed
            time.sleep(max(0.0, due - time.perf_counter()))
            moved = type(event)(event.start + offset, event.end + offset, event.text)
            t0 = time.perf_counter()
            classes.post(ws.tenant, COURSE, class_id, [moved])
            lags.append((time.perf_counter() - t0) * 1000)
        offset += max(e.end for e in events) + 5.0


def student(ws: Workspace, class_id: str, n: int, until: float,
            out: dict[str, list[float]], think: float = 0.0) -> None:
    i = n
    pause = random.Random(n)
    while time.perf_counter() < until:
        if think > 0:
            time.sleep(pause.expovariate(1 / think))
        question = QUESTIONS[i % len(QUESTIONS)]
        for name in ("in_class", "plain"):
            t0 = time.perf_counter()
            if name == "in_class":
                in_class(ws, class_id, question)
            else:
                ws.search(question, COURSE, k=6)
            out[name].append((time.perf_counter() - t0) * 1000)
        i += 1


def run(args: argparse.Namespace) -> dict[str, Any]:
    ws = Workspace(load_settings(data_dir=Path(args.data_dir), llm_backend="none"))
    manifest = load_manifest(SAMPLE / "course.toml")
    ws.create_course(COURSE, manifest.title, manifest.language)
    ws.ingest(COURSE, manifest.files)
    classes = LiveClasses(ws)
    live = classes.start(ws.tenant, COURSE, "Load test")
    stop = threading.Event()
    lags: list[float] = []
    feeder = threading.Thread(target=feed, args=(classes, ws, live.id, args.speed, stop, lags),
                              daemon=True)
    feeder.start()
    while not lags:  # the class holds something before the students arrive
        time.sleep(0.05)
    for q in QUESTIONS:  # warm the embedder and the course matrices
        in_class(ws, live.id, q)
    results: dict[str, list[float]] = {"in_class": [], "plain": []}
    until = time.perf_counter() + args.seconds
    log(f"{args.students} students for {args.seconds} s, transcript at {args.speed}x")
    threads = [threading.Thread(target=student,
                                args=(ws, live.id, n, until, results, args.think))
               for n in range(args.students)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    feeder.join(timeout=30)
    classes.end(ws.tenant, COURSE, live.id)
    classes.close()
    ws.close()

    def stats(values: list[float]) -> dict[str, float]:
        return {"n": len(values), "p50": round(percentile(values, 50), 1),
                "p95": round(percentile(values, 95), 1)}

    a, b = stats(results["in_class"]), stats(results["plain"])
    return {"git": git_state(), "threads": thread_setting(), "students": args.students,
            "seconds": args.seconds, "think": args.think, "speed": args.speed,
            "in_class_ms": a, "plain_ms": b,
            "p95_ratio": round(a["p95"] / b["p95"], 2) if b["p95"] else None,
            "transcript_batches": len(lags), "transcript_batch_ms": stats(lags),
            "target_p95_ms": 100, "met": a["p95"] <= 100}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--think", type=float, default=0.0,
                        help="mean seconds a student pauses between questions (0: none)")
    parser.add_argument("--speed", type=float, default=10.0,
                        help="the recorded lecture replayed this many times faster")
    parser.add_argument("--threads", type=int, default=1, help="OpenMP/BLAS threads")
    parser.add_argument("--data-dir", default=None)
    args = parser.parse_args()
    ensure_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        args.data_dir = args.data_dir or tmp
        result = run(args)
    json.dump(result, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
