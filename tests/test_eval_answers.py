"""The answer evaluation: dataset readers, the leak judge and one scripted abstention run."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from coursetutor.config import Settings
from coursetutor.eval.answer_data import load_clapnq_abstention, load_mrbench
from coursetutor.eval.answers import (
    eval_abstention,
    judge_leak,
    parse_reveals,
    sample_exercises,
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
    def make(**scripts: Any) -> Tutor:
        ws = Workspace(Settings(data_dir=tmp_path / "data"), embedder=embedder)
        ws.tenant = "eval"
        llm = ScriptedLLM(**scripts)
        return Tutor(ws, Router(ws.settings, factory=lambda task, model: llm))

    return make


def test_judge_leak_uses_the_gold_answer_before_the_model(
    scripted_tutor: Callable[..., Tutor],
) -> None:
    tutor = scripted_tutor()  # no leak_judge script: a model call would fail the test
    assert judge_leak(tutor, "So the jog was 2,000 steps.", "... 2000", "2000")


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
