"""Terminal and JSON rendering for the CLI."""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ...ingest import FileResult, IngestReport
from ...ingest import Progress as IngestProgress
from ...ingest.formulas import GAP
from ...ingest.ocr import INSTALL_HINT as OCR_HINT
from ...ingest.ocr import available as ocr_available
from ...ingest.tex_unicode import to_unicode
from ...types import Course, Document, FileMeta, Hit, Locator
from ...workspace import Workspace

console = Console(stderr=True)
out = Console()


def ingest_with_progress(
    ws: Workspace, course: str, items: list[tuple[Path, FileMeta]], quiet: bool = False
) -> IngestReport:
    """Run an ingest with a progress bar: files, pages, chunks and embedding rate; then the
    evidence sentences of the documents it stored (tutor/warm.py)."""
    if quiet or not console.is_terminal:
        report = ws.ingest(course, items, progress=None if quiet else _plain_progress)
        _warm(ws, course, report, quiet)
        return report
    totals = {"pages": 0, "chunks": 0, "embedded": 0}
    started = time.perf_counter()
    with Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
        TextColumn("{task.fields[stats]}"), TimeElapsedColumn(), console=console,
    ) as bar:
        task = bar.add_task("files", total=len(items), stats="")
        embedded_before = 0

        def update(p: IngestProgress) -> None:
            nonlocal embedded_before
            if p.stage == "embedding":
                totals["embedded"] = embedded_before + p.embedded
            if p.stage in ("stored", "skipped", "failed"):
                totals["pages"] += p.pages
                totals["chunks"] += p.chunks
                embedded_before = totals["embedded"]
                bar.advance(task)
            rate = totals["embedded"] / max(time.perf_counter() - started, 1e-6)
            bar.update(task, stats=f"{totals['pages']} pages  {totals['chunks']} chunks  "
                       f"{totals['embedded']} embedded ({rate:.1f}/s)  {Path(p.path).name}")

        report = ws.ingest(course, items, progress=update)
        shown: list[Any] = []  # the sentences' bar, from their first batch

        def warmed(done: int, total: int) -> None:
            if not shown:
                shown.append(bar.add_task("sentences", total=total, stats=""))
            bar.update(shown[0], completed=done)

        _warm(ws, course, report, quiet, warmed)
        return report


def _warm(ws: Workspace, course: str, report: IngestReport, quiet: bool,
          notify: Callable[[int, int], None] | None = None) -> None:
    """Embed the evidence sentences of the documents the ingest stored or updated."""
    from ...tutor.warm import warm

    documents = [f.document_id for f in report.files
                 if f.document_id and f.status not in ("failed", "skipped")]
    if not documents:
        return
    embedded = warm(ws, course, documents, notify)
    if embedded and not quiet and not console.is_terminal:
        click.echo(f"  sentences {embedded} embedded", err=True)


def _plain_progress(p: IngestProgress) -> None:
    if p.stage in ("stored", "skipped", "failed"):
        click.echo(f"  {p.stage:8} {Path(p.path).name}", err=True)


def report_dict(report: IngestReport) -> dict[str, Any]:
    return {
        "course": report.course,
        "seconds": round(report.seconds, 3),
        "totals": report.totals(),
        "files": [dataclasses.asdict(f) for f in report.files],
    }


def file_notes(f: FileResult) -> str:
    """What the report says about one file besides its counts (plain text, not markup)."""
    notes = [f.message] if f.message else []
    if f.no_text_pages:
        hint = "" if ocr_available() else f"; OCR: {OCR_HINT}"
        notes.append(f"no text layer on page(s) {_pages(f.no_text_pages)} (skipped{hint})")
    if f.formula_pages:
        hint = "" if ocr_available() else f"; OCR: {OCR_HINT}"
        notes.append(f"formulas missing from the text layer on page(s) "
                     f"{_pages(f.formula_pages)} (marked {GAP}{hint})")
    if f.ocr_pages:
        notes.append(f"OCR on page(s) {_pages(f.ocr_pages)}")
    if f.dropped_pages:
        notes.append(f"contents page(s) {_pages(f.dropped_pages)} dropped")
    if f.source:
        notes.append(placement_note(f))
    return "; ".join(notes)


def placement_note(f: FileResult) -> str:
    """How a PDF's source was placed on its pages."""
    note = f"text from {f.source}: {f.placed} of {f.source_chunks} chunks on their page"
    if f.unplaced:
        more = f" and {len(f.unplaced) - 3} more" if len(f.unplaced) > 3 else ""
        note += f"; not placed: {', '.join(f.unplaced[:3])}{more}"
    if f.pdf_only_pages:
        note += f"; page(s) {_pages(f.pdf_only_pages)} from the PDF alone"
    return note


def print_report(report: IngestReport) -> None:
    table = Table(title=f"Ingest report: {escape(report.course)}")
    for col in ("file", "status", "pages", "chunks", "embedded", "notes"):
        table.add_column(col)
    styles = {"failed": "red", "skipped": "yellow"}
    for f in report.files:
        # file names and messages are text, not console markup ("coursetutor[ocr]")
        table.add_row(escape(Path(f.path).name), f.status, str(f.pages), str(f.chunks),
                      str(f.embedded), escape(file_notes(f)), style=styles.get(f.status))
    out.print(table)
    t = report.totals()
    ingested = t["files"] - t["failed"] - t["skipped"]
    skipped = f", {t['skipped']} skipped" if t["skipped"] else ""
    out.print(f"{ingested} of {t['files']} files ingested{skipped}, {t['pages']} pages, "
              f"{t['chunks']} chunks, {t['embedded']} embedded, "
              f"{t['no_text_pages']} pages without text, {t['ocr_pages']} read by OCR, "
              f"{t['formula_pages']} with formulas missing, in {report.seconds:.1f} s",
              highlight=False)


def _pages(pages: list[int]) -> str:
    return ", ".join(map(str, pages[:10])) + (" ..." if len(pages) > 10 else "")


def hit_dict(hit: Hit) -> dict[str, Any]:
    c = hit.chunk
    return {
        "chunk_id": c.id,
        "document_id": c.document_id,
        "title": c.document_title,
        "type": c.doc_type,
        "section": list(c.section_path),
        "locator": _locator(c.locator),
        "cite": _locator(hit.locator),
        "language": c.language,
        "score": round(hit.score, 6),
        "ranks": hit.ranks,
        "explain": list(hit.explain),
        "text": c.text,
    }


def _locator(loc: Locator) -> dict[str, Any]:
    return {k: v for k, v in dataclasses.asdict(loc).items() if v is not None}


def print_hits(question: str, hits: list[Hit], explain: bool = False) -> None:
    out.print(f"\n[bold]? {escape(question)}[/bold]")
    if not hits:
        out.print("  no passage found")
    for i, h in enumerate(hits, start=1):
        c = h.chunk
        where = " / ".join([c.document_title, *c.section_path[-1:], h.locator.label()])
        ranks = " ".join(f"{k}#{v}" if v else f"{k}:-" for k, v in h.ranks.items())
        snippet = " ".join(to_unicode(c.text).split())[:220]
        out.print(f"  \\[{i}] [cyan]{escape(where)}[/cyan] ({c.doc_type}, {ranks})")
        out.print(f"      {escape(snippet)}", highlight=False)
        if explain:
            out.print(f"      [dim]{escape(score_line(h))}[/dim]", highlight=False)
            for line in h.explain:
                out.print(f"      [dim]{escape(line)}[/dim]", highlight=False)


def score_line(h: Hit) -> str:
    """'score 0.8312 · bm25 #2 (7.3100) · vector #1 (0.8400)': the fused score and each
    retriever's rank and score."""
    parts = [f"score {h.score:.4f}"]
    for name, rank in h.ranks.items():
        value = h.scores.get(name)
        parts.append(f"{name} #{rank} ({value:.4f})" if rank and value is not None
                     else f"{name} -")
    return " · ".join(parts)


def print_courses(courses: list[Course], as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps([dataclasses.asdict(c) for c in courses], indent=2))
        return
    table = Table("course", "title", "language", "documents", "chunks")
    for c in courses:
        table.add_row(c.id, c.title, c.language, str(c.documents), str(c.chunks))
    out.print(table)


def print_documents(docs: list[Document], as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps([dataclasses.asdict(d) for d in docs], indent=2))
        return
    table = Table("document", "title", "type", "topic", "difficulty", "language", "pages", "chunks")
    for d in docs:
        table.add_row(d.id, d.title, d.doc_type, d.topic, str(d.difficulty), d.language,
                      str(d.pages), str(d.chunks))
    out.print(table)
