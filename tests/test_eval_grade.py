"""`coursetutor eval grade`: covered and uncovered questions of a SQuAD-format set, graded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from coursetutor.cli import cli
from coursetutor.eval.datasets import Question, Unit, UnitSet
from coursetutor.eval.grade import split_by_article
from coursetutor.retrieval.grading import evidence_score
from coursetutor.types import Chunk, Hit, Locator

ARTICLES = [
    ("长城", ["长城是中国古代的军事防御工程，东起山海关，西至嘉峪关，全长两万多公里。",
             "明朝时大规模修筑长城，今天看到的城墙大多建于明代。"],
     ["长城东起哪里？", "今天看到的长城大多建于哪个朝代？"]),
    ("熊猫", ["大熊猫主要生活在四川、陕西和甘肃的山区，以竹子为主要食物。",
             "大熊猫的寿命在野外约为十八到二十年。"],
     ["大熊猫主要吃什么？", "野生大熊猫能活多少年？"]),
    ("茶", ["茶起源于中国，唐代陆羽写了《茶经》，系统总结了种茶和饮茶的方法。"],
     ["《茶经》是谁写的？"]),
]


def squad_file(path: Path) -> Path:
    data = {"data": [
        {"title": title, "paragraphs": [
            {"context": text, "qas": [{"id": f"{a}-{p}", "question": questions[p],
                                       "answers": []}] if p < len(questions) else []}
            for p, text in enumerate(paragraphs)]}
        for a, (title, paragraphs, questions) in enumerate(ARTICLES)]}
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def test_split_keeps_whole_articles() -> None:
    units = UnitSet("zh", [Unit(f"a{a}-p{p}", f"a{a}-p{p}", "", "x")
                           for a, n in ((0, 2), (1, 2), (2, 1)) for p in range(n)],
                    [Question("q0", "?", frozenset({"a0-p1"})),
                     Question("q2", "?", frozenset({"a2-p0"}))])
    course, inside, outside = split_by_article(units, 3)
    assert [u.id for u in course.units] == ["a0-p0", "a0-p1", "a1-p0", "a1-p1"]
    assert ([q.id for q in inside], [q.id for q in outside]) == (["q0"], ["q2"])


def test_cjk_scores_lean_on_keywords() -> None:
    chunk = Chunk("c", "t", "c", "d", "D", "lecture", "", (), 1, "zh", Locator(), "x", "h", 0)
    hit = Hit(chunk, 1.0, {"vector": 1}, {"vector": 0.87}, Locator())
    # the same cosine counts for less between two texts of one CJK language; keywords more
    assert evidence_score([hit], 0.1, cjk=True) < evidence_score([hit], 0.1)
    assert evidence_score([hit], 0.9, cjk=True) > evidence_score([hit], 0.9) - 0.05
    # a question in another language than the passages keeps the cross-lingual rule
    assert evidence_score([hit], 0.1, cross_lingual=True, cjk=True) == evidence_score(
        [hit], 0.1, cross_lingual=True)


def test_eval_grade_reports_both_rules(tmp_path: Path) -> None:
    path = squad_file(tmp_path / "tiny-zh.json")
    result = CliRunner().invoke(cli, ["--data-dir", str(tmp_path / "data"), "eval", "grade",
                                      "--path", str(path), "--paragraphs", "2", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert (report["language"], report["course_paragraphs"]) == ("zh", 2)
    assert (report["answerable"], report["unanswerable"]) == (2, 3)
    for rule in ("current", "former"):
        rates = report["rules"][rule]
        for kind in ("answerable", "unanswerable"):
            assert sum(rates[kind].values()) == pytest.approx(1.0, abs=1e-3)
        assert 0.0 <= rates["auroc"] <= 1.0
    # the Great Wall questions are on the course, the panda and tea ones are not
    assert report["rules"]["current"]["auroc"] >= 0.5


def test_eval_grade_rejects_a_file_that_is_not_squad(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"data": [{"title": "x"}]}', encoding="utf-8")
    result = CliRunner().invoke(cli, ["--data-dir", str(tmp_path / "data"), "eval", "grade",
                                      "--path", str(path)])
    assert result.exit_code != 0
    assert "Error:" in result.output
