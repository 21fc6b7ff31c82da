"""The names a cited evidence sentence gives that the statements restating it left out
(left_out.py): what the compose stage asks one more statement about."""

from __future__ import annotations

from types import SimpleNamespace
from typing import cast

import pytest

from coursetutor.tutor.left_out import names_left_out
from coursetutor.tutor.sentences import Line
from coursetutor.types import Hit

DAMPED = ("Relaxed/Damped Newton-Raphson: Use step size α > 0 with x [t+1] = x [t] + αd[t] to "
          "satisfy Wolfe conditions (or just Armijo rule)")


def line(text: str, language: str = "en", sid: str = "S1") -> Line:
    return Line(sid, cast(Hit, SimpleNamespace(chunk=SimpleNamespace(language=language))),
                text, 1.0)


@pytest.mark.parametrize(("said", "question", "left"), [
    # the first half restated: the conditions the step size must meet are not
    (["Damped Newton-Raphson uses a damping factor to control the step size."],
     "What is damped Newton-Raphson?", ("Wolfe", "Armijo")),
    # said, in any case or inflection
    (["The step size α > 0 must satisfy the wolfe conditions or the Armijo rule."],
     "What is damped Newton-Raphson?", None),
    # the label's names are what the sentence is about ("damping" in a translated question),
    # and "Use" after the colon opens the sentence
    (["The step size α > 0 satisfies the Wolfe conditions (or the Armijo rule)."],
     "What is the damping Newton-Raphson method?", None),
])
def test_the_names_a_sentence_gives_that_no_statement_said(
        said: list[str], question: str, left: tuple[str, ...] | None) -> None:
    gap = names_left_out(said, [line(DAMPED)], question)
    assert (gap[1] if gap else None) == left


def test_the_first_cited_sentence_with_names_left_out_is_the_one() -> None:
    plain = line("The bisection method halves the bracket at each step.", sid="S1")
    named = line("Production solvers such as the Brent method keep a bracket.", sid="S2")
    gap = names_left_out(["Bisection halves the bracket."], [plain, named],
                         "How does bisection work?")
    assert gap is not None and gap[0].id == "S2" and gap[1] == ("Brent",)


def test_german_nouns_are_no_names_but_acronyms_are() -> None:
    german = line("Das Verfahren konvergiert lokal quadratisch, wie das BFGS Verfahren zeigt.",
                  language="de")
    gap = names_left_out(["Newton konvergiert lokal quadratisch."], [german],
                         "Wie schnell konvergiert Newton?")
    assert gap is not None and gap[1] == ("BFGS",)


def test_a_label_its_colon_closes_is_no_name() -> None:
    # "(Attenzione: se … non esiste non si può dire nulla)": a remark's label, not a term
    sentence = ("Allora se esiste il: lim f'(x)/g'(x)=L allora: lim f(x)/g(x)=L (Attenzione: se "
                "lim f'(x)/g'(x) non esiste non si può dire nulla)")
    said = ["Se esiste il limite di f'(x)/g'(x), allora il limite di f(x)/g(x) è uguale a L."]
    assert names_left_out(said, [line(sentence, "it")], "Cosa dice il teorema di De L'Hopital?") \
        is None
    # a name the statements left out is still one
    with_name = sentence.replace("(Attenzione:", "(vedi Cauchy; Attenzione:")
    assert names_left_out(said, [line(with_name, "it")], "Cosa dice il teorema?") is not None
