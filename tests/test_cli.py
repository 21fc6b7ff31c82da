"""The command line, run in-process with click's CliRunner against a copy of the sample store."""

from __future__ import annotations

import io
import json
import random
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result
from rich.console import Console

from coursetutor.cli import DEMO_ASKS, SAMPLE_QUESTIONS, cli, render
from coursetutor.ingest import FileResult, IngestReport
from coursetutor.store import SQLiteStore

from .support import SAMPLE_COURSE, SAMPLE_MANIFEST, TENANT, Sample, copy_db

README = Path(__file__).resolve().parents[1] / "README.md"
HIT_KEYS = {"chunk_id", "document_id", "title", "type", "section", "locator", "language",
            "score", "ranks", "text"}


def all_commands(
    group: click.Group = cli, prefix: tuple[str, ...] = ()
) -> Iterator[tuple[str, ...]]:
    for name, command in sorted(group.commands.items()):
        yield (*prefix, name)
        if isinstance(command, click.Group):
            yield from all_commands(command, (*prefix, name))


COMMANDS = list(all_commands())


@pytest.fixture(autouse=True)
def _no_config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI reads ./coursetutor.toml when present: run where there is none."""
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def data_dir(tmp_path: Path, sample: Sample) -> Path:
    """A data directory holding a copy of the ingested sample course."""
    copy_db(sample.db_path, tmp_path / "data" / "coursetutor.db")
    return tmp_path / "data"


@pytest.fixture
def cold_data_dir(data_dir: Path) -> Path:
    """A data directory with no course, whose vector cache still knows the sample texts."""
    store = SQLiteStore(data_dir / "coursetutor.db")
    store.remove_course(TENANT, SAMPLE_COURSE)
    store.close()
    return data_dir


def run(data_dir: Path | None, *args: str) -> Result:
    prefix = ["--data-dir", str(data_dir)] if data_dir is not None else []
    return CliRunner().invoke(cli, [*prefix, *args], catch_exceptions=False)


def assert_one_error_line(result: Result, message: str) -> None:
    assert result.exit_code == 1
    assert result.stderr == f"Error: {message}\n"
    assert result.stdout == ""


def test_ingest_manifest_then_list_courses_and_documents(cold_data_dir: Path) -> None:
    result = run(cold_data_dir, "ingest", "--manifest", str(SAMPLE_MANIFEST), "--json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["course"] == SAMPLE_COURSE
    assert [f["status"] for f in report["files"]] == ["added"] * 6
    totals = report["totals"]
    assert (totals["files"], totals["failed"], totals["embedded"]) == (6, 0, 0)  # cached vectors

    result = run(cold_data_dir, "courses", "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout) == [{
        "tenant": TENANT, "id": SAMPLE_COURSE, "title": "Numerical Methods 101",
        "language": "en", "documents": 6, "chunks": totals["chunks"], "allow_solutions": False,
    }]

    result = run(cold_data_dir, "documents", "--course", SAMPLE_COURSE, "--json")
    assert result.exit_code == 0
    docs = json.loads(result.stdout)
    assert [d["id"] for d in docs] == sorted(f["document_id"] for f in report["files"])
    assert sum(d["chunks"] for d in docs) == totals["chunks"]
    summary = next(d for d in docs if d["id"] == "lecture-01-riassunto-it-md")
    assert {k: summary[k] for k in ("doc_type", "topic", "difficulty", "language")} == {
        "doc_type": "summary", "topic": "root finding", "difficulty": 1, "language": "it"
    }


def test_ingest_files_and_folders_with_flags(tmp_path: Path, data_dir: Path) -> None:
    folder = tmp_path / "week-3"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "sheet.md").write_text("# Sheet 3\n\nUse regula falsi on x^3 - 2.\n")
    (folder / "ignored.docx").write_text("not loaded")
    result = run(data_dir, "ingest", "--course", "extra", "--type", "exercise", "--topic",
                 "regula falsi", "--difficulty", "4", "--language", "en", "--json", str(folder))
    assert result.exit_code == 0, result.stderr
    assert [(Path(f["path"]).name, f["status"], f["message"])
            for f in json.loads(result.stdout)["files"]] == [
        ("ignored.docx", "skipped", "ignored.docx: unsupported file type; supported: .json, "
         ".markdown, .md, .pdf, .srt, .tex, .txt, .vtt"),
        ("sheet.md", "added", ""),
    ]
    (doc,) = json.loads(run(data_dir, "documents", "--course", "extra", "--json").stdout)
    assert {k: doc[k] for k in ("id", "title", "doc_type", "topic", "difficulty", "language")} == {
        "id": "sub-sheet-md", "title": "Sheet 3", "doc_type": "exercise", "topic": "regula falsi",
        "difficulty": 4, "language": "en",
    }


def test_ingest_embeds_the_sentences_of_what_it_stored_once(tmp_path: Path,
                                                            data_dir: Path) -> None:
    note = tmp_path / "falsi.md"
    note.write_text("# Regula falsi\n\nRegula falsi keeps a bracket and draws the secant "
                    "through the two ends of it.\n")
    first = run(data_dir, "ingest", "--course", "extra", str(note))
    assert first.exit_code == 0, first.stderr
    assert "sentences 1 embedded" in first.stderr
    note.write_text(note.read_text() + "\nIt converges linearly near a simple root.\n")
    again = run(data_dir, "ingest", "--course", "extra", str(note))
    assert again.exit_code == 0, again.stderr
    assert "sentences 1 embedded" in again.stderr  # the new one: the first is kept


@pytest.mark.parametrize("k", [1, 3, 7])
def test_search_json(data_dir: Path, k: int) -> None:
    result = run(data_dir, "search", "What is the order of convergence of the secant method?",
                 "--course", SAMPLE_COURSE, "-k", str(k), "--json")
    assert result.exit_code == 0, result.stderr
    hits = json.loads(result.stdout)
    assert len(hits) == k
    assert all(set(h) >= HIT_KEYS and set(h["ranks"]) == {"bm25", "vector"} for h in hits)
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)


def test_search_json_finds_the_secant_section(data_dir: Path) -> None:
    result = run(data_dir, "search", "What is the order of convergence of the secant method?",
                 "--course", SAMPLE_COURSE, "-k", "3", "--json")
    assert {
        "document_id": "lecture-01-root-finding-md",
        "section": ["Lecture 1: Finding roots of equations", "4 The secant method",
                    "4.3 Order of convergence of the secant method"],
        "locator": {"anchor": "43-order-of-convergence-of-the-secant-method"},
    } in [{k: h[k] for k in ("document_id", "section", "locator")}
          for h in json.loads(result.stdout)]


@pytest.mark.parametrize(
    ("options", "check"),
    [
        (["--type", "exercise"], lambda h: h["type"] == "exercise"),
        (["--type", "exercise", "--type", "solution"],
         lambda h: h["type"] in {"exercise", "solution"}),
        (["--mode", "bm25"], lambda h: set(h["ranks"]) == {"bm25"}),
        (["--mode", "vector"], lambda h: set(h["ranks"]) == {"vector"}),
        (["--max-difficulty", "1"], lambda h: h["document_id"] == "lecture-01-riassunto-it-md"),
    ],
)
def test_search_options(data_dir: Path, options: list[str], check: object) -> None:
    result = run(data_dir, "search", "secant method", "--course", SAMPLE_COURSE, "--json",
                 *options)
    assert result.exit_code == 0, result.stderr
    hits = json.loads(result.stdout)
    assert hits and all(check(h) for h in hits)  # type: ignore[operator]


def test_search_plain_output(data_dir: Path) -> None:
    result = run(data_dir, "search", "How does the bisection method work?", "--course",
                 SAMPLE_COURSE, "-k", "2")
    assert result.exit_code == 0
    assert "? How does the bisection method work?" in result.stdout
    assert "[1]" in result.stdout and "[2]" in result.stdout and "[3]" not in result.stdout


def test_remove_document(data_dir: Path) -> None:
    result = run(data_dir, "remove", "--course", SAMPLE_COURSE, "--document",
                 "lecture-01-video-srt")
    assert (result.exit_code, result.stdout) == (
        0, f"Removed document lecture-01-video-srt from {SAMPLE_COURSE}.\n"
    )
    docs = json.loads(run(data_dir, "documents", "--course", SAMPLE_COURSE, "--json").stdout)
    assert "lecture-01-video-srt" not in [d["id"] for d in docs]
    assert len(docs) == 5


def test_remove_course(data_dir: Path) -> None:
    result = run(data_dir, "remove", "--course", SAMPLE_COURSE)
    assert (result.exit_code, result.stdout) == (0, f"Removed course {SAMPLE_COURSE}.\n")
    assert json.loads(run(data_dir, "courses", "--json").stdout) == []


def test_courses_are_per_tenant(data_dir: Path) -> None:
    result = CliRunner().invoke(cli, ["--data-dir", str(data_dir), "--tenant", "other",
                                      "courses", "--json"])
    assert (result.exit_code, json.loads(result.stdout)) == (0, [])


def test_data_dir_from_environment(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COURSETUTOR_DATA_DIR", str(data_dir))
    result = run(None, "courses", "--json")
    assert [c["id"] for c in json.loads(result.stdout)] == [SAMPLE_COURSE]


def test_courses_table(data_dir: Path) -> None:
    result = run(data_dir, "courses")
    assert result.exit_code == 0
    header = result.stdout.splitlines()[1].split()
    assert header == ["┃", "course", "┃", "title", "┃", "language", "┃", "documents", "┃",
                      "chunks", "┃"]
    assert "numerical" in result.stdout


def test_demo_answers_the_sample_questions(data_dir: Path, smollm_path: Path) -> None:
    """The README's main job, on the real llama.cpp path with the small test model."""
    result = CliRunner(env={"COURSETUTOR_LLM_MODEL": str(smollm_path)}).invoke(
        cli, ["--data-dir", str(data_dir), "demo"], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    assert "6 of 6 files ingested" in result.stdout
    assert f"? {SAMPLE_QUESTIONS[2]}" in result.stdout
    for question in DEMO_ASKS:
        assert f"tutor ? {question}" in result.stdout
    store = SQLiteStore(data_dir / "coursetutor.db")
    try:
        sessions = store.list_sessions(TENANT, SAMPLE_COURSE, "demo")
    finally:
        store.close()
    assert [s.turns for s in sessions] == [1, 1]


def test_demo_without_a_model_shows_passages(data_dir: Path) -> None:
    result = CliRunner(env={"COURSETUTOR_LLM_BACKEND": "none"}).invoke(
        cli, ["--data-dir", str(data_dir), "demo"], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.count("Sources") == len(DEMO_ASKS)
    assert "Written answers are switched off" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["search", "What is a root?", "--course", "nope"], "course 'nope' does not exist"),
        (["search", "", "--course", SAMPLE_COURSE], "the question is empty"),
        (["search", "  ?! ", "--course", SAMPLE_COURSE], "the question is empty"),
        (["documents", "--course", "nope"], "course 'nope' does not exist"),
        (["remove", "--course", "nope"], "course 'nope' does not exist"),
        (["remove", "--course", SAMPLE_COURSE, "--document", "nope"],
         f"document 'nope' does not exist in course '{SAMPLE_COURSE}'"),
        (["ingest", "a.md"], "give --course ID (or a manifest with [course] id)"),
        (["ingest", "--course", "c"], "nothing to ingest: give files, folders or --manifest"),
        (["ingest", "--course", "c", "--title", "T", "a.md", "b.md"],
         "--title applies to a single file"),
        (["ingest", "--manifest", "missing.toml"],
         "missing.toml: cannot read manifest (No such file or directory)"),
    ],
)
def test_errors_are_one_line_on_stderr(data_dir: Path, args: list[str], message: str) -> None:
    assert_one_error_line(run(data_dir, *args), message)


def test_missing_config_file_is_one_error_line(tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    result = CliRunner().invoke(cli, ["--config", str(missing), "courses"])
    assert_one_error_line(result, f"{missing}: no such configuration file")


def test_bad_setting_in_environment_is_one_error_line(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COURSETUTOR_RRF_K", "many")
    result = run(data_dir, "courses")
    assert_one_error_line(
        result,
        "setting 'rrf_k': cannot use 'many' (invalid literal for int() with base 10: 'many')",
    )


@pytest.mark.parametrize("as_json", [True, False])
def test_ingest_of_only_a_corrupt_file_fails(tmp_path: Path, data_dir: Path, as_json: bool) -> None:
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(random.Random(4).randbytes(2048))
    flags = ["--json"] if as_json else []
    result = run(data_dir, "ingest", "--course", "bad", str(broken), *flags)
    assert result.exit_code == 1
    if as_json:
        (failed,) = json.loads(result.stdout)["files"]
        assert failed["status"] == "failed"
        assert failed["message"].startswith("broken.pdf: not a readable PDF (")
    else:
        assert "broken.pdf" in result.stdout and "failed" in result.stdout
        assert "0 of 1 files ingested" in result.stdout


def test_version() -> None:
    result = CliRunner().invoke(cli, ["--version"], prog_name="coursetutor")
    assert result.exit_code == 0
    assert result.stdout.startswith("coursetutor, version ")


@pytest.mark.parametrize("command", [(), *COMMANDS], ids=lambda c: " ".join(c) or "coursetutor")
def test_help(command: tuple[str, ...]) -> None:
    result = CliRunner().invoke(cli, [*command, "--help"], prog_name="coursetutor")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"Usage: {' '.join(('coursetutor', *command))} ")


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_every_command_is_documented_in_readme(command: tuple[str, ...]) -> None:
    if not README.is_file():
        pytest.skip("README.md does not exist yet")
    assert f"coursetutor {' '.join(command)}" in README.read_text(encoding="utf-8")


# -- Ingest: one bad file is one line, a failed first ingest leaves no course ----------------


def test_ingest_a_deep_json_between_two_good_files(tmp_path: Path, data_dir: Path) -> None:
    (tmp_path / "a.md").write_text("# Bisection\n\nBisection halves the bracket.\n")
    (tmp_path / "deep.json").write_text("[" * 100_000)
    (tmp_path / "b.md").write_text("# Secant\n\nThe secant method draws a line.\n")
    result = run(data_dir, "ingest", "--course", "batch", "--json",
                 *(str(tmp_path / n) for n in ("a.md", "deep.json", "b.md")))
    assert result.exit_code == 0, result.stderr
    assert "Traceback" not in result.output
    assert [(Path(f["path"]).name, f["status"], f["message"])
            for f in json.loads(result.stdout)["files"]] == [
        ("a.md", "added", ""),
        ("deep.json", "failed", "deep.json: nested too deeply to read"),
        ("b.md", "added", ""),
    ]


def test_a_failed_first_ingest_leaves_no_course(tmp_path: Path, data_dir: Path) -> None:
    (tmp_path / "blank.md").write_text("\n\n")
    result = run(data_dir, "ingest", "--course", "ghost", str(tmp_path / "blank.md"))
    assert result.exit_code == 1
    assert "blank.md: no text" in result.stdout
    assert result.stderr.endswith("Course ghost was not created: no file could be ingested.\n")
    courses = json.loads(run(data_dir, "courses", "--json").stdout)
    assert [c["id"] for c in courses] == [SAMPLE_COURSE]


def test_a_failed_ingest_into_an_existing_course_keeps_it(tmp_path: Path, data_dir: Path) -> None:
    (tmp_path / "blank.md").write_text("\n\n")
    result = run(data_dir, "ingest", "--course", SAMPLE_COURSE, str(tmp_path / "blank.md"))
    assert result.exit_code == 1
    assert "was not created" not in result.stderr
    courses = json.loads(run(data_dir, "courses", "--json").stdout)
    assert [c["id"] for c in courses] == [SAMPLE_COURSE]


def test_ingest_language_sets_the_course_language(tmp_path: Path, data_dir: Path) -> None:
    (tmp_path / "a.md").write_text("# Newton\n\nNewton's method follows the tangent line.\n")
    (tmp_path / "b.md").write_text("# Secant\n\nThe secant method is what the tangent is.\n")
    assert run(data_dir, "ingest", "--course", "kept", "--language", "IT",
               str(tmp_path / "a.md")).exit_code == 0
    assert run(data_dir, "ingest", "--course", "kept", str(tmp_path / "b.md")).exit_code == 0
    courses = {c["id"]: c for c in json.loads(run(data_dir, "courses", "--json").stdout)}
    assert courses["kept"]["language"] == "it"
    docs = json.loads(run(data_dir, "documents", "--course", "kept", "--json").stdout)
    assert [(d["id"], d["language"]) for d in docs] == [("a-md", "it"), ("b-md", "en")]


def test_ingest_language_must_be_a_code(tmp_path: Path, data_dir: Path) -> None:
    (tmp_path / "a.md").write_text("# A\n\nText.\n")
    assert_one_error_line(
        run(data_dir, "ingest", "--course", "x", "--language", "english!", str(tmp_path / "a.md")),
        "language must be a language code such as en, it or zh, got 'english!'")


def test_the_report_prints_square_brackets_as_they_are(monkeypatch: pytest.MonkeyPatch) -> None:
    buffer = io.StringIO()
    monkeypatch.setattr(render, "out", Console(file=buffer, width=400))
    message = ("scan.pdf: no page has a text layer (4 pages); to read scanned pages: "
               "pip install 'coursetutor[ocr]'")
    report = IngestReport("scans", [
        FileResult("/in/[draft] scan.pdf", "failed", pages=4, no_text_pages=[1, 2, 3, 4],
                   message=message)])
    render.print_report(report)
    printed = buffer.getvalue()
    assert message in printed
    assert "[draft] scan.pdf" in printed
    assert "0 of 1 files ingested, 4 pages, 0 chunks, 0 embedded, 4 pages without text" in printed
