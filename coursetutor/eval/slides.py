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
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from ..ingest.ocr import OcrFn
from ..ingest.slide_align import align_offline, clean_text, deck_pages
from ..live.slides import SlideTracker
from ..retrieval.embed import EmbeddingModel
from ..retrieval.tokenize import tokenize

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


def misses(predicted: Sequence[int], gold: Sequence[int]) -> dict[str, float]:
    """Where the wrong pages were, as shares of the annotated sentences: one page behind the
    annotator's (`late`: the lecturer moved on first), one ahead (`early`), further behind
    (`behind`: the tracker lost, often on an earlier slide with the same words) or further
    ahead (`ahead`)."""
    pairs = [(p - g) for p, g in zip(predicted, gold, strict=True) if g != -1]
    if not pairs:
        return {"late": 0.0, "early": 0.0, "behind": 0.0, "ahead": 0.0}
    n = len(pairs)
    return {"late": round(sum(d == -1 for d in pairs) / n, 3),
            "early": round(sum(d == 1 for d in pairs) / n, 3),
            "behind": round(sum(d < -1 for d in pairs) / n, 3),
            "ahead": round(sum(d > 1 for d in pairs) / n, 3)}


class TfidfTracker:
    """The baseline of the datasets' README: TF-IDF of the last 3 sentences against each
    page's text (document frequencies over the pages and the whole transcript, terms in over
    half of them dropped), an HMM that favours staying on a page or moving one forward (per
    sentence, no times), the most probable page after each sentence."""

    def __init__(self, pages: Sequence[str], sentences: Sequence[str], window: int = 3,
                 stay: float = 0.85, forward: float = 0.13, sharpness: float = 8.0,
                 max_df: float = 0.5) -> None:
        page_terms = [tokenize(clean_text(p)) for p in pages]
        self.said = [tokenize(clean_text(s)) for s in sentences]
        df = Counter(t for terms in [*page_terms, *self.said] for t in set(terms))
        total = len(page_terms) + len(self.said)
        kept = sorted(t for t, n in df.items() if n <= max_df * total)
        self.vocab = {t: i for i, t in enumerate(kept)}
        self.idf = np.array([np.log((total + 1) / (df[t] + 1)) + 1 for t in kept])
        self.pages = np.array([self._vector(t) for t in page_terms]).reshape(len(pages), -1)
        n = len(pages)
        self.trans = np.full((n, n), (1.0 - stay - forward) / max(n - 1, 1))
        np.fill_diagonal(self.trans, stay)
        idx = np.arange(n - 1)
        self.trans[idx, idx + 1] = forward
        self.trans /= self.trans.sum(axis=1, keepdims=True)
        self.window, self.sharpness = window, sharpness

    def _vector(self, terms: Sequence[str]) -> np.ndarray[Any, Any]:
        v = np.zeros(len(self.vocab))
        for term in terms:
            i = self.vocab.get(term)
            if i is not None:
                v[i] += 1.0
        v *= self.idf
        norm = float(np.linalg.norm(v))
        return v / norm if norm > 0 else v

    def pages_after_each(self) -> list[int]:
        """The 1-based page after each sentence."""
        belief = np.zeros(len(self.pages))
        belief[0] = 1.0
        out = []
        for i in range(len(self.said)):
            recent = [t for terms in self.said[max(0, i - self.window + 1) : i + 1]
                      for t in terms]
            belief = (belief @ self.trans) * np.exp(self.sharpness * (self.pages
                                                                      @ self._vector(recent)))
            belief /= belief.sum()
            out.append(int(np.argmax(belief)) + 1)
        return out


def evaluate_lecture(lecture: Lecture, embedder: EmbeddingModel, mode: str) -> dict[str, Any]:
    """Accuracy of the baseline and of the chosen trackers on one lecture."""
    started = time.perf_counter()
    annotated = sum(g != -1 for g in lecture.gold)
    row: dict[str, Any] = {"lecture": lecture.name, "pages": len(lecture.pages),
                           "empty_pages": sum(len(p.strip()) < 20 for p in lecture.pages),
                           "sentences": len(lecture.sentences), "annotated": annotated}
    row["tfidf"] = accuracy(TfidfTracker(lecture.pages, lecture.sentences).pages_after_each(),
                            lecture.gold)
    if mode in ("causal", "both"):
        tracker = SlideTracker(lecture.pages, embedder)
        pages = [tracker.update(s, a, b) for s, (a, b) in zip(lecture.sentences, lecture.times,
                                                               strict=True)]
        row["causal"] = accuracy(pages, lecture.gold)
        row["causal_misses"] = misses(pages, lecture.gold)
    if mode in ("offline", "both"):
        pages = align_offline(lecture.pages, lecture.sentences, embedder, times=lecture.times)
        row["offline"] = accuracy(pages, lecture.gold)
        row["offline_misses"] = misses(pages, lecture.gold)
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
