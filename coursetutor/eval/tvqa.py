"""TutorialVQA as timed transcripts: sentence times interpolated inside titled segments."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from ..types import Locator

CHARS_PER_SECOND = 15.0  # speaking rate used outside any titled segment
MAX_LEAD_SECONDS = 30.0


@dataclasses.dataclass(frozen=True)
class TimedQuestion:
    id: str
    text: str
    video: str
    start: float
    end: float


def _spread(sentences: list[str], start: float, end: float) -> list[tuple[float, float]]:
    """Split [start, end] over sentences in proportion to their length."""
    lengths = [max(len(s), 1) for s in sentences]
    total = sum(lengths)
    out: list[tuple[float, float]] = []
    t = start
    for n in lengths:
        step = (end - start) * n / total
        out.append((t, t + step))
        t += step
    return out


def sentence_times(video: dict[str, Any]) -> list[tuple[float, float]]:
    """(start, end) seconds of every transcript sentence.

    Sentences inside a titled segment share its time span in proportion to their length;
    the others are placed between their neighbours at a constant speaking rate.
    """
    sentences: list[str] = video["transcript"]
    known: dict[int, tuple[float, float]] = {}
    for seg in sorted(video["segments"], key=lambda s: float(s["timestamps"]["end"]) -
                      float(s["timestamps"]["start"])):
        lo, hi = seg["sentence_indexes"]["start"], seg["sentence_indexes"]["end"]
        hi = min(hi, len(sentences) - 1)
        idx = [i for i in range(lo, hi + 1) if i not in known]
        if not idx or len(idx) != hi - lo + 1:
            continue  # overlaps a tighter segment already placed
        times = _spread([sentences[i] for i in idx], float(seg["timestamps"]["start"]),
                        float(seg["timestamps"]["end"]))
        known.update(zip(idx, times, strict=True))
    out: list[tuple[float, float] | None] = [known.get(i) for i in range(len(sentences))]
    i = 0
    while i < len(sentences):
        if out[i] is not None:
            i += 1
            continue
        j = i
        while j < len(sentences) and out[j] is None:
            j += 1
        run = sentences[i:j]
        need = sum(len(x) for x in run) / CHARS_PER_SECOND
        before = out[i - 1][1] if i > 0 and out[i - 1] else None  # type: ignore[index]
        after = out[j][0] if j < len(sentences) and out[j] else None  # type: ignore[index]
        if before is None and after is None:
            lo, hi = 0.0, need
        elif before is None:
            lo, hi = max(0.0, after - need), after  # type: ignore[operator]
        elif after is None or after <= before:
            lo, hi = before, before + need
        else:
            lo, hi = before, after
        out[i:j] = _spread(run, lo, hi)
        i = j
    return [t for t in out if t is not None]


def write_segments(videos_path: Path, folder: Path) -> list[tuple[Path, str]]:
    """Write each video's transcript as a JSON segment file; returns (file, video title)."""
    files: list[tuple[Path, str]] = []
    for video in json.loads(videos_path.read_text(encoding="utf-8")):
        times = sentence_times(video)
        segments = [
            {"start": round(s, 3), "end": round(e, 3), "text": text}
            for text, (s, e) in zip(video["transcript"], times, strict=True)
        ]
        path = folder / f"video-{video['video_id']}.json"
        path.write_text(json.dumps({"segments": segments}), encoding="utf-8")
        files.append((path, str(video.get("video_title") or path.stem)))
    return files


def load_questions(videos_path: Path, questions_path: Path) -> list[TimedQuestion]:
    """Questions with the gold answer span in seconds."""
    times = {
        v["video_id"]: sentence_times(v)
        for v in json.loads(videos_path.read_text(encoding="utf-8"))
    }
    out: list[TimedQuestion] = []
    for n, q in enumerate(json.loads(questions_path.read_text(encoding="utf-8"))):
        t = times.get(q["video_id"])
        if t is None:
            continue
        lo, hi = q["answer_start"], min(q["answer_end"], len(t) - 1)
        out.append(TimedQuestion(f"q{n}", q["question"], q["video_id"], t[lo][0], t[hi][1]))
    return out


def is_hit(q: TimedQuestion, video: str, where: Locator) -> bool:
    """Right video, overlaps the gold span, starts no more than 30 s before it."""
    if video != q.video or where.start is None or where.end is None:
        return False
    overlaps = where.start < q.end and where.end > q.start
    return overlaps and where.start >= q.start - MAX_LEAD_SECONDS
