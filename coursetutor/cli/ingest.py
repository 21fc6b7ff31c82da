"""`coursetutor ingest`, `search`, `courses`, `documents` and `remove`: a course's material."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import click

from ..errors import InputError
from ..ingest import load_manifest
from ..retrieval.language import check_language
from ..types import DOC_TYPES, FileMeta, check_doc_type, check_media_url
from . import render
from .group import workspace


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--course", required=False, help="Course id (created if new).")
@click.option("--manifest", type=click.Path(path_type=Path), help="course.toml or YAML manifest.")
@click.option("--type", "doc_type", type=click.Choice(DOC_TYPES), default="lecture",
              show_default=True, help="Document type of PATHS.")
@click.option("--topic", default="", help="Topic of PATHS.")
@click.option("--difficulty", type=click.IntRange(1, 5), default=2, show_default=True)
@click.option("--title", default=None, help="Document title (one file only).")
@click.option("--language", default=None, help="Language of PATHS and of the course, kept "
              "whatever later documents are in (default: detected, the course's follows the "
              "language most of its chunks are in).")
@click.option("--media-url", default="", help="Transcripts: the video or audio they transcribe "
              "(citations open it at the cited second).")
@click.option("--slides", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None, help="Transcripts: the slide deck (PDF) they were spoken over; "
              "each chunk gets the slide it was on.")
@click.option("--source", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None, help="A PDF's LaTeX (.tex) or Markdown (.md) source (one PDF "
              "only): chunks take its text and formulas, their pages from the PDF.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_context
def ingest(ctx: click.Context, paths: tuple[Path, ...], course: str | None,
           manifest: Path | None, doc_type: str, topic: str, difficulty: int,
           title: str | None, language: str | None, media_url: str, slides: Path | None,
           source: Path | None, as_json: bool) -> None:
    """Load files into a course: PDFs (with their LaTeX or Markdown source), Markdown, LaTeX,
    text, transcripts (.srt, .vtt, .json)."""
    items: list[tuple[Path, FileMeta]] = []
    course_title, course_lang = "", "en"
    allow_solutions: bool | None = None
    explicit = check_language(language) if language else None
    if manifest is not None:
        m = load_manifest(manifest)
        items.extend(m.files)
        course = course or m.course_id
        course_title, course_lang, allow_solutions = m.title, m.language, m.allow_solutions
        explicit = explicit or (m.language if m.language_set else None)
    if title and len(paths) > 1:
        raise InputError("--title applies to a single file")
    meta = FileMeta(check_doc_type(doc_type), topic, difficulty, title,
                    check_language(language) if language else None,
                    media_url=check_media_url(media_url),
                    slides=str(slides.resolve()) if slides else "",
                    source=str(source.resolve()) if source else "")
    files = _expand(paths)
    if source is not None and len(files) != 1:
        raise InputError("--source applies to a single PDF")
    items.extend((p, dataclasses.replace(meta, source_name=name)) for p, name in files)
    if not course:
        raise InputError("give --course ID (or a manifest with [course] id)")
    if not items:
        raise InputError("nothing to ingest: give files, folders or --manifest")
    ws = workspace(ctx)
    new = course not in {c.id for c in ws.courses()}
    ws.create_course(course, course_title, explicit or course_lang)
    try:
        if explicit:
            ws.store.set_course_language(ws.tenant, course, explicit)
        if allow_solutions is not None:
            ws.store.set_course_policy(ws.tenant, course, allow_solutions)
        report = render.ingest_with_progress(ws, course, items, quiet=as_json)
    finally:
        if new and not ws.documents(course):  # a failed first ingest leaves no empty course
            ws.remove_course(course)
    if as_json:
        click.echo(json.dumps(render.report_dict(report), indent=2))
    else:
        render.print_report(report)
    if not report.succeeded:
        if new:
            click.echo(f"Course {course} was not created: no file could be ingested.",
                       err=True)
        sys.exit(1)


def _expand(paths: tuple[Path, ...]) -> list[tuple[Path, str]]:
    """Files to ingest with their names in the course (relative to a folder given); a file
    of a type no loader reads stays in, so the report says it was skipped and why (hidden
    files and folders stay out)."""
    found: list[tuple[Path, str]] = []
    for p in paths:
        if p.is_dir():
            files = sorted(f for f in p.rglob("*") if f.is_file() and not any(
                part.startswith(".") for part in f.relative_to(p).parts))
            found.extend((f, f.relative_to(p).as_posix()) for f in files)
        else:
            found.append((p, p.name))
    return found


@click.command()
@click.argument("question")
@click.option("--course", required=True)
@click.option("-k", "k", type=click.IntRange(1, 100), default=5, show_default=True)
@click.option("--mode", type=click.Choice(["hybrid", "bm25", "vector"]), default="hybrid",
              show_default=True)
@click.option("--type", "doc_types", multiple=True, type=click.Choice(DOC_TYPES),
              help="Only these document types (repeatable).")
@click.option("--max-difficulty", type=click.IntRange(1, 5), default=None)
@click.option("--student", default=None,
              help="Rank as the tutor would for this student (their profile rerank).")
@click.option("--explain", is_flag=True, help="Show each passage's scores and why it moved.")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def search(ctx: click.Context, question: str, course: str, k: int, mode: str,
           doc_types: tuple[str, ...], max_difficulty: int | None, student: str | None,
           explain: bool, as_json: bool) -> None:
    """Find the passages of a course that answer QUESTION."""
    ws = workspace(ctx)
    types = tuple(check_doc_type(t) for t in doc_types) or None
    hits = ws.search(question, course, k=k, mode=mode, doc_types=types,
                     max_difficulty=max_difficulty)
    if student is not None:
        from ..memory.adaptive import reranker

        hits = reranker(ws.store, ws.settings, ws.tenant, course, student)(hits)
    if as_json:
        click.echo(json.dumps([render.hit_dict(h) for h in hits], indent=2, ensure_ascii=False))
    else:
        render.print_hits(question, hits, explain)


@click.command()
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def courses(ctx: click.Context, as_json: bool) -> None:
    """List the tenant's courses."""
    render.print_courses(workspace(ctx).courses(), as_json)


@click.command()
@click.option("--course", required=True)
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def documents(ctx: click.Context, course: str, as_json: bool) -> None:
    """List the documents of a course."""
    render.print_documents(workspace(ctx).documents(course), as_json)


@click.command()
@click.option("--course", required=True)
@click.option("--document", "document_id", default=None, help="Remove only this document.")
@click.pass_context
def remove(ctx: click.Context, course: str, document_id: str | None) -> None:
    """Remove a document, or a whole course with all its documents and chunks."""
    ws = workspace(ctx)
    if document_id:
        ws.remove_document(course, document_id)
        click.echo(f"Removed document {document_id} from {course}.")
    else:
        ws.remove_course(course)
        click.echo(f"Removed course {course}.")
