"""The next step of a worked solution (next_step.py): steps, what is done, masking, and the
evaluation's test of whether a hint names something the solution uses."""

from __future__ import annotations

from pathlib import Path

import pytest

from coursetutor.eval.answer_data import load_mrbench
from coursetutor.eval.answers import solved
from coursetutor.tutor.next_step import done, mask, next_step, steps, uses_solution

PROBLEM = ("Jam has three boxes full of pencils and 2 loose pencils which give a total of 26 "
           "pencils. If her sister, Meg, has 46 pencils, how many boxes do Jam and Meg need "
           "to store all their pencils?")
SOLUTION = ("There are a total of 26 - 2 = 24 pencils in the three boxes.\n"
            "Thus, each box can contain 24 / 3 = 8 pencils.\n"
            "Together, Jam and Meg have 26 + 46 = 72 pencils.\n"
            "Therefore, they need 72 / 8 = 9 boxes to put in all their pencils.\n 9")
NEWTON_EXERCISE = ("We want to solve the equation `cos(x) = x`. a) Write the equation in the "
                   "form `f(x) = 0` and write down Newton's iteration `x_{n+1} = ...` "
                   "explicitly for your `f`.")
NEWTON_SOLUTION = """## Solution 2: Newton's method for cos(x) = x

a) Take `f(x) = cos(x) - x`, so `f'(x) = -sin(x) - 1`. Newton's iteration is

    x_{n+1} = x_n - (cos(x_n) - x_n) / (-sin(x_n) - 1)

The root is `r = 0.7390851332`.
"""


def test_steps_are_the_solutions_sentences_without_headings_or_bare_results() -> None:
    assert steps(SOLUTION) == [
        "There are a total of 26 - 2 = 24 pencils in the three boxes.",
        "Thus, each box can contain 24 / 3 = 8 pencils.",
        "Together, Jam and Meg have 26 + 46 = 72 pencils.",
        "Therefore, they need 72 / 8 = 9 boxes to put in all their pencils."]
    assert not any(s.startswith("##") for s in steps(NEWTON_SOLUTION))


def test_a_computed_step_is_done_when_its_numbers_are_given() -> None:
    first = steps(SOLUTION)[0]
    assert not done(first, PROBLEM, "I don't know where to start")
    assert done(first, PROBLEM, "26 minus 2 is 24 pencils in the boxes")
    assert done(first, PROBLEM, "26-2 = 24")  # the numbers decide, not the words


def test_the_next_step_is_the_first_one_left_with_its_results_masked() -> None:
    step = next_step(SOLUTION, PROBLEM, "There are 24 pencils in the boxes.")
    assert step is not None and (step.number, step.total) == (2, 4)
    # "three" is a word of the problem, not its number 3
    assert step.text == "Thus, each box can contain 24 / \u2026 = \u2026 pencils."
    assert "72" not in " ".join(step.later) and "9 boxes" not in " ".join(step.later)
    assert next_step(SOLUTION, PROBLEM, "24, then 8 per box, 72 together, so 9 boxes") is None


def test_a_formula_step_is_done_when_the_student_wrote_its_formulas() -> None:
    fresh = next_step(NEWTON_SOLUTION, NEWTON_EXERCISE, "help me with exercise 2")
    assert fresh is not None and fresh.text.startswith("a) Take `f(x) = cos(x) - x`")
    wrote = "f(x) = cos(x) - x, f'(x) = -sin(x) - 1, x_{n+1} = x_n - (cos(x_n) - x_n)/(-sin(x_n)-1)"
    after = next_step(NEWTON_SOLUTION, NEWTON_EXERCISE, wrote)
    assert after is not None and after.text == "The root is `r = \u2026`."


def test_mask_keeps_the_numbers_the_student_was_given_and_the_trivial_ones() -> None:
    hidden = "\u2026"
    assert mask("x_1 = 1 - 0.46 / 1.84 = 0.75", "start from x_0 = 1") == (
        f"x_1 = 1 - {hidden} / {hidden} = {hidden}")
    assert mask("f(2) = 8 - 2 - 2 = 4", "f(x) = x^3 - x - 2 on [1, 2]") == (
        f"f(2) = {hidden} - 2 - 2 = {hidden}")


def test_a_hint_names_the_solution_only_through_the_steps_left() -> None:
    said = "There are 24 pencils in the boxes."
    assert uses_solution("How many pencils does each box contain?", SOLUTION, PROBLEM, said)
    assert not uses_solution("Read the exercise again and think about what it asks.",
                             SOLUTION, PROBLEM, said)
    assert not uses_solution("Can you tell me how you got your answer?", SOLUTION, PROBLEM,
                             said)
    # nothing is left to name once every step is done
    assert not uses_solution("each box holds 8", SOLUTION, PROBLEM, "24, 8 per box, 72, 9 boxes")


MRBENCH = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "mrbench-v1.json"
GENERIC = ("Read the exercise again and think about what it asks.",
           "Can you tell me how you got your answer?", "Check your work.")


def test_the_proxy_on_mrbench_tells_generic_lines_from_tutors_turns() -> None:
    if not MRBENCH.exists():
        pytest.skip("../shared/datasets/mrbench-v1.json is absent")
    dialogues = [d for d in load_mrbench(MRBENCH) if solved(d.solution) and d.turns]
    # generic lines name nothing of a solution: at most 1 in 100
    generic = [uses_solution(g, d.solution, d.problem, "") for d in dialogues for g in GENERIC]
    assert sum(generic) <= 0.01 * len(generic)
    # the human tutors' own last turns, many of which ask the student to explain their
    # working, name a step of the solution left in about a quarter of the dialogues
    tutors = [uses_solution(d.turns[-1][1], d.solution, d.problem,
                            "\n".join(s for s, _ in d.turns[:-1])) for d in dialogues]
    assert 0.2 <= sum(tutors) / len(tutors) <= 0.4
    # and most dialogues still have a step left for the hint to point at
    left = [next_step(d.solution, d.problem, "\n".join([*(s for s, _ in d.turns),
                                                        d.last_student])) for d in dialogues]
    assert sum(step is not None for step in left) >= 0.7 * len(left)


# the pack's optimization sheet as a PDF gives it: parts (a) to (e) in running text, and
# letters in parentheses inside its formulas ("f (i)", "y(i)") that are no parts
SHEET = ("such that it minimizes the Brier-loss, i.e., Remp = Pn i=1 ∥y(i) − π(x(i))∥2 2. "
         "(a) Show that the gradient ∇θ Remp = nX i=1 2 y(i)(exp(f (i))) (exp(f (i)) + 1)2 "
         "(b) Show that the Hessian ∇2 θ Remp = Pn i=1 2 exp(f (i) ) (exp(f (i) )+1)4 "
         "(c) Show that Remp is not convex in general\n"
         "(d) Write an R script to find an optimal model via Newton-Raphson (do 30 "
         "iterations, x[0] = 0). (e) Explain why Gauss-Newton is applicable here and write "
         "an R script to find an optimal model via GaussNewton (do 30 iterations, x[0] = 0).")


def test_an_exercise_is_cut_into_its_parts_in_order() -> None:
    from coursetutor.tutor.exercise import parts

    found = parts(SHEET)
    assert list(found) == ["a", "b", "c", "d", "e"]
    assert found["c"] == "(c) Show that Remp is not convex in general"
    assert found["e"].startswith("(e) Explain why Gauss-Newton is applicable")
    # one part, or none: no parts
    assert parts("Compute f(2) (a quick check).") == {}
    assert parts("a) Show that f has a root.\nb) Perform five steps.") == {
        "a": "a) Show that f has a root.", "b": "b) Perform five steps."}


@pytest.mark.parametrize(("question", "part"), [
    ("Why is Gauss-Newton applicable in exercise 1 (e)?", "e"),
    ("Dammi la soluzione dell'esercizio 1 (c).", "c"),
    ("为什么练习1 (e) 中可以使用高斯-牛顿法？", "e"),
    ("연습 문제 1 (e)에서 왜 가우스-뉴턴 방법을 사용할 수 있나요?", "e"),
    ("Help with exercise 3b please", "b"),
    ("I am stuck on part (c)", "c"),
    ("Can you help me with exercise 3?", None),
    ("esercizio 1 a cosa serve?", None),  # "a" is a word of the sentence
])
def test_the_part_a_question_names(question: str, part: str | None) -> None:
    from coursetutor.tutor.exercise import referenced_part

    assert referenced_part(question) == part


@pytest.mark.parametrize(("statement", "question", "judged"), [
    ("The exercise 1 of sheet 9 minimizes the Brier-loss.",
     "Which loss does exercise 1 of sheet 9 minimise?", "It minimizes the Brier-loss."),
    ("Gauss-Newton is applicable in exercise 1 (e) because Remp is a sum of squares.",
     "Why is Gauss-Newton applicable in exercise 1 (e)?",
     "Gauss-Newton is applicable because Remp is a sum of squares."),
    ("In exercise 1, the model is logistic.", "What is exercise 1 about?",
     "the model is logistic."),
    ("Gauss-Newton 메서드는 Exercise 1 (e)에서 사용됩니다.",
     "연습 문제 1 (e)에서 왜 가우스-뉴턴 방법을 사용할 수 있나요?",
     "Gauss-Newton 메서드는 사용됩니다."),
    # another exercise than the question's is a claim of the statement's own
    ("Exercise 2 uses the secant method.", "Which method does exercise 1 use?",
     "Exercise 2 uses the secant method."),
    ("Newton converges quadratically.", "What is exercise 1 about?",
     "Newton converges quadratically."),
])
def test_the_exercise_the_question_names_is_no_claim(statement: str, question: str,
                                                     judged: str) -> None:
    from coursetutor.tutor.exercise import without_reference

    assert without_reference(statement, question) == judged


def test_the_part_a_question_asks_about_without_naming_it() -> None:
    from coursetutor.tutor.exercise import parts
    from coursetutor.tutor.next_step import asks_part, closest_part

    found = parts(SHEET)
    asked = "Why is the empirical risk in exercise 1 not convex in general?"
    assert closest_part(asked, found) == "c" and asks_part(asked, found["c"])
    # sharing "exercise" and "why" asks about no part
    assert closest_part("Why exercise 1?", found) is None
    assert closest_part("Which loss does exercise 1 minimise?", found) is None


def test_a_pdf_underbrace_does_not_make_a_step_unreadable() -> None:
    step = next_step("(c) Assume there is one observation with y(1) = 0, then the Hessian "
                     "is 2 exp(f) x x⊤ | {z } p.s.d. times a number.", "", "")
    assert step is not None and "{z" not in step.text


def test_a_spaced_ellipsis_ends_no_step() -> None:
    solution = ("(e) We can apply Gauss-Newton since Remp is the squared sum of the residuals "
                "r = (y(1) − π(x(1)), . . . , y(n) − π(x(n)))⊤. Here we compute the Jacobian.")
    assert "r = (y(1) − π(x(1)), \u22ef , y(n) − π(x(n)))⊤." in steps(solution)[0]


def test_the_steps_rung_stops_before_the_step_that_computes_the_result() -> None:
    from coursetutor.tutor.stages.plan import numbered

    step = next_step(SOLUTION, PROBLEM, "I don't know where to start")
    assert step is not None
    lines = numbered(step, whole=True).splitlines()
    # "Therefore, they need 72 / 8 = … boxes": the model worked out the hidden number
    assert len(lines) == 3 and not any("boxes to put" in line for line in lines)
    assert numbered(step).splitlines() == [f"1. {step.text}"]


def test_the_steps_rung_keeps_to_the_part_and_leaves_a_table_of_hidden_values_out() -> None:
    """Exercise 4 of the sample course: the steps rung showed part (a)'s table of hidden
    iterates, and the model filled it in with numbers of its own ("| 3 | 2 | 4 |", "The
    root is r = 2"); parts (b) and (c) came after it, with (b)'s "5 evaluations" unmasked."""
    from coursetutor.tutor.next_step import Step
    from coursetutor.tutor.stages.plan import numbered

    step = Step("a) `f(2) = \u2026 - 4 - 5 = -1` and `f(3) = \u2026 - \u2026 - 5 = \u2026`.",
                1, 8, later=(
                    "Continuing with `x_{n+1} = x_n - f(x_n)(x_n - x_{n-1}) / (f(x_n) - "
                    "f(x_{n-1}))`: | n | x_n | f(x_n) | |---|---|---| | 2 | \u2026 | \u2026 |",
                    "So `|x_5 - x_4| <= \u2026` is small.",
                    "The root is `r = \u2026`.",
                    "b) Computing `x_2, ..., x_5` needs 2 + 3 = **5 evaluations**.",
                    "c) The secant method has order \u2026."))
    assert numbered(step, whole=True).splitlines() == [
        "1. a) `f(2) = \u2026 - 4 - 5 = -1` and `f(3) = \u2026 - \u2026 - 5 = \u2026`.",
        "2. Continuing with `x_{n+1} = x_n - f(x_n)(x_n - x_{n-1}) / (f(x_n) - f(x_{n-1}))`",
        "3. So `|x_5 - x_4| <= \u2026` is small."]
