"""The faces of mastery: `search --explain --student`, `ask --explain`'s lines, `mastery
params`, `eval retrieval --profile` and `eval memory` (MathDial, with a scripted judge)."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from rich.console import Console

from coursetutor.cli import cli
from coursetutor.cli.render import answer as render_answer
from coursetutor.config import Settings
from coursetutor.eval import memory
from coursetutor.llm.base import LLM, Delta, GenParams, Message, Usage
from coursetutor.llm.router import Router
from coursetutor.store import SQLiteStore
from coursetutor.types import Answer, Citation, Locator

from .support import SAMPLE_COURSE, TENANT, Sample, copy_db
from .test_eval import tiny_xquadr

QUESTION = "How does the bisection method work?"


@pytest.fixture(autouse=True)
def _no_config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def data_dir(tmp_path: Path, sample: Sample) -> Path:
    copy_db(sample.db_path, tmp_path / "data" / "coursetutor.db")
    return tmp_path / "data"


def run(data_dir: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--data-dir", str(data_dir), *args],
                              catch_exceptions=False)


# -- search --explain --student ------------------------------------------------------------


def test_search_with_a_students_profile_explains_the_moves(data_dir: Path) -> None:
    store = SQLiteStore(data_dir / "coursetutor.db")
    store.mastery.add_weak_area(TENANT, SAMPLE_COURSE, "ada", "newton's method",
                                "Starts Newton's iteration where f'(x) is zero.", "s1:1")
    store.close()
    plain = json.loads(run(data_dir, "search", QUESTION, "--course", SAMPLE_COURSE,
                           "--json").stdout)
    adapted = json.loads(run(data_dir, "search", QUESTION, "--course", SAMPLE_COURSE,
                             "--student", "ada", "--json").stdout)
    newcomer = json.loads(run(data_dir, "search", QUESTION, "--course", SAMPLE_COURSE,
                              "--student", "bob", "--json").stdout)
    assert newcomer == plain  # an empty profile: today's ranking, to the byte
    assert all(h["explain"] == [] for h in plain)
    moved = [h for h in adapted if h["explain"]]
    assert moved and all(h["explain"] == ["weak area newton's method: x1.5"] for h in moved)
    before = {h["chunk_id"]: h["score"] for h in plain}
    assert all(h["score"] == pytest.approx(before[h["chunk_id"]] * 1.5, rel=1e-5)
               for h in moved)
    text = run(data_dir, "search", QUESTION, "--course", SAMPLE_COURSE, "--student", "ada",
               "--explain").stdout
    assert "weak area newton's method: x1.5" in text and "score " in text


# -- ask --explain -------------------------------------------------------------------------


def test_explain_lines_name_the_cited_source(monkeypatch: pytest.MonkeyPatch) -> None:
    buffer = io.StringIO()
    monkeypatch.setattr(render_answer, "out", Console(file=buffer, width=200))
    cited = Citation(1, "c1", "d", "Lecture", "lecture", Locator(page=2), "text")
    answer = Answer("Text [1].", (cited,), "lecture", "concept", "correct", 0.9, "en",
                    context=("c1", "c2"), explain=(("c1", ("weak area Limits: x1.5",)),
                                                   ("c2", ("mastered Series: x0.7",))))
    render_answer.print_explain(answer)
    assert buffer.getvalue().splitlines()[-2:] == [
        "  [1]: weak area Limits: x1.5", "  source 2: mastered Series: x0.7"]


# -- mastery params ------------------------------------------------------------------------


def test_mastery_params_show_set_and_reset(data_dir: Path) -> None:
    shown = run(data_dir, "mastery", "params", "--course", SAMPLE_COURSE, "--json")
    assert json.loads(shown.stdout) == {"course": SAMPLE_COURSE, "source": "settings",
                                        "prior": 0.3, "learn": 0.1, "slip": 0.1, "guess": 0.2}
    run(data_dir, "mastery", "params", "--course", SAMPLE_COURSE, "--slip", "0.05")
    shown = run(data_dir, "mastery", "params", "--course", SAMPLE_COURSE)
    assert shown.stdout == (f"{SAMPLE_COURSE}: prior 0.3, learn 0.1, slip 0.05, guess 0.2 "
                            "(the course's own); mastered at 0.95\n")
    shown = run(data_dir, "mastery", "params", "--course", SAMPLE_COURSE, "--reset", "--json")
    assert json.loads(shown.stdout)["source"] == "settings"


@pytest.mark.parametrize(("args", "message"), [
    (["--course", "nope"], "course 'nope' does not exist"),
    (["--course", SAMPLE_COURSE, "--guess", "0.95"], "BKT slip + guess must be below 1, got "
                                                     "1.05"),
    (["--course", SAMPLE_COURSE, "--reset", "--prior", "0.2"],
     "--reset takes no parameter values"),
])
def test_mastery_params_errors(data_dir: Path, args: list[str], message: str) -> None:
    result = run(data_dir, "mastery", "params", *args)
    assert (result.exit_code, result.stderr) == (1, f"Error: {message}\n")


# -- eval retrieval --profile --------------------------------------------------------------


def test_eval_retrieval_with_an_empty_profile_changes_nothing(tmp_path: Path) -> None:
    path = tiny_xquadr(tmp_path / "xquadr-en.json")
    result = run(tmp_path / "data", "eval", "retrieval", "--dataset", "xquadr", "--path",
                 str(path), "--profile", "newcomer", "--json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["hybrid_profile"] == {**report["hybrid"], "rankings_changed": 0}


# -- eval memory ---------------------------------------------------------------------------


class Judge(LLM):
    """Diagnoses every student as confusing addition and subtraction (the first one right);
    judges 'same' when both descriptions mention subtracting."""

    backend = "scripted"

    def __init__(self) -> None:
        super().__init__("judge-model")
        self.diagnosed = 0

    @classmethod
    def from_settings(cls, settings: Settings, model: str) -> Judge:
        return cls()

    def stream(self, messages: Sequence[Message], params: GenParams) -> Iterator[Delta]:
        prompt = messages[-1].content
        if prompt.startswith("You check a student's answer"):
            self.diagnosed += 1
            text = (json.dumps({"answered": True, "correct": True, "topic": memory.TOPIC})
                    if self.diagnosed == 1 else
                    json.dumps({"answered": True, "correct": False, "topic": memory.TOPIC,
                                "misconception": "Subtracts the used spoons instead of adding "
                                                 "them."}))
        else:
            teacher = prompt.split("Teacher's description: ", 1)[1].split("\n", 1)[0]
            other = prompt.split("Other description: ", 1)[1].split("\n", 1)[0]
            same = "subtract" in teacher.lower() and "subtract" in other.lower()
            text = json.dumps({"same": same})
        yield Delta(text)
        yield Delta(usage=Usage(len(prompt.split()), 5), finish="stop")


def mathdial_file(path: Path) -> Path:
    rows = [{"qid": n, "question": f"Problem {n}", "ground_truth": "12 + 3 = 15",
             "student_incorrect_solution": "12 - 3 = 9",
             "teacher_described_confusion": confusion}
            for n, confusion in enumerate(["subtracting instead of adding",
                                           "subtracted the spoons", "miscalculation"])]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def test_run_mathdial_scores_the_diagnosis_and_the_baseline(tmp_path: Path) -> None:
    items = memory.load_mathdial(mathdial_file(tmp_path / "md.jsonl"))
    judge = Judge()
    router = Router(Settings(), factory=lambda task, model: judge)
    out = io.StringIO()
    result = memory.run_mathdial(router, items, out)
    assert {k: result[k] for k in ("items", "judge", "agreement", "baseline_agreement",
                                   "verdicts")} == {
        "items": 3, "judge": {"backend": "scripted", "model": "judge-model"},
        "agreement": round(1 / 3, 3), "baseline_agreement": 0.0,
        "verdicts": {"misconception": 2, "correct": 1, "no answer read": 0}}
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [(r["qid"], r["verdict"], r["agrees"], r["baseline_agrees"]) for r in records] == [
        ("0", "correct", False, False), ("1", "misconception", True, False),
        ("2", "misconception", False, False)]
    assert records[1]["predicted"] == "Subtracts the used spoons instead of adding them."
    assert memory.load_mathdial(tmp_path / "md.jsonl", limit=2)[-1].qid == "1"


@pytest.mark.parametrize(("raw", "same"), [('{"same": true}', True), ('{"same": false}', False),
                                           ('{"same": "yes"}', False), ("yes", False)])
def test_parse_same(raw: str, same: bool) -> None:
    assert memory.parse_same(raw) is same


@pytest.mark.parametrize(("args", "message"), [
    ([], "give --data DIR (the datasets folder) or --mathdial FILE"),
])
def test_eval_memory_needs_its_data(tmp_path: Path, args: list[str], message: str) -> None:
    result = run(tmp_path / "data", "eval", "memory", *args)
    assert (result.exit_code, result.stderr) == (1, f"Error: {message}\n")


def test_eval_memory_refuses_a_file_of_another_shape(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"qid": 1}\n', encoding="utf-8")
    result = run(tmp_path / "data", "eval", "memory", "--mathdial", str(bad))
    assert result.exit_code == 1
    assert result.stderr == f"Error: {bad}: not a MathDial file (missing 'question')\n"


def test_eval_memory_on_the_dev_set_file_reads_it() -> None:
    folder = Path(__file__).resolve().parents[2] / "shared" / "datasets"
    if not (folder / "mathdial-dev.jsonl").is_file():
        pytest.skip("../shared/datasets/mathdial-dev.jsonl is absent")
    items = memory.load_mathdial(folder / "mathdial-dev.jsonl", limit=5)
    assert len(items) == 5 and all(i.problem and i.student_solution and i.confusion
                                   for i in items)

