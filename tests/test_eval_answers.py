"""The answer evaluation: dataset readers, the leak judge and one scripted abstention run."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from coursetutor.cli import cli
from coursetutor.config import Settings
from coursetutor.errors import InputError
from coursetutor.eval.answer_data import (
    Spot,
    load_clapnq_abstention,
    load_coursepack,
    load_mrbench,
)
from coursetutor.eval.answers import (
    eval_abstention,
    eval_coursepack,
    judge_leak,
    parse_reveals,
    sample_exercises,
)
from coursetutor.eval.faithfulness import (
    AnswerScorer,
    content_terms,
    context_precision,
    context_recall,
    overlap,
    terms_found,
)
from coursetutor.llm.router import Router
from coursetutor.retrieval import EmbeddingModel
from coursetutor.tutor import Tutor
from coursetutor.workspace import Workspace

from .support import SAMPLE_DIR
from .test_tutor_turn import ScriptedLLM

PASSAGES = {
    "Eiffel Tower": "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in "
                    "Paris, France. It was designed by the company of Gustave Eiffel and built "
                    "from 1887 to 1889 as the entrance to the 1889 World's Fair.",
    "Photosynthesis": "Photosynthesis is the process by which green plants use sunlight, water "
                      "and carbon dioxide to produce glucose and oxygen in their chloroplasts.",
}


def _clapnq(folder: Path) -> None:
    rows = [
        {"id": "a1", "input": "who designed the eiffel tower",
         "passages": [{"title": "Eiffel Tower", "text": PASSAGES["Eiffel Tower"]}],
         "output": [{"answer": "the company of Gustave Eiffel"}]},
        {"id": "a2", "input": "what do plants produce during photosynthesis",
         "passages": [{"title": "Photosynthesis", "text": PASSAGES["Photosynthesis"]}],
         "output": [{"answer": "glucose and oxygen"}]},
        {"id": "a3", "input": "an answerable-looking row without an answer",
         "passages": [{"title": "Eiffel Tower", "text": PASSAGES["Eiffel Tower"]}],
         "output": [{"answer": ""}]},
    ]
    unans = [{"id": "u1", "input": "who won the 1998 football world cup final",
              "passages": [{"title": "World Cup", "text": "France hosted the 1998 cup."}],
              "output": []}]
    (folder / "clapnq-ans.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    (folder / "clapnq-unans.jsonl").write_text("\n".join(json.dumps(r) for r in unans))


def test_clapnq_reader_pools_only_answerable_passages(tmp_path: Path) -> None:
    _clapnq(tmp_path)
    units, answerable, unanswerable = load_clapnq_abstention(tmp_path)
    assert [u.title for u in units.units] == ["Eiffel Tower", "Photosynthesis"]
    assert [(q.id, sorted(q.gold)) for q in answerable] == [("a1", ["u0"]), ("a2", ["u1"])]
    assert [(q.id, q.gold) for q in unanswerable] == [("u1", frozenset())]


def test_mrbench_reader_keeps_dialogues_ending_with_the_student(tmp_path: Path) -> None:
    history = ("Tutor: Hi, could you solve this? The question is: Tom has 3 apples and buys 4. "
               "How many now?\n Student: 7 apples.\n Tutor: How did you get it?\n Student: I "
               "added 3 and 4.")
    rows = [
        {"conversation_id": "c1", "conversation_history": history,
         "Ground_Truth_Solution": "3 + 4 = 7\n 7", "anno_llm_responses": {}},
        {"conversation_id": "c2", "conversation_history": history + "\n Tutor: Good.",
         "Ground_Truth_Solution": "7", "anno_llm_responses": {}},
    ]
    path = tmp_path / "mrbench.json"
    path.write_text(json.dumps(rows))
    [d] = load_mrbench(path)
    assert (d.id, d.problem, d.final_answer) == (
        "c1", "Tom has 3 apples and buys 4. How many now?", "7")
    assert d.turns == [("7 apples.", "How did you get it?")]
    assert d.last_student == "I added 3 and 4."



def test_mrbench_reader_reads_a_lesson_under_way(tmp_path: Path) -> None:
    # a Bridge dialogue: no problem stated, the tutor's messages in a row, the student's
    # last one answering the tutor's last question
    history = ("Tutor: Do you understand that step?\u00a0\n\u00a0Tutor: Next, we have to "
               "multiply 6 and 26.\u00a0\n\u00a0Tutor: What is the product of 26 and 6?"
               "\u00a0\n\u00a0Student: 4")
    opened = ("Student: sorry for the typo\n Tutor: Not an issue.\n Tutor: How many times "
              "1000 goes into 7000?\n Student: it cant")
    rows = [{"conversation_id": n, "conversation_history": h,
             "Ground_Truth_Solution": "Not Available", "anno_llm_responses": {}}
            for n, h in (("b1", history), ("b2", opened))]
    path = tmp_path / "mrbench.json"
    path.write_text(json.dumps(rows))
    first, second = load_mrbench(path)
    said = ("Do you understand that step? Next, we have to multiply 6 and 26. What is the "
            "product of 26 and 6?")
    assert (first.problem, first.turns, first.last_student) == (said, [("", said)], "4")
    asked = "Not an issue. How many times 1000 goes into 7000?"
    assert (second.problem, second.turns) == (asked, [("sorry for the typo", asked)])


def test_sample_exercises_pair_each_exercise_with_its_solution() -> None:
    pairs = sample_exercises(SAMPLE_DIR)
    assert sorted(pairs) == ["1", "2", "3", "4"]
    assert "cos(x) = x" in pairs["2"][0] and "0.7390851332" in pairs["2"][1]


@pytest.mark.parametrize(("raw", "expected"), [
    ('{"reveals": true}', True), ('{"reveals": false}', False), ("garbage", False),
])
def test_parse_reveals(raw: str, expected: bool) -> None:
    assert parse_reveals(raw) is expected


@pytest.fixture
def scripted_tutor(tmp_path: Path, embedder: EmbeddingModel) -> Callable[..., Tutor]:
    def make(settings: dict[str, Any] | None = None, **scripts: Any) -> Tutor:
        ws = Workspace(Settings(data_dir=tmp_path / "data", **(settings or {})),
                       embedder=embedder)
        ws.tenant = "eval"
        llm = ScriptedLLM(**scripts)
        return Tutor(ws, Router(ws.settings, factory=lambda task, model: llm))

    return make


def test_judge_leak_uses_the_gold_answer_before_the_model(
    scripted_tutor: Callable[..., Tutor],
) -> None:
    tutor = scripted_tutor()  # no leak_judge script: a model call would fail the test
    assert judge_leak(tutor, "So the jog was 2,000 steps.", "... 2000", "2000")


@pytest.mark.prose  # the scripted model writes prose
def test_abstention_run_reports_every_figure(tmp_path: Path,
                                             scripted_tutor: Callable[..., Tutor]) -> None:
    _clapnq(tmp_path)
    tutor = scripted_tutor(answer=["Gustave Eiffel's company designed it [1].",
                                   "Glucose and oxygen [1]."])
    result = eval_abstention(tutor, tmp_path, limit=None)
    assert (result["answerable"], result["unanswerable"]) == (2, 1)
    assert result["answer_rate"] == 1.0
    assert result["citation_accuracy"] == 1.0
    assert result["answers_citing_outside_context"] == 0
    assert result["abstain_rate"] == 1.0
    assert result["evidence_auroc"] == 1.0
    assert result["misses"] == []


# --- per-answer metrics -----------------------------------------------------------------------

def test_context_precision_weights_early_gold_chunks() -> None:
    assert context_precision([True, False, False]) == 1.0
    assert context_precision([False, True]) == 0.5
    assert context_precision([True, False, True]) == round((1 + 2 / 3) / 2, 4)
    assert context_precision([False, False]) == 0.0


def test_context_recall_counts_gold_places_found() -> None:
    def at(page: int) -> Callable[[int], bool]:
        return lambda chunk: chunk == page

    assert context_recall([at(3), at(9)], [1, 3, 4]) == 0.5
    assert context_recall([at(3)], [3]) == 1.0
    with pytest.raises(ValueError):
        context_recall([], [3])


def test_terms_found_ignores_thousands_separators() -> None:
    assert terms_found("BERT read 11000 books and 1.2 million images", ["11,000", "1.2"]) == 1.0
    assert terms_found("about seventy percent", ["70", "86"]) == 0.0
    assert terms_found("anything", []) is None


def test_content_terms_drop_short_words_but_keep_numbers_and_cjk() -> None:
    assert content_terms("The step is 1 [2]", "en") == {"step", "1"}
    assert "发散" in content_terms("可能发散", "zh")
    assert overlap({"a", "b"}, {"a"}) == 0.5 and overlap(set(), {"a"}) == 0.0


def test_scorer_flags_a_number_absent_from_the_sources(embedder: EmbeddingModel) -> None:
    scorer = AnswerScorer(embedder)
    source = ["Newton-Raphson only needs one iteration for quadratic forms."]
    right = scorer.check_claims("Newton-Raphson only needs one iteration for quadratic forms [1].",
                                source, "How many iterations?", "en")
    wrong = scorer.check_claims("Newton-Raphson needs 7 iterations for quadratic forms [1]. "
                                "Which step is unclear?", source, "How many iterations?", "en")
    assert [c.supported for c in right] == [True]
    assert len(wrong) == 1 and wrong[0].missing == ("7",) and not wrong[0].supported
    assert scorer.relevance("How many iterations?", "One iteration [1].") > scorer.relevance(
        "How many iterations?", "Paris is the capital of France.")


@pytest.mark.prose  # the scripted model writes prose
def test_abstention_records_carry_the_new_metrics(tmp_path: Path,
                                                  scripted_tutor: Callable[..., Tutor]) -> None:
    _clapnq(tmp_path)
    tutor = scripted_tutor({"answer_check": False},
                           answer=["Gustave Eiffel's company designed it in 1921 [1].",
                                   "Glucose and oxygen [1]."])
    result = eval_abstention(tutor, tmp_path, limit=None)
    records = {r["id"]: r for r in result["records"]}
    assert records["a1"]["unsupported"] == ["1921"] and records["a1"]["faithfulness"] == 0.0
    assert records["a2"]["faithfulness"] == 1.0 and records["a2"]["unsupported_terms"] == 0
    assert records["a2"]["context_recall"] == 1.0 and records["a2"]["cited_gold"] is True
    assert records["u1"]["outcome"] == "declined" and records["u1"]["faithfulness"] is None
    m = result["metrics"]
    assert (m["faithfulness"], m["unsupported_terms"], m["answers_with_unsupported_terms"]) == (
        0.5, 1, 1)
    assert (m["wrongly_declined"], m["wrongly_answered"]) == (0.0, 0.0)
    assert m["outcomes"] == {"answered": 2, "declined": 1}
    assert 0 < m["answer_relevance"] <= 1


# --- the course-pack question set -------------------------------------------------------------

QUESTION_SET = Path(__file__).parent / "data" / "coursepack_questions.json"
PACK = Path(__file__).resolve().parents[1].parent / "shared" / "course-pack"


def _placeholder_pack(root: Path) -> Path:
    """Empty files with the pack's names: enough for the loader, which only checks they exist."""
    data = json.loads(QUESTION_SET.read_text(encoding="utf-8"))
    for course in data["courses"].values():
        for f in course["files"]:
            for name in filter(None, (f["path"], f.get("source"))):
                (root / name).parent.mkdir(parents=True, exist_ok=True)
                (root / name).touch()
    return root


def test_the_question_set_covers_languages_kinds_and_gold_places(tmp_path: Path) -> None:
    courses, asked = load_coursepack(QUESTION_SET, _placeholder_pack(tmp_path))
    assert {c.id: c.language for c in courses} == {"optml": "en", "analisi": "it",
                                                   "shuxue": "zh"}
    assert len(asked) >= 40 and len({q.id for q in asked}) == len(asked)
    by_language = Counter(q.language for q in asked)
    assert by_language["en"] >= 6 and min(by_language[x] for x in ("it", "zh", "ko")) >= 6
    kinds = Counter(q.kind for q in asked)
    assert kinds["unanswerable"] >= 8 and kinds["formula"] and kinds["exercise_answer"]
    assert kinds["exercise_why"]
    assert any(s.seconds for q in asked for s in q.gold)  # the transcript
    assert all(q.answer for q in asked if q.answerable)
    files = {p.name for c in courses for p, _ in c.files}
    assert all(Path(s.file).name in files for q in asked for s in q.gold)


@pytest.mark.skipif(not PACK.is_dir(), reason="the course pack (../shared/course-pack) is absent")
def test_the_question_set_gold_pages_exist_in_the_pack() -> None:
    manifest = {e["file"]: e for e in json.loads((PACK / "manifest.json").read_text())}
    _, asked = load_coursepack(QUESTION_SET, PACK)
    for q in asked:
        for s in q.gold:
            entry = manifest[s.file]
            if s.seconds:
                assert 0 <= s.seconds[0] < s.seconds[1] <= entry["end_seconds"], q.id
            else:
                assert s.pages and max(s.pages) <= entry["pages"], q.id


def test_load_coursepack_errors_are_specific(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no course pack folder"):
        load_coursepack(QUESTION_SET, tmp_path / "absent")
    with pytest.raises(InputError, match="file of the course pack is missing"):
        load_coursepack(QUESTION_SET, tmp_path)
    bad = tmp_path / "q.json"
    bad.write_text(json.dumps({"courses": {}, "questions": [{"id": "x"}]}))
    with pytest.raises(InputError, match="not a course-pack question set"):
        load_coursepack(bad, tmp_path)


def test_a_pack_file_carries_its_source_and_a_missing_source_is_named(tmp_path: Path) -> None:
    courses, _ = load_coursepack(QUESTION_SET, _placeholder_pack(tmp_path))
    sourced = {p.name: Path(m.source).name for c in courses for p, m in c.files if m.source}
    assert sourced["05_unimib_analisi-matematica_appunti_it.pdf"] == "analisi.tex"
    assert sourced["06_pku_mathematical-analysis-I_notes_zh.pdf"] == "final.md"
    (tmp_path / "sources" / "unimib-analisi" / "analisi.tex").unlink()
    with pytest.raises(InputError, match=r"analisi\.tex: the source of a file"):
        load_coursepack(QUESTION_SET, tmp_path)


MARKDOWN_NOTES = "# Series\n\nThe geometric series sums to $\\frac{1}{1-q}$ when |q| < 1.\n"


def test_without_sources_the_pack_goes_into_courses_of_its_own(
    tmp_path: Path, scripted_tutor: Callable[..., Tutor],
) -> None:
    pack = tmp_path / "pack"
    (pack / "notes").mkdir(parents=True)
    (pack / "notes" / "series.md").write_text(MARKDOWN_NOTES)
    (pack / "notes" / "series-source.md").write_text(MARKDOWN_NOTES)
    questions = tmp_path / "q.json"
    questions.write_text(json.dumps({
        "courses": {"notes": {"title": "Notes", "language": "en", "files": [
            {"path": "notes/series.md", "source": "notes/series-source.md"}]},
            "other": {"title": "Other", "language": "en", "files": [
                {"path": "notes/series.md"}]}},
        "questions": [
            {"id": "q1", "course": "notes", "language": "en", "kind": "formula",
             "question": "What does the geometric series sum to?",
             "gold": [{"file": "notes/series.md", "pages": [1]}], "answer": "1/(1-q)"},
            {"id": "q2", "course": "other", "language": "en", "kind": "formula",
             "question": "What does the geometric series sum to?",
             "gold": [{"file": "notes/series.md", "pages": [1]}], "answer": "1/(1-q)"}]}))
    # a prose reply: the notes are LaTeX maths, which `auto` would answer in statements
    tutor = scripted_tutor({"answer_style": "prose"},
                           answer=["It sums to 1/(1−q) when |q| < 1 [1]."])
    seen: list[tuple[str, list[str]]] = []
    ingest = tutor.ws.ingest

    def spy(course: str, items: Any, progress: Any = None) -> Any:
        seen.append((course, [m.source for _, m in items]))
        return ingest(course, items, progress)

    tutor.ws.ingest = spy  # type: ignore[method-assign]
    result = eval_coursepack(tutor, questions, pack, limit=None, sources=False, only=("notes",))
    assert [r["id"] for r in result["records"]] == ["q1"]
    assert seen == [("eval-pack-notes-pdf", [""])]
    with pytest.raises(InputError, match="no course absent"):
        eval_coursepack(tutor, questions, pack, limit=None, only=("absent",))


def test_spot_matches_pages_and_overlapping_seconds() -> None:
    page = Spot("pdf/a.pdf", frozenset({3, 4}))
    assert page.holds("a.pdf", 3, None, None) and not page.holds("a.pdf", 5, None, None)
    assert not page.holds("b.pdf", 3, None, None)
    span = Spot("t.srt", seconds=(10.0, 20.0))
    assert span.holds("t.srt", None, 15.0, 40.0) and not span.holds("t.srt", None, 20.0, 30.0)


SRT = """1
00:00:01,000 --> 00:00:06,000
Transfer learning reuses the knowledge of a model trained on another task.

2
00:00:40,000 --> 00:00:46,000
ImageNet holds 1.2 million images with 1000 labels.
"""


@pytest.mark.prose  # the scripted model writes prose
def test_coursepack_run_scores_each_question(tmp_path: Path,
                                             scripted_tutor: Callable[..., Tutor]) -> None:
    pack = tmp_path / "pack"
    (pack / "transcripts").mkdir(parents=True)
    (pack / "transcripts" / "talk.srt").write_text(SRT)
    questions = tmp_path / "q.json"
    questions.write_text(json.dumps({
        "courses": {"talk": {"title": "Talk", "language": "en",
                             "files": [{"path": "transcripts/talk.srt", "type": "transcript"}]}},
        "questions": [
            {"id": "q1", "course": "talk", "language": "en", "kind": "concept",
             "question": "How many images does ImageNet hold?",
             "gold": [{"file": "transcripts/talk.srt", "seconds": [40, 46]}],
             "answer": "1.2 million", "terms": ["1.2"]},
            {"id": "u1", "course": "talk", "language": "en", "kind": "unanswerable",
             "question": "Who won the 1998 football world cup final?", "gold": [],
             "answer": ""},
        ]}))
    tutor = scripted_tutor(answer=["ImageNet holds 1.2 million images [1]."])
    result = eval_coursepack(tutor, questions, pack, limit=None)
    q1, u1 = result["records"]
    assert (q1["id"], q1["kind"], q1["outcome"], q1["terms_found"]) == (
        "q1", "concept", "answered", 1.0)
    assert q1["context_recall"] == 1.0 and q1["faithfulness"] == 1.0
    assert (u1["outcome"], u1["wrongly_answered"]) == ("declined", False)
    assert result["by_language"]["en"]["questions"] == 2
    # the text streamed before the check is kept and scored beside the checked reply
    assert q1["draft"] == "ImageNet holds 1.2 million images [1]."
    assert q1["draft_faithfulness"] == 1.0 and q1["draft_unsupported_terms"] == 0
    assert q1["context_ids"]
    assert result["metrics"]["draft_faithfulness"] == 1.0


@pytest.mark.prose  # the scripted model writes prose
def test_the_draft_is_scored_against_what_it_cited(
    tmp_path: Path, scripted_tutor: Callable[..., Tutor],
) -> None:
    pack = tmp_path / "pack"
    (pack / "transcripts").mkdir(parents=True)
    (pack / "transcripts" / "talk.srt").write_text(SRT)
    questions = tmp_path / "q.json"
    questions.write_text(json.dumps({
        "courses": {"talk": {"title": "Talk", "language": "en",
                             "files": [{"path": "transcripts/talk.srt", "type": "transcript"}]}},
        "questions": [
            {"id": "q1", "course": "talk", "language": "en", "kind": "concept",
             "question": "How many images does ImageNet hold?",
             "gold": [{"file": "transcripts/talk.srt", "seconds": [40, 46]}],
             "answer": "1.2 million", "terms": ["1.2"]}]}))
    tutor = scripted_tutor(answer=["ImageNet holds 1.2 million images [1]. It was made in "
                                   "1907 by 45 people [1]."])
    result = eval_coursepack(tutor, questions, pack, limit=None)
    [q1] = result["records"]
    # the check took the invented sentence out; the draft still holds it
    assert q1["removed"] == 1 and q1["unsupported_terms"] == 0
    assert q1["draft_unsupported_terms"] == 2 and q1["draft_faithfulness"] == 0.5
    assert result["metrics"]["draft_answers_with_unsupported_terms"] == 1


@pytest.mark.prose  # the scripted model writes prose
def test_with_the_answer_check_no_unsupported_number_reaches_the_record(
    tmp_path: Path, scripted_tutor: Callable[..., Tutor],
) -> None:
    _clapnq(tmp_path)
    tutor = scripted_tutor(answer=["Gustave Eiffel's company designed it in 1921 [1].",
                                   "Glucose and oxygen [1]."])
    result = eval_abstention(tutor, tmp_path, limit=None)
    a1 = next(r for r in result["records"] if r["id"] == "a1")
    assert a1["checked"] and a1["removed"] >= 1
    assert a1["unsupported_terms"] == 0 and a1["faithfulness"] == 1.0
    assert result["metrics"]["removed_claims"] >= 1


@pytest.mark.parametrize(("args", "message"), [
    (["--suite", "coursepack"], "--pack DIR"),
    (["--suite", "abstention"], "--data DIR"),
    (["--suite", "coursepack", "--pack", ".", "--questions", "pyproject.toml"],
     "pyproject.toml: cannot read"),
])
def test_eval_answers_names_what_a_suite_is_missing(tmp_path: Path, args: list[str],
                                                    message: str) -> None:
    result = CliRunner().invoke(cli, ["--data-dir", str(tmp_path), "eval", "answers", *args])
    assert result.exit_code != 0
    assert message in result.output and result.output.count("Error:") == 1


def test_a_claim_in_unicode_maths_is_backed_by_its_latex_source(embedder: EmbeddingModel) -> None:
    scorer = AnswerScorer(embedder)
    source = ["5.2.3 Serie armonica\n$$\\sum_{n=1}^{+\\infty} \\frac{1}{n} \\mbox{ diverge}$$"]
    for claim in ("La serie armonica $\\sum_{n=1}^{+\\infty} \\frac{1}{n}$ diverge [1].",
                  "La serie armonica diverge [1]."):
        (check,) = scorer.check_claims(claim, source, "La serie armonica converge?", "it")
        assert check.supported, check


def test_a_quoted_line_is_judged_without_its_quotation_mark(embedder: EmbeddingModel) -> None:
    source = ["若单调上升的{αn}有上界,则其收敛且limn→∞αn=supαn."]
    reply = "课程材料原文如下：\n> 若单调上升的{αn}有上界,则其收敛且limn→∞αn=supαn. [1]"
    checks = AnswerScorer(embedder).check_claims(reply, source, "?", "zh")
    assert [(c.missing, c.supported) for c in checks] == [((), True)]


def test_a_split_of_the_question_set_names_known_questions() -> None:
    from coursetutor.eval.answers import split_ids

    questions = Path(__file__).parent / "data" / "coursepack_questions.json"
    known = {q["id"] for q in json.loads(questions.read_text(encoding="utf-8"))["questions"]}
    tuning = split_ids(questions, "statements-tuning")
    heldout = split_ids(questions, "statements-heldout")
    assert (len(tuning), len(heldout)) == (20, 25)
    assert tuning <= known and heldout <= known and not tuning & heldout
    exercises = split_ids(questions, "exercises")  # the exercise questions, in no other
    assert len(exercises) == 9 and not exercises & (tuning | heldout)
    with pytest.raises(InputError, match="no split 'other' \\(splits: exercises, "
                                         "statements-heldout, statements-tuning\\)"):
        split_ids(questions, "other")


@pytest.mark.parametrize(("text", "language", "empty"), [
    ("[1] [2] [3]", "it", True),
    ("Sì [1].", "it", True),
    ("压缩映像证明了 $|a|<1$ 的情形。 [1]", "zh", False),  # ten characters say something
    ("见 [1]。", "zh", True),
    ("The method halves the interval [1].", "en", False),
])
def test_an_empty_reply_counts_letters_and_characters(text: str, language: str,
                                                      empty: bool) -> None:
    from coursetutor.eval.answers import _empty
    from coursetutor.types import Answer

    answer = Answer(text, (), "lecture", "concept", "correct", 0.6, language)
    assert _empty(answer) is empty
