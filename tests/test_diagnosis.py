"""The diagnosis turn stage (tutor/diagnosis.py) in whole turns over the real sample course,
with a scripted model: it runs after the done event, records mastery and weak areas with
the turn's id, and a bad verdict or a failing model records nothing and breaks nothing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from coursetutor.config import Settings
from coursetutor.errors import BackendError
from coursetutor.llm.router import Router
from coursetutor.retrieval import EmbeddingModel
from coursetutor.store import SQLiteStore
from coursetutor.tutor.turn import Tutor
from coursetutor.types import DoneEvent
from coursetutor.workspace import Workspace

from .support import SAMPLE_COURSE, TENANT
from .test_tutor_turn import CLEAN_HINT, EXERCISE_2, GUIDING, Say, ScriptedLLM

WORK = ("For cos(x) = x I started from x_0 = 1 and got x_1 = 0.75, so I think the root is "
        "0.75")
WRONG = ('{"answered": true, "correct": false, "misconception": "Stops after one Newton '
         'step and takes x_1 as the root.", "topic": "newton\'s method"}')
RIGHT = '{"answered": true, "correct": true, "misconception": "", "topic": "newton\'s method"}'
MakeTutor = Callable[..., tuple[Tutor, ScriptedLLM]]


@pytest.fixture
def make_tutor(tmp_path: Path, sample_store: SQLiteStore,
               embedder: EmbeddingModel) -> MakeTutor:
    def make(fake: ScriptedLLM, **settings: Any) -> tuple[Tutor, ScriptedLLM]:
        ws = Workspace(Settings(data_dir=tmp_path / "data", answer_check=False, **settings),
                       store=sample_store, embedder=embedder)
        return Tutor(ws, Router(ws.settings, factory=lambda task, model: fake)), fake

    return make


def exercise_then_work(tutor: Tutor, work: str = WORK) -> tuple[str, list[str]]:
    """Ask for exercise 2, then send the student's working; the session and, for the second
    turn, which calls the model had seen when its done event came out and at the end."""
    first = tutor.ask(EXERCISE_2, SAMPLE_COURSE, "ada")
    fake = tutor.router.llm("answer")
    assert isinstance(fake, ScriptedLLM)
    seen_at_done: list[str] = []
    for event in tutor.stream(work, SAMPLE_COURSE, "ada", first.session_id):
        if isinstance(event, DoneEvent):
            seen_at_done = fake.kinds()
    return first.session_id, seen_at_done


def test_wrong_work_opens_a_weak_area_after_the_done_event(make_tutor: MakeTutor) -> None:
    tutor, fake = make_tutor(ScriptedLLM(answer=[CLEAN_HINT, GUIDING], diagnose=[WRONG]))
    session, at_done = exercise_then_work(tutor)
    assert "diagnose" not in at_done  # the reply was out before the diagnosis started
    assert fake.kinds().count("diagnose") == 1
    prompt = next(c for c in fake.calls if c.kind == "diagnose").messages[0].content
    assert f"Student's message:\n{WORK}" in prompt
    assert f"Tutor's last message:\n{CLEAN_HINT}" in prompt
    assert "We want to solve the equation `cos(x) = x`" in prompt  # the exercise
    assert "Worked solution (for you only" in prompt and "0.7390851332" in prompt
    store = tutor.ws.store
    [area] = store.mastery.weak_areas(TENANT, SAMPLE_COURSE, "ada")
    assert (area.topic, area.misconception, area.turn_ids) == (
        "newton's method", "Stops after one Newton step and takes x_1 as the root.",
        (f"{session}:2",))
    [obs] = store.mastery.observations(TENANT, SAMPLE_COURSE, "ada")
    assert (obs.correct, obs.turn_id, round(obs.estimate, 3)) == (False, f"{session}:2", 0.146)


@pytest.mark.prose  # the scripted model writes prose
def test_a_right_answer_raises_mastery_and_weakens_the_weak_area(make_tutor: MakeTutor) -> None:
    tutor, _ = make_tutor(ScriptedLLM(answer=[CLEAN_HINT, GUIDING, CLEAN_HINT],
                                      diagnose=[WRONG, RIGHT]))
    session, _ = exercise_then_work(tutor)
    tutor.ask("I redid it and got x = 0.739 after four steps", SAMPLE_COURSE, "ada", session)
    store = tutor.ws.store
    [area] = store.mastery.weak_areas(TENANT, SAMPLE_COURSE, "ada")
    assert (area.strength, area.weakened_by) == (0.5, (f"{session}:3",))
    [m] = store.mastery.estimates(TENANT, SAMPLE_COURSE, "ada")
    assert (m.topic, m.correct, m.incorrect) == ("newton's method", 1, 1)


@pytest.mark.parametrize("verdict", ["not json", '{"answered": true, "correct": "maybe"}',
                                     '{"answered": false}',
                                     Say(("{",), error=BackendError("the server went away"))])
def test_an_unusable_verdict_records_nothing_and_the_turn_stands(
        make_tutor: MakeTutor, verdict: str | Say) -> None:
    tutor, _ = make_tutor(ScriptedLLM(answer=[CLEAN_HINT, GUIDING], diagnose=[verdict]))
    session, _ = exercise_then_work(tutor)
    store = tutor.ws.store
    assert store.mastery.observations(TENANT, SAMPLE_COURSE, "ada") == []
    assert store.mastery.weak_areas(TENANT, SAMPLE_COURSE, "ada", active_only=False) == []
    assert len(store.list_turns(TENANT, SAMPLE_COURSE, session)) == 2


@pytest.mark.prose  # the scripted model writes prose
def test_a_question_is_not_diagnosed(make_tutor: MakeTutor) -> None:
    tutor, fake = make_tutor(ScriptedLLM(answer=["Bisection halves the bracket [1]."]))
    tutor.ask("How does the bisection method work?", SAMPLE_COURSE, "ada")
    assert fake.kinds() == ["answer"]


def test_diagnose_off_asks_nothing(make_tutor: MakeTutor) -> None:
    tutor, fake = make_tutor(ScriptedLLM(answer=[CLEAN_HINT, GUIDING]), diagnose="off")
    exercise_then_work(tutor)
    assert "diagnose" not in fake.kinds()
