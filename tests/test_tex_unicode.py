"""One formula in every notation: LaTeX read as Unicode maths, for the terminal and the checks."""

from __future__ import annotations

import io
import random

import pytest
from rich.console import Console

from coursetutor.cli.render import answer as render_answer
from coursetutor.eval.key_facts import facts_given
from coursetutor.ingest.tex_unicode import to_unicode
from coursetutor.tutor.claims import missing_terms
from coursetutor.types import Answer, Citation, DoneEvent, Locator

NEWTON_PDF = "x [t+1] = x [t] - ( ∇2f (x [t]) )−1 ∇f (x [t])"  # as the slides' text layer has it
NEWTON_TEX = r"\(x^{[t+1]} = x^{[t]} - \left(\nabla^2 f(x^{[t]})\right)^{-1} \nabla f(x^{[t]})\)"


@pytest.mark.parametrize(("latex", "unicode"), [
    (r"\(\nabla^2 f(x)^{-1}\)", "∇² f(x)⁻¹"),
    (r"\frac{1}{1-q}", "1/(1−q)"),
    (r"$\frac{n(n+1)}{2}$", "n(n+1)/2"),
    (r"$x_{t+1} = x_t - \alpha \nabla f(x_t)$", "xₜ₊₁ = xₜ − α∇f(xₜ)"),
    (r"$$\sum_{i=1}^{n} i$$", "∑ᵢ₌₁ⁿ i"),
    (r"$\lim_{x \to 0} \frac{\sin x}{x} = 1$", "lim_(x → 0) (sin x)/x = 1"),
    (r"$\sqrt[3]{x+1} \leq \left( \frac{a}{b} \right)$", "∛(x+1) ≤ (a/b)"),
    (r"$\sqrt{2}$", "√2"),
    (r"$\begin{pmatrix} a & b \\ c & d \end{pmatrix}^{-1}$", "[a b; c d]⁻¹"),
    (r"$f \in C^1([a,b])$, $\mathbb{R}^n$", "f ∈ C¹([a,b]), ℝⁿ"),
    (r"$a \not= b$", "a ≠ b"),
    (r"$A^T$ and $A^{\top}$", "Aᵀ and Aᵀ"),
    (r"$\epsilon > 0$", "ϵ > 0"),
    # the note on a brace is no exponent: the brace reads as what it spans
    (r"$f'(c)=\overbrace{\frac{f(b)-f(a)}{b-a}}^{\mbox{punto medio}}$", "f'(c)=(f(b)−f(a))/(b−a)"),
    (r"$\underbrace{a+b}_{n} = c^2$", "a+b = c²"),
])
def test_latex_maths_reads_as_unicode(latex: str, unicode: str) -> None:
    assert to_unicode(latex) == unicode


@pytest.mark.parametrize("text", [
    "my_var is a name, not an index",
    "costs $5 and $6",
    "50% of the marks",
    "A plain sentence with no maths.",
    "x [t+1] = x [t] - ( ∇2f (x [t]) )−1",
])
def test_text_that_is_not_latex_is_left_as_it_is(text: str) -> None:
    assert to_unicode(text) == text


def test_an_unknown_command_is_left_as_written() -> None:
    assert to_unicode(r"$\foo{x} + 1$") == r"\foo{x} + 1"


def test_a_broken_formula_never_raises() -> None:
    pieces = ["\\frac", "{", "}", "^", "_", "$", "\\(", "\\)", "\\begin{pmatrix}", "\\end",
              "\\left", "\\sqrt", "[", "]", "x", " ", "&", "\\\\", "\\not", "-"]
    rng = random.Random(7)
    for _ in range(500):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 12)))
        assert isinstance(to_unicode(text), str)


@pytest.mark.parametrize(("claim", "source"), [
    (f"The step is {NEWTON_TEX} [1].", NEWTON_PDF),
    (r"The series sums to \(\frac{1}{1-q}\) when |q| < 1 [1].", "sums to 1/(1 − q) for |q|<1"),
    ("The series sums to 1/(1−q) when |q| < 1 [1].", r"it sums to $\frac{1}{1-q}$, $|q|<1$"),
    (r"The update is \(x_{k+1} = x_k - \alpha \nabla f(x_k)\) [1].", "xₖ₊₁ = xₖ − α∇f(xₖ)"),
])
def test_the_check_reads_one_formula_in_every_notation(claim: str, source: str) -> None:
    assert missing_terms(claim, [source]) == []


def test_a_condition_the_source_does_not_give_is_missing() -> None:
    assert missing_terms("The series sums to 1/(1−q) when |q| < 1 [1].",
                         [r"it sums to $\frac{1}{1-q}$"]) == ["|q| < 1"]


def test_a_formula_ends_at_a_chinese_full_stop_and_at_a_clause_colon() -> None:
    # the statement restated the theorem's formula exactly, then ended its sentence with 。
    source = (r"若单调上升的 $\{a_n\}$ 有上界, 则其收敛且 "
              r"$\lim_{n\to\infty}a_n=\sup_{n\ge 1}a_n=:a$.")
    assert missing_terms("若单调上升的 {aₙ} 有上界，则其收敛且 lim_(n→∞)aₙ=sup_(n≥ 1)aₙ=:a。",
                         [source]) == []
    # "|q| < 1:" is a condition of its own, not the start of the sum after it
    geometric = (r"$$A_k=\sum_{n=0}^{k}q^n=\frac{1-q^{k+1}}{1-q}$$ Quindi con $|q|<1$ si ha "
                 r"che $q^{k+1}\rightarrow 0$")
    assert missing_terms(r"Quando |q| < 1: $$A_k=\sum_{n=0}^{k}q^n=\frac{1-q^{k+1}}{1-q}$$",
                         [geometric]) == []


def test_if_between_two_formulas_is_a_word_of_the_sentence() -> None:
    from coursetutor.tutor.claims import formulas

    # "se" (if) joined the value and its condition into one formula the notes never write
    source = (r"Quindi con $|q|<1$ si ha che $q^{k+1}\rightarrow 0$ e la serie converge a "
              r"$\frac{1}{1-q}$")
    claim = "La serie geometrica converge a 1/(1-q) se |q|<1."
    assert formulas(claim) == ["|q|<1"]
    assert missing_terms(claim, [source]) == []
    assert formulas("f(x) = 0 if g(x) ≥ 1") == ["f(x) = 0", "g(x) ≥ 1"]


def test_a_different_formula_is_still_missing() -> None:
    claim = r"The Newton step is \(x^{[t+1]} = x^{[t]} - \nabla f(x^{[t]})^{-1}\) [1]."
    assert missing_terms(claim, [NEWTON_PDF])


def test_a_key_fact_is_given_in_any_notation() -> None:
    reply = f"Newton's method updates {NEWTON_TEX}, and a geometric series sums to " \
            r"\(\frac{1}{1-q}\)."
    assert facts_given(reply, [[NEWTON_PDF], ["1/(1−q)"], ["1/(1+q)"]]) == [True, True, False]


def test_the_terminal_prints_unicode_maths(monkeypatch: pytest.MonkeyPatch) -> None:
    buffer = io.StringIO()
    monkeypatch.setattr(render_answer, "out", Console(file=buffer, width=200))
    monkeypatch.setattr(render_answer, "console", Console(file=buffer, width=200))
    cited = Citation(1, "c1", "d", "Slides", "slides", Locator(page=8), "text")
    answer = Answer(r"It scales the gradient by \(\nabla^2 f(x)^{-1}\) [1].", (cited,),
                    "slides", "concept", "correct", 0.9, "en", checked=True)
    render_answer.stream_to_terminal([DoneEvent(answer)])
    shown = buffer.getvalue()
    assert "∇² f(x)⁻¹" in shown and "\\nabla" not in shown


def test_a_sentence_never_ends_inside_a_formula() -> None:
    from coursetutor.tutor.claims import sentences

    text = ("Sia $f$ continua su $[a,b]$. Allora:\n$$\nf(b)-f(a) = f'(c)(b-a).\n$$\n"
            r"Inoltre \(x. y\) vale.")
    assert sentences(text) == ["Sia $f$ continua su $[a,b]$.", "Allora:",
                               "$$\nf(b)-f(a) = f'(c)(b-a).\n$$", r"Inoltre \(x. y\) vale."]


def test_formulas_are_indexed_as_unicode_maths() -> None:
    from coursetutor.ingest.pipeline import index_text

    indexed = index_text("Serie", ("Serie", "Geometrica"),
                         r"La serie converge a $\frac{1}{1-q}$ per $|q| < 1$.")
    assert "1/(1−q)" in indexed and "frac" not in indexed


def test_formulas_go_through_a_translation_as_placeholders() -> None:
    from coursetutor.tutor.claims import mask_formulas, unmask

    text = "定理 2.3.1：若 {aₙ} 有上界，则其收敛且 lim_(n→∞)aₙ=sup_(n≥ 1)aₙ=:a。 [1]"
    masked, found = mask_formulas(text)
    assert masked == "定理 2.3.1：若 {aₙ} 有上界，则其收敛且 ⟨F1⟩。 [1]"
    assert found == ["lim_(n→∞)aₙ=sup_(n≥ 1)aₙ=:a"]
    assert unmask("정리 2.3.1: {aₙ}이 상계를 가지면 수렴하고 ⟨F1⟩입니다. [1]", found) == (
        "정리 2.3.1: {aₙ}이 상계를 가지면 수렴하고 lim_(n→∞)aₙ=sup_(n≥ 1)aₙ=:a입니다. [1]")
    two = mask_formulas("Se f(a)=f(b), allora f'(c)=0.")
    assert two == ("Se ⟨F1⟩, allora ⟨F2⟩.", ["f(a)=f(b)", "f'(c)=0"])
    # a placeholder lost or said twice: no translation to put the formulas back into
    assert unmask("수렴합니다.", found) is None
    assert unmask("⟨F1⟩ ⟨F1⟩", found) is None
    assert mask_formulas("No maths here.") == ("No maths here.", [])
    # a code span is one formula with its backticks, numbered in the text's order
    masked, found = mask_formulas("Compute `c = (a + b) / 2` and f(a)=f(b), then `f(c)`.")
    assert masked == "Compute ⟨F1⟩ and ⟨F2⟩, then ⟨F3⟩."
    assert found == ["`c = (a + b) / 2`", "f(a)=f(b)", "`f(c)`"]


def test_names_go_through_a_translation_as_placeholders() -> None:
    from coursetutor.tutor.claims import mask_formulas, unmask
    from coursetutor.tutor.reply_language import mask_names

    text = ("The Hessian of Newton-Raphson is used, as in the English slides, "
            "and Newton-Raphson needs x [t+1] = x [t] + d[t].")
    masked, found = mask_names(*mask_formulas(text))
    # each name as often as it is written, after the formulas; a language is translated
    assert masked == ("The ⟨F2⟩ of ⟨F3⟩ is used, as in the English slides, "
                      "and ⟨F4⟩ needs ⟨F1⟩.")
    assert found == ["x [t+1] = x [t] + d[t]", "Hessian", "Newton-Raphson", "Newton-Raphson"]
    assert unmask(masked, found) == text
    # a name of two names is one at the start of the sentence too
    assert mask_names("Newton-Raphson may diverge.", []) == ("⟨F1⟩ may diverge.",
                                                            ["Newton-Raphson"])
    # names side by side are one placeholder, numbered in the text's order
    text = "Use the Wolfe conditions in the Damped Newton-Raphson method with x = y + 1."
    masked, found = mask_names(*mask_formulas(text))
    assert masked == "Use the ⟨F2⟩ conditions in the ⟨F3⟩ method with ⟨F1⟩."
    assert found == ["x = y + 1", "Wolfe", "Damped Newton-Raphson"]
    assert unmask(masked, found) == text


def test_a_word_a_translation_left_in_english_is_found() -> None:
    from coursetutor.tutor.reply_language import untranslated

    text = "The Newton-Raphson method may diverge if the starting point is bad."
    assert untranslated(text, "Newton-Raphson 方法可能在初始点不好的情况下 diverge。", "zh") == [
        "diverge"]
    # a term in parentheses after its translation, a quoted word and a name are kept on purpose
    assert untranslated("Gradient descent may diverge for “bad” points.",
                        "梯度下降法（gradient descent）对于“bad”的点可能发散。", "zh") == []
    # in Italian a word left as it is cannot be told from a shared one
    assert untranslated(text, "Il metodo può divergere se il punto iniziale è bad.", "it") == []


def test_a_masked_formula_is_whole_and_placeholders_run_together_stay_apart() -> None:
    from coursetutor.tutor.claims import mask_formulas, unmask

    text = ("The update is x [t+1] = x [t] + d[t] with "
            "d[t] = − ( ∇2f (x [t]) )−1 ∇f (x [t])")
    masked, found = mask_formulas(text)
    # its variable before it, and the inverse's ")−1" between two runs, belong to it
    assert masked == "The update is ⟨F1⟩ with ⟨F2⟩"
    assert found == ["x [t+1] = x [t] + d[t]", "d[t] = − ( ∇2f (x [t]) )−1 ∇f (x [t])"]
    assert unmask("업데이트는 ⟨F1⟩⟨F2⟩입니다.", found) == (
        "업데이트는 x [t+1] = x [t] + d[t], d[t] = − ( ∇2f (x [t]) )−1 ∇f (x [t])입니다.")


@pytest.mark.parametrize(("text", "found"), [
    # a bracket opened on a word is the prose's, which the translation must see ("hanno"
    # went through untranslated, its bracket never closed)
    ("f continua e f(a)⋅ f(b)≠ 0 (hanno segno diverso), allora",
     ["f(a)⋅ f(b)≠ 0"]),
    ("x = 2 (the root)", ["x = 2"]),
    # one opened on maths is the formula's, up to where it closes
    ("f(x) = (sin x)^2 here", ["f(x) = (sin x)^2"]),
    ("r = (y(1) − π(x(1)), ⋯ , y(n) − π(x(n)))⊤ holds",
     ["r = (y(1) − π(x(1)), ⋯ , y(n) − π(x(n)))⊤"]),
])
def test_a_masked_formula_ends_where_its_maths_does(text: str, found: list[str]) -> None:
    from coursetutor.tutor.claims import mask_formulas

    assert mask_formulas(text)[1] == found


def test_the_closest_topics_read_as_the_student_reads_them() -> None:
    from coursetutor.tutor.evidence import Evidence
    from coursetutor.tutor.stages.find import _closest_topics
    from coursetutor.types import Chunk, Hit, Locator

    def hit(title: str) -> Hit:
        chunk = Chunk(id=title, tenant="t", course="c", document_id="d1", document_title="T",
                      doc_type="lecture", topic="", section_path=(title,), difficulty=0,
                      language="zh", locator=Locator(page=1), text="…", content_hash=title,
                      ordinal=1)
        return Hit(chunk, 1.0, {}, {}, Locator(page=1))

    found = Evidence([hit(r"$\S3.2$ 函数的连续性"), hit(r"$\S4.2$ 求导数的方法")], 0.1, "incorrect")
    assert _closest_topics(found) == "§3.2 函数的连续性; §4.2 求导数的方法"
