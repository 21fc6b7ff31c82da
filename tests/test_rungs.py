"""Each rung's contract, checked exactly; the guard that rewrites, cuts back, or falls back."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest

from coursetutor.config import Settings
from coursetutor.llm.base import LLM, Delta, GenParams, Message, Usage
from coursetutor.llm.router import CallRecord, Router
from coursetutor.tutor.guard import Guarded, facts_for, fallback_help, guard_rung, is_fallback
from coursetutor.tutor.pedagogy import LADDER
from coursetutor.tutor.replies import reply
from coursetutor.tutor.rungs import (
    RungFacts,
    Violation,
    asks,
    check,
    cite,
    contract_lines,
    cut_back,
    new_results,
    says_something,
    sentences,
)

ELLIOTT = ("Elliott wants to walk 10000 steps a day. He walked 2000 steps to school and 1000 "
           "steps back, then went for a short jog. He has 2000 steps left. How many steps did "
           "he take during his jog?")
ELLIOTT_SOLUTION = "10000 - 2000 - 1000 - 2000 = 5000. He took 5000 steps. Answer: 5000"
FACTS = facts_for(ELLIOTT, ELLIOTT_SOLUTION, student="I think it is 3000?")
NEWTON = "Exercise 2: solve f(x) = x^3 - 2x - 5 with Newton's method from x_0 = 2.5, to 4 digits."
NEWTON_FACTS = RungFacts(exercise=NEWTON, answers=("2.0946",))


def rules(found: Sequence[Violation]) -> list[str]:
    return [v.rule for v in found]


# -- sentences ---------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "parts"), [
    ("Use Newton [1]. Then iterate? Yes!", ["Use Newton [1]. ", "Then iterate? ", "Yes!"]),
    ("x = 0.5 is close. Done", ["x = 0.5 is close. ", "Done"]),
    ("First step.\nSecond step", ["First step.\n", "Second step"]),
    ("Use it. [2] Next", ["Use it. [2] ", "Next"]),
    ("先求导。然后迭代？", ["先求导。", "然后迭代？"]),
    ("", []),
])
def test_sentences_keep_their_markers_and_join_back(text: str, parts: list[str]) -> None:
    assert sentences(text) == parts
    assert "".join(sentences(text)) == text


@pytest.mark.parametrize(("sentence", "question"), [
    ("What do you subtract first [1]?", True),
    ("1. What is f'(x)?", True),
    ("这一步是什么？", True),
    ("Subtract the steps he walked [1].", False),
])
def test_asks(sentence: str, question: bool) -> None:
    assert asks(sentence) is question


# -- numbers the student was not given -----------------------------------------------------


@pytest.mark.parametrize(("sentence", "found"), [
    ("He took 5000 steps during the jog.", ["5000"]),  # new and large
    ("Subtract 2000 and 1000 from 10000.", []),  # the exercise's data
    ("You said 3000: check it.", []),  # the student's own number
    ("There are 3 parts to add.", []),  # a small count
    ("Step 2: add them.", []),  # a label
    ("So the total is 4.", ["4"]),  # small, but stated as a result
    ("Then x = 0.5.", ["0.5"]),
    ("Did you get 7 steps?", ["7"]),  # a result asked back with its value
    ("Apply x_1 = x_0 - f(x_0)/f'(x_0) [2].", []),
])
def test_new_results(sentence: str, found: list[str]) -> None:
    assert new_results(sentence, FACTS.given()) == found


# -- hint, guiding, steps -------------------------------------------------------------------


def test_guiding_questions_with_their_answers_break_the_contract() -> None:
    text = ("Question: How many steps did Elliott take during his jog? Answer: he took 4000 "
            "steps [1].")
    found = check("guiding", text, FACTS)
    assert rules(found) == ["answer_given", "computed_result", "ends_in_statement"]
    assert found[1].detail == "4000"


@pytest.mark.parametrize("text", [
    "**Question:** How many steps did he jog? **Answer:** 4000 steps.",
    "How many steps did he jog? (Answer: 4000)",
    "他慢跑了多少步？答案：4000步。",
])
def test_answer_labels_in_markdown_and_other_languages(text: str) -> None:
    assert "answer_given" in rules(check("guiding", text, FACTS))


def test_guiding_questions_that_only_ask_keep_the_contract() -> None:
    text = ("Let's look at his day [1]. How many steps had he walked before the jog? "
            "How many does he still need [1]?")
    assert check("guiding", text, FACTS) == ()


def test_guiding_without_any_question() -> None:
    assert rules(check("guiding", "Subtract what he walked from his goal [1].", FACTS)) == [
        "no_question"]


def test_guiding_questions_in_bold_are_questions() -> None:
    text = "1. **What is the theorem you use?**\n2. **What hypotheses must you check?** [1]"
    assert check("guiding", text, FACTS) == ()


def test_guiding_must_end_with_a_question() -> None:
    text = "How many steps has he walked so far? Then subtract them [1]."
    found = check("guiding", text, FACTS)
    assert rules(found) == ["ends_in_statement"]
    assert found[0].sentence == "Then subtract them [1]."


def test_steps_describe_operations_without_carrying_them_out() -> None:
    text = ("1. Add the steps to school and back [1].\n2. Subtract that and the steps left "
            "from 10000.\n3. 10000 - 3000 - 2000 = 5000, the steps of the jog.")
    found = check("steps", text, FACTS)
    assert rules(found) == ["states_answer", "computed_result"]
    assert found[0].sentence.startswith("3. 10000")
    assert cut_back("steps", text, FACTS) == (
        "1. Add the steps to school and back [1].\n2. Subtract that and the steps left "
        "from 10000.")


def test_steps_with_an_intermediate_result_break_the_contract() -> None:
    found = check("steps", "First 2000 + 1000 makes 3000 [1]. Then subtract.", FACTS)
    assert found == ()  # 3000 is the student's own number
    found = check("steps", "First 2000 + 2000 makes 4000 [1]. Then subtract.", FACTS)
    assert [(v.rule, v.detail) for v in found] == [("computed_result", "4000")]


def test_a_hint_stating_the_answer_breaks_the_contract() -> None:
    found = check("hint", "He jogged 5000 steps [1].", FACTS)
    assert rules(found) == ["states_answer", "computed_result"]
    assert check("hint", "Compare his goal with what he walked [1].", FACTS) == ()


def test_a_reply_copying_the_solution() -> None:
    solution = ("Subtract the steps to school and back and the steps left from the daily goal "
                "to find the steps of the jog.")
    facts = RungFacts(exercise=ELLIOTT, solution=solution)
    text = ("Subtract the steps to school and back and the steps left from the daily goal to "
            "find the steps of the jog [1]. Which number do you start from?")
    assert rules(check("guiding", text, facts)) == ["copies_solution"]


# -- example --------------------------------------------------------------------------------


def test_an_example_with_the_exercises_numbers_breaks_the_contract() -> None:
    text = ("Say Ann wants 10000 steps and walked 2000 and 1000 [1]. Subtract them. "
            "Now do the same for Elliott.")
    found = check("example", text, FACTS)
    assert rules(found) == ["same_numbers"]
    assert found[0].detail == "1000, 2000, 10000"


def test_an_example_with_its_own_numbers_keeps_the_contract() -> None:
    text = ("Say Ann wants 9000 steps, walked 1500 and 500, and has 1000 left [1]. "
            "9000 - 1500 - 500 - 1000 = 6000 steps for her run. Now try Elliott's numbers.")
    # one shared value (1000) of the exercise's three is chance, not the same problem
    assert check("example", text, FACTS) == ()


def test_an_example_on_the_students_own_working_breaks_the_contract() -> None:
    facts = RungFacts(exercise="Jam has 26 pencils in three boxes and 2 loose ones; Meg has 46.",
                      student="Each box holds 24 pencils, so 70 in total.")
    text = ("Each box holds 24 pencils [1].\n\\[\n\\frac{46}{24} = 1.9167\n\\]\n"
            "Take 30 pens in boxes of 7 instead: 30 / 7 is about 4.3, so 5 boxes.")
    assert [(v.rule, v.detail) for v in check("example", text, facts)] == [
        ("same_numbers", "24"), ("same_numbers", "24, 46")]
    assert cut_back("example", text, facts) == (
        "Take 30 pens in boxes of 7 instead: 30 / 7 is about 4.3, so 5 boxes.")


JAM = ("Jam has three boxes full of pencils and 2 loose pencils which give a total of 26 "
       "pencils. If her sister, Meg, has 46 pencils, how many boxes do Jam and Meg need to "
       "store all their pencils?")


def test_an_example_on_the_exercises_own_story_breaks_the_contract() -> None:
    # MRBench 232: no number of the exercise, but its own people and pencils throughout
    text = ("[1] To solve this problem, we need to determine how many boxes of pencils Jam and "
            "Meg need to store all their pencils. To find out how many boxes of pencils Meg "
            "needs, we divide the total number of pencils Meg has by the number of pencils she "
            "can store in one box. Since Jam and Meg cannot store a fraction of a box, we round "
            "up to the next whole number.")
    facts = RungFacts(exercise=JAM)
    assert facts.own_names() == {"Jam", "Meg"}
    assert [(v.rule, v.detail) for v in check("example", text, facts)] == [
        ("same_story", "Jam, Meg")]
    assert cut_back("example", text, facts) == ""  # no sentence of it is another problem's
    other = ("Say Tom has 4 crates of 10 apples and 3 loose ones, 43 apples, and a crate holds "
             "10: 43 / 10 is 4.3, so he needs 5 crates. Now do the same for Jam and Meg.")
    assert check("example", other, facts) == ()


def test_a_name_the_course_has_is_no_story_of_the_exercise() -> None:
    facts = RungFacts(exercise="Use Newton's method on f(x) = x^3 - 2x - 5 from x_0 = 2.5.",
                      course="Newton's method follows the tangent line to its zero.")
    assert facts.own_names() == set()
    text = "Take Newton's method on g(x) = x^2 - 3 from x_0 = 1: x_1 = 2. Now try yours."
    assert check("example", text, facts) == ()


def test_an_example_on_the_exercises_function_breaks_the_contract() -> None:
    text = "Take f(x) = x^3 - 2x - 5 and start at x_0 = 3 [1]. Then x_1 = 2.36."
    found = check("example", text, NEWTON_FACTS)
    # x^3 and 5 are the exercise's numbers too (of its four: 3, 5, 2.5, 4)
    assert [(v.rule, v.detail) for v in found] == [("same_numbers", "3, 5"),
                                                   ("same_function", "f(x)=x^3-2x-5")]
    other = "Take f(x) = x^2 - 2 from x_0 = 1 [1]: x_1 = 1.5, x_2 = 1.4167. Now try yours."
    assert check("example", other, NEWTON_FACTS) == ()


def test_an_example_stating_the_exercises_answer() -> None:
    text = "For g(x) = x^2 - 3 [1] the root is 1.7321; yours ends near 2.0946."
    assert rules(check("example", text, NEWTON_FACTS)) == ["states_answer"]


def test_the_solution_rung_has_no_contract_here() -> None:
    assert check("solution", "He took 5000 steps.", FACTS) == ()
    assert cut_back("solution", " He took 5000 steps. ", FACTS) == "He took 5000 steps."


# -- cutting back -----------------------------------------------------------------------------


def test_cut_back_keeps_the_question_and_drops_its_answer() -> None:
    text = ("Question: How many steps did Elliott walk before his jog [1]? Answer: 3000. "
            "Question: How many were left? Answer: he took 4000 steps.")
    assert cut_back("guiding", text, FACTS) == (
        "Question: How many steps did Elliott walk before his jog [1]? Question: How many "
        "were left?")


def test_cut_back_stops_a_guiding_reply_at_its_last_question() -> None:
    text = "Look at his goal [1]. What did he walk so far? So he jogged 5000."
    assert cut_back("guiding", text, FACTS) == "Look at his goal [1]. What did he walk so far?"


def test_cut_back_drops_an_examples_sentences_on_the_exercise() -> None:
    text = ("Take g(x) = x^2 - 2 from x_0 = 1 [1]: the next guess is 1.5. "
            "For your f(x) = x^3 - 2x - 5 the first step gives 2.09. Apply the same steps.")
    assert cut_back("example", text, NEWTON_FACTS) == (
        "Take g(x) = x^2 - 2 from x_0 = 1 [1]: the next guess is 1.5. Apply the same steps.")


def test_cut_back_with_nothing_left() -> None:
    assert cut_back("guiding", "He jogged 5000 steps.", FACTS) == ""
    assert cut_back("hint", "5000 [1].", FACTS) == ""


# -- citing the exercise ----------------------------------------------------------------------


@pytest.mark.parametrize(("text", "number", "cited"), [
    ("Look at the goal. What is left?", 2, "Look at the goal [2]. What is left?"),
    ("Look at the goal [1]. What is left?", 2, "Look at the goal [1] [2]. What is left?"),
    ("Look at the goal [1, 2].", 2, "Look at the goal [1, 2]."),
    ("Look at the goal [12].", 2, "Look at the goal [12] [2]."),
    ("Look at the goal", 1, "Look at the goal [1]"),
    ("Look at the goal.", None, "Look at the goal."),
])
def test_cite(text: str, number: int | None, cited: str) -> None:
    assert cite(text, number) == cited


def test_contract_lines_name_each_violation_once() -> None:
    found = check("guiding", "Answer: he took 4000 steps. Answer: he took 4000 steps.", FACTS)
    lines = contract_lines(found)
    assert lines.count("\n") + 1 == len(set(lines.splitlines()))
    assert "It answers its own question" in lines and "(4000)" in lines


# -- the guard --------------------------------------------------------------------------------


class Rewriter(LLM):
    """Returns scripted rewrites and records the prompts it was sent."""

    backend = "scripted"

    def __init__(self, replies: Sequence[str] = ()) -> None:
        super().__init__("scripted-model")
        self.replies = list(replies)
        self.prompts: list[str] = []

    @classmethod
    def from_settings(cls, settings: Settings, model: str) -> Rewriter:
        return cls()

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def stream(self, messages: Sequence[Message], params: GenParams) -> Iterator[Delta]:
        self.prompts.append(messages[0].content)
        yield Delta(text=self.replies.pop(0))
        yield Delta(usage=Usage(10, 5))


def guard(level: str, text: str, rewrites: Sequence[str] = (),
          facts: RungFacts = FACTS) -> tuple[Guarded, Rewriter]:
    llm = Rewriter(rewrites)
    router = Router(Settings(), factory=lambda task, model: llm)
    log: list[CallRecord] = []
    assert level in LADDER
    return guard_rung(router, level, text, facts, "en", 1, log), llm  # type: ignore[arg-type]


def test_a_reply_that_holds_is_only_cited() -> None:
    out, llm = guard("guiding", "What did he walk before the jog? What is left?")
    assert out == Guarded("What did he walk before the jog [1]? What is left?")
    assert llm.prompts == []


def test_a_breaking_reply_is_rewritten_once_with_the_violation_named() -> None:
    bad = "Question: How many steps did he jog? Answer: 5000 [1]."
    good = "How many steps had he walked before the jog [1]? What does that leave?"
    out, llm = guard("guiding", bad, [good])
    assert (out.text, out.rewritten, out.cut, out.fallback) == (good, True, False, False)
    assert rules(out.found) == ["states_answer", "answer_given", "computed_result",
                                "ends_in_statement"]
    prompt = llm.prompts[0]
    assert "It answers its own question" in prompt and "5000" in prompt
    assert "guiding questions" in prompt  # the rung's task
    assert ELLIOTT in prompt and bad in prompt


def test_a_rewrite_that_still_breaks_is_cut_back() -> None:
    bad = "He jogged 5000 steps [1]."
    rewrite = "What had he walked before the jog [1]? He jogged 5000 steps."
    out, _ = guard("guiding", bad, [rewrite])
    assert (out.text, out.cut, out.fallback) == (
        "What had he walked before the jog [1]?", True, False)


def test_nothing_holding_falls_back_to_the_rungs_own_help() -> None:
    out, _ = guard("steps", "He jogged 5000 steps [1].", ["It is 5000."])
    assert out.fallback
    assert out.text == fallback_help("steps", "en", 1)
    assert "[1]" in out.text and out.text != reply("withheld", "en")


def test_questions_with_a_closing_remark_are_cut_to_the_questions_without_a_rewrite() -> None:
    """The questions are the help: a rewrite cost 8 s on 2 cores and gave the fixed help."""
    text = ("What had he walked before the jog [1]? What does the whole walk add up to? "
            "These questions will help you understand the problem.")
    out, llm = guard("guiding", text)
    assert (out.text, out.cut, out.rewritten, out.fallback) == (
        "What had he walked before the jog [1]? What does the whole walk add up to?", True,
        False, False)
    assert rules(out.found) == ["ends_in_statement"] and llm.prompts == []


def test_an_empty_reply_gets_the_rungs_help_without_a_rewrite() -> None:
    out, llm = guard("guiding", " ")
    assert (out.text, out.fallback, llm.prompts) == (fallback_help("guiding", "en", 1), True, [])


def test_the_fixed_help_is_told_apart_from_the_models_whatever_it_cites() -> None:
    assert is_fallback(fallback_help("guiding", "it", 3), "guiding", "it")
    assert is_fallback(fallback_help("hint", "en", None), "hint", "en")
    assert not is_fallback(fallback_help("hint", "en", 1), "guiding", "en")
    assert not is_fallback("What is the theorem you use [1]?", "guiding", "en")
    slip = "Check this computation again: 70 ÷ 3 = 24 does not hold."
    slip = f"{slip}\n\n{fallback_help('steps', 'en', 1)}"
    assert is_fallback(slip, "steps", "en")
    assert not is_fallback(fallback_help("hint", "en", 1), "solution", "en")


def test_each_rung_has_its_own_fallback_in_each_language() -> None:
    for language in ("en", "it", "de", "fr", "es", "zh", "ko", "ja"):
        texts = [fallback_help(level, language, 3) for level in LADDER[:4]]
        assert len(set(texts)) == 4
        assert all("[3]" in t and "{" not in t for t in texts)
    assert "[" not in fallback_help("hint", "en", None)


# -- computations ---------------------------------------------------------------------------

TOWELS = ("In one month Kylie uses 3 bath towels, her 2 daughters use a total of 6 bath towels, "
          "and her husband uses a total of 3 bath towels. If the washing machine can fit 4 bath "
          "towels for one load, how many loads will the Smiths need?")
TOWELS_SOLUTION = ("The total number of bath towels used in one month is 3 + 6 + 3 = 12 bath "
                   "towels\nThe number of loads of laundry the Smiths need to do is 12 / 4 = 3 "
                   "loads\n 3")


def test_carrying_out_the_last_operation_gives_the_answer_away() -> None:
    # 3 is also the exercise's number of towels: stated alone it could be data, computed not
    facts = facts_for(TOWELS, TOWELS_SOLUTION, student="So it's 3 + 3 + 6 = 12.")
    assert facts.answers == () and facts.results == ("3",)
    text = ("1. Add the towels of the whole family [1].\n3. Divide the total by 4 [1].\n"
            "4. The Smiths will need 12 / 4 = 3 loads of laundry.")
    found = check("steps", text, facts)
    assert [(v.rule, v.detail) for v in found] == [("states_answer", "12 / 4 = 3")]
    assert cut_back("steps", text, facts) == (
        "1. Add the towels of the whole family [1].\n3. Divide the total by 4 [1].")
    assert check("steps", "Kylie uses 3 towels [1]. Add them to the others.", facts) == ()


def test_a_wrong_computation_is_not_repeated_as_true() -> None:
    facts = facts_for("Jam has 26 pencils in three boxes and 2 loose.", "", student=(
        "we divide 70 by 3. So 70 divided by 3 is equal to 24."))
    text = "So 70 divided by 3 is equal to 24 [1]. Now count the boxes."
    found = check("steps", text, facts)
    assert [(v.rule, v.detail) for v in found] == [
        ("wrong_sum", "70 divided by 3 is equal to 24")]
    assert "does not hold" in found[0].describe()
    assert check("guiding", "You wrote 70 / 3 = 24 [1]. Can you check that division?",
                 facts) == ()


def test_a_value_only_the_student_wrote_is_not_stated_as_a_fact() -> None:
    facts = facts_for(TOWELS, TOWELS_SOLUTION, student=(
        "That makes a total of 3 + 6 + 3 = 15 towels.\nOh, right. So it's 3 + 3 + 6 = 12."))
    text = "1. Add the towels again.\nThe total number of towels used in the month is 15 [1]."
    found = [(v.rule, v.detail) for v in check("steps", text, facts)]
    assert ("student_value", "15") in found
    # the tutor's earlier reply named the student's value to correct it: still only theirs
    shown = facts_for(TOWELS, TOWELS_SOLUTION, student=facts.student,
                      shown="3 plus 3 plus 6 = 12 not 15")
    assert ("student_value", "15") in [(v.rule, v.detail) for v in check("steps", text, shown)]
    # the student's value the solution has too is theirs to build on
    assert check("steps", "You found 12 towels in all [1]. Now divide by 4.", facts) == ()
    # without a worked solution nothing tells their values apart
    bare = facts_for(TOWELS, "", student="That makes a total of 15 towels.")
    assert check("steps", "The total is 15 towels [1]. Now divide by 4.", bare) == ()


def test_a_rewrite_cut_at_its_token_limit_ends_where_a_sentence_did() -> None:
    bad = "He jogged 5000 steps [1]."
    rewrite = ("Subtract what he walked and what is left from his goal [1]. The student can now "
               "apply the same")
    out, _ = guard("steps", bad, [rewrite])
    assert (out.text, out.rewritten, out.fallback) == (
        "Subtract what he walked and what is left from his goal [1].", True, False)


@pytest.mark.parametrize(("text", "cited"), [
    ("[1] To solve it, divide. Then round up.", "To solve it, divide [1]. Then round up."),
    ("[1] [2] Divide. Then round up. [1]", "Divide [1] [2]. Then round up. [1]"),
    ("Use Newton. Then stop.", "Use Newton [1]. Then stop."),
])
def test_markers_a_reply_opens_with_follow_its_first_sentence(text: str, cited: str) -> None:
    assert cite(text, 1) == cited


@pytest.mark.parametrize(("text", "said"), [
    ("Here are the steps the student should follow: [1]\n\n5 [1].", False),
    ("Ecco i passi che il studente dovrebbe seguire per completare l'esercizio: [1]\n\n1. [3]",
     False),
    ("[1] [2] [3]", False),
    ("Subtract what he walked from his goal [1].", True),
    ("The steps:\n1. Subtract what he walked from his goal [1].", True),
    ("Use Newton's formula:\n x_{n+1} = x_n - f(x_n)/f'(x_n) [1]", True),
])
def test_a_lead_in_and_markers_say_nothing(text: str, said: bool) -> None:
    assert says_something(text) is said


def test_a_rewrite_that_is_a_lead_in_and_a_label_gets_the_rungs_help() -> None:
    out, _ = guard("steps", "He jogged 5000 steps [1].",
                   ["Here are the steps the student should follow: [1]\n\n5"])
    assert out.fallback and out.text == fallback_help("steps", "en", 1)
