"""Memory across turns and sessions: the token window, running and session summaries, the
exercise ladder and the student's weak areas carried into later sessions.

A scripted model pins down what is asked and stored; the store and the sample course are real.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from coursetutor.config import Settings, load_settings, summaries_by_model
from coursetutor.errors import BackendUnavailableError, ConfigError
from coursetutor.llm.router import CallRecord, Router
from coursetutor.retrieval import EmbeddingModel
from coursetutor.store import SQLiteStore
from coursetutor.store.summaries import Summary, turn_id
from coursetutor.tutor import memory
from coursetutor.tutor.context import format_history
from coursetutor.tutor.remember import FoldInput, end_session, fold_history
from coursetutor.tutor.replies import reply
from coursetutor.tutor.summary import Fold, extractive, summarize
from coursetutor.tutor.turn import Tutor
from coursetutor.types import Chunk, Citation, Hit, Locator, Turn
from coursetutor.workspace import Workspace

from .support import SAMPLE_COURSE, TENANT
from .test_tutor_turn import CLEAN_HINT, EXERCISE_2, GUIDING, Say, ScriptedLLM

C = SAMPLE_COURSE
KEY = ("exercises-01-md:Exercise sheet 1: Root finding > Exercise 2: Newton's method for "
       "cos(x) = x")
NEWTON = "Exercise 2: Newton's method for cos(x) = x"
S1 = "We worked on exercise 2 with Newton's method; the student was stuck and reached guiding."
S2 = "The student went on with exercise 2 up to the steps rung and asked about convergence."
MISCONCEPTION = "Thinks Newton's method needs a bracket around the root, like bisection."


def words(text: str) -> int:
    return len(text.split())


def cite(section: str) -> Citation:
    return Citation(1, "c", "d", "Lecture 1", "lecture", Locator(page=1), "...", section)


def turn(n: int, question: str = "How does bisection work?", answer: str = "It halves [1].",
         session: str = "s1", key: str = "", level: str = "", section: str = "Bisection",
         grade: str = "correct") -> Turn:
    return Turn(session, n, TENANT, C, "alice", question, answer, "lecture",
                "exercise" if key else "concept", grade, level, key, True, (cite(section),))


# -- the summary ---------------------------------------------------------------------------


def test_extractive_summary_names_topics_stuck_and_rung() -> None:
    turns = (turn(1, EXERCISE_2, key=KEY, level="hint", section="Newton's method"),
             turn(2, "I am still stuck", key=KEY, level="guiding", section="Newton's method"),
             turn(3, "Why does bisection always converge?"),
             turn(4, "What is a limit?", grade="incorrect"))
    digest = extractive(Fold(turns, right=("Bisection",), wrong=("Newton's method (bracket)",)))
    assert digest.text == (
        "Topics: Newton's method; Bisection. Got right: Bisection. Got wrong: Newton's method "
        f"(bracket). Stuck on: {NEWTON}. Exercise: {NEWTON}, reached the guiding rung. Asked: "
        f'"{EXERCISE_2}"; "I am still stuck"; "Why does bisection always converge?".')
    assert (digest.topics, digest.exercise_key, digest.level, digest.by) == (
        ("Newton's method", "Bisection"), KEY, "guiding", "extractive")


def test_extractive_summary_keeps_the_newest_words() -> None:
    digest = extractive(Fold((turn(5, "What is the secant method?"),),
                             previous="a b c " * 40, max_words=25))
    assert words(digest.text) == 26 and digest.text.startswith("... ")
    assert digest.text.endswith('Asked: "What is the secant method?".')


def router_for(llm: ScriptedLLM, **settings: Any) -> Router:
    return Router(Settings(**settings), factory=lambda task, model: llm)


def test_model_summary_is_asked_with_the_facts_and_cut_to_its_words() -> None:
    llm = ScriptedLLM(summarize=["Summary: **The student** " + "worked " * 60])
    log: list[CallRecord] = []
    fold = Fold((turn(1, EXERCISE_2, key=KEY, level="hint"),), previous="Earlier stuff.",
                max_words=30)
    digest = summarize(router_for(llm), fold, log)
    assert digest.by == "model" and words(digest.text) == 31
    assert digest.text.startswith("The student worked") and digest.text.endswith(" ...")
    prompt = llm.calls[0].messages[0].content
    assert "at most 30 words" in prompt and "Summary so far: Earlier stuff." in prompt
    assert f"Exercise: {NEWTON}, reached the hint rung." in prompt
    assert [c.task for c in log] == ["summarize"]


@pytest.mark.parametrize("say", [Say((), BackendUnavailableError("down")), "", "NOT_COVERED"])
def test_model_failure_or_nothing_usable_falls_back_to_the_extract(say: str | Say) -> None:
    fold = Fold((turn(1),))
    digest = summarize(router_for(ScriptedLLM(summarize=[say])), fold, [])
    assert digest == extractive(fold)


def test_no_model_means_no_call() -> None:
    llm = ScriptedLLM()
    fold = Fold((turn(1),))
    assert summarize(router_for(llm, llm_backend="none"), fold, []) == extractive(fold)
    assert summarize(None, fold, []) == extractive(fold)
    assert llm.calls == []


# -- the token window and the running summary ----------------------------------------------


def test_history_is_trimmed_by_tokens_after_its_summary() -> None:
    turns = [turn(i, f"question number {i}", "answer " * 20) for i in range(1, 7)]
    text = format_history(turns, 80, words, summary="Bisection was covered.")
    gist = "Tutor: " + " ".join(["answer"] * 20)
    # the newest turns with their answers; older ones, whose answers no longer fit, as the
    # question alone
    assert text.splitlines() == [
        "Summary of the conversation so far: Bisection was covered.",
        *(f"Student: question number {i}" for i in range(1, 5)),
        "Student: question number 5", gist, "Student: question number 6", gist]
    assert words(text) <= 80


def test_fold_only_past_the_threshold(sample_store: SQLiteStore) -> None:
    session = sample_store.start_session(TENANT, C, "alice")
    turns = tuple(turn(i, session=session.id) for i in range(1, 3))
    f = FoldInput(TENANT, C, "alice", session.id, turns, None, limit=100)
    past = fold_history(None, sample_store, f, words, [])
    assert (past.summary, past.turns, past.folded) == ("", turns, 0)
    assert sample_store.summaries.get(TENANT, C, session.id, "running") is None


def test_fold_writes_the_running_summary_with_its_turns(sample_store: SQLiteStore) -> None:
    session = sample_store.start_session(TENANT, C, "alice")
    turns = tuple(turn(i, f"question {i} about Newton", "answer " * 15, session=session.id,
                       key=KEY if i < 4 else "", level="hint guiding steps".split()[i - 1]
                       if i < 4 else "") for i in range(1, 7))
    llm = ScriptedLLM(summarize=["The student climbed exercise 2 to the steps rung."])
    f = FoldInput(TENANT, C, "alice", session.id, turns, None, limit=100)
    log: list[CallRecord] = []
    past = fold_history(router_for(llm), sample_store, f, words, log)
    assert past.folded == 5 and past.turns == turns[5:]
    assert past.summary == "The student climbed exercise 2 to the steps rung."
    stored = sample_store.summaries.get(TENANT, C, session.id, "running")
    assert stored is not None
    assert (stored.text, stored.turn_ids, stored.exercise_key, stored.level) == (
        past.summary, tuple(turn_id(session.id, i) for i in range(1, 6)), KEY, "steps")
    assert "at most 25 words" in llm.calls[0].messages[0].content
    # the next turn reads the summary back: nothing more to fold yet
    nxt = (*turns, turn(7, session=session.id))
    again = fold_history(router_for(llm), sample_store,
                         FoldInput(TENANT, C, "alice", session.id, nxt, stored, limit=100),
                         words, log)
    assert (again.summary, again.turns, again.folded) == (past.summary, nxt[5:], 0)
    assert len(llm.calls) == 1
    shown = format_history(again.turns, 100, words, again.summary)
    assert words(shown) <= 0.7 * 100


def test_turns_of_another_session_are_shown_but_never_folded(
        sample_store: SQLiteStore) -> None:
    session = sample_store.start_session(TENANT, C, "alice")
    turns = tuple(turn(i, "question " * 10, "answer " * 15, session="earlier")
                  for i in range(1, 5))
    past = fold_history(None, sample_store,
                        FoldInput(TENANT, C, "alice", session.id, turns, None, 100), words, [])
    assert (past.turns, past.folded) == (turns, 0)


# -- the prompt's notes --------------------------------------------------------------------


def test_notes_put_the_misconception_on_the_question_topic_first() -> None:
    earlier = Summary(TENANT, C, "alice", "s1", "session", S1, exercise_key=KEY, level="guiding",
                      updated=86400.0 * 365)
    learner = memory.Learner(style="examples first", weak=(
        memory.Weak("Convergence", "Thinks every method converges."),
        memory.Weak("Newton's method", MISCONCEPTION)))
    recall = memory.Recall(earlier=(earlier,), learner=learner)
    chunk = Chunk("c", TENANT, C, "d", "Lecture 1", "lecture", "", ("2 Newton's method",), 1,
                  "en", Locator(page=1), "Newton iterates.", "h", 0)
    hit = Hit(chunk, 1.0, {}, {}, chunk.locator)
    text = memory.notes(recall, [hit], 200, words)
    assert text.splitlines() == [
        "About this student:",
        f"- Earlier answers showed this misconception on Newton's method: {MISCONCEPTION} "
        "If the question touches it, address it directly.",
        "- Earlier answers showed this misconception on Convergence: Thinks every method "
        "converges. If the question touches it, address it directly.",
        "- The student prefers examples first.",
        f"- Session of 1971-01-01: {S1} (Last exercise: {NEWTON}, guiding rung.)"]
    lines = text.splitlines()
    small = memory.notes(recall, [hit], words(lines[0]) + words(lines[1]), words)
    assert small.splitlines() == lines[:2]
    assert memory.notes(memory.Recall(), [], 200, words) == ""


@pytest.mark.parametrize(("question", "recap", "back"), [
    ("What did we do last time?", True, True),
    ("Where did we stop?", True, False),
    ("Cosa abbiamo fatto l'ultima volta?", True, True),
    ("Let's continue with that exercise", False, True),
    ("上次我们做了什么？", True, True),
    ("How does bisection work?", False, False),
    ("Is this function continuous?", False, False),
    ("Can you recap the bisection method?", False, False),
    ("What have we covered so far?", True, False),
    ("Machen wir weiter mit der Aufgabe", False, True),
])
def test_recap_and_going_on_are_recognised(question: str, recap: bool, back: bool) -> None:
    assert (memory.asks_recap(question), memory.refers_back(question)) == (recap, back)


def test_a_new_session_goes_on_from_the_summary_when_the_turns_are_gone(
        sample_store: SQLiteStore) -> None:
    session = sample_store.start_session(TENANT, C, "alice")
    for i, level in enumerate(("hint", "guiding"), start=1):
        sample_store.add_turn(turn(i, EXERCISE_2, session=session.id, key=KEY, level=level))
    summary = sample_store.summaries.put(Summary(TENANT, C, "alice", session.id, "session", S1,
                                                 exercise_key=KEY, level="guiding"))
    assert [t.ordinal for t in memory.bridge(sample_store, [summary])] == [1, 2]
    sample_store.profiles.purge_turns(TENANT, C, before=time.time() + 1)  # retention
    assert memory.bridge(sample_store, [summary]) == [
        Turn(session.id, 0, TENANT, C, "alice", NEWTON, "", "lecture", "exercise", "correct",
             "guiding", KEY)]
    assert memory.bridge(sample_store, []) == []


# -- three sessions ------------------------------------------------------------------------

MakeTutor = Callable[..., tuple[Tutor, ScriptedLLM]]


@pytest.fixture
def make(tmp_path: Any, sample_store: SQLiteStore, embedder: EmbeddingModel) -> MakeTutor:
    """A tutor over a private copy of the sample course, served by one scripted model."""

    def build(llm: ScriptedLLM, **settings: Any) -> tuple[Tutor, ScriptedLLM]:
        settings.setdefault("answer_check", False)
        settings.setdefault("summary_model", "on")  # the scripted model writes summaries
        ws = Workspace(Settings(data_dir=tmp_path / "data", **settings), store=sample_store,
                       embedder=embedder)
        return Tutor(ws, Router(ws.settings, factory=lambda task, model: llm)), llm

    return build


def ask(tutor: Tutor, question: str, session: str | None = None) -> Any:
    return tutor.ask(question, C, "alice", session)


def test_three_sessions_carry_the_summary_the_ladder_and_a_weak_area(
        make: MakeTutor) -> None:
    example = "Try the same iteration on x^2 = 2 from x_0 = 1 first [1]."
    llm = ScriptedLLM(answer=[CLEAN_HINT, GUIDING, CLEAN_HINT, example],
                    summarize=[S1, S2])
    tutor, _ = make(llm, session_idle_minutes=1e-6)
    store = tutor.ws.store
    # session 1: exercise 2, hint then guiding; the student ends it
    first = ask(tutor, EXERCISE_2)
    second = ask(tutor, "I am still stuck", first.session_id)
    assert (first.level, second.level) == ("hint", "guiding")
    # what the mastery stage records from a wrong answer
    store.mastery.add_weak_area(TENANT, C, "alice", "Newton's method", MISCONCEPTION,
                                f"{first.session_id}:2")
    s1 = end_session(tutor.router, store, TENANT, C, first.session_id, [])
    assert s1 is not None and s1.text == S1
    assert (s1.turn_ids, s1.exercise_key, s1.level) == (
        (f"{first.session_id}:1", f"{first.session_id}:2"), KEY, "guiding")
    summary_prompt = next(c for c in llm.calls if c.kind == "summarize").messages[0].content
    assert f"Exercise: {NEWTON}, reached the guiding rung." in summary_prompt
    assert f"Got wrong: Newton's method ({MISCONCEPTION})" in summary_prompt
    # session 2, another day: the recap, then the exercise goes on one rung up
    recap = ask(tutor, "What did we do last time?")
    day = time.strftime("%Y-%m-%d", time.gmtime(s1.updated))
    assert recap.text == (f"{reply('recap', 'en', date=day)} {S1} (Last exercise: {NEWTON}, "
                          "guiding rung.)")
    going_on = ask(tutor, "Let's continue with that exercise", recap.session_id)
    assert (going_on.intent, going_on.level) == ("exercise", "steps")
    prompt = llm.answer_calls()[-1].messages[1].content
    assert f"- Session of {day}: {S1}" in prompt
    assert ("Student: I am still stuck" in prompt) and CLEAN_HINT[:30] in prompt
    assert MISCONCEPTION in prompt
    stored = store.list_turns(TENANT, C, recap.session_id)
    assert [t.exercise_key for t in stored] == ["", KEY]
    # session 3: session 2 went idle, so opening this one summarizes it
    time.sleep(0.01)
    third = ask(tutor, "What did we do last time?")
    s2 = store.summaries.get(TENANT, C, recap.session_id, "session")
    assert s2 is not None and (s2.text, s2.exercise_key, s2.level) == (S2, KEY, "steps")
    assert store.get_session(TENANT, C, recap.session_id).ended is not None
    assert third.text.endswith(f"{S2} (Last exercise: {NEWTON}, steps rung.)")
    assert S1 in third.text
    assert third.text.index(S1) < third.text.index(S2)  # oldest first
    summary_prompt = [c for c in llm.calls if c.kind == "summarize"][-1].messages[0].content
    assert "Let's continue with that exercise" in summary_prompt
    last = ask(tutor, "let's continue with that exercise", third.session_id)
    assert (last.intent, last.level) == ("exercise", "example")
    prompt = llm.answer_calls()[-1].messages[1].content
    assert S2 in prompt and MISCONCEPTION in prompt
    assert [c.kind for c in llm.calls].count("summarize") == 2


@pytest.mark.prose  # the scripted model writes prose
def test_a_level_from_the_profile_applies_unless_the_request_names_one(
        make: MakeTutor) -> None:
    tutor, llm = make(ScriptedLLM(answer=["Bisection halves the bracket [1]."] * 2))
    tutor.ws.store.profiles.update(TENANT, C, "alice", level=5, style="step by step")
    tutor.ask("How does the bisection method work?", C, "alice")
    tutor.ask("How does the bisection method work?", C, "alice", level=1)
    first, second = (c.messages[1].content for c in llm.answer_calls())
    assert "Student level: 5 of 5" in first and "Student level: 1 of 5" in second
    assert "- The student prefers step by step." in first


@pytest.mark.parametrize(("backend", "setting", "by_model"), [
    ("local", "auto", False), ("ollama", "auto", True), ("openai", "auto", True),
    ("none", "auto", False), ("local", "on", True), ("ollama", "off", False),
])
def test_who_writes_summaries(backend: str, setting: str, by_model: bool) -> None:
    # auto: a server writes them; the local CPU model would spend as long as on an answer
    settings = Settings(llm_backend=backend, summary_model=setting)
    assert summaries_by_model(settings) is by_model


def test_summary_model_must_be_auto_on_or_off() -> None:
    with pytest.raises(ConfigError, match="summary_model must be auto, on or off"):
        load_settings(env={}, summary_model="sometimes")
