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
from ..ingest.slide_align import align_offline, clean_text, read_deck
from ..live.slides import LiveScoring, SlideTracker
from ..retrieval.embed import EmbeddingModel
from ..retrieval.tokenize import tokenize

MODES = ("causal", "offline", "both")
TARGETS = {"causal": 0.70, "causal_loo": 0.60, "offline": 0.75}


@dataclasses.dataclass(frozen=True)
class Lecture:
    name: str
    pages: list[str]
    sentences: list[str]
    times: list[tuple[float, float]]
    gold: list[int]  # 1-based page per sentence, -1 where no slide was shown
    image_pages: list[int] = dataclasses.field(default_factory=list)  # no text layer
    ocr_pages: list[int] = dataclasses.field(default_factory=list)  # read with OCR


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
    deck = read_deck(folder / "slides.pdf", ocr)
    return Lecture(folder.name, deck.pages, sentences, times, gold, deck.image_pages,
                   deck.ocr_pages)


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


def live_pages(lecture: Lecture, embedder: EmbeddingModel,
               scoring: LiveScoring | None = None) -> list[int]:
    """The live tracker's page after each sentence of a lecture."""
    tracker = SlideTracker(lecture.pages, embedder, scoring=scoring)
    return [tracker.update(s, a, b) for s, (a, b) in zip(lecture.sentences, lecture.times,
                                                          strict=True)]


def ocr_row(lecture: Lecture, ocr: bool) -> dict[str, Any]:
    """Whether a lecture's deck needed OCR (pages without a text layer), whether OCR was
    available to this run and whether it read any page."""
    return {"image_pages": len(lecture.image_pages), "ocr_pages": len(lecture.ocr_pages),
            "ocr_needed": bool(lecture.image_pages), "ocr_available": ocr,
            "ocr_used": bool(lecture.ocr_pages)}


def evaluate_lecture(lecture: Lecture, embedder: EmbeddingModel, mode: str,
                     ocr: bool = False) -> dict[str, Any]:
    """Accuracy of the baseline and of the chosen trackers on one lecture."""
    started = time.perf_counter()
    annotated = sum(g != -1 for g in lecture.gold)
    row: dict[str, Any] = {"lecture": lecture.name, "pages": len(lecture.pages),
                           "empty_pages": sum(len(p.strip()) < 20 for p in lecture.pages),
                           **ocr_row(lecture, ocr),
                           "sentences": len(lecture.sentences), "annotated": annotated}
    row["tfidf"] = accuracy(TfidfTracker(lecture.pages, lecture.sentences).pages_after_each(),
                            lecture.gold)
    if mode in ("causal", "both"):
        pages = live_pages(lecture, embedder)
        row["causal"] = accuracy(pages, lecture.gold)
        row["causal_misses"] = misses(pages, lecture.gold)
    if mode in ("offline", "both"):
        pages = align_offline(lecture.pages, lecture.sentences, embedder, times=lecture.times)
        row["offline"] = accuracy(pages, lecture.gold)
        row["offline_misses"] = misses(pages, lecture.gold)
    row["seconds"] = round(time.perf_counter() - started, 1)
    return row


# the live tracker's scoring variants `--loo` chooses from (the default first: it wins ties)
LOO_GRID = (LiveScoring(), *(
    LiveScoring(lexical, semantic, background)
    for lexical in (8.0, 12.0, 16.0) for semantic in (20.0, 30.0, 40.0)
    for background in (0.5, 0.75, 0.9)
    if LiveScoring(lexical, semantic, background) != LiveScoring()))


def leave_one_lecture_out(table: dict[LiveScoring, dict[str, float]],
                          names: Sequence[str]) -> dict[str, dict[str, Any]]:
    """For each lecture, the scoring with the best mean accuracy on the other lectures (the
    earlier in `table` on a tie) and its accuracy on the lecture itself."""
    out: dict[str, dict[str, Any]] = {}
    for held in names:
        others = [n for n in names if n != held]
        best = max(enumerate(table), key=lambda iv: (
            round(float(np.mean([table[iv[1]][n] for n in others])), 9), -iv[0]))[1]
        out[held] = {"causal": table[best][held], "scoring": dataclasses.asdict(best),
                     "tuned_mean": round(float(np.mean([table[best][n] for n in others])), 3)}
    return out


def loo_figures(lectures: Sequence[Lecture], embedder: EmbeddingModel,
                grid: Sequence[LiveScoring] = LOO_GRID,
                progress: Callable[[str], None] | None = None) -> dict[str, dict[str, Any]]:
    """The live tracker leave-one-lecture-out: every scoring of `grid` on every lecture, then
    each lecture read under the scoring chosen on the others."""
    table: dict[LiveScoring, dict[str, float]] = {}
    for i, scoring in enumerate(grid, start=1):
        table[scoring] = {x.name: accuracy(live_pages(x, embedder, scoring), x.gold)
                          for x in lectures}
        if progress:
            progress(f"scoring {i}/{len(grid)}")
    return leave_one_lecture_out(table, [x.name for x in lectures])


def evaluate(folder: Path, embedder: EmbeddingModel, ocr: OcrFn | None, mode: str = "both",
             names: Sequence[str] = (),
             progress: Callable[[str], None] | None = None, loo: bool = False) -> dict[str, Any]:
    """Every (or each named) lecture of `folder`, then the averages and the targets; with
    `loo`, also the live tracker leave-one-lecture-out (`loo_figures`)."""
    if mode not in MODES:
        raise InputError(f"--mode must be one of {', '.join(MODES)}, got {mode!r}")
    available = lecture_names(folder)
    if not available:
        raise InputError(f"{folder}: no lecture folders (slides.pdf + transcript.json)")
    unknown = sorted(set(names) - set(available))
    if unknown:
        raise InputError(f"unknown lecture {unknown[0]!r}; valid: {', '.join(available)}")
    if loo and len(names or available) < 2:
        raise InputError("--loo needs at least two lectures")
    rows, lectures = [], []
    for name in names or available:
        if progress:
            progress(name)
        lecture = load_lecture(folder / name, ocr)
        lectures.append(lecture)
        rows.append(evaluate_lecture(lecture, embedder, mode, ocr is not None))
    if loo:
        held_out = loo_figures(lectures, embedder, progress=progress)
        for r in rows:
            r["causal_loo"] = held_out[r["lecture"]]["causal"]
            r["loo_scoring"] = held_out[r["lecture"]]["scoring"]
    keys = [k for k in ("tfidf", "causal", "causal_loo", "offline") if k in rows[0]]
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
        "ran_without_ocr": [r["lecture"] for r in rows
                            if r["ocr_needed"] and not r["ocr_available"]],
    }


def table(result: dict[str, Any]) -> str:
    """The result as a plain-text table."""
    keys = [k for k in ("tfidf", "causal", "causal_loo", "offline") if k in result["average"]]
    lines = [f"{'lecture':24}{'pages':>6}{'no text':>8}{'OCR':>5}{'annotated':>10}"
             + "".join(f"{k:>9}" for k in keys)]
    for r in result["lectures"]:
        read = r["ocr_pages"] if r["ocr_used"] else "-"
        lines.append(f"{r['lecture']:24}{r['pages']:>6}{r['empty_pages']:>8}{read:>5}"
                     f"{r['annotated']:>10}" + "".join(f"{r[k]:>9.3f}" for k in keys))
    lines.append(f"{'average':24}{'':>29}" + "".join(f"{result['average'][k]:>9.3f}"
                                                     for k in keys))
    for k, t in result["targets"].items():
        below = ", ".join(t["lectures_below_tfidf"]) or "none"
        lines.append(f"{k}: {result['average'][k]:.3f} against a target of {t['target']:.2f} "
                     f"({'met' if t['met'] else 'not met'}); lectures below TF-IDF: {below}")
    if result.get("ran_without_ocr"):
        lines.append("ran without OCR (pages without a text layer, the ocr extra absent or off): "
                     + ", ".join(result["ran_without_ocr"]))
    return "\n".join(lines)
