"""`coursetutor eval across`: pairs of parallel sentences, the bands of the statement check and
the thresholds chosen on one half of the paragraphs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from coursetutor.cli import cli
from coursetutor.eval.across import (
    Pair,
    Shares,
    band_shares,
    choose_thresholds,
    highest_kept,
    lowest_passed,
    parallel_pairs,
    percentiles,
    rows,
    split_halves,
)
from coursetutor.eval.datasets import Question, Unit, UnitSet
from coursetutor.tutor.statement_check import DROP_ACROSS, KEEP_ACROSS

DATASETS = Path(__file__).resolve().parents[2] / "shared" / "datasets"


def units(language: str, paragraphs: dict[str, list[str]],
          questions: dict[str, tuple[str, str]]) -> UnitSet:
    return UnitSet(language,
                   [Unit(f"{p}-s{i}", p, "t", s) for p, ss in paragraphs.items()
                    for i, s in enumerate(ss)],
                   [Question(q, text, frozenset({gold})) for q, (text, gold) in questions.items()])


EN = units("en", {"a0-p0": ["A one.", "A two.", "A three."], "a0-p1": ["B one.", "B two."]},
           {"q1": ("What two?", "a0-p0-s1"), "q2": ("What B?", "a0-p1-s0")})
XX = units("xx", {"a0-p0": ["a un.", "a deux.", "a trois."], "a0-p1": ["b un et deux."]},
           {"q1": ("Quoi deux ?", "a0-p0-s1"), "q2": ("Quoi B ?", "a0-p1-s0")})


def test_pairs_come_from_paragraphs_whose_sentence_counts_agree() -> None:
    p = "a0-p0"
    assert parallel_pairs(EN, XX) == [
        Pair(p, "translation", "A one.", "a un."), Pair(p, "other", "A one.", "a deux."),
        Pair(p, "other", "A one.", "a trois."), Pair(p, "other", "A two.", "a un."),
        Pair(p, "translation", "A two.", "a deux."), Pair(p, "other", "A two.", "a trois."),
        Pair(p, "other", "A three.", "a un."), Pair(p, "other", "A three.", "a deux."),
        Pair(p, "translation", "A three.", "a trois."),
        Pair(p, "question", "A two.", "Quoi deux ?"), Pair(p, "question", "a deux.", "What two?"),
    ]  # a0-p1 has two sentences in one language and one in the other: left out


def test_the_split_is_seeded_and_halves_the_paragraphs() -> None:
    names = ["a0-p0", "a0-p1", "a1-p0", "a1-p1"]
    assert split_halves(names, 7) == ({"a0-p1", "a1-p1"}, {"a0-p0", "a1-p0"})
    assert split_halves(reversed(names), 7) == split_halves(names, 7)


def test_band_shares_follow_the_check() -> None:
    # below DROP removed, at or above KEEP kept, between: the model, or the midpoint 0.81
    assert band_shares([0.7, 0.8, 0.82, 0.9], keep=0.85, drop=0.77) == Shares(0.25, 0.5, 0.25,
                                                                               0.5)
    assert band_shares([0.77, 0.85], keep=0.85, drop=0.77) == Shares(0.0, 0.5, 0.5, 0.5)


def test_percentiles_are_nearest_rank() -> None:
    scores = [x / 10 for x in range(10, 0, -1)]
    assert percentiles(scores) == [0.1, 0.5, 1.0]
    assert percentiles([0.8, 0.9], (50, 51)) == [0.8, 0.9]


def test_thresholds_keep_95_percent_of_translations_in_every_pair() -> None:
    positives = {"en-zh": [0.80] + [0.90] * 19, "en-de": [0.84, 0.86, 0.95, 0.96]}
    negatives = {"en-zh": [0.70] * 18 + [0.86, 0.87], "en-de": [0.75, 0.78, 0.80, 0.82]}
    assert highest_kept(positives["en-zh"], 0.95) == 0.9  # 19 of 20 at 0.9 or more
    assert highest_kept(positives["en-de"], 0.95) == 0.84  # all 4: 3.8 is not enough
    assert lowest_passed(negatives["en-zh"], 0.05) == 0.865  # one of 20 reaches it
    assert lowest_passed(negatives["en-de"], 0.05) == 0.825  # none reaches it
    # midpoint 0.84 (the worst pair's), KEEP 0.865, DROP mirrors it: 0.815
    assert choose_thresholds(positives, negatives) == (0.865, 0.815)


def test_rows_pool_the_cross_language_pairs_and_leave_the_reference_out() -> None:
    scores = {"en-de": {"translation": [0.9, 0.8], "other": [0.7, 0.85]},
              "de-zh": {"translation": [0.84], "other": [0.86]},
              "en-en": {"other": [0.95]}}
    out = rows(scores, 0.85, 0.77)
    assert list(out) == ["en-de", "de-zh", "overall"]
    assert (out["en-de"]["auroc"], out["de-zh"]["auroc"], out["overall"]["auroc"]) == (
        0.75, 0.0, 0.5556)  # 5 of the 9 (translation, other) orders right
    assert out["overall"]["translation_shares"] == {"below": 0.0, "band": 0.6667,
                                                    "above": 0.3333, "below_mid": 0.3333}
    assert out["overall"]["other_shares"] == {"below": 0.3333, "band": 0.0, "above": 0.6667,
                                              "below_mid": 0.3333}


def test_the_command_on_xquadr(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    if not all((DATASETS / f"xquadr-{x}.json").is_file() for x in ("en", "de", "zh")):
        pytest.skip("../shared/datasets/xquadr-{en,de,zh}.json are absent")
    monkeypatch.chdir(tmp_path)  # no coursetutor.toml of the developer's
    result = CliRunner().invoke(cli, ["--data-dir", str(tmp_path / "data"), "eval", "across",
                                      "--path", str(DATASETS), "--limit", "4", "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output[result.output.index("{"):])
    assert out["split"] == {"seed": 7, "choose": 2, "held_out": 2, "by": "paragraph"}
    assert out["current"] == {"keep": KEEP_ACROSS, "drop": DROP_ACROSS}
    held = out["held_out"]["current"]
    assert list(held) == ["en-de", "en-zh", "de-zh", "overall"]
    assert [(r["translation"], r["other"], r["question"]) for r in held.values()] == COUNTS
    assert 0.5 < held["overall"]["auroc"] <= 1.0
    assert out["chosen"]["drop"] <= out["chosen"]["keep"]
    assert out["reference"]["en-en"]["translation"] == 0
    assert list(out["negation_flipped"]) == ["en-de", "en-zh", "de-zh"]
    assert all(0 <= v <= 1 for shares in out["negation_flipped"].values()
               for v in shares.values())


def test_negation_shares_count_pairs_that_differ_on_negating() -> None:
    from coursetutor.eval.across import Pair, negation_shares

    pairs = [Pair("p", "translation", "It does not converge.", "Es konvergiert nicht."),
             Pair("p", "translation", "It converges.", "Es konvergiert nicht."),
             Pair("p", "other", "It converges.", "Es ist stetig.")]
    assert negation_shares(pairs, "en", "de") == {"translation": 0.5, "other": 0.0}


# translations, other sentences and questions of the held-out paragraphs, per pair and overall
COUNTS = [(10, 48, 62), (3, 6, 34), (3, 6, 34), (16, 60, 130)]
