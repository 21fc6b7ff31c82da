"""The "live" TutorialVQA: each question asked during the lecture it is about.

The 76 videos are one course's lectures. For each question the class in progress is its
video and "now" is the end of the gold span plus a delay of 30 s, 2, 5 or 10 minutes (a
quarter of the questions each, by a hash of the question's id); only what was said before
"now" is indexed for that class, the other videos are the course's history. Every question
is searched twice on the same index: plainly (without class context) and as the tutor does
during a class (rewrite with progress, progress-aware rerank, tiers). Hits follow the rule of
`eval retrieval --dataset tvqa`.

Each question's tier decision is recorded with both of its rankings, so the figures for any
tier bar (threshold and ratio) come out of one run (`sweep`); `--cross` also asks every
question during another lecture (the class cannot answer it: the tiers must widen to the
history).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..errors import EmptyQueryError
from ..live.rewrite import with_progress
from ..live.standing import ClassProgress, Spoken, build_progress, spoken_of
from ..retrieval.class_rerank import ProgressWeights
from ..tutor.tiers import WIDE_K, Bar, candidates, split, weights_of
from ..types import FileMeta, Hit
from ..workspace import Workspace
from . import tvqa

DELAYS = (30.0, 120.0, 300.0, 600.0)
K = 10
THRESHOLDS = tuple(round(0.05 * i, 2) for i in range(0, 17))
RATIOS = tuple(round(0.05 * i, 2) for i in range(0, 15))
Progress = Callable[[int, int], None]


@dataclasses.dataclass(frozen=True)
class Record:
    """One question's outcome: hit flags of each ranking and the class's tier score."""

    id: str
    delay: float
    plain: tuple[bool, ...]  # without class context
    in_class: tuple[bool, ...]  # the class tier (its passages first)
    widened: tuple[bool, ...]  # the course tier (plain fusion of the rewritten question)
    score: float  # tier_score of the class
    share: float  # the class's best fused score over the course's best
    rewritten: bool


def delays(ids: Sequence[str]) -> dict[str, float]:
    """A delay per question: ids ordered by their SHA-256, the delays dealt in turn."""
    order = sorted(ids, key=lambda i: hashlib.sha256(i.encode()).hexdigest())
    return {qid: DELAYS[n % len(DELAYS)] for n, qid in enumerate(order)}


def doc_of(video: str) -> str:
    """The document id the video's transcript file is ingested under."""
    return f"video-{video}-json"


def flags(q: tvqa.TimedQuestion, hits: Sequence[Hit]) -> tuple[bool, ...]:
    return tuple(tvqa.is_hit(q, h.chunk.document_id.removeprefix("video-").removesuffix("-json"),
                             h.locator) for h in hits[:K])


class LiveRun:
    """The course of 76 lectures, with one of them cut at "now" at a time."""

    def __init__(self, ws: Workspace, videos: Path, weights: ProgressWeights | None = None,
                 wide: int = WIDE_K,
                 ) -> None:
        self.ws = ws
        self.weights = weights or weights_of(ws.settings)
        self.wide = wide  # candidates of the course search the tiers are cut from
        self.data = {str(v["video_id"]): v
                     for v in json.loads(videos.read_text(encoding="utf-8"))}
        digest = hashlib.sha256(videos.read_bytes()).hexdigest()[:12]
        self.course = f"eval-live-tvqa-{digest}"
        self.segments = {vid: _segments(v) for vid, v in self.data.items()}
        self._tmp = tempfile.TemporaryDirectory()
        self.folder = Path(self._tmp.name)

    def close(self) -> None:
        self._tmp.cleanup()

    def load(self) -> None:
        """Every lecture whole (a run cut short leaves its lecture cut: this restores it)."""
        self.ws.create_course(self.course, "TutorialVQA lectures", "en")
        self.ws.ingest(self.course, [self._file(vid, None) for vid in self.data])

    def cut(self, video: str, now: float | None) -> None:
        """Index only what was said in `video` before `now` (None: the whole lecture)."""
        self.ws.ingest(self.course, [self._file(video, now)])

    def _file(self, video: str, now: float | None) -> tuple[Path, FileMeta]:
        segments = [s for s in self.segments[video] if now is None or s["end"] <= now]
        path = self.folder / f"video-{video}.json"
        path.write_text(json.dumps({"segments": segments}), encoding="utf-8")
        title = str(self.data[video].get("video_title") or path.stem)
        return path, FileMeta(doc_type="transcript", language="en", title=title)

    def progress(self, video: str, now: float) -> ClassProgress:
        """The class's progress from what the store holds of it."""
        rows = self.ws.store.export_chunks(self.ws.tenant, self.course, doc_of(video))
        spoken = [s for r in rows if (s := spoken_of(r.text, r.locator)) is not None]
        return _progress(video, now, spoken)

    def ask(self, q: tvqa.TimedQuestion, delay: float) -> Record:
        """Both searches of one question, its lecture cut at the end of the gold span + delay."""
        now = q.end + delay
        self.cut(q.video, now)
        progress = self.progress(q.video, now)
        return self._record(q, delay, progress)

    def ask_elsewhere(self, q: tvqa.TimedQuestion, video: str) -> Record:
        """The question asked at the end of another lecture (every lecture whole)."""
        end = max((s["end"] for s in self.segments[video]), default=0.0)
        return self._record(q, -1.0, self.progress(video, end))

    def _record(self, q: tvqa.TimedQuestion, delay: float, progress: ClassProgress) -> Record:
        try:
            return self._searched(q, delay, progress)
        except EmptyQueryError:  # a dataset question with no words counts as a miss
            return Record(q.id, delay, (), (), (), 0.0, 0.0, False)

    def _searched(self, q: tvqa.TimedQuestion, delay: float, progress: ClassProgress,
                  ) -> Record:
        plain = self.ws.search(q.text, self.course, k=K)
        query = with_progress(q.text, progress)
        found = candidates(self.ws, query, self.course, progress.focus(), self.weights,
                           wide=self.wide)
        in_class, _ = split(found.ranked, found.fused, progress.focus(), True)
        return Record(q.id, delay, flags(q, plain), flags(q, in_class), flags(q, found.fused),
                      round(found.score, 4), round(found.share, 4), query != q.text)


def _segments(video: dict[str, Any]) -> list[dict[str, Any]]:
    times = tvqa.sentence_times(video)
    return [{"start": round(s, 3), "end": round(e, 3), "text": text}
            for text, (s, e) in zip(video["transcript"], times, strict=True)]


def _progress(video: str, now: float, spoken: Sequence[Spoken]) -> ClassProgress:
    return build_progress(video, now, spoken, document=doc_of(video))


def run(ws: Workspace, videos: Path, questions_path: Path, limit: int | None = None,
        cross: bool = False, progress: Progress | None = None,
        weights: ProgressWeights | None = None, wide: int = WIDE_K) -> list[Record]:
    """Every question in its lecture (and, with `cross`, in another one); `wide` candidates
    of the course search the tiers are cut from."""
    questions = tvqa.load_questions(videos, questions_path)[:limit]
    delay = delays([q.id for q in questions])
    live = LiveRun(ws, videos, weights, wide)
    try:
        live.load()
        records: list[Record] = []
        by_video: dict[str, list[tvqa.TimedQuestion]] = {}
        for q in questions:
            by_video.setdefault(q.video, []).append(q)
        for video, asked in by_video.items():
            for q in sorted(asked, key=lambda q: q.end + delay[q.id]):
                records.append(live.ask(q, delay[q.id]))
                if progress:
                    progress(len(records), len(questions) * (2 if cross else 1))
            live.cut(video, None)
        if cross:
            order = sorted(live.data)
            for q in questions:
                other = order[(order.index(q.video) + 1 + _pick(q.id, len(order) - 1))
                              % len(order)]
                records.append(live.ask_elsewhere(q, other))
                if progress:
                    progress(len(records), 2 * len(questions))
        return records
    finally:
        live.close()


def _pick(qid: str, n: int) -> int:
    return int(hashlib.sha256(qid.encode()).hexdigest(), 16) % n


def hit_at(records: Sequence[Record], k: int, ranking: str, bar: Bar | None = None) -> float:
    """Share of questions with a hit in the top `k` of `ranking` ("plain" or "live")."""
    return round(_share(records, k, ranking, bar), 3)


def _share(records: Sequence[Record], k: int, ranking: str, bar: Bar | None) -> float:
    if not records:
        return 0.0

    def top(r: Record) -> tuple[bool, ...]:
        if ranking == "plain" or bar is None:
            return r.plain
        return r.in_class if bar.passes(r.score, r.share) else r.widened
    return sum(any(top(r)[:k]) for r in records) / len(records)


def table(records: Sequence[Record], bar: Bar) -> dict[str, Any]:
    """hit@1 and hit@5 per delay and overall, without and with the class context."""
    groups: dict[str, list[Record]] = {}
    for r in records:
        name = "elsewhere" if r.delay < 0 else f"{int(r.delay)} s"
        groups.setdefault(name, []).append(r)
    own = [r for r in records if r.delay >= 0]
    if own:
        groups["overall"] = own
    return {name: {"questions": len(rs),
                   "without": {"hit@1": hit_at(rs, 1, "plain"), "hit@5": hit_at(rs, 5, "plain")},
                   "with": {"hit@1": hit_at(rs, 1, "live", bar),
                            "hit@5": hit_at(rs, 5, "live", bar)},
                   "class_tier": round(sum(bar.passes(r.score, r.share) for r in rs) / len(rs),
                                       3)}
            for name, rs in groups.items()}


def sweep(records: Sequence[Record], ratios: Sequence[float] = RATIOS,
          ) -> list[dict[str, float]]:
    """hit@1 with class context for every tier bar (threshold x ratio): in the lecture,
    elsewhere, and their mean (the lecture's alone without `--cross`)."""
    own = [r for r in records if r.delay >= 0]
    other = [r for r in records if r.delay < 0]
    rows = []
    for ratio in ratios:
        for t in THRESHOLDS:
            bar = Bar(t, ratio)
            a, b = _share(own, 1, "live", bar), _share(other, 1, "live", bar)
            rows.append({"threshold": t, "ratio": ratio, "in_lecture": round(a, 4),
                         "elsewhere": round(b, 4), "mean": round((a + b) / 2 if other else a, 4)})
    return rows


def best_bar(rows: Sequence[dict[str, float]]) -> dict[str, float]:
    """The sweep's row with the highest mean (the first of equal ones: the lowest ratio, then
    the lowest threshold), the rule the default bar was chosen by on the train split."""
    return max(rows, key=lambda r: r["mean"])


def report(records: Sequence[Record], bar: Bar, seconds: float,
           weights: ProgressWeights) -> dict[str, Any]:
    """The result of `eval live` (`--json`)."""
    return {"questions": sum(r.delay >= 0 for r in records), "threshold": bar.threshold,
            "ratio": bar.ratio, "weights": dataclasses.asdict(weights),
            "seconds": round(seconds, 1), "rewritten": sum(r.rewritten for r in records),
            "delays": table(records, bar), "sweep": (rows := sweep(records)),
            "best": best_bar(rows)}


def timed(fn: Callable[[], list[Record]]) -> tuple[list[Record], float]:
    started = time.perf_counter()
    return fn(), time.perf_counter() - started
