"""Knowledge refinement: the sentences of each passage that matter for the question."""

from __future__ import annotations

from coursetutor.tutor.context import Budget, build_context
from coursetutor.tutor.refine import GAP, refine, units
from coursetutor.types import Chunk, Hit, Locator


def _hit(n: int, text: str, language: str = "en") -> Hit:
    chunk = Chunk(id=f"c{n}", tenant="t", course="c", document_id=f"d{n}", document_title="T",
                  doc_type="lecture", topic="", section_path=(), difficulty=0, language=language,
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


def test_a_passage_in_another_language_keeps_its_lead_instead_of_being_dropped() -> None:
    # an Italian question in a course with Italian and English notes: no English sentence
    # shares a word with it, yet the search found the English passages by their meaning
    riassunto = ("Il metodo di bisezione dimezza l'intervallo a ogni passo. Serve un cambio di "
                 "segno agli estremi. La convergenza è lineare.")
    kept = refine([_hit(1, SECANT), _hit(2, riassunto, "it"), _hit(3, NEWTON)],
                  "Come converge il metodo di bisezione?", "it", 60, words)
    assert kept[0].startswith("The secant method replaces the derivative")
    assert kept[2].startswith("Newton's method needs the derivative.")
    assert "Il metodo di bisezione dimezza" in kept[1]
    assert sum(words(k) for k in kept) <= 60 + words(NEWTON.split(". ")[0])


def test_a_translated_question_keeps_the_first_passages_without_its_words() -> None:
    # 二分法 came back from translation as "binary search": the search still ranked the
    # bisection passage second, by its meaning, but it holds none of those words
    bisection = ("The bisection method repeatedly halves a bracket. It keeps the half in which "
                 "the sign change survives.")
    speed = "Bisection always works, but it's slow. You gain about one binary digit per step."
    hits = [_hit(1, speed), _hit(2, bisection), _hit(3, OTHER)]
    question = "How does binary search work?"
    assert refine(hits, question, "en", 40, words)[1] == ""
    kept = refine(hits, question, "en", 40, words, translated=True)
    assert kept[1] == "The bisection method repeatedly halves a bracket."
    assert kept[0].startswith("Bisection always works") and kept[2] == ""
