"""The reason a step of a worked solution gives, which a hint shows (reason.py)."""

from __future__ import annotations

import dataclasses

import pytest

from coursetutor.tutor.guard import facts_for
from coursetutor.tutor.reason import named, premise
from coursetutor.tutor.replies import reply
from coursetutor.tutor.rungs import check

GN = ("In this case, we can apply Gauss-Newton since Remp is the squared sum of the residuals "
      "r = (y(1) − π(x(1)), ⋯ , y(n) − π(x(n)))⊤.")


@pytest.mark.parametrize(("step", "language", "reason"), [
    # what the step does, then its reason: the reason as the solution words it
    (GN, "en", "Remp is the squared sum of the residuals r = (y(1) − π(x(1)), ⋯ , "
               "y(n) − π(x(n)))⊤"),
    # the reason first, to its comma outside brackets ("[a, b]" is no end)
    ("Since f is continuous on [a, b], it has a maximum there.", "en",
     "f is continuous on [a, b]"),
    ("Since the function changes sign on [1, 2], there is a root in it.", "en",
     "The function changes sign on [1, 2]"),
    # the step's next sentence is no part of its reason
    ("We can apply Gauss-Newton since R is a squared sum of residuals. In each step we "
     "solve (J^T J) d = -J^T r.", "en", "R is a squared sum of residuals"),
    ("f ha un massimo perché f è continua su [a, b] chiuso e limitato.", "it",
     "f è continua su [a, b] chiuso e limitato"),
    ("由于 f 在 [a,b] 上连续，所以 f 有最大值。", "zh", "f 在 [a,b] 上连续"),
    # no reason, or one that cannot be shown: a hidden number, a formula alone, nothing
    # the step does with it
    ("Compute the derivative of f.", "en", ""),
    ("She got … gift cards since $50 divided by $10 is equal to ….", "en", ""),
    ("The root is 2 because f(2) = 0.", "en", ""),
    ("Because f is continuous on [a, b].", "en", ""),
    ("Da f stetig ist, hat f ein Maximum.", "de", ""),  # a reason of hardly a word
    ("f가 연속이므로 최대값을 가진다.", "ko", ""),  # a language without the words
])
def test_the_reason_a_step_gives(step: str, language: str, reason: str) -> None:
    assert premise(step, language) == reason


def test_a_hint_that_shows_the_reason_copies_no_solution() -> None:
    solution = f"{GN} For Gauss-Newton, we solve in each update step (∇r⊤∇r) d = −∇r⊤ r."
    reason = premise(GN, "en")
    hint = reply("step_reason", "en", premise=f"{reason} [1].")
    facts = facts_for("(e) Explain why Gauss-Newton is applicable here.", solution)
    assert [v.rule for v in check("hint", hint, facts)] == ["copies_solution"]
    # the reason is shown by design; the rest of the solution still may not be copied
    shown = dataclasses.replace(facts, reason=reason)
    assert check("hint", hint, shown) == ()
    # translated, the hint keeps the reason's formulas as written: no copy either
    chinese = f"提示：Remp 是残差 {reason.split('residuals ')[1]} 的平方和 [1]。这让你可以做什么？"
    assert [v.rule for v in check("hint", chinese, facts)] == ["copies_solution"]
    assert check("hint", chinese, shown) == ()
    copied = f"{hint} For Gauss-Newton, we solve in each update step (∇r⊤∇r) d = −∇r⊤ r."
    assert [v.rule for v in check("hint", copied, shown)] == ["copies_solution"]


TASK = ("Explain why Gauss-Newton is applicable here and write an R script to find an optimal "
        "model via Gauss-Newton (do 30 iterations, x[0] = 0).")


@pytest.mark.parametrize(("step", "task", "target", "term"), [
    # the method the step applies, named by the part too: in the student's language, and
    # in Latin letters as short as it stands without an article
    (GN, TASK, "en", "Gauss-Newton"),
    (GN, TASK, "it", "Gauss-Newton"),
    (GN, TASK, "zh", "高斯-牛顿法"),
    (GN, TASK, "ko", "가우스-뉴턴 방법"),
    # a part that does not name it: the hint does not either (the step is what to find)
    (GN, "Write an R script to find an optimal model (do 30 iterations).", "en", ""),
    # a term of the reason is no term of what the step does
    ("We stop here since the Hessian is positive definite at x.",
     "Show that the Hessian is positive definite.", "en", ""),
    ("Compute the derivative of f.", "Compute the derivative of f.", "en", ""),  # no reason
])
def test_the_method_a_hint_may_name(step: str, task: str, target: str, term: str) -> None:
    assert named(step, task, "en", target) == term


@pytest.mark.parametrize(("reason", "apart"), [
    ("Remp is the squared sum of the residuals r = (y(1) − π(x(1)))⊤",
     "Remp is the squared sum of the residuals, r = (y(1) − π(x(1)))⊤"),
    ("Remp è la somma dei quadrati dei residui r = (y − π)",
     "Remp è la somma dei quadrati dei residui, r = (y − π)"),
    ("f is continuous where g = 0", "f is continuous where g = 0"),  # no noun: as it is
])
def test_a_noun_and_the_formula_that_names_it_are_set_apart_for_translation(
        reason: str, apart: str) -> None:
    from coursetutor.tutor.stages.plan import _apposed

    assert _apposed(reason) == apart
