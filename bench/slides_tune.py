"""The live slide tracker under variants of its settings, on the MaViLS lectures, offline.

`coursetutor eval slides` runs the tracker as it is set. This script loads every lecture once
(page texts, OCR for image-only pages), embeds pages and sentences once (cached in a file, so
a second run embeds nothing), then replays the live tracker under each variant of
`VARIANTS` (its scoring, its paces, the motion model, a page shown that changes only on a
clear lead) and prints every lecture's share of
annotated sentences on the right page, the average, and the lectures below the TF-IDF
baseline. Every variant is global: one setting for all lectures, none per lecture.

    python bench/slides_tune.py [--path ../shared/datasets/mavils-dev] [--cache FILE]
"""

from __future__ import annotations

import argparse
import dataclasses
import pickle
import sys
from pathlib import Path
from typing import Any

import numpy as np

from coursetutor.config import load_settings
from coursetutor.eval import slides as slides_eval
from coursetutor.ingest.ocr import make_ocr
from coursetutor.ingest.slide_align import Motion
from coursetutor.live.slides import LiveScoring, Pace, SlideTracker
from coursetutor.retrieval.embed import EmbeddingModel, Matrix, get_embedder

VARIANTS: dict[str, dict[str, dict[str, Any]]] = {
    "as set": {},
    "lexical 8": {"scoring": {"lexical": 8.0}},
    "lexical 16": {"scoring": {"lexical": 16.0}},
    "semantic 20": {"scoring": {"semantic": 20.0}},
    "semantic 40": {"scoring": {"semantic": 40.0}},
    "background 0.5": {"scoring": {"background": 0.5}},
    "background 0.9": {"scoring": {"background": 0.9}},
    "paces 1/4, 1, 4": {"pace": {"dwell": (0.25, 1.0, 4.0)}},
    "paces 1/3, 1, 3, 9": {"pace": {"dwell": (1 / 3, 1.0, 3.0, 9.0)}},
    "pace change 0.03": {"pace": {"change": 0.03}},
    "next 0.85, skip 0.04, back 0.04": {"motion": {"next": 0.85, "skip": 0.04, "back": 0.04}},
    "back 0.10": {"motion": {"back": 0.10}},
    "jump 0.02": {"motion": {"jump": 0.02}},
    # the page shown changes only when the new page's belief is this many times the shown one's
    "shown page held: 1.2x": {"shown": {"margin": 1.2}},
    "shown page held: 2x": {"shown": {"margin": 2.0}},
}


class CachedEmbedder(EmbeddingModel):
    """Another embedder's vectors, remembered per text (and kept in a file between runs)."""

    def __init__(self, inner: EmbeddingModel, path: Path) -> None:
        self.inner, self.path = inner, path
        self.model_id, self.dim = inner.model_id, inner.dim
        self.query_cache_size = 0
        self.vectors: dict[tuple[bool, str], np.ndarray[Any, Any]] = {}
        if path.is_file():
            self.vectors = pickle.loads(path.read_bytes())

    def embed_batch(self, texts: list[str], is_query: bool) -> Matrix:
        todo = [t for t in dict.fromkeys(texts) if (is_query, t) not in self.vectors]
        for i in range(0, len(todo), 32):
            part = todo[i : i + 32]
            for text, vector in zip(part, self.inner.embed_batch(part, is_query), strict=True):
                self.vectors[is_query, text] = vector
        return np.vstack([self.vectors[is_query, t] for t in texts]).astype(np.float32)

    def save(self) -> None:
        self.path.write_bytes(pickle.dumps(self.vectors))


def run(lecture: slides_eval.Lecture, embedder: EmbeddingModel,
        change: dict[str, dict[str, Any]]) -> float:
    tracker = SlideTracker(
        lecture.pages, embedder,
        scoring=dataclasses.replace(LiveScoring(), **change.get("scoring", {})),
        pace=dataclasses.replace(Pace(), **change.get("pace", {})),
        motion=dataclasses.replace(Motion(), **change.get("motion", {})))
    margin = float(change.get("shown", {}).get("margin", 1.0))
    pages: list[int] = []
    for s, (a, b) in zip(lecture.sentences, lecture.times, strict=True):
        best = tracker.update(s, a, b)
        belief = tracker.belief
        shown = pages[-1] if pages else best
        pages.append(best if belief[best - 1] > margin * belief[shown - 1] else shown)
    return slides_eval.accuracy(pages, lecture.gold)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--path", type=Path, default=Path("../shared/datasets/mavils-dev"))
    ap.add_argument("--cache", type=Path, default=Path("slides-vectors.pkl"),
                    help="file of remembered embeddings (made on the first run)")
    args = ap.parse_args()
    if not args.path.is_dir():
        print(f"skipped: {args.path} is absent", file=sys.stderr)
        return
    settings = load_settings(env={})
    embedder = CachedEmbedder(get_embedder(settings.embedder, settings.embed_threads),
                              args.cache)
    ocr = make_ocr(settings.ocr)
    lectures = [slides_eval.load_lecture(args.path / n, ocr)
                for n in slides_eval.lecture_names(args.path)]
    baseline = [slides_eval.accuracy(slides_eval.TfidfTracker(x.pages, x.sentences)
                                     .pages_after_each(), x.gold) for x in lectures]
    names = [x.name[:8] for x in lectures]
    print(f"{'variant':34}" + "".join(f"{n:>9}" for n in names) + "  average  below")
    print(f"{'TF-IDF baseline':34}" + "".join(f"{b:9.3f}" for b in baseline)
          + f"{np.mean(baseline):9.3f}")
    for name, change in VARIANTS.items():
        scores = [run(x, embedder, change) for x in lectures]
        embedder.save()
        below = sum(s < b for s, b in zip(scores, baseline, strict=True))
        print(f"{name:34}" + "".join(f"{s:9.3f}" for s in scores)
              + f"{np.mean(scores):9.3f}{below:7d}", flush=True)


if __name__ == "__main__":
    main()
