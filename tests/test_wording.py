"""Polarity words and dangling endings, per language."""

from __future__ import annotations

import pytest

from coursetutor.tutor.wording import answers_polar, dangles, opposed, polarity, unbacked_polarity


@pytest.mark.parametrize(("claim", "language", "cut"), [
    ("The update rule is given by [1].", "en", True),
    ("La somma della serie di Mengoli è definita come [1] [2].", "it", True),
    ("The direction solves \\( H d = -g [2]", "en", True),  # the formula was never closed
    ("The cost is $O(n^3)$ per step [1].", "en", False),
    ("Newton-Raphson needs one step for a quadratic form [1].", "en", False),
    ("第二类间断点定义为 [1]。", "zh", True),
    ("函数在该点连续 [1]。", "zh", False),
    ("若非空的 E⊂ℝ 存在上界, 则 sup E 在 ℝ 内存在 [1]。", "zh", False),  # 存在: exists
    ("级数的和等于各项之和 [1]。", "zh", False),
    ("Remp 是残差 r = (y(1) − π(x(1)), ⋯)⊤ 的平方和 [1]。", "zh", False),  # a sum of squares
    ("它的极限在 [1]。", "zh", True),  # a lone 在 ("at") still dangles
    ("뉴턴 방법은 한 번에 수렴합니다 [1].", "ko", False),
    ("ξ가 존재하고, 이를 이동하면 .", "ko", True),  # "if we move it ."
    ("x를 구하려면 f를 [1].", "ko", True),
    ("이것이 리만 적분의 정의 [1].", "ko", False),  # 정의, "definition", ends a noun phrase
])
def test_dangles(claim: str, language: str, cut: bool) -> None:
    assert dangles(claim, language) is cut


def test_polarity_words_by_language() -> None:
    assert polarity("It converges from any starting point, not only near x* [1].", "en") == {
        "any", "not", "only"}
    assert polarity("La serie non converge mai.", "it") == {"non", "mai"}
    assert polarity("函数在该点不连续。", "zh") == {"不"}
    assert polarity("Nothing here", "xx") == set()


def test_unbacked_polarity() -> None:
    assert unbacked_polarity("It always converges.", "It converges near the minimum.",
                             "en") == {"always"}
    assert unbacked_polarity("It does not converge.", "It may not converge.", "en") == set()


def test_a_bad_quality_where_the_passage_names_a_good_one_is_unbacked() -> None:
    slide = "NEWTON-RAPHSON VS. GD ON BRANIN FUNCTION Newton-Raphson has much better convergence"
    assert unbacked_polarity("The Newton-Raphson method has poor convergence speed on the "
                             "Branin function.", slide, "en") == {"poor"}
    assert unbacked_polarity("Newton-Raphson converges faster here.", slide, "en") == set()
    # a passage that names a bad quality itself backs one
    assert unbacked_polarity("It may diverge for bad starting points.",
                             "Disadvantage: For bad starting points: Newton-Raphson may "
                             "diverge, where a good one converges fast.", "en") == set()


def test_a_result_under_its_hypothesis_backs_always() -> None:
    theorem = "**定理 2.3.1** 若单调上升的 {aₙ} 有上界, 则其收敛且 lim aₙ=sup aₙ."
    assert unbacked_polarity("单调上升的数列有上界时，它一定收敛。", theorem, "zh") == set()
    # the claim dropped the hypothesis: "always" is its own
    descent = "If Hessian is positive definite, d[t] is descent direction."
    assert unbacked_polarity("d[t] is always a descent direction.", descent,
                             "en") == {"always"}
    assert unbacked_polarity("If the Hessian is positive definite, d[t] is always a descent "
                             "direction.", descent, "en") == set()
    # a passage with no hypothesis backs no "always"
    assert unbacked_polarity("If f is smooth, it always converges.",
                             "For f sufficiently smooth: it converges locally.",
                             "en") == {"always"}


def test_a_claim_that_turns_its_passage_round_is_unbacked() -> None:
    assert unbacked_polarity("La serie armonica converge a 1/2 [1].",
                             "La serie armonica diverge.", "it") == {"converg"}
    assert unbacked_polarity("调和级数收敛。", "调和级数发散。", "zh") == {"收敛"}
    assert unbacked_polarity("f is decreasing on [a, b] [1].", "f is increasing on [a, b].",
                             "en") == {"decreas"}
    # both words in the passage, or the claim's own word there: nothing turned round
    assert not unbacked_polarity("The geometric series converges [1].",
                                 "The harmonic series diverges; the geometric one converges.",
                                 "en")
    assert not unbacked_polarity("The condition is necessary and sufficient [1].",
                                 "a necessary and sufficient condition", "en")
    # "decreasing" does not begin with "increas", nor "infinite" with "finite"
    assert not unbacked_polarity("The sequence is decreasing [1].", "It is decreasing.", "en")
    assert not unbacked_polarity("The set is infinite [1].", "An infinite set.", "en")


@pytest.mark.parametrize(("text", "language", "negated"), [
    ("Newton-Raphson can diverge if the start is far away.", "en", False),
    ("It does not converge from any starting point.", "en", True),
    ("It doesn’t converge.", "en", True),
    ("뉴턴-랩슨 방법은 빠르게 발산하지 않습니다.", "ko", True),
    ("뉴턴-랩슨 방법은 발산할 수 있습니다.", "ko", False),
    ("由不等式可知无穷级数收敛。", "zh", False),  # 不等式 and 无穷 negate nothing
    ("该级数不收敛。", "zh", True),
    ("La serie non converge.", "it", True),
    ("Це речення.", "uk", None),  # no list for the language
])
def test_negates(text: str, language: str, negated: bool | None) -> None:
    from coursetutor.tutor.wording import negates

    assert negates(text, language) is negated


SLIDE = "Disadvantage: For “bad” starting points: Newton-Raphson may diverge"


@pytest.mark.parametrize(("claim", "passage", "language", "unbacked"), [
    # a good quality denied where the passage names a bad one: the same thing in other words
    ("Newton-Raphson may diverge when the starting point is not well chosen.", SLIDE, "en",
     set()),
    ("It can diverge when the starting point is not appropriate.", SLIDE, "en", set()),
    ("Il metodo può divergere se il punto iniziale non è adatto.",
     "Svantaggio: per punti iniziali cattivi il metodo può divergere.", "it", set()),
    # a negation of anything else is still the claim's own
    # ("not diverge" says "converge", the opposite of the slide's "diverge")
    ("Newton-Raphson does not diverge for bad starting points.", SLIDE, "en",
     {"not", "converg"}),
    ("It may diverge when the starting point is not close to the root.", SLIDE, "en",
     {"not"}),
    # "does not converge" says what "may diverge" does; "not good" is the claim's own
    ("It does not converge when the starting point is not good.", SLIDE, "en", {"not"}),
    # no bad quality in the passage: nothing backs the denial
    ("It may diverge when the starting point is not well chosen.",
     "Newton-Raphson may diverge far from the root.", "en", {"not"}),
])
def test_a_denied_good_quality_is_backed_by_a_bad_one(
        claim: str, passage: str, language: str, unbacked: set[str]) -> None:
    assert unbacked_polarity(claim, passage, language) == unbacked


HARMONIC = ("Quindi: 1/k+1/(k+1)+…+1/2k>1/2k⋅ k= 1/2 Cauchy non è rispettato quindi e la "
            "serie diverge.")


@pytest.mark.parametrize(("claim", "passage", "language", "turned"), [
    ("La serie armonica non converge.", HARMONIC, "it", set()),  # "non converge": diverge
    ("La serie armonica converge.", HARMONIC, "it", {"converg"}),
    ("The series diverges.", "The series does not converge.", "en", set()),
    ("调和级数不收敛。", "因此级数发散。", "zh", set()),
    ("调和级数收敛。", "因此级数发散。", "zh", {"收敛"}),
])
def test_a_negated_word_says_its_opposite(claim: str, passage: str, language: str,
                                          turned: set[str]) -> None:
    assert opposed(claim, passage, language) == turned


@pytest.mark.parametrize(("claim", "answers"), [
    ("La serie armonica non converge.", True),
    ("La serie armonica diverge.", True),
    ("La serie armonica converge.", False),  # the question's words, not the page's verdict
    ("La serie armonica è una serie importante.", False),
])
def test_the_answer_to_a_yes_no_question_is_its_words_with_the_verdict(
        claim: str, answers: bool) -> None:
    assert answers_polar(claim, "La serie armonica converge?", HARMONIC, "it") is answers


@pytest.mark.parametrize(("claim", "passage", "language"), [
    # a uniqueness the result never claims: "f ha sia massimo che minimo in [a,b]"
    ("Se f è continua, esso ha un unico punto di massimo.", "Allora f ha sia massimo che "
     "minimo in [a,b].", "it"),
    ("The method has a unique fixed point.", "The method has a fixed point.", "en"),
])
def test_a_uniqueness_the_passage_does_not_claim_is_unbacked(claim: str, passage: str,
                                                             language: str) -> None:
    assert unbacked_polarity(claim, passage, language)
    assert not unbacked_polarity(claim, f"{passage} It is unique, unico.", language)


def test_a_passage_that_writes_for_all_as_a_symbol_backs_every() -> None:
    claim = "Un maggiorante è maggiore o uguale a tutti gli elementi di A."
    assert "tutti" not in unbacked_polarity(claim, "A è superiormente limitato se ∃α∈ℝ: x≤α "
                                                   "∀ x∈ A.", "it")
    assert "tutti" in unbacked_polarity(claim, "A è superiormente limitato se x≤α.", "it")
    assert "所有" not in unbacked_polarity("对所有 x 有 f(x)≤M", "$\\forall x$, $f(x)\\le M$", "zh")
