"""Knowledge refinement: the sentences of each passage that matter for the question."""

from __future__ import annotations

from coursetutor.tutor.context import Budget, build_context
from coursetutor.tutor.refine import GAP, refine, units
from coursetutor.types import Chunk, Hit, Locator


def _hit(n: int, text: str) -> Hit:
    chunk = Chunk(id=f"c{n}", tenant="t", course="c", document_id=f"d{n}", document_title="T",
                  doc_type="lecture", topic="", section_path=(), difficulty=0, language="en",
                  locator=Locator(page=n), text=text, content_hash=f"h{n}", ordinal=n)
    return Hit(chunk, 1.0 / n, {}, {}, Locator(page=n))


def words(text: str) -> int:
    return len(text.split())


NEWTON = ("Newton's method needs the derivative. It was published in 1685. The Newton update "
          "is:\nx_{n+1} = x_n - f(x_n) / f'(x_n)\nIt converges quadratically near a simple "
          "root. Many textbooks show pictures.")
SECANT = ("The secant method replaces the derivative by a difference quotient. It needs two "
          "starting points. Its order is 1.618.")
OTHER = "Fixed-point iteration rewrites the equation. Its convergence is linear."


def test_units_weigh_rare_question_terms() -> None:
    found = units([_hit(1, NEWTON)], "What is the Newton update?", "en")
    best = max(found, key=lambda u: u.weight)
    assert best.text == "The Newton update is:"
    assert [u.maths for u in found] == [False, False, False, True, False, False]


def test_refine_keeps_what_matters_and_the_formula_it_introduces() -> None:
    kept = refine([_hit(1, NEWTON), _hit(2, SECANT), _hit(3, OTHER)],
                  "What is the Newton update?", "en", 12, words)
    assert kept == ["The Newton update is: x_{n+1} = x_n - f(x_n) / f'(x_n)", "", ""]
    kept = refine([_hit(1, NEWTON), _hit(2, SECANT)], "What does the secant method replace?",
                  "en", 12, words)
    assert kept == ["", "The secant method replaces the derivative by a difference quotient."]


def test_refine_marks_gaps_between_kept_sentences() -> None:
    kept = refine([_hit(1, NEWTON)], "Newton derivative quadratically", "en", 40, words)
    assert kept[0] == (f"Newton's method needs the derivative.{GAP}The Newton update is: "
                       f"x_{{n+1}} = x_n - f(x_n) / f'(x_n) It converges quadratically near a "
                       f"simple root.")


def test_build_context_with_refinement_drops_passages_that_do_not_bear() -> None:
    hits = [_hit(1, NEWTON), _hit(2, SECANT), _hit(3, OTHER)]
    whole = build_context(hits, "What is the Newton update?", "en", Budget.split(1500), words)
    refined = build_context(hits, "What is the Newton update?", "en", Budget.split(1500), words,
                            refined=30)
    assert len(whole.sources) == 3
    assert [s.hit.chunk.id for s in refined.sources] == ["c1"]
    assert refined.tokens < whole.tokens
