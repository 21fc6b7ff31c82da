"""A/B comparison: the statistics with exact values, the table and chart, the command's run."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from coursetutor.cli import cli
from coursetutor.config import Settings
from coursetutor.errors import ConfigError, MissingDependencyError
from coursetutor.eval.compare import (
    Metric,
    bootstrap_interval,
    compare_metric,
    compare_records,
    mcnemar_exact,
    paired,
    plot,
    settings_for,
    table,
)
from coursetutor.llm.router import Router
from coursetutor.tutor import Tutor
from coursetutor.workspace import Workspace

from .test_eval_answers import _clapnq
from .test_tutor_turn import ScriptedLLM


@pytest.mark.parametrize(("a_only", "b_only", "p"), [
    (0, 0, 1.0),
    (0, 5, 2 / 32),  # both tails of Binomial(5, 1/2) at 0
    (1, 4, 12 / 32),  # 2 * (1 + 5) / 32
    (4, 1, 12 / 32),  # symmetric
    (2, 10, 158 / 4096),  # 2 * (1 + 12 + 66) / 2^12
    (3, 3, 1.0),  # the doubled tail passes 1
])
def test_mcnemar_exact(a_only: int, b_only: int, p: float) -> None:
    assert mcnemar_exact(a_only, b_only) == pytest.approx(p, abs=1e-12)


def test_bootstrap_interval_of_a_constant_is_the_constant() -> None:
    assert bootstrap_interval([0.25] * 7, seed=3) == (0.25, 0.25)


def test_bootstrap_interval_is_seeded_and_brackets_the_mean() -> None:
    diffs = [0.0, 1.0, 1.0, 0.0, 1.0, 0.5, 0.0, 1.0]
    low, high = bootstrap_interval(diffs, seed=0)
    assert (low, high) == bootstrap_interval(diffs, seed=0) == (0.25, 0.875)
    assert 0.0 <= low < sum(diffs) / len(diffs) < high <= 1.0
    # a mean of 8 values drawn from {0, .5, 1} moves in steps of 1/16
    assert (low * 16).is_integer() and (high * 16).is_integer()


def test_bootstrap_needs_values() -> None:
    with pytest.raises(ValueError, match="at least one"):
        bootstrap_interval([])


def _rec(qid: str, answerable: bool = True, **values: Any) -> dict[str, Any]:
    return {"id": qid, "answerable": answerable, **values}


A = [_rec("q1", faithfulness=1.0, wrongly_declined=False),
     _rec("q2", faithfulness=0.5, wrongly_declined=True),
     _rec("q3", faithfulness=None, wrongly_declined=True),
     _rec("q4", faithfulness=0.0, wrongly_declined=False),
     _rec("u1", answerable=False, faithfulness=1.0, wrongly_answered=True)]
B = [_rec("q4", faithfulness=1.0, wrongly_declined=False),  # order does not matter
     _rec("q1", faithfulness=1.0, wrongly_declined=False),
     _rec("q2", faithfulness=1.0, wrongly_declined=False),
     _rec("q3", faithfulness=0.5, wrongly_declined=False),
     _rec("u1", answerable=False, faithfulness=None, wrongly_answered=False)]


def test_pairs_by_id_skip_missing_values_and_other_scopes() -> None:
    assert paired(A, B, Metric("faithfulness", False)) == [(1.0, 1.0), (0.5, 1.0), (0.0, 1.0)]
    assert paired(A, B, Metric("wrongly_answered", True, "unanswerable")) == [(1.0, 0.0)]
    assert len(paired(A, B, Metric("wrongly_declined", True, "answerable"))) == 4


def test_compare_metric_exact_values() -> None:
    row = compare_metric(A, B, Metric("faithfulness", False), seed=0)
    assert (row.n, row.a, row.b, row.diff) == (3, 0.5, 1.0, 0.5)
    assert row.low is not None and row.high is not None
    assert 0.0 <= row.low <= 0.5 <= row.high <= 1.0
    assert row.p_value is None
    declined = compare_metric(A, B, Metric("wrongly_declined", True, "answerable"))
    assert (declined.n, declined.a, declined.b, declined.diff) == (4, 0.5, 0.0, -0.5)
    assert (declined.a_only, declined.b_only) == (2, 0)
    assert declined.p_value == 0.5  # 2 * (1/2)^2


def test_compare_records_covers_every_metric_and_empty_ones() -> None:
    rows = {r.metric: r for r in compare_records(A, B)}
    assert rows["context_recall"].n == 0 and rows["context_recall"].diff is None
    text = table(list(rows.values()), ("plain", "checked"))
    assert "plain" in text and "checked" in text
    assert "faithfulness" in text and "+0.500" in text
    assert "0.500 (2/0)" in text  # McNemar p with the discordant counts


def test_plot_writes_a_png(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    out = tmp_path / "ab.png"
    plot(compare_records(A, B), out, ("plain", "checked"))
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_without_matplotlib_says_how_to_install(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(MissingDependencyError, match=r"coursetutor\[eval\]"):
        plot(compare_records(A, B), tmp_path / "ab.png")


def test_settings_for_keeps_the_command_lines_data_dir(tmp_path: Path) -> None:
    base = Settings(data_dir=tmp_path / "base")
    plain = tmp_path / "a.toml"
    plain.write_text("grade_correct = 0.6\n")
    own = tmp_path / "b.toml"
    own.write_text(f"[coursetutor]\ndata_dir = '{tmp_path / 'own'}'\n")
    assert settings_for(plain, base).data_dir == base.data_dir
    assert settings_for(plain, base).grade_correct == 0.6
    assert settings_for(own, base).data_dir == tmp_path / "own"
    bad = tmp_path / "c.toml"
    bad.write_text("no_such_setting = 1\n")
    with pytest.raises(ConfigError, match="no_such_setting"):
        settings_for(bad, base)


@pytest.mark.prose  # the scripted model writes prose
def test_compare_command_runs_both_sides_on_the_same_questions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Orchestration only: a scripted model answers; side B's grade bar declines everything."""
    _clapnq(tmp_path)
    a = tmp_path / "a.toml"
    a.write_text("grade_correct = 0.5\ngrade_incorrect = 0.36\n")
    b = tmp_path / "b.toml"
    b.write_text("grade_correct = 1.0\ngrade_incorrect = 1.0\n")
    made: list[Settings] = []

    def scripted_tutor(ws: Workspace) -> Tutor:
        made.append(ws.settings)
        llm = ScriptedLLM(answer=["Gustave Eiffel's company designed it [1].",
                                  "Glucose and oxygen [1]."])
        return Tutor(ws, Router(ws.settings, factory=lambda task, model: llm))

    monkeypatch.setattr("coursetutor.tutor.Tutor", scripted_tutor)
    result = CliRunner().invoke(cli, [
        "--data-dir", str(tmp_path / "data"), "eval", "compare", "--config", str(a),
        "--config", str(b), "--data", str(tmp_path), "--suite", "abstention", "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert [s.grade_correct for s in made] == [0.5, 1.0]
    assert {s.data_dir for s in made} == {tmp_path / "data"}
    rows = {r["metric"]: r for r in out["compare"]["abstention"]}
    declined = rows["wrongly_declined"]
    assert (declined["n"], declined["a"], declined["b"]) == (2, 0.0, 1.0)
    assert (declined["a_only"], declined["b_only"], declined["p_value"]) == (0, 2, 0.5)
    assert rows["faithfulness"]["n"] == 0  # B answered nothing: no pairs
    assert len(out["a"]["abstention"]["records"]) == 3
    with sqlite3.connect(tmp_path / "data" / "coursetutor.db") as db:
        students = [s for (s,) in db.execute("SELECT DISTINCT student FROM turns")]
    assert len(students) == 2 * 3  # each side asks as new students: no shared ladder


def test_compare_command_needs_two_configs(tmp_path: Path) -> None:
    a = tmp_path / "a.toml"
    a.write_text("")
    result = CliRunner().invoke(cli, ["eval", "compare", "--config", str(a),
                                      "--data", str(tmp_path)])
    assert result.exit_code != 0
    assert "exactly twice" in result.output

