"""The CJK keyword weight: its rule (exact values) and `coursetutor eval fusion`, which
chooses it leave-one-dataset-out on saved candidate lists."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from coursetutor.cli import cli
from coursetutor.eval import cjk_fusion
from coursetutor.eval.cjk_fusion import Score, choose, objective, ranked_flags, sample_articles
from coursetutor.eval.datasets import Question, Unit, UnitSet
from coursetutor.scoring.fusion import (
    CJK_RULE,
    CjkRule,
    Features,
    adaptive_keyword_weight,
    list_weights,
    standout,
)

DATASETS = Path(__file__).resolve().parents[2] / "shared" / "datasets"


@pytest.mark.parametrize(("scores", "expected"), [
    ([3.0, 1.0, 1.0, 1.0], 2.0 / math.sqrt(0.75)),  # mean 1.5, sd sqrt(0.75)
    ([1.0, 3.0, 2.0], 1.0 / math.sqrt(2.0 / 3.0)),  # order does not matter
    ([2.0, 2.0, 1.0], 0.0),  # a tie at the top stands out by nothing
    ([5.0, 5.0], 0.0),
    ([4.0], 0.0),
    ([], 0.0),
])
def test_standout(scores: list[float], expected: float) -> None:
    assert standout([(str(i), s) for i, s in enumerate(scores)]) == pytest.approx(
        expected, rel=1e-12)


@pytest.mark.parametrize(("rule", "evidence", "lead", "weight"), [
    (CjkRule(1.5, 0.0, 1.0), 0.5, 3.0, 1.5 * 0.5 ** 0.7),
    (CjkRule(1.5, 0.0, 1.0), 0.9, 0.0, 1.0),  # capped
    (CjkRule(2.0, 0.5, 3.0), 0.5, 1.0, 2.0 * 0.5 ** 0.7 * 1.5),
    (CjkRule(2.0, 0.5, 3.0), 1.0, 4.0, 3.0),  # 2 * 3 = 6, capped at 3
    (CjkRule(2.0, 0.5, 3.0), 0.0, 4.0, 0.0),  # no evidence: no keyword list
    (CjkRule(2.0, 0.5, 3.0), -0.2, 1.0, 0.0),
])
def test_cjk_keyword_weight(rule: CjkRule, evidence: float, lead: float, weight: float) -> None:
    assert adaptive_keyword_weight(evidence, True, lead, rule) == pytest.approx(weight, rel=1e-12)
    # words keep min(1, evidence^0.7), whatever the CJK rule
    assert adaptive_keyword_weight(evidence, False, lead, rule) == pytest.approx(
        min(1.0, max(0.0, evidence) ** 0.7), rel=1e-12)


def test_list_weights_read_the_keyword_list_s_standout() -> None:
    lists = {"vector": [("a", 0.9), ("b", 0.8)],
             "bm25": [("a", 3.0), ("b", 1.0), ("c", 1.0), ("d", 1.0)]}
    rule = CjkRule(2.0, 0.5, 5.0)
    lead = 2.0 / math.sqrt(0.75)
    assert list_weights(lists, Features(0.5, cjk=True), rule=rule) == {
        "vector": 1.0, "bm25": pytest.approx(2.0 * 0.5 ** 0.7 * (1 + 0.5 * lead), rel=1e-12)}
    assert list_weights(lists, Features(0.5), rule=rule) == {
        "vector": 1.0, "bm25": pytest.approx(0.5 ** 0.7, rel=1e-12)}
    assert list_weights(lists, Features(0.1, translated=True, cjk=True), rule=rule) == {
        "vector": 1.0, "bm25": 1.0}


def test_sample_articles_takes_whole_articles_in_a_fixed_order() -> None:
    units = [Unit(f"{t}{i}", f"{t}{i}", t, f"text {t}{i}") for t in "abcdef" for i in range(3)]
    questions = [Question(f"q-{u.id}", "?", frozenset({u.id})) for u in units]
    full = UnitSet("zh", units, questions)
    picked = sample_articles(full, 5)
    titles = {u.title for u in picked.units}
    assert len(titles) == 2 and len(picked.units) == 6  # whole articles, past 5 paragraphs
    assert {q.id for q in picked.questions} == {f"q-{u.id}" for u in picked.units}
    assert sample_articles(full, 5) == picked
    assert sample_articles(full, None) is full


def test_ranked_flags_drop_identical_texts() -> None:
    row = {"hit": {"a": False, "b": True, "c": True}, "hash": {"a": "h1", "b": "h1", "c": "h2"}}
    assert ranked_flags(row, [("a", 3.0), ("b", 2.0), ("x", 1.5), ("c", 1.0)]) == [False, True]


def test_objective_counts_the_bar_then_the_lead() -> None:
    bm25 = Score(0.90, 0.95)
    assert objective([(Score(0.899, 0.9), bm25), (Score(0.95, 0.97), bm25)]) == (
        2, round((-0.001 + 0.05) / 2, 9), round((0.9 + 0.97) / 2, 9))
    assert objective([(Score(0.897, 0.9), bm25)])[0] == 0  # 0.003 below: misses the bar


def test_choose_prefers_the_bar_then_the_earlier_rule() -> None:
    steady, bold = CjkRule(1.0), CjkRule(3.0)
    bm25 = {"x": Score(0.9, 0.9), "y": Score(0.8, 0.8)}
    table = {steady: {"x": Score(0.9, 0.9), "y": Score(0.8, 0.8)},
             bold: {"x": Score(0.95, 0.9), "y": Score(0.7, 0.8)}}
    assert choose(table, bm25, ["x", "y"]) == steady  # bold misses the bar on y
    assert choose(table, bm25, ["x"]) == bold
    tie = {steady: table[steady], bold: table[steady]}
    assert choose(tie, bm25, ["x", "y"]) == steady


def _row(qid: str, bm25: list[tuple[str, float]], vector: list[tuple[str, float]],
         gold: str, evidence: float) -> dict[str, Any]:
    ids = {c for c, _ in bm25 + vector}
    return {"id": qid, "language": "zh", "translated": False, "evidence": evidence,
            "lists": {"vector": [list(x) for x in vector], "bm25": [list(x) for x in bm25]},
            "hit": {c: c == gold for c in ids}, "hash": {c: c for c in ids}}


def test_leave_one_out_chooses_on_the_other_sets() -> None:
    # the vectors have the gold paragraph first by a hair, BM25 by far: a heavier keyword
    # list gets every question right
    rows = [_row("q1", [("g", 9.0), ("o", 1.0), ("p", 0.5)], [("o", 0.81), ("g", 0.80),
                                                               ("p", 0.2)], "g", 1.0)]
    saved = {name: {"language": "zh", "units": 3, "sample": "all", "questions": rows}
             for name in ("s1", "s2", "s3")}
    grid = (CjkRule(1.0), CjkRule(3.0, 0.0, 3.0))
    folds = cjk_fusion.leave_one_out(cjk_fusion.replay_grid(saved, grid))
    assert [f.held_back for f in folds] == ["s1", "s2", "s3"]
    for f in folds:
        assert (f.bm25.r1, f.vector.r1, f.hybrid.r1) == (1.0, 0.0, 1.0)
        assert f.met and f.train_met == 2


def _squad(path: Path, paragraphs: list[tuple[str, str, list[tuple[str, str]]]]) -> Path:
    data = {"data": [{"title": title, "paragraphs": [{"context": context, "qas": [
        {"id": qid, "question": q, "answers": [{"text": "", "answer_start": 0}]}
        for qid, q in qas]}]} for title, context, qas in paragraphs]}
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def test_eval_fusion_saves_the_lists_once_and_prints_every_fold(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "datasets"
    folder.mkdir()
    _squad(folder / "drcd-dev-zh.json", [
        ("台北", "臺北市是中華民國的首都，位於臺灣北部的臺北盆地。",
         [("d1", "中華民國的首都是哪裡？")]),
        ("長江", "長江是亞洲最長的河流，全長約六千三百公里。",
         [("d2", "亞洲最長的河流有多長？")]),
        ("熊貓", "大熊貓主要以竹子為食，生活在四川的山區。", [("d3", "大熊貓吃什麼？")]),
    ])
    _squad(folder / "korquad-dev-ko.json", [
        ("서울", "서울은 대한민국의 수도이며 한강이 도시를 가로지른다.",
         [("k1", "대한민국의 수도는?")]),
        ("김치", "김치는 배추와 고춧가루로 만드는 한국의 전통 음식이다.",
         [("k2", "김치는 무엇으로 만드나?")]),
    ])
    args = ["--data-dir", str(tmp_path / "data"), "eval", "fusion", "--all", str(folder),
            "--cache", str(tmp_path / "lists"), "--json"]
    first = CliRunner().invoke(cli, args)
    assert first.exit_code == 0, first.output
    result = json.loads(first.stdout)
    assert [f["held_back"] for f in result["folds"]] == ["drcd-zh", "korquad-ko"]
    assert [f["questions"] for f in result["folds"]] == [3, 2]
    assert sorted(p.name for p in (tmp_path / "lists").iterdir()) == [
        "drcd-zh.json", "korquad-ko.json"]
    again = CliRunner().invoke(cli, args)
    assert again.exit_code == 0 and "questions from" in again.stderr
    assert json.loads(again.stdout) == result
    assert result["default"] == {"gain": CJK_RULE.gain, "lift": CJK_RULE.lift,
                                 "cap": CJK_RULE.cap}


def test_eval_fusion_needs_two_sets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["--data-dir", str(tmp_path / "data"), "eval", "fusion",
                                      "--all", str(tmp_path), "--cache", str(tmp_path / "l")])
    assert result.exit_code != 0 and "at least two sets" in result.output


@pytest.mark.parametrize(("evidence", "bm25", "weight"), [
    # standout of [3, 1, 1, 1] is 2 / sqrt(0.75)
    (0.5, [3.0, 1.0, 1.0, 1.0], 2.0 * 0.5 ** 0.7 * (1 + 0.25 * 2.0 / math.sqrt(0.75))),
    (0.5, [2.0, 2.0, 1.0], 2.0 * 0.5 ** 0.7),  # a tie at the top: no lift
    (0.2, [9.0, 1.0], 2.0 * 0.2 ** 0.7 * (1 + 0.25 * 8.0 / 4.0)),  # sd 4: standout 2
    (0.9, [3.0, 1.0, 1.0, 1.0], 2.0),  # capped at twice the vectors' weight
    (0.0, [3.0, 1.0], 0.0),
])
def test_the_default_cjk_rule(evidence: float, bm25: list[float], weight: float) -> None:
    """The rule `eval fusion` chose on all four CJK sets: gain 2, lift 0.25, cap 2."""
    assert (CJK_RULE.gain, CJK_RULE.lift, CJK_RULE.cap) == (2.0, 0.25, 2.0)
    lists = {"vector": [("v", 0.8)], "bm25": [(str(i), s) for i, s in enumerate(bm25)]}
    assert list_weights(lists, Features(evidence, cjk=True))["bm25"] == pytest.approx(
        weight, rel=1e-12)
