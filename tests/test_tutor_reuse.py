"""Reuse of past answers: the key, the meaning gate, and the stage inside real turns over the
sample course (scripted model, real store and embedder)."""

from __future__ import annotations

import pytest

from coursetutor.config import Settings
from coursetutor.tutor.replies import reply
from coursetutor.tutor.reuse import refusal, reusable, threshold
from coursetutor.tutor.reuse_key import differs, meaning, question_key
from coursetutor.tutor.turn import Tutor
from coursetutor.types import Chunk, DoneEvent, SearchFilters, SourcesEvent, StreamEvent, TokenEvent

from . import test_tutor_turn as base
from .support import SAMPLE_COURSE, TENANT
from .test_tutor_turn import MakeTutor, ScriptedLLM

pytestmark = pytest.mark.prose  # the scripted model writes prose

# the turn's fixtures: a tutor over the real sample course with a scripted model
workspace = base.workspace
make_tutor = base.make_tutor

ASKED = "How does the bisection method work?"
AGAIN = "how does the Bisection method work"


# -- the key and the gate ------------------------------------------------------------------


@pytest.mark.parametrize(("question", "key"), [
    ("  How does the Bisection method WORK?? ", "how does the bisection method work"),
    ("What is f(x) = x^2 - 2 at x = 1.5?", "what is f x = x^2 2 at x = 1.5"),
    ("Ｗｈａｔ　ｉｓ　Ｎｅｗｔｏｎ’ｓ　ｍｅｔｈｏｄ？", "what is newton s method"),
    ("二分法是怎么工作的？", "二分法是怎么工作的"),
])
def test_the_key_folds_case_width_and_punctuation(question: str, key: str) -> None:
    assert question_key(question) == key


@pytest.mark.parametrize(("a", "b", "reason"), [
    ("What is a prime number?", "What is not a prime number?", "negation"),
    ("Which methods converge?", "Which methods converge except bisection?", "negation"),
    ("Can the secant method run without a derivative?", "Can the secant method run with a "
     "derivative?", "negation"),
    ("Was ist eine Primzahl?", "Was ist keine Primzahl?", "negation"),
    ("什么是素数？", "什么不是素数？", "negation"),
    ("What happened in 1901?", "What happened in 1902?", "numbers"),
    ("How many steps for 1,000 points?", "How many steps for 1000 points?", ""),
    ("Who is the chair of the IPCC?", "Who is the chair of the UNFCCC?", "entities"),
    ("What did Tesla invent?", "What did Edison invent?", "entities"),
    ("What does x^2 = 2 give?", "What does x^3 = 2 give?", "numbers"),
    ("Why does Newton's method converge?", "How does Newton's method converge?", "scope"),
    ("When was the office founded?", "Who founded the office?", "scope"),
    ("How many roots does it have?", "Why does it have roots?", "scope"),
    ("When did the last glacial start?", "When did the last glacial end?", "words"),
    ("Who is the chair of the IPCC?", "Who is the vice-chair of the IPCC?", "words"),
    ("How does the bisection method work?", "how does the Bisection method work", ""),
    ("Can you explain how the bisection method works?", "How does the bisection method work?",
     ""),
])
def test_the_gate_refuses_other_meanings(a: str, b: str, reason: str) -> None:
    assert differs(meaning(a), meaning(b)) == reason
    assert differs(meaning(b), meaning(a)) == reason


@pytest.mark.parametrize(("a", "la", "b", "lb"), [
    ("How many species of Ctenophores have been validated?", "en",
     "Wie viele Arten von Ctenophora wurden bisher bestätigt?", "de"),
    ("Why is the second timeline needed?", "en", "为什么需要第二个时间线？", "zh"),
    ("When was Sky Digital launched?", "en", "Sky Digital是什么时候推出的？", "zh"),
    ("Who won Super Bowl XLIX?", "en", "Wer gewann den Super Bowl XLIX?", "de"),
])
def test_the_same_question_in_another_language_passes_the_gate(a: str, la: str, b: str,
                                                               lb: str) -> None:
    assert differs(meaning(a, la), meaning(b, lb)) == ""


def test_other_names_in_another_language_are_refused() -> None:
    assert differs(meaning("Who won Super Bowl XLIX?", "en"),
                   meaning("Wer gewann den Super Bowl XXXIII?", "de")) == "entities"


def test_two_scripts_have_their_own_threshold() -> None:
    settings = Settings(reuse_threshold=0.9, reuse_threshold_cross_script=0.8)
    en, de, zh = meaning("Why?", "en"), meaning("Warum?", "de"), meaning("为什么？", "zh")
    assert (threshold(settings, en, de), threshold(settings, en, zh)) == (0.9, 0.8)
    assert refusal(settings, en, zh, 0.85) == ""
    assert refusal(settings, en, de, 0.85) == "distance"


@pytest.mark.parametrize(("category", "intent", "about", "expected"), [
    ("lecture", "concept", False, True), ("lecture", "definition", False, True),
    ("followup", "concept", False, False), ("lecture", "exercise", False, False),
    ("lecture", "concept", True, False),
])
def test_only_standalone_lecture_questions_are_reused(category: str, intent: str, about: bool,
                                                       expected: bool) -> None:
    assert reusable(category, intent, about) is expected


# -- in a turn -------------------------------------------------------------------------------


def ask(tutor: Tutor, question: str, student: str) -> tuple[list[StreamEvent], DoneEvent]:
    events = list(tutor.stream(question, SAMPLE_COURSE, student))
    done = events[-1]
    assert isinstance(done, DoneEvent)
    return events, done


def test_a_question_asked_again_reuses_the_earlier_passages(make_tutor: MakeTutor) -> None:
    tutor, fake = make_tutor(ScriptedLLM(answer=["Bisection halves the bracket [1].",
                                                 "It keeps halving the bracket [1]."]))
    _, first = ask(tutor, ASKED, "alice")
    assert first.answer.reused_from == ""
    [entry] = tutor.ws.store.reuse.for_student(TENANT, "alice")
    assert (entry.question, entry.chunk_ids, entry.answer) == (
        ASKED, first.answer.context, first.answer.text)
    assert entry.turn_id == f"{first.answer.session_id}:1"
    events, again = ask(tutor, AGAIN, "bob")
    line = reply("asked_before", "en")
    assert again.answer.reused_from == str(entry.id)
    assert again.answer.context == first.answer.context
    assert again.answer.text == f"It keeps halving the bracket [1].\n\n{line}"
    # what the student saw is what their session keeps
    [stored] = tutor.ws.store.list_turns(TENANT, SAMPLE_COURSE, again.answer.session_id)
    assert stored.answer == again.answer.text
    streamed = [e.text for e in events if isinstance(e, TokenEvent)]
    assert streamed[-1] == f"\n\n{line}" and isinstance(events[-2], SourcesEvent)
    prompt = fake.answer_calls()[1].messages[-1].content
    assert "Earlier answer: Bisection halves the bracket." in prompt
    assert again.answer.timings["retrieve"] == 0.0  # no search
    assert tutor.ws.store.reuse.count(TENANT, SAMPLE_COURSE) == 1  # the reuse kept no entry


def test_a_question_with_another_meaning_is_searched(make_tutor: MakeTutor) -> None:
    tutor, fake = make_tutor(ScriptedLLM(answer=["Bisection [1].", "Not bisection [1]."]))
    ask(tutor, ASKED, "alice")
    _, other = ask(tutor, "Why does the bisection method work?", "bob")
    assert other.answer.reused_from == ""
    assert "Earlier answer" not in fake.answer_calls()[1].messages[-1].content
    assert other.answer.timings["retrieve"] > 0
    assert tutor.ws.store.reuse.count(TENANT, SAMPLE_COURSE) == 2


def test_reuse_can_be_turned_off(make_tutor: MakeTutor) -> None:
    tutor, _ = make_tutor(ScriptedLLM(answer=["Bisection [1].", "Again [1]."]), reuse=False)
    ask(tutor, ASKED, "alice")
    _, again = ask(tutor, ASKED, "bob")
    assert again.answer.reused_from == ""
    assert tutor.ws.store.reuse.count(TENANT, SAMPLE_COURSE) == 0


def test_an_entry_whose_passages_are_gone_is_dropped(make_tutor: MakeTutor) -> None:
    tutor, _ = make_tutor(ScriptedLLM(answer=["Bisection [1].", "Again [1]."]))
    _, first = ask(tutor, ASKED, "alice")
    chunk: Chunk = next(iter(tutor.ws.store.get_chunks(
        SearchFilters(TENANT, SAMPLE_COURSE), list(first.answer.context[:1])).values()))
    tutor.ws.remove_document(SAMPLE_COURSE, chunk.document_id)
    _, again = ask(tutor, ASKED, "bob")
    assert again.answer.reused_from == ""
    assert [e.question for e in tutor.ws.store.reuse.for_student(TENANT, "alice")] == []


def test_answers_not_covered_are_not_kept(make_tutor: MakeTutor) -> None:
    tutor, _ = make_tutor(ScriptedLLM())
    _, done = ask(tutor, "What is the recipe for tiramisu?", "alice")
    assert not done.answer.covered
    assert tutor.ws.store.reuse.count(TENANT, SAMPLE_COURSE) == 0


def test_a_question_searched_in_another_language_is_not_reused(make_tutor: MakeTutor) -> None:
    # the sample course has Italian notes: an Italian question is searched in Italian, and
    # the English answer's passages would leave them out
    tutor, _ = make_tutor(ScriptedLLM(answer=["Bisection [1].", "Bisezione [1]."]))
    ask(tutor, ASKED, "alice")
    _, italian = ask(tutor, "Come funziona il metodo di bisezione?", "bob")
    assert italian.answer.reused_from == ""
    assert italian.answer.timings["retrieve"] > 0
