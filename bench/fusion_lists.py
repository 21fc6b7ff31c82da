"""Candidate lists of every development set, saved once, to tune and check fusion offline.

    python bench/fusion_lists.py --data-dir DIR --out FOLDER [--sets korquad-ko,...]
                                 [--limit N] [--paragraphs N] [--threads T]
    python bench/fusion_lists.py --tune FOLDER        # the fusion rules on the saved lists

The first form loads each set of `coursetutor eval retrieval --all` into the store under
DIR (vectors cached there by text hash) and writes FOLDER/<set>.json: for every question the
keyword and vector candidate lists exactly as a hybrid search gathers them (scores, the
keyword evidence, the question's language), and for every candidate whether it is a hit and
its text's hash (the search shows one of several identical texts). The second form fuses
those lists as the retriever does (`fusion.fuse`) and as the former default did (min-max
relative fusion) and prints R@1 / R@5 per set, on the tuning part and on the held-back part
of each set separately (`part`: 30% of the questions, chosen by a hash of the question's id,
are held back) and on all its questions, and how many questions only one list has right at
rank 1 and how many of those the hybrid has right (the room fusion has).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from _common import SHARED, ensure_threads, log

from coursetutor.config import load_settings
from coursetutor.eval.retrieval import ALL_SETS, prepare
from coursetutor.retrieval.retriever import CJK_LANGUAGES, Retriever, SearchTrace
from coursetutor.scoring import fusion
from coursetutor.types import SearchFilters
from coursetutor.workspace import Workspace

K = 10
HELD_BACK = 0.30


def part(question_id: str) -> str:
    """'check' for the 30% of questions held back (by a hash of the id), else 'tune'."""
    h = int(hashlib.sha256(question_id.encode("utf-8")).hexdigest()[:8], 16)
    return "check" if h % 100 < HELD_BACK * 100 else "tune"


def trimmed(source: Path, folder: Path, paragraphs: int | None) -> Path:
    """`source` (SQuAD format) cut after the first article that brings the paragraph count
    to `paragraphs`, written into `folder`; `source` itself when there is no cut."""
    if paragraphs is None or source.suffix != ".json" or "tvqa" in source.name:
        return source
    data = json.loads(source.read_text(encoding="utf-8"))
    kept, count = [], 0
    for article in data["data"]:
        if count >= paragraphs:
            break
        kept.append(article)
        count += len(article["paragraphs"])
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / source.name
    target.write_text(json.dumps({**data, "data": kept}), encoding="utf-8")
    return target


def dump(data_dir: Path, out: Path, names: set[str] | None, limit: int | None,
         paragraphs: int | None = None) -> None:
    source = SHARED / "datasets"
    folder = out / "_data"
    settings = load_settings(env={}, data_dir=data_dir)
    out.mkdir(parents=True, exist_ok=True)
    with Workspace(settings) as ws:
        ws.tenant = "eval"
        for spec in ALL_SETS:
            if names and spec.name not in names:
                continue
            log(f"{spec.name}: loading")
            prepared, warnings = prepare(
                ws, spec.dataset, trimmed(source / spec.path, folder, paragraphs),
                source / spec.query_lang if spec.query_lang else None,
                source / spec.videos if spec.videos else None, limit, name=spec.name)
            for w in warnings:
                log(f"warning: {w}")
            log(f"{spec.name}: {len(prepared.questions)} questions, {prepared.units} units")
            retriever = Retriever(ws.store, ws.embedder, ws.settings)
            filters = SearchFilters(ws.tenant, prepared.course)
            n = max(K * settings.candidate_factor, settings.min_candidates, K)
            rows = []
            for i, q in enumerate(prepared.questions):
                text = prepared.text_of(q)
                trace = SearchTrace()
                lists = retriever.candidates(text, filters, n, trace)
                ids = list(dict.fromkeys(cid for scored in lists.values() for cid, _ in scored))
                chunks = ws.store.get_chunks(filters, ids)
                hits = retriever.as_hits([(cid, 0.0) for cid in ids], chunks, {}, {}, text,
                                         trace.language)
                flags = prepared.judge(q, hits)
                rows.append({
                    "id": str(getattr(q, "id", i)), "language": trace.language,
                    "translated": trace.translated, "evidence": trace.keyword_evidence,
                    "query_chars": len(text),
                    "lists": {name: [[cid, s] for cid, s in scored]
                              for name, scored in lists.items()},
                    "hit": {h.chunk.id: f for h, f in zip(hits, flags, strict=True)},
                    "hash": {h.chunk.id: h.chunk.content_hash for h in hits},
                    "chars": {h.chunk.id: len(h.chunk.text) for h in hits},
                })
                if (i + 1) % 200 == 0:
                    log(f"{spec.name}: {i + 1}/{len(prepared.questions)}")
            course_language = ws.store.course_language(ws.tenant, prepared.course)
            (out / f"{spec.name}.json").write_text(json.dumps(
                {"set": spec.name, "language": course_language, "questions": rows}))
            log(f"{spec.name}: written")


Rule = Callable[[dict[str, Any]], list[tuple[str, float]]]


def ranked_flags(row: dict[str, Any], fused: Sequence[tuple[object, float]]) -> list[bool]:
    """Hit flags of the fused list after identical texts are dropped, as the search does."""
    seen: set[str] = set()
    flags: list[bool] = []
    for cid, _ in fused:
        h = row["hash"].get(cid)
        if h is None or h in seen:
            continue
        seen.add(h)
        flags.append(bool(row["hit"][cid]))
        if len(flags) == K:
            break
    return flags


def current(row: dict[str, Any], mode: str, course_language: str) -> list[tuple[str, float]]:
    """Fusion as the retriever does it now (`fusion.fuse`), the former default ("relative")
    or one list alone."""
    lists = {name: [(c, float(s)) for c, s in scored] for name, scored in row["lists"].items()}
    if mode in ("bm25", "vector"):
        return lists.get(mode, [])
    features = fusion.Features(
        evidence=row["evidence"], translated=row["translated"],
        cjk=row["language"] in CJK_LANGUAGES and course_language in CJK_LANGUAGES)
    if mode == "relative":  # the fusion before spread fusion, for comparison
        weights = fusion.list_weights(lists, features, adaptive=False)
        return fusion.relative_score_fusion(lists, weights)
    return fusion.fuse(lists, features)


def tune(folder: Path) -> None:
    files = sorted(folder.glob("*.json"))
    order = {s.name: i for i, s in enumerate(ALL_SETS)}
    files.sort(key=lambda f: order.get(f.stem, 99))
    print(f"{'set':14}{'part':>6}{'n':>6}   bm25 R@1/R@5   vector R@1/R@5   hybrid R@1/R@5"
          "   relative R@1/R@5")
    for f in files:
        data = json.loads(f.read_text(encoding="utf-8"))
        for which in ("tune", "check", "all"):
            rows = [r for r in data["questions"] if which == "all" or part(r["id"]) == which]
            cells = []
            for mode in ("bm25", "vector", "hybrid", "relative"):
                flags = [ranked_flags(r, current(r, mode, data["language"])) for r in rows]
                r1 = sum(any(fl[:1]) for fl in flags) / max(1, len(rows))
                r5 = sum(any(fl[:5]) for fl in flags) / max(1, len(rows))
                cells.append(f"   {r1:.3f} / {r5:.3f}  ")
            print(f"{f.stem:14}{which:>6}{len(rows):>6}{''.join(cells)}")
        print(f"{'':14}{'':>6}{'':>6}   {disagreements(data['questions'], data['language'])}")
        sys.stdout.flush()


def disagreements(rows: list[dict[str, Any]], course_language: str) -> str:
    """How often exactly one single list is right at rank 1, and how often the hybrid is then:
    the room fusion has (where both lists are wrong, no fusion of the two can be right first
    unless a lower candidate rises)."""
    one, took = 0, 0
    for r in rows:
        first = {mode: any(ranked_flags(r, current(r, mode, course_language))[:1])
                 for mode in ("bm25", "vector", "hybrid")}
        if first["bm25"] != first["vector"]:
            one += 1
            took += first["hybrid"]
    return f"one list right at rank 1: {one} questions, the hybrid right on {took}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-dir", type=Path, default=Path(".coursetutor-bench"))
    ap.add_argument("--out", type=Path)
    ap.add_argument("--sets", default="")
    ap.add_argument("--limit", type=int, default=None, help="only the first N questions")
    ap.add_argument("--paragraphs", type=int, default=None,
                    help="only the first articles of each SQuAD-format set, up to N paragraphs")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--tune", type=Path, default=None)
    args = ap.parse_args()
    if args.tune:
        tune(args.tune)
        return
    if not (SHARED / "datasets").is_dir():
        log(f"skipped: the datasets folder {SHARED / 'datasets'} is absent")
        return
    if args.out is None:
        raise SystemExit("--out FOLDER is required (or --tune FOLDER)")
    ensure_threads(args.threads)
    names = {s for s in args.sets.split(",") if s} or None
    dump(args.data_dir, args.out, names, args.limit, args.paragraphs)


if __name__ == "__main__":
    main()
