"""Slide tracking on MaViLS lectures: the share of annotated sentences placed on the right page.

Each lecture folder holds `slides.pdf` and `transcript.json` (`segments`: `start`, `end`,
`text`, `slide`, the 1-based page on screen, -1 when none was shown). Three trackers run on the
same page texts in one pass: the plain causal TF-IDF tracker the datasets' README gives as the
baseline, the live tracker (causal) and the recorded-lecture alignment (offline).
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from ..ingest.ocr import OcrFn
from ..ingest.slide_align import PageIndex, align_offline, deck_pages
from ..live.slides import SlideTracker
from ..retrieval.embed import EmbeddingModel

MODES = ("causal", "offline", "both")
TARGETS = {"causal": 0.70, "offline": 0.75}


@dataclasses.dataclass(frozen=True)
class Lecture:
    name: str
    pages: list[str]
    sentences: list[str]
    times: list[tuple[float, float]]
    gold: list[int]  # 1-based page per sentence, -1 where no slide was shown


def lecture_names(folder: Path) -> list[str]:
    """The lecture folders under `folder` (those with slides and a transcript)."""
    return sorted(p.name for p in folder.iterdir()
                  if (p / "slides.pdf").is_file() and (p / "transcript.json").is_file())


def load_lecture(folder: Path, ocr: OcrFn | None) -> Lecture:
    """One lecture: its deck's page texts and its annotated sentences."""
    try:
        data = json.loads((folder / "transcript.json").read_text(encoding="utf-8"))
        segments = [s for s in data["segments"] if str(s["text"]).strip()]
        sentences = [str(s["text"]) for s in segments]
        times = [(float(s["start"]), float(s["end"])) for s in segments]
        gold = [int(s["slide"]) for s in segments]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InputError(f"{folder / 'transcript.json'}: not a MaViLS transcript ({exc})"
                         ) from exc
    return Lecture(folder.name, deck_pages(folder / "slides.pdf", ocr), sentences, times, gold)


def accuracy(predicted: Sequence[int], gold: Sequence[int]) -> float:
    """Share of annotated sentences (gold != -1) whose predicted page is the gold page."""
    pairs = [(p, g) for p, g in zip(predicted, gold, strict=True) if g != -1]
    return sum(p == g for p, g in pairs) / len(pairs) if pairs else 0.0


class TfidfTracker:
    """The baseline: TF-IDF of the last 3 sentences against each page, an HMM that favours
    staying on a page or moving one forward (per sentence, no times)."""

    def __init__(self, pages: Sequence[str], window: int = 3, stay: float = 0.85,
                 forward: float = 0.13, sharpness: float = 8.0) -> None:
        self.index = PageIndex(pages, None)
        n = self.index.size
        other = (1.0 - stay - forward) / max(n - 1, 1)
        self.trans = np.full((n, n), other)
        np.fill_diagonal(self.trans, stay)
        idx = np.arange(n - 1)
        self.trans[idx, idx + 1] = forward
        self.trans[n - 1, n - 1] += forward
        self.trans /= self.trans.sum(axis=1, keepdims=True)
        self.window, self.sharpness = window, sharpness
        self.recent: list[np.ndarray[Any, Any]] = []
        self.belief = np.zeros(n)
        self.belief[0] = 1.0

    def update(self, text: str) -> int:
        self.recent = [*self.recent, self.index.sentence(text)[0]][-self.window :]
        lexical, _ = self.index.similarities(sum(self.recent, np.zeros(len(self.index.vocab))),
                                             None)
        belief = (self.belief @ self.trans) * np.exp(self.sharpness * lexical)
        self.belief = belief / belief.sum()
        return int(np.argmax(self.belief)) + 1


def evaluate_lecture(lecture: Lecture, embedder: EmbeddingModel, mode: str) -> dict[str, Any]:
    """Accuracy of the baseline and of the chosen trackers on one lecture."""
    started = time.perf_counter()
    annotated = sum(g != -1 for g in lecture.gold)
    row: dict[str, Any] = {"lecture": lecture.name, "pages": len(lecture.pages),
                           "empty_pages": sum(len(p.strip()) < 20 for p in lecture.pages),
                           "sentences": len(lecture.sentences), "annotated": annotated}
    baseline = TfidfTracker(lecture.pages)
    row["tfidf"] = accuracy([baseline.update(s) for s in lecture.sentences], lecture.gold)
    if mode in ("causal", "both"):
        tracker = SlideTracker(lecture.pages, embedder)
        pages = [tracker.update(s, a, b) for s, (a, b) in zip(lecture.sentences, lecture.times,
                                                               strict=True)]
        row["causal"] = accuracy(pages, lecture.gold)
    if mode in ("offline", "both"):
        pages = align_offline(lecture.pages, lecture.sentences, embedder, times=lecture.times)
        row["offline"] = accuracy(pages, lecture.gold)
    row["seconds"] = round(time.perf_counter() - started, 1)
    return row


def evaluate(folder: Path, embedder: EmbeddingModel, ocr: OcrFn | None, mode: str = "both",
             names: Sequence[str] = (),
             progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Every (or each named) lecture of `folder`, then the averages and the targets."""
    if mode not in MODES:
        raise InputError(f"--mode must be one of {', '.join(MODES)}, got {mode!r}")
    available = lecture_names(folder)
    if not available:
        raise InputError(f"{folder}: no lecture folders (slides.pdf + transcript.json)")
    unknown = sorted(set(names) - set(available))
    if unknown:
        raise InputError(f"unknown lecture {unknown[0]!r}; valid: {', '.join(available)}")
    rows = []
    for name in names or available:
        if progress:
            progress(name)
        rows.append(evaluate_lecture(load_lecture(folder / name, ocr), embedder, mode))
    keys = [k for k in ("tfidf", "causal", "offline") if k in rows[0]]
    average = {k: round(float(np.mean([r[k] for r in rows])), 3) for k in keys}
    for r in rows:
        for k in keys:
            r[k] = round(r[k], 3)
    return {
        "dataset": "mavils", "lectures": rows, "average": average, "targets": {
            k: {"target": t, "met": average[k] >= t,
                "lectures_below_tfidf": [r["lecture"] for r in rows if r[k] < r["tfidf"]]}
            for k, t in TARGETS.items() if k in average},
        "ocr": ocr is not None, "embedder": embedder.model_id,
    }


def table(result: dict[str, Any]) -> str:
    """The result as a plain-text table."""
    keys = [k for k in ("tfidf", "causal", "offline") if k in result["average"]]
    lines = [f"{'lecture':24}{'pages':>6}{'no text':>8}{'annotated':>10}"
             + "".join(f"{k:>9}" for k in keys)]
    for r in result["lectures"]:
        lines.append(f"{r['lecture']:24}{r['pages']:>6}{r['empty_pages']:>8}{r['annotated']:>10}"
                     + "".join(f"{r[k]:>9.3f}" for k in keys))
    lines.append(f"{'average':24}{'':>24}" + "".join(f"{result['average'][k]:>9.3f}"
                                                     for k in keys))
    for k, t in result["targets"].items():
        below = ", ".join(t["lectures_below_tfidf"]) or "none"
        lines.append(f"{k}: {result['average'][k]:.3f} against a target of {t['target']:.2f} "
                     f"({'met' if t['met'] else 'not met'}); lectures below TF-IDF: {below}")
    return "\n".join(lines)
