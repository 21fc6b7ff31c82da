"""Bayesian Knowledge Tracing (student/bkt.py) and the diagnosis rules (student/diagnose.py):
when to ask, how the model's JSON is read, what a diagnosis stores."""

from __future__ import annotations

from pathlib import Path

import pytest

from coursetutor.config import Settings, load_settings
from coursetutor.errors import ConfigError
from coursetutor.memory import bkt
from coursetutor.memory.diagnose import (
    Diagnosis,
    asks_back,
    looks_like_work,
    parse_diagnosis,
    record,
    same_misconception,
    should_diagnose,
)
from coursetutor.store import SQLiteStore

DEFAULTS = bkt.BKTParams(0.3, 0.1, 0.1, 0.2)
T, C, S = "default", "calculus", "ada"
TOPICS = ["Limits", "Series"]


# -- BKT -----------------------------------------------------------------------------------


def test_posterior_follows_bayes_rule() -> None:
    # right: 0.3 * 0.9 / (0.3 * 0.9 + 0.7 * 0.2); wrong: 0.3 * 0.1 / (0.3 * 0.1 + 0.7 * 0.8)
    assert bkt.posterior(0.3, True, DEFAULTS) == pytest.approx(0.27 / 0.41)
    assert bkt.posterior(0.3, False, DEFAULTS) == pytest.approx(0.03 / 0.59)


def test_update_adds_the_chance_to_learn_and_starts_from_the_prior() -> None:
    after = 0.27 / 0.41
    assert bkt.update(None, True, DEFAULTS) == pytest.approx(after + (1 - after) * 0.1)
    assert bkt.update(0.3, True, DEFAULTS) == bkt.update(None, True, DEFAULTS)
    assert bkt.update(0.5, False, DEFAULTS) == pytest.approx(0.2)


def test_three_right_answers_reach_mastery_two_do_not() -> None:
    known: float | None = None
    path = []
    for _ in range(3):
        known = bkt.update(known, True, DEFAULTS)
        path.append(known)
    assert path[1] < bkt.MASTERED <= path[2]
    assert [round(p, 3) for p in path] == [0.693, 0.919, 0.983]


def test_predict_correct() -> None:
    assert bkt.predict_correct(0.5, DEFAULTS) == pytest.approx(0.5 * 0.9 + 0.5 * 0.2)


def test_course_params_win_over_settings(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    store.ensure_course(T, C)
    settings = Settings(bkt_prior=0.4)
    assert bkt.course_params(store, settings, T, C) == bkt.BKTParams(0.4, 0.1, 0.1, 0.2)
    store.mastery.set_params(T, C, bkt.BKTParams(0.2, 0.2, 0.05, 0.25))
    assert bkt.course_params(store, settings, T, C) == bkt.BKTParams(0.2, 0.2, 0.05, 0.25)
    store.close()


@pytest.mark.parametrize("values", [{"bkt_prior": "0"}, {"bkt_slip": "0.6", "bkt_guess": "0.5"},
                                    {"diagnose": "sometimes"}, {"adaptive_weak": "0"}])
def test_bad_settings_are_refused(values: dict[str, str]) -> None:
    with pytest.raises(ConfigError):
        load_settings(env={f"COURSETUTOR_{k.upper()}": v for k, v in values.items()})


# -- when to diagnose ----------------------------------------------------------------------


@pytest.mark.parametrize(("message", "work"), [
    ("x = 4", True), ("12 - 3 = 9 spoons", True), ("f(x)=0 at x=1", True),
    ("I think it converges linearly", True), ("the root is between 0.5 and 1", True),
    ("Ich denke, die Folge konvergiert", True), ("我觉得答案是二", True),
    ("How does the bisection method work?", False), ("Just give me the answer to exercise 2",
                                                     False),
    ("what about input/output?", False),
    # the numbers of the course's items: no working
    ("Which loss does exercise 1 of sheet 9 minimise, and for which model?", False),
    ("In the solution of exercise 1 (d), what is solved in section 2.3?", False),
    ("为什么练习1 (e) 中可以使用高斯-牛顿法？", False),
    ("연습 문제 1 (e)에서 3장의 방법은?", False),
    ("I got 2 for exercise 3", True), ("for exercise 3 the root is between 1 and 2", True),
])
def test_looks_like_work(message: str, work: bool) -> None:
    assert looks_like_work(message) is work


def test_asks_back() -> None:
    assert asks_back("Bisection halves the interval [1]. What happens to the error?")
    assert not asks_back("Bisection halves the interval [1].")


@pytest.mark.parametrize(("mode", "intent", "answered", "message", "previous", "ask"), [
    ("auto", "exercise", True, "I got x = 0.74", "", True),
    ("auto", "concept", True, "because it halves the interval", "", True),
    ("auto", "concept", True, "the error halves", "What happens to the error?", True),
    ("auto", "concept", True, "can you say it again?", "What happens to the error?", False),
    ("auto", "concept", True, "How does Newton's method work?", "", False),
    ("auto", "definition", True, "I think x = 2", "", False),
    ("auto", "exercise", False, "I got x = 0.74", "", False),
    ("always", "concept", True, "How does Newton's method work?", "", True),
    ("off", "exercise", True, "I got x = 0.74", "", False),
])
def test_should_diagnose(mode: str, intent: str, answered: bool, message: str, previous: str,
                         ask: bool) -> None:
    assert should_diagnose(mode, intent, answered, message, previous) is ask


# -- reading the model's verdict -----------------------------------------------------------


@pytest.mark.parametrize(("raw", "expected"), [
    ('{"answered": true, "correct": true, "misconception": "", "topic": "limits"}',
     Diagnosis(True, "Limits")),
    ('Sure! {"answered": true, "correct": false, "misconception": "Adds the limits of the '
     'terms. Then more.", "topic": "Series"}', Diagnosis(False, "Series",
                                                         "Adds the limits of the terms.")),
    ('{"answered": true, "correct": false, "misconception": "Confuses f(a) with the limit",'
     ' "topic": "Calculus in general"}', Diagnosis(False, "Limits",
                                                   "Confuses f(a) with the limit")),
    ('{"answered": false, "correct": false, "misconception": "", "topic": "Limits"}', None),
    ('{"answered": true, "correct": "no", "misconception": "x", "topic": "Limits"}', None),
    ('{"answered": true, "correct": false, "misconception": "", "topic": "Limits"}', None),
    ('{"answered": true, "correct": false, "misconception": 3, "topic": "Limits"}', None),
    ('{"answered": true, "correct": false, "misconception": "wrong", "topic": "Limits"}',
     None),
    ("not json at all", None), ('{"answered": true, "correct": tru', None), ("[1, 2]", None),
    ("", None),
])
def test_parse_diagnosis(raw: str, expected: Diagnosis | None) -> None:
    assert parse_diagnosis(raw, TOPICS, "Limits") == expected


def test_parse_diagnosis_without_any_topic_is_no_diagnosis() -> None:
    assert parse_diagnosis('{"answered": true, "correct": true, "topic": "x"}', [], "") is None


def test_same_misconception() -> None:
    assert same_misconception("Subtracts the used spoons instead of adding them.",
                              "The student subtracted spoons instead of adding")
    assert not same_misconception("Subtracts the used spoons instead of adding them.",
                                  "Forgets to divide by the number of people.")


# -- what a diagnosis stores ---------------------------------------------------------------


@pytest.fixture
def store(tmp_path: Path) -> SQLiteStore:
    s = SQLiteStore(tmp_path / "s.db")
    s.ensure_course(T, C)
    return s


def test_wrong_answers_feed_one_weak_area_and_a_right_one_weakens_it(
        store: SQLiteStore) -> None:
    settings = Settings()
    first = record(store, settings, T, C, S, "s1:1",
                   Diagnosis(False, "Limits", "Takes the value at the point for the limit."))
    assert first.weak_area is not None and first.weak_area.strength == 1.0
    assert first.mastery.estimate == pytest.approx(bkt.update(None, False, DEFAULTS))
    again = record(store, settings, T, C, S, "s1:2",
                   Diagnosis(False, "Limits", "It takes the value at the point as limit"))
    assert again.weak_area is not None and again.weak_area.id == first.weak_area.id
    assert (again.weak_area.strength, again.weak_area.turn_ids) == (2.0, ("s1:1", "s1:2"))
    other = record(store, settings, T, C, S, "s1:3",
                   Diagnosis(False, "Limits", "Divides by zero when simplifying quotients."))
    assert other.weak_area is not None and other.weak_area.id != first.weak_area.id
    right = record(store, settings, T, C, S, "s2:1", Diagnosis(True, "Limits"))
    assert right.weak_area is None
    assert sorted(w.strength for w in right.weakened) == [0.5, 1.5]
    assert [o.correct for o in store.mastery.observations(T, C, S)] == [False, False, False,
                                                                         True]
    assert right.mastery.correct == 1 and right.mastery.incorrect == 3
    store.close()
