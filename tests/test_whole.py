"""A statement keeps the formula its evidence sentence gives (tutor/whole.py): a lead-in is
completed with the formula it introduces, and a question that asks for a formula gets the
page's own formula where the statement gives it in words alone."""

from __future__ import annotations

import pytest

from coursetutor.retrieval.tokenize import has_cjk
from coursetutor.tutor.statement_check import repeats_itself
from coursetutor.tutor.whole import (
    as_follows,
    asks_formula,
    complete,
    every_item,
    items,
    line_formulas,
    missing_formula,
    with_antecedent,
)

NEWTON = "Update scheme: x [t+1] = x [t] - ( ∇2f (x [t]) )−1 ∇f (x [t])"
DAMPED = ("Use step size α > 0 with x[t+1] = x[t] + αd[t] to satisfy Wolfe conditions "
          "(or just Armijo rule)")
SCHEME = "Update scheme: x [t+1] = x [t] + d[t] with d[t] = − ( ∇2f (x [t]) )−1 ∇f (x [t])"
NOTES = (r"Questa serie si può definire come: $$A_k=\sum_{n=0}^{k}q^n=\frac{1-q^{k+1}}{1-q}$$ "
         r"Quindi con $|q|<1$ si ha che $q^{k+1}\rightarrow 0$ e la serie converge a "
         r"$\frac{1}{q+1}$, con $q>1$ si ha che diverge.")
GEOMETRIC = r"Se $|q|<1$ la serie geometrica converge a $\frac{1}{1-q}$."


@pytest.mark.parametrize(("line", "found"), [
    (NEWTON, [(15, "x [t+1] = x [t] - ( ∇2f (x [t]) )−1 ∇f (x [t])")]),
    (DAMPED, [(14, "α > 0"), (25, "x[t+1] = x[t] + αd[t]")]),
    (GEOMETRIC, [(3, "$|q|<1$"), (42, r"$\frac{1}{1-q}$")]),
    ("Newton: `x_{n+1} = x_n - f(x_n) / f'(x_n)`.",
     [(8, "`x_{n+1} = x_n - f(x_n) / f'(x_n)`")]),
    ("Therefore lim x→0 sin x / x = 1 holds.", [(10, "lim x→0 sin x / x = 1")]),
    ("The method converges quadratically near a simple root.", []),
    # a matrix the PDF flattened into glyphs is no formula to show
    ("Hessian: −x [0] 1 −x [0] 2 ! = 0 Note: one iteration", []),
])
def test_the_formulas_of_a_line_as_it_writes_them(line: str, found: list[tuple[int, str]]) -> None:
    assert line_formulas(line) == found


ASKED = "What is the Newton-Raphson update rule?"


@pytest.mark.parametrize(("statement", "lines", "language", "question", "whole"), [
    # a lead-in gets what it introduces
    ("The Newton-Raphson update rule is: [1]", [NEWTON], "en", "",
     "The Newton-Raphson update rule is: x [t+1] = x [t] - ( ∇2f (x [t]) )−1 ∇f (x [t])"),
    ("Use step size α > 0 with", [DAMPED], "en", "",
     "Use step size α > 0 with x[t+1] = x[t] + αd[t]"),
    # the formula after the words the lead-in stops on, not the condition before them
    ("La serie geometrica converge a", [GEOMETRIC], "it", "",
     r"La serie geometrica converge a $\frac{1}{1-q}$"),
    # across languages, one formula in its sentence
    ("梯度下降的更新公式是：", [DAMPED.replace("α > 0", "α")], "zh", "",
     "梯度下降的更新公式是：x[t+1] = x[t] + αd[t]"),
    # a sentence that announces what it never says
    ("The Newton-Raphson update is defined as follows. [1]", [NEWTON], "en", "",
     "The Newton-Raphson update is defined as follows: "
     "x [t+1] = x [t] - ( ∇2f (x [t]) )−1 ∇f (x [t])"),
    ("뉴턴-랩슨 업데이트는 다음과 같이 정의됩니다. [1]", [NEWTON], "ko", "",
     "뉴턴-랩슨 업데이트는 다음과 같이 정의됩니다: "
     "x [t+1] = x [t] - ( ∇2f (x [t]) )−1 ∇f (x [t])"),
    # a formula asked for and given in words alone: the page's formula after it
    ("The update uses the inverse Hessian and the gradient. [1]", [NEWTON], "en", ASKED,
     "The update uses the inverse Hessian and the gradient: "
     "x [t+1] = x [t] - ( ∇2f (x [t]) )−1 ∇f (x [t])"),
    # the formula right after the question's words, not the first equation of the sentence
    ("La serie geometrica converge quando |q| < 1. [1]", [NOTES], "it",
     "A cosa converge la serie geometrica quando |q| < 1?",
     r"La serie geometrica converge quando |q| < 1: $\frac{1}{q+1}$"),
    # a formula with a symbol its sentence defines gets the definition
    ("The Newton-Raphson update rule is x[t+1] = x[t] + d[t]. [1]", [SCHEME], "en", ASKED,
     "The Newton-Raphson update rule is x[t+1] = x[t] + d[t], "
     "where d[t] = − ( ∇2f (x [t]) )−1 ∇f (x [t])"),
    ("La regola è x[t+1] = x[t] + d[t] [1]", [SCHEME], "it",
     "Qual è la formula di aggiornamento?",
     "La regola è x[t+1] = x[t] + d[t], dove d[t] = − ( ∇2f (x [t]) )−1 ∇f (x [t])"),
])
def test_a_statement_gets_the_formula_it_leaves_out(statement: str, lines: list[str],
                                                     language: str, question: str,
                                                     whole: str) -> None:
    assert complete(statement, lines, language, question) == whole


@pytest.mark.parametrize(("statement", "lines", "question"), [
    # it gives the formula already, in another notation
    ("The update is x[t+1] = x[t] - (∇²f(x[t]))⁻¹∇f(x[t]) [1]", [NEWTON], ASKED),
    # a whole statement, and no formula was asked for
    ("The update uses the inverse Hessian and the gradient. [1]", [NEWTON], ""),
    # a lead-in whose sentence has no formula stays as it is (the check removes it)
    ("Newton's method is:", ["Newton's method converges quadratically near a root."], ""),
    # across languages with two formulas to choose from: the choice is not guessed
    ("几何级数收敛于：", [GEOMETRIC], ""),
    # the definition is there already
    ("The rule is x[t+1] = x[t] + d[t] with d[t] = −(∇²f(x[t]))⁻¹∇f(x[t]).", [SCHEME], ASKED),
    # ... in the page's own notation, which the formula reader cuts at ")−1": the statement
    # defines d[t] itself (it was given its definition a second time, then removed as a loop)
    ("The update rule is given by the equation x [t+1] = x [t] + d[t], where d[t] = − ( ∇2f "
     "(x [t]) )−1 ∇f (x [t])", [SCHEME], ASKED),
    # an exercise's blank is no formula
    ("The iteration is:", ["Write down Newton's iteration `x_{n+1} = ...` for your f."], ""),
])
def test_a_statement_that_needs_nothing_is_left_alone(statement: str, lines: list[str],
                                                      question: str) -> None:
    assert complete(statement, lines, "zh" if has_cjk(statement) else "en", question) is None


@pytest.mark.parametrize(("statement", "follows"), [
    ("The update is defined as follows.", True),
    ("리만 적분에서 상합(upper sum)은 다음과 같이 정의됩니다. [1]", True),
    ("上和的定义如下。", True),
    ("La regola è la seguente:", True),
    ("The following theorem holds for every continuous function on [a, b].", False),
    ("The update rule is x[t+1] = x[t] + d[t].", False),
])
def test_a_sentence_that_announces_what_it_never_says(statement: str, follows: bool) -> None:
    assert as_follows(statement) is follows


def test_an_equation_comes_first_when_the_question_asks_for_a_formula() -> None:
    assert missing_formula("It is this.", [DAMPED]) == "x[t+1] = x[t] + αd[t]"


@pytest.mark.parametrize(("question", "asks"), [
    ("What is the Newton-Raphson update rule?", True),
    ("A cosa converge la serie geometrica quando |q| < 1?", True),
    ("Quanto vale la somma della serie di Mengoli?", True),
    ("牛顿法的迭代公式是什么？", True),
    ("뉴턴-랩슨 방법의 업데이트 공식은 무엇인가요?", True),
    ("What is transfer learning?", False),
    ("La serie armonica converge?", False),
    # a why question asks for a reason, though it names equations (方程): the answer got the
    # example's equation appended
    ("为什么奇数次多项式方程至少有一个实根？", False),
    ("Why is the Newton-Raphson update rule a descent step?", False),
])
def test_questions_that_ask_for_a_formula(question: str, asks: bool) -> None:
    assert asks_formula(question) is asks


@pytest.mark.parametrize(("statement", "loops"), [
    ("闭区间上的连续函数一致连续是因为连续函数在区间上是连续的，而连续函数在区间上是连续的，"
     "所以连续函数在区间上是连续的。 [1][2]", True),
    ("The series converges when its terms go to zero, so the series converges when its "
     "terms go to zero. [1]", True),
    ("第二类间断点是指至少一侧极限不存在的间断点。 [1]", False),
    ("The method of the secant uses the secant of the curve instead of the tangent. [1]", False),
    ("If f is continuous on [a, b] and f is differentiable on (a, b), then f'(c) = 0.", False),
    # a parallel phrase, said twice in a long statement
    ("Esiste un punto c nell'intervallo [a, b] tale che la derivata della funzione f in c è "
     "uguale alla differenza tra il valore della funzione f in b e il valore della funzione f "
     "in a, divisa per la differenza tra b e a. [1]", False),
    # a phrase said three times is a loop however long the statement
    ("The bisection method halves the bracket, and the bisection method halves the bracket "
     "again, and so the bisection method halves the bracket until the bracket is small enough "
     "for the tolerance the student chose at the start of the method. [1]", True),
])
def test_a_statement_that_says_one_thing_over_and_over(statement: str, loops: bool) -> None:
    # the statement check removes it before its words are compared (statement_check.py)
    assert repeats_itself(statement) is loops


ROLLE_PROOF = (r"*→ Proof.* 研究函数最大最小值, 对非常数函数, 最大最小值必有至少一者在 $(a,b)$ 中. "
               r"根据 引理 5.1.1, 此处导数为 0.")


def test_a_statement_that_points_back_gets_what_its_sentence_says_before_it() -> None:
    # "此处" (here): where? The proof's first step says it
    assert complete("根据引理 5.1.1, 此处导数为 0. [1]", [ROLLE_PROOF], "zh",
                    "Rolle 中值定理是怎么证明的？") == (
        "研究函数最大最小值, 对非常数函数, 最大最小值必有至少一者在 (a,b) 中. "
        "根据引理 5.1.1, 此处导数为 0.")
    assert with_antecedent("Here the derivative is zero.",
                           ["Take the maximum inside. Here the derivative is zero."]) == (
        "Take the maximum inside. Here the derivative is zero.")
    # no word pointing back, or not the end of its sentence as written: left as it is
    assert with_antecedent("最大最小值必有至少一者在 (a,b) 中.", [ROLLE_PROOF]) is None
    assert with_antecedent("此处的导数为零, 由 Fermat 引理.", [ROLLE_PROOF]) is None


def test_here_on_a_slide_is_its_title_as_a_reader_writes_it() -> None:
    # in capitals, the translation took each of the title's words for a name
    slide = ("NEWTON-RAPHSON VS. GD ON BRANIN FUNCTION Newton-Raphson has much better "
             "convergence speed here")
    assert with_antecedent("Newton-Raphson has much better convergence speed here", [slide]) == (
        "Newton-Raphson vs. GD on Branin Function: Newton-Raphson has much better convergence "
        "speed here")


EQUIVALENT = (r"到此可以声明, 至少在 $\R$ 上, 区间套定理, 有限覆盖定理, Weierstrass 定理, "
              r"聚点定理是两两等价的; 区间套定理与 Dedekind 定理等价, 而 Cauchy 收敛原理也与"
              r"它们等价.")


def test_a_question_that_asks_which_ones_gets_every_one_its_sentence_lists() -> None:
    assert items(EQUIVALENT) == ["区间套定理", "有限覆盖定理", "Weierstrass定理", "聚点定理",
                                 "Dedekind定理", "收敛原理"]
    # the model named the last clause's three of them
    part = "区间套定理与 Dedekind 定理等价，而 Cauchy 收敛原理也与它们等价。 [2]"
    theorem = r"**定理 2.4.2 (区间套)** 若有一列 $[a_1,b_1]\supset[a_2,b_2]\supset\cdots$ …"
    assert every_item(part, [theorem, EQUIVALENT]) == (1, (
        "到此可以声明, 至少在 ℝ 上, 区间套定理, 有限覆盖定理, Weierstrass 定理, "
        "聚点定理是两两等价的; 区间套定理与 Dedekind 定理等价, 而 Cauchy 收敛原理也与它们等价."))
    # all of them named, or a sentence that lists fewer than three: as written
    whole = ("区间套定理, 有限覆盖定理, Weierstrass 定理, 聚点定理两两等价; "
             "区间套定理与 Dedekind 定理等价, Cauchy 收敛原理也与它们等价。")
    assert every_item(whole, [EQUIVALENT]) is None
    assert every_item("它与 Dedekind 定理等价。", ["区间套定理与 Dedekind 定理等价."]) is None


@pytest.mark.parametrize(("statement", "lines", "whole"), [
    # the model left out the bound its sentence gives the letter
    ("The step size α must satisfy the Wolfe conditions.", [DAMPED],
     "The step size α > 0 must satisfy the Wolfe conditions."),
    # α in αd[t] is part of a product: the bound goes to the bare one
    ("x[t+1] = x[t] + αd[t] with the step α.", [DAMPED],
     "x[t+1] = x[t] + αd[t] with the step α > 0."),
    ("Per ogni ε esiste n tale che |aₙ − l| < ε.", ["∀ ε>0 ∃ n ∈ ℕ: |aₙ − l| < ε"],
     "Per ogni ε > 0 esiste n tale che |aₙ − l| < ε."),
    # bounded already, or no bound in the sentence: nothing added
    ("Use a step size α > 0 to satisfy Wolfe.", [DAMPED], None),
    ("The step size α must satisfy the Wolfe conditions.", ["Choose the step size α."], None),
])
def test_a_letter_its_sentence_bounds_gets_the_bound(statement: str, lines: list[str],
                                                     whole: str | None) -> None:
    from coursetutor.tutor.whole import with_bounds

    assert with_bounds(statement, lines) == whole


def test_a_lead_in_that_announces_the_steps_is_no_step() -> None:
    sentence = ("Come funziona: si calcola il punto medio `c = (a + b) / 2`; se `f(a)` e `f(c)` "
                "hanno segno opposto la radice sta in `[a, c]`, altrimenti sta in `[c, b]`.")
    question = "Come funziona il metodo di bisezione?"
    lead = "Il metodo di bisezione funziona come segue:"
    # in a list of steps it gets nothing (then the check removes it as incomplete): given
    # the midpoint's formula, it said what the next step said again
    assert complete(lead, [sentence], "it", question, steps=True) is None
    assert complete(lead, [sentence], "it", question) == f"{lead} `c = (a + b) / 2`"


def test_a_bound_the_statement_says_in_words_or_by_another_letter_is_not_added() -> None:
    from coursetutor.tutor.whole import with_bounds

    sentence = "Teorema 5. Siano α, β ∈ ℝ con β > 0 e α < β. Allora ∃ n ∈ ℕ: nα > β"
    assert with_bounds("Se α e β sono due numeri positivi e α è minore di β, esiste n.",
                       [sentence]) is None
    assert with_bounds("Se α è minore di β, esiste n.", ["α < β"]) is None


ZERI = ("Teorema 33 (degli zeri). sia f:[a,b]→ ℝ, f continua, f(a)⋅ f(b)≠ 0 (hanno segno "
        "diverso). Allora ∃ x₀∈ (a,b) tale che f(x₀)=0")


@pytest.mark.parametrize(("statement", "whole"), [
    # the formula as the sentence writes it, without the words that say what it means
    ("Se f:[a,b]→ ℝ, f continua e f(a)⋅ f(b)≠ 0, allora esiste x₀∈ (a,b) tale che f(x₀)=0.",
     "Se f:[a,b]→ ℝ, f continua e f(a)⋅ f(b)≠ 0 (hanno segno diverso), allora esiste x₀∈ "
     "(a,b) tale che f(x₀)=0."),
    # said already, or the formula written otherwise: nothing to add
    ("Se f(a)⋅ f(b)≠ 0, cioè f(a) e f(b) hanno segno diverso, f ha uno zero.", None),
    ("Se f(a) f(b) < 0, f ha uno zero.", None),
])
def test_a_formula_keeps_the_words_its_sentence_explains_it_with(statement: str,
                                                                 whole: str | None) -> None:
    from coursetutor.tutor.whole import with_gloss

    assert with_gloss(statement, [ZERI]) == whole
    if whole:  # as the compose stage completes a statement before its check
        assert complete(statement, [ZERI], "it", "Cosa dice il teorema degli zeri?") == whole


def test_a_gloss_is_found_in_the_sentence_as_the_model_read_it() -> None:
    from coursetutor.tutor.whole import with_gloss

    latex = (r"Teorema 33 (degli zeri). sia $f:[a,b]\rightarrow \mathbb{R}$, $f$ continua, "
             r"$f(a)\cdot f(b)\neq 0$ (hanno segno diverso). Allora $\exists x_0\in (a,b)$")
    # the notes' LaTeX, shown to the model in Unicode, restated in Unicode
    assert with_gloss("Se f continua e f(a)⋅ f(b)≠ 0, allora f ha uno zero.", [latex]) == (
        "Se f continua e f(a)⋅ f(b)≠ 0 (hanno segno diverso), allora f ha uno zero.")


def test_a_name_or_a_reference_in_parentheses_is_no_gloss() -> None:
    from coursetutor.tutor.whole import with_gloss

    assert with_gloss("La serie vale s = 1.",
                      ["La serie vale s = 1 (Mengoli, Telescopica)."]) is None
    assert with_gloss("La serie vale s = 1.", ["La serie vale s = 1 (o serie)."]) is None
    assert with_gloss("La serie vale s = 1.", ["La serie vale s = 1 (serie telescopica)."]) == (
        "La serie vale s = 1 (serie telescopica).")
    assert with_gloss("Si ha x = y + 1.", ["Si ha x = y + 1 (vedi Teorema 3)."]) is None
