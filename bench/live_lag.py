"""Live class transcript lag: from a sentence being said to a search finding it.

    python bench/live_lag.py [--lecture climate-policy] [--speed 20] [--minutes 0]
                             [--course sample|empty] [--threads 1] [--json OUT]

Replays a recorded lecture into a live class of a course (the sample course, ingested first,
or an empty one) N times faster than it was spoken, through `LiveClasses` (the same queue,
chunker and indexing as the API). Each sentence is posted when it has been said; sentences
that come due while a post is being processed go in together. After each post the longest
sentence of it is searched for (hybrid search over the whole course, k = 5) until a hit of
the class document holds it; its lag, and its post-mates', is the time from being said to
that search returning. The transcript is a MaViLS lecture from ../shared/datasets when
present, else the sample course's video transcript.

Baseline, in the same run: the offline path a course has without live classes, ingesting
the whole transcript file after the lecture (`coursetutor ingest`), whose text is searchable
only that long after the class ends. Target: p95 <= 2 s.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import SHARED, ensure_threads, git_state, log, percentile, thread_setting

from coursetutor.config import Settings
from coursetutor.ingest import load_manifest
from coursetutor.live.intake import read_recording
from coursetutor.live.session import LiveClasses
from coursetutor.store.classes import TranscriptEvent
from coursetutor.types import FileMeta
from coursetutor.workspace import Workspace

SAMPLE = Path(__file__).resolve().parents[1] / "coursetutor" / "sample_course"
MAVILS = SHARED / "datasets" / "mavils-dev"
COURSE = "live-bench"


def transcript(lecture: str) -> tuple[Path, str]:
    found = MAVILS / lecture / "transcript.json"
    if found.is_file():
        return found, f"MaViLS {lecture}"
    return SAMPLE / "lecture-01-video.srt", "sample course video transcript"


def build_course(ws: Workspace, kind: str) -> int:
    ws.create_course(COURSE, "Live bench", "en")
    if kind == "empty":
        return 0
    manifest = load_manifest(SAMPLE / "course.toml")
    report = ws.ingest(COURSE, manifest.files)
    return report.totals()["chunks"]


def feed(live: LiveClasses, ws: Workspace, class_id: str, events: list[TranscriptEvent],
         speed: float) -> dict[str, Any]:
    origin = events[0].start
    document = f"class-{class_id}"
    lags: list[float] = []
    post_ms: list[float] = []
    search_ms: list[float] = []
    unfound = 0
    started = time.monotonic()

    def due(k: int) -> float:
        return (events[k].end - origin) / speed

    i = 0
    while i < len(events):
        wait = due(i) - (time.monotonic() - started)
        if wait > 0:
            time.sleep(wait)
        now = time.monotonic() - started
        j = i + 1
        while j < len(events) and due(j) <= now:
            j += 1
        t0 = time.perf_counter()
        live.post("default", COURSE, class_id, events[i:j], received=time.time())
        post_ms.append((time.perf_counter() - t0) * 1000)
        probe = max(events[i:j], key=lambda e: len(e.text)).text
        t1 = time.perf_counter()
        hits = ws.search(probe, COURSE, k=5)
        search_ms.append((time.perf_counter() - t1) * 1000)
        found = any(h.chunk.document_id == document and probe in h.chunk.text for h in hits)
        done = time.monotonic() - started
        if found:
            lags += [done - due(k) for k in range(i, j)]
        else:
            unfound += j - i
        i = j
        if len(post_ms) % 50 == 0:
            log(f"{i}/{len(events)} sentences, {len(post_ms)} posts")
    tenth = max(1, len(post_ms) // 10)
    return {
        "sentences": len(events), "posts": len(post_ms), "checked": len(lags),
        "not_found_in_top5": unfound,
        "lag_p50_s": round(percentile(lags, 50), 3), "lag_p95_s": round(percentile(lags, 95), 3),
        "lag_max_s": round(max(lags), 3) if lags else None,
        "post_ms_p50": round(percentile(post_ms, 50), 1),
        "post_ms_first_tenth_p50": round(percentile(post_ms[:tenth], 50), 1),
        "post_ms_last_tenth_p50": round(percentile(post_ms[-tenth:], 50), 1),
        "search_ms_p50": round(percentile(search_ms, 50), 1),
        "fed_seconds": round(time.monotonic() - started, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lecture", default="climate-policy")
    parser.add_argument("--speed", type=float, default=20.0)
    parser.add_argument("--minutes", type=float, default=0.0,
                        help="Feed only the lecture's first N minutes (0: all of it).")
    parser.add_argument("--course", choices=("sample", "empty"), default="sample")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    ensure_threads(args.threads)
    path, source = transcript(args.lecture)
    events = read_recording(path)
    if args.minutes > 0:
        events = [e for e in events if e.end - events[0].start <= args.minutes * 60]
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(data_dir=Path(tmp), embed_threads=args.threads)
        with Workspace(settings) as ws:
            log("building the course")
            course_chunks = build_course(ws, args.course)
            live = LiveClasses(ws)
            try:
                lc = live.start("default", COURSE, "Bench lecture")
                log(f"feeding {len(events)} sentences of {source} at {args.speed:g}x")
                figures = feed(live, ws, lc.id, events, args.speed)
                live.end("default", COURSE, lc.id)
                class_chunks = live.status("default", COURSE, lc.id).chunks
            finally:
                live.close()
            log("baseline: ingesting the whole transcript after the lecture")
            t0 = time.perf_counter()
            ws.ingest(COURSE, [(path, FileMeta(doc_type="transcript",
                                               source_name="whole" + path.suffix))])
            ingest_s = time.perf_counter() - t0
    report = {
        "transcript": source, "speed": args.speed, "course": args.course,
        "course_chunks": course_chunks, "class_chunks": class_chunks, **figures,
        "baseline_ingest_after_class_s": round(ingest_s, 2),
        "machine": f"{platform.machine()}, {thread_setting()}", "git": git_state(),
    }
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    json.dump(report, sys.stdout, indent=2)
    print()
    print(f"said -> searchable: p50 {report['lag_p50_s']} s, p95 {report['lag_p95_s']} s "
          f"(target p95 <= 2 s) over {report['checked']} sentences at {args.speed:g}x; "
          f"without live classes the text is searchable {ingest_s:.1f} s after the class "
          f"ends (whole-transcript ingest)")


if __name__ == "__main__":
    main()
