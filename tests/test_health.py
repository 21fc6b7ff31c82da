"""The course health check: the garble detector, the questions, the check of the sample course
(model off, and a scripted model for the answer path), the `check` command and its API."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fpdf import FPDF

from coursetutor.cli import cli
from coursetutor.cli.render.check import page_ranges
from coursetutor.config import Settings, load_settings
from coursetutor.health.course import (
    CHECK_STUDENT,
    NOT_FOUND,
    answer_verdict,
    check_course,
    check_dict,
    clean_question,
)
from coursetutor.health.sections import (
    Unit,
    heading_question,
    key_sentence,
    repeated_topics,
    sample_evenly,
    topic_of,
    units_of,
)
from coursetutor.llm.base import Delta, GenParams, Message, Usage
from coursetutor.retrieval import EmbeddingModel
from coursetutor.store import SQLiteStore
from coursetutor.store.base import ChunkRow
from coursetutor.tutor import Tutor, prompts
from coursetutor.tutor.garble import (
    FEW_LETTERS,
    GAPS,
    PRIVATE_USE,
    REPLACEMENT,
    gap_count,
    garble_reasons,
    letter_ratio,
)
from coursetutor.types import Answer, FileMeta, Locator
from coursetutor.workspace import Workspace

from .api_support import COURSE, COURSE_B, Api, ScriptedLLM, open_api, scripted_router
from .support import SAMPLE_COURSE, TENANT, Sample, copy_db

CLEAN = ("Newton's method replaces the curve by its tangent line and takes the point where "
         "the tangent meets the axis as the next iterate.")
SOUP = "Let   be a function on  , then   is bounded  ."  # a formula font without text
ZH_SOUP = ("定理 2.3.1 若单调上升的   有上界 , 则其收敛且  . 性质 2.2.5 若   收敛 , 则其有界 . "
           "对收敛的数列 , 其任意子列收敛于同值  .")
SYMBOLS = "x = ∑ ∫ ∂ ∇ ≤ ≥ ± × ÷ → ← ↔ ∞ ≈ ≠ ∈ ∉ ⊂ ⊃ ∪ ∩ ∧ ∨ ¬ ∀ ∃ ∅ ∴ ∵ ⊕ ⊗ ⊥ ∠ √ ∝ ∮ ∯ ∰ ∱ ∲"
# the sample course's documents and how many sections each has
SAMPLE_SECTIONS = {
    "exercises-01-md": 5, "lecture-01-riassunto-it-md": 6, "lecture-01-root-finding-md": 19,
    "lecture-01-video-srt": 23, "lecture-02-convergence-pdf": 6, "solutions-01-md": 5,
}


# -- the garble detector ---------------------------------------------------------------------


@pytest.mark.parametrize(("text", "gaps"), [
    (CLEAN, 0),
    # "Let_be", "on_,", the lone comma, "then_is", "bounded_." and the lone full stop
    (SOUP, 6),
    ("若单调上升的   有上界 , 则其收敛且  .", 4),
    ("单调 有界", 0),  # a wrapped line joined with a space
    ("单调  有界", 1),
    ("f : X → Y and g : Y → Z", 0),  # a colon alone is ordinary mathematics
    ("the limit [formula missing] exists", 1),  # the PDF loader's marker
    ("  indented line\nnext line  ", 0),  # leading and trailing blanks are layout
])
def test_gap_count(text: str, gaps: int) -> None:
    assert gap_count(text) == gaps


@pytest.mark.parametrize(("text", "ratio"), [
    ("ab+-", 0.5), ("x1 = 2", 0.75), ("", 1.0), ("   ", 1.0), ("定理", 1.0),
])
def test_letter_ratio(text: str, ratio: float) -> None:
    assert letter_ratio(text) == ratio


@pytest.mark.parametrize(("text", "reasons"), [
    (CLEAN, ()),
    ("数列收敛的充分必要条件是它是柯西数列，单调有界数列必收敛，"
     "收敛数列必有界，这是实数完备性的推论。", ()),
    ("\ue000\ue001\ue002 x", ()),  # under 40 visible characters: never judged
    (CLEAN + " \ue000\ue001", ()),  # two odd glyphs are not yet a pattern
    (CLEAN + " \ue000\ue001\uf8ff", (PRIVATE_USE,)),
    (CLEAN + " \ufffd\ufffd\ufffd", (REPLACEMENT,)),
    (CLEAN + " (cid:3)(cid:14)(cid:15)", (REPLACEMENT,)),
    (CLEAN + " \x10 1 0 \x11 \x12", (REPLACEMENT,)),  # a matrix's brackets without Unicode
    (CLEAN + "\n\tline\r\n", ()),  # line breaks and tabs are no glyphs
    (SOUP + " " + SOUP, (GAPS,)),
    (ZH_SOUP, (GAPS,)),
    (" ".join([CLEAN] * 4) + " a  b  c  d  e", (GAPS,)),  # 4 blanks in 429 characters
    (" ".join([CLEAN] * 5) + " a  b  c  d  e", ()),  # 4 in 535: under 8 per 1,000
    (CLEAN + " a  b  c  d", ()),  # 3 blanks: under MIN_GAPS
    (SYMBOLS, (FEW_LETTERS,)),
    (SYMBOLS + " \ue000\ue001\ue002 \ufffd\ufffd\ufffd", (PRIVATE_USE, REPLACEMENT,
                                                         FEW_LETTERS)),
])
def test_garble_reasons(text: str, reasons: tuple[str, ...]) -> None:
    assert garble_reasons(text) == reasons


# -- sections and the questions made without a model -----------------------------------------


def unit(name: str, page: int | None = None) -> Unit:
    return Unit(name, name.split(" > ")[-1], "", page, ())


@pytest.mark.parametrize(("heading", "topic"), [
    ("2.1 Newton's method", "Newton's method"), ("§ 3 Limits", "Limits"),
    ("IV. Series", "Series"), ("第二章 序列的极限", "序列的极限"), ("第3节导数", "导数"),
    ("Summary:", "Summary"), ("Exercise 1: Bisection", "Exercise 1: Bisection"),
])
def test_topic_of(heading: str, topic: str) -> None:
    assert topic_of(heading) == topic


@pytest.mark.parametrize(("name", "language", "question"), [
    ("Lecture 1 > 2 The bisection method", "en", "What is The bisection method?"),
    ("Riassunto > Il metodo di Newton", "it", "Che cos'è Il metodo di Newton?"),
    ("第一章 函数 > 确界原理", "zh", "什么是确界原理？"),
    ("Notes > Stetige Funktionen", "de-CH", "Was ist Stetige Funktionen?"),
    ("Notes > Stetige Funktionen", "xx", "What is Stetige Funktionen?"),  # English
    ("Konvergenz", "de", "Was ist Konvergenz?"),  # a word alone has no parent to add
    ("Analysis > Konvergenz", "de", "Was ist Konvergenz (Analysis)?"),
    ("Lecture 1 > What is a root?", "en", "What is a root?"),  # already a question
    ("Lecture 1 > How the method works", "en", "How the method works?"),
    ("Riassunto > Che cos'è una radice", "it", "Che cos'è una radice?"),
    ("Lecture 1 > 4 The secant method > 4.2 Example", "en",
     "What is Example (The secant method)?"),  # one word says little
])
def test_heading_question(name: str, language: str, question: str) -> None:
    assert heading_question(unit(name), language) == question


def test_a_repeated_heading_gets_its_parent() -> None:
    units = [unit("Notes > Newton > Summary"), unit("Notes > Secant > Summary"),
             unit("Notes > Newton")]
    repeated = repeated_topics(units)
    assert repeated == frozenset({"Summary"})
    assert heading_question(units[1], "en", repeated) == "What is Summary (Secant)?"
    assert heading_question(Unit("Top > Summary of it all", "Summary of it all", "", None, ()),
                            "en", repeated) == "What is Summary of it all?"


@pytest.mark.parametrize(("text", "sentence"), [
    ("Okay. Bisection always works, but it is slow. Right?",
     "Bisection always works, but it is slow."),
    ("one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
     "fifteen sixteen seventeen eighteen.",
     "one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
     "fifteen sixteen"),
    ("单调有界。数列收敛的充分必要条件是它是柯西数列。", "数列收敛的充分必要条件是它是柯西数列。"),
])
def test_key_sentence(text: str, sentence: str) -> None:
    assert key_sentence(text) == sentence


def row(ordinal: int, path: tuple[str, ...] = (), page: int | None = None) -> ChunkRow:
    return ChunkRow(f"c{ordinal}", f"text {ordinal}", path, Locator(page=page), ordinal, 3, (),
                    f"v{ordinal}")


def test_units_group_by_section_then_page_then_chunk() -> None:
    rows = [row(3, page=2), row(0, ("A",), 1), row(1, ("A",), 1), row(2, ("A", "B"), 1),
            row(4, page=2), row(5)]
    units = units_of(rows)
    assert [(u.name, u.heading, u.locator, u.page, [c.id for c in u.chunks]) for u in units] == [
        ("A", "A", "p. 1", 1, ["c0", "c1"]), ("A > B", "B", "p. 1", 1, ["c2"]),
        ("p. 2", "", "p. 2", 2, ["c3", "c4"]), ("passage 6", "", "", None, ["c5"]),
    ]
    assert units[0].text == "text 0\ntext 1"


def test_sample_evenly() -> None:
    units = [unit(f"s{i}") for i in range(10)]
    assert [u.name for u in sample_evenly(units, 4)] == ["s0", "s2", "s5", "s7"]
    assert sample_evenly(units, 10) == units


@pytest.mark.parametrize(("reply", "question"), [
    ("How does bisection halve the interval?", "How does bisection halve the interval?"),
    ('\n"Question: Why does Newton\'s method fail?"\nIt fails when...',
     "Why does Newton's method fail?"),
    ("什么是柯西数列？", "什么是柯西数列？"),
    ("Q:", ""), ("x" * 300 + "?", ""),
    ("What a pleasure to assist!", ""), ("1.2 The iteration", ""),  # no question
])
def test_clean_question(reply: str, question: str) -> None:
    assert clean_question(reply, 200) == question


def answer(**fields: object) -> Answer:
    base = Answer("Bisection halves the bracket [1].", (), "lecture", "concept", "correct",
                  0.8, "en")
    return Answer(**{**base.__dict__, **fields})  # type: ignore[arg-type]


@pytest.mark.parametrize(("fields", "verdict"), [
    ({}, (True, ())),
    ({"covered": False, "grade": "incorrect"}, (False, ("the tutor did not answer it",))),
    ({"removed": ("It converges in 3 steps.", "Its order is 2.")},
     (False, ("the answer check removed 2 statements",))),
    ({"removed": ("It converges in 3 steps.",), "covered": False},
     (False, ("the tutor did not answer it", "the answer check removed 1 statement"))),
    ({"checked": True}, (True, ())),
])
def test_answer_verdict(fields: dict[str, object], verdict: tuple[bool, tuple[str, ...]]) -> None:
    assert answer_verdict(answer(**fields)) == verdict


# -- the check of a course ---------------------------------------------------------------------


def off(data_dir: Path) -> Settings:
    return load_settings(env={}, data_dir=data_dir, llm_backend="none")


@pytest.fixture
def sample_ws(sample: Sample, sample_store: SQLiteStore,
              embedder: EmbeddingModel) -> Iterator[Workspace]:
    """The sample course with its files and the model off (the check only reads)."""
    yield Workspace(off(sample.db_path.parent), store=sample_store, embedder=embedder)


def test_the_sample_course_finds_its_own_sections(sample_ws: Workspace) -> None:
    report = check_course(Tutor(sample_ws), SAMPLE_COURSE)
    assert report.answered is False and report.k == 5
    assert {d.id: len(d.sections) for d in report.documents} == SAMPLE_SECTIONS
    sections = [s for d in report.documents for s in d.sections]
    assert sum(s.found for s in sections) / len(sections) >= 0.95
    assert {s.passed for s in sections} == {None}
    assert {d.id: {s.asked_by for s in d.sections} for d in report.documents} == {
        **{doc: {"heading"} for doc in SAMPLE_SECTIONS}, "lecture-01-video-srt": {"sentence"}}
    assert all(d.pages_flagged == 0 and d.unchecked == 0 for d in report.documents)
    first = next(d for d in report.documents if d.id == "lecture-02-convergence-pdf")
    assert (first.pages, first.no_text_pages, first.garbled_pages) == (6, (), ())
    for s in sections:
        assert s.problems == (() if s.found else (NOT_FOUND,))
        assert (s.rank is None) == (not s.found) and (s.rank or 1) <= 5


def test_sections_per_document_are_capped(sample_ws: Workspace) -> None:
    report = check_course(Tutor(sample_ws), SAMPLE_COURSE, k=3, max_sections=4)
    assert {d.id: (len(d.sections), d.unchecked) for d in report.documents} == {
        doc: (min(n, 4), max(0, n - 4)) for doc, n in SAMPLE_SECTIONS.items()}
    assert all(s.rank is None or s.rank <= 3 for d in report.documents for s in d.sections)
    data = check_dict(report)
    assert json.loads(json.dumps(data)) == data
    documents: list[dict[str, Any]] = data["documents"]  # type: ignore[assignment]
    assert set(documents[0]) == {
        "id", "title", "type", "pages", "found_share", "passed_share", "pages_flagged",
        "unchecked_sections", "no_text_pages", "garbled_pages", "sections"}


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


SYMBOL_LINE = "= + - * / < > | ~ ^ % $ # @ & _ = + - * / < > | ~ ^ % $ # @ & _"


def test_pages_without_text_and_garbled_text(tmp_path: Path, embedder: EmbeddingModel) -> None:
    pdf = make_pdf(tmp_path / "notes.pdf", [
        ["1 Compactness", "A set of real numbers is compact when it is closed and bounded,",
         "and every sequence in it has a subsequence that converges in the set."],
        [],  # a scanned page: no text layer
        ["2 Tables", *[SYMBOL_LINE] * 4],  # symbols a font left without letters
    ])
    notes = tmp_path / "glyphs.md"
    notes.write_text("# Glyphs\n\n## Matrices\n\n" + CLEAN + " \ue000\ue001\uf8f0 \n",
                     encoding="utf-8")
    with Workspace(off(tmp_path / "data"), embedder=embedder) as ws:
        ws.create_course("analysis", "Analysis", "en")
        ws.ingest("analysis", [(pdf, FileMeta(title="Notes", source_name="notes.pdf")),
                               (notes, FileMeta(title="Glyphs", source_name="glyphs.md"))])
        report = check_course(Tutor(ws), "analysis")
    docs = {d.id: d for d in report.documents}
    pdf_doc, md_doc = docs["notes-pdf"], docs["glyphs-md"]
    assert (pdf_doc.no_text_pages, pdf_doc.garbled_pages) == ((2,), ((3, (FEW_LETTERS,)),))
    assert pdf_doc.pages_flagged == 2
    assert [s.problems for s in pdf_doc.sections] == [(), ()]  # pages are judged per page
    assert (md_doc.no_text_pages, md_doc.garbled_pages, md_doc.pages_flagged) == ((), (), 0)
    [matrices] = [s for s in md_doc.sections if s.name.endswith("Matrices")]
    assert matrices.problems == (PRIVATE_USE,)


MODEL_QUESTION = "How does the bisection method halve the interval?"


class QuestionLLM(ScriptedLLM):
    """The scripted model, writing MODEL_QUESTION when the check asks it for a question."""

    def stream(self, messages: Sequence[Message], params: GenParams) -> Iterator[Delta]:
        if messages[0].content.startswith(prompts.load("check_question")[:40]):
            self.kinds.append("check_question")
            yield Delta(f'"{MODEL_QUESTION}"\n', Usage(20, 9), "stop")
            return
        yield from super().stream(messages, params)


@pytest.mark.prose  # the scripted model writes prose
def test_with_a_model_questions_are_written_and_answered(
        sample: Sample, sample_store: SQLiteStore, embedder: EmbeddingModel) -> None:
    settings = load_settings(env={}, data_dir=sample.db_path.parent, llm_backend="ollama")
    fake = QuestionLLM()
    ws = Workspace(settings, store=sample_store, embedder=embedder)
    report = check_course(Tutor(ws, scripted_router(settings, fake)), SAMPLE_COURSE,
                          max_sections=1)
    assert report.answered is True
    sections = {d.id: d.sections for d in report.documents}
    assert {doc: [(s.question, s.asked_by) for s in found] for doc, found in sections.items()
            } == {doc: [(MODEL_QUESTION, "model")] for doc in SAMPLE_SECTIONS}
    # hidden solutions are not answered: their sections get no verdict
    assert {doc: found[0].passed is None for doc, found in sections.items()} == {
        doc: doc == "solutions-01-md" for doc in SAMPLE_SECTIONS}
    assert fake.kinds.count("check_question") == 6
    assert fake.kinds.count("answer") == 5
    # the check's own turns are erased: no profile, class view or analytics counts them
    assert sample_store.list_sessions(TENANT, SAMPLE_COURSE, CHECK_STUDENT) == []
    assert CHECK_STUDENT not in {p.student for p in sample_store.profiles.for_course(
        TENANT, SAMPLE_COURSE)}


def test_without_answers_the_model_only_writes_questions(
        sample: Sample, sample_store: SQLiteStore, embedder: EmbeddingModel) -> None:
    settings = load_settings(env={}, data_dir=sample.db_path.parent, llm_backend="ollama")
    fake = QuestionLLM()
    ws = Workspace(settings, store=sample_store, embedder=embedder)
    report = check_course(Tutor(ws, scripted_router(settings, fake)), SAMPLE_COURSE,
                          max_sections=2, answer=False)
    assert report.answered is False
    assert set(fake.kinds) == {"check_question"}
    assert {s.passed for d in report.documents for s in d.sections} == {None}


# -- the command ---------------------------------------------------------------------------------


@pytest.fixture
def data_dir(tmp_path: Path, sample: Sample) -> Path:
    copy_db(sample.db_path, tmp_path / "data" / "coursetutor.db")
    return tmp_path / "data"


def run_cli(data_dir: Path, *args: str) -> Any:
    return CliRunner(env={"COURSETUTOR_LLM_BACKEND": "none"}).invoke(
        cli, ["--data-dir", str(data_dir), *args], catch_exceptions=False)


def test_check_command_json(data_dir: Path) -> None:
    result = run_cli(data_dir, "check", "--course", SAMPLE_COURSE, "--sections", "3", "--json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert (report["course"], report["k"], report["answered"]) == (SAMPLE_COURSE, 5, False)
    assert [d["id"] for d in report["documents"]] == sorted(SAMPLE_SECTIONS)
    assert all(len(d["sections"]) == 3 for d in report["documents"])


def test_check_command_table(data_dir: Path) -> None:
    result = run_cli(data_dir, "check", "--course", SAMPLE_COURSE, "--sections", "2")
    assert result.exit_code == 0, result.stderr
    assert f"{SAMPLE_COURSE}: course check (questions from headings; found = in the top 5" \
        in " ".join(result.stdout.split())
    assert "answer passed" not in result.stdout  # nothing was answered


def test_check_command_unknown_course(data_dir: Path) -> None:
    result = run_cli(data_dir, "check", "--course", "nope")
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: ") and result.stderr.count("\n") == 1


# -- the API --------------------------------------------------------------------------------------


@pytest.fixture
def api(sample: Sample, embedder: EmbeddingModel, tmp_path: Path) -> Iterator[Api]:
    with open_api(sample, embedder, tmp_path / "data") as running:
        yield running


def finished(api: Api, who: str, course: str, check_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        reply = api.call(who, "GET", f"/v1/courses/{course}/check/{check_id}")
        assert reply.status_code == 200, reply.text
        if reply.json()["status"] not in ("queued", "running"):
            return dict(reply.json())
        time.sleep(0.2)
    raise AssertionError("the check did not finish")


def test_a_teacher_runs_a_check(api: Api) -> None:
    assert api.call("teacher", "GET", f"/v1/courses/{COURSE}/check").status_code == 404
    started = api.call("teacher", "POST", f"/v1/courses/{COURSE}/check", json={"sections": 2})
    assert started.status_code == 202, started.text
    body = started.json()
    assert body["status"] in ("queued", "running") and body["id"].startswith("c_")
    done = finished(api, "teacher", COURSE, body["id"])
    assert done["status"] == "done", done["error"]
    assert done["sections_done"] == done["sections_total"] == 12
    assert [d["id"] for d in done["report"]["documents"]] == sorted(SAMPLE_SECTIONS)
    latest = api.call("admin", "GET", f"/v1/courses/{COURSE}/check")
    assert latest.status_code == 200 and latest.json() == done


@pytest.mark.parametrize(("who", "method", "path", "status"), [
    ("student", "POST", f"/v1/courses/{COURSE}/check", 403),
    ("student", "GET", f"/v1/courses/{COURSE}/check", 403),
    ("student", "GET", f"/v1/courses/{COURSE}/check/c_0", 403),
    ("teacher_b", "POST", f"/v1/courses/{COURSE}/check", 404),
    ("teacher_b", "GET", f"/v1/courses/{COURSE}/check", 404),
    ("teacher", "POST", f"/v1/courses/{COURSE_B}/check", 404),
    ("teacher", "GET", f"/v1/courses/{COURSE}/check/c_0", 404),
    ("none", "POST", f"/v1/courses/{COURSE}/check", 401),
])
def test_who_may_check(api: Api, who: str, method: str, path: str, status: int) -> None:
    reply = api.call(who, method, path)
    assert reply.status_code == status, reply.text
    assert set(reply.json()["error"]) == {"type", "code", "params", "message", "request_id"}


def test_another_tenant_cannot_read_a_check(api: Api) -> None:
    started = api.call("teacher", "POST", f"/v1/courses/{COURSE}/check", json={"sections": 1})
    check_id = started.json()["id"]
    finished(api, "teacher", COURSE, check_id)
    reply = api.call("teacher_b", "GET", f"/v1/courses/{COURSE}/check/{check_id}")
    assert reply.status_code == 404


@pytest.mark.parametrize("body", [{"k": 0}, {"sections": 201}, {"answers": "maybe"}])
def test_bad_check_options(api: Api, body: dict[str, Any]) -> None:
    reply = api.call("teacher", "POST", f"/v1/courses/{COURSE}/check", json=body)
    assert reply.status_code == 422


@pytest.mark.parametrize(("pages", "text"), [
    ([36, 44, 45, 48, 49, 51, 58], "36, 44-45, 48-49, 51, 58"), (list(range(1, 28)), "1-27"),
    ([3, 1, 2], "1-3"), ([], ""),
])
def test_page_ranges(pages: list[int], text: str) -> None:
    assert page_ranges(pages) == text
