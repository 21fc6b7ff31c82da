"""The answer check inside a tutor turn over the real sample course (scripted model)."""

from __future__ import annotations

import re

import pytest

from coursetutor.types import DoneEvent, TokenEvent

from . import test_tutor_turn as base
from .test_tutor_turn import CONCEPT, MakeTutor, Say, ScriptedLLM, run

pytestmark = pytest.mark.prose  # the scripted model writes prose

# the turn's fixtures: a tutor over the real sample course with a scripted model
workspace = base.workspace
make_tutor = base.make_tutor

WRONG_BOUND = "Bisection needs at most 17 steps for any tolerance, whatever the bracket [1]."
RIGHT = "The bisection method repeatedly halves a bracket [1]."


def test_a_supported_reply_stays_and_cites_the_passage_that_says_it(
        make_tutor: MakeTutor) -> None:
    fake = ScriptedLLM(answer=[Say((RIGHT,))])
    tutor, _ = make_tutor(fake, answer_check=True)
    events, answer = run(tutor, CONCEPT)
    assert "".join(e.text for e in events if isinstance(e, TokenEvent)) == RIGHT
    assert (answer.checked, answer.removed) == (True, ())
    # [1] is the video's "Bisection always works, but it's slow": the claim now cites the
    # passage that says it, even with nothing removed
    assert re.fullmatch(r"The bisection method repeatedly halves a bracket \[\d\]\.", answer.text)
    assert "repeatedly halves a bracket" in answer.sources[0].snippet


def test_a_claim_with_a_number_not_in_the_sources_is_removed(make_tutor: MakeTutor) -> None:
    second = "It keeps the half in which the sign change survives [1]. "
    fake = ScriptedLLM(answer=[Say((f"{RIGHT} ", second, WRONG_BOUND))])
    tutor, _ = make_tutor(fake, answer_check=True)
    events, answer = run(tutor, CONCEPT)
    streamed = "".join(e.text for e in events if isinstance(e, TokenEvent))
    assert WRONG_BOUND in streamed  # tokens stream as the model writes them
    assert answer.removed == (WRONG_BOUND,)  # the final event carries the checked text
    assert WRONG_BOUND not in answer.text
    # both kept claims now cite the passage that says so (the model cited another one)
    assert re.fullmatch(r"The bisection method repeatedly halves a bracket \[(\d)\]\. It keeps "
                        r"the half in which the sign change survives \[\1\]\.", answer.text)
    assert "repeatedly halves a bracket" in answer.sources[0].snippet
    assert "check" in answer.timings


def test_a_wrong_answer_becomes_quote_first(make_tutor: MakeTutor) -> None:
    fake = ScriptedLLM(answer=[Say((WRONG_BOUND,))], check_claim=["no"])
    tutor, _ = make_tutor(fake, answer_check=True)
    events, answer = run(tutor, CONCEPT)
    done = events[-1]
    assert isinstance(done, DoneEvent)
    lines = answer.text.split("\n")
    assert lines[0] == "The course material puts it this way:"
    assert all(line.startswith("> ") and line.endswith("]") for line in lines[1:])
    assert len(lines) == 3
    assert answer.removed == (WRONG_BOUND,)
    assert answer.sources  # the quoted sentences keep their citations


def test_the_judge_is_asked_only_about_unsure_claims(make_tutor: MakeTutor) -> None:
    unsure = "It is the slowest of the methods but it never fails [1]."
    fake = ScriptedLLM(answer=[Say((f"{RIGHT} {unsure}",))], check_claim=["no"])
    tutor, _ = make_tutor(fake, answer_check=True)
    _, answer = run(tutor, CONCEPT)
    asked = [c for c in fake.calls if c.kind == "check_claim"]
    assert len(asked) <= 1
    if asked:  # the scores were unsure of the second claim: the judge said no
        assert "never fails" in asked[0].messages[-1].content
        assert answer.removed == (unsure,)


def test_the_check_can_be_turned_off(make_tutor: MakeTutor) -> None:
    fake = ScriptedLLM(answer=[Say((WRONG_BOUND,))])
    tutor, _ = make_tutor(fake, answer_check=False)
    _, answer = run(tutor, CONCEPT)
    assert answer.text == WRONG_BOUND
    assert (answer.checked, answer.removed) == (False, ())
