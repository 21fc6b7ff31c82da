"""Placing a source's paragraphs on the pages of its PDF: the word n-gram scores, the
monotone path, the filling of paragraphs without evidence, and the document it makes."""

from __future__ import annotations

import math

import numpy as np
import pytest

from coursetutor.errors import InputError
from coursetutor.ingest.align_source import (
    Page,
    fill,
    grams,
    monotone_path,
    page_words,
    pieces,
    place,
    printed_size,
    scores,
    source_words,
)
from coursetutor.ingest.parsed import ParsedDocument
from coursetutor.ingest.sourced import with_pages
from coursetutor.types import Locator, Section


@pytest.mark.parametrize(("text", "words"), [
    ("Sia $f:[a,b]\\rightarrow\\mathbb{R}$ continua, $\\lim_{x\\to 0} f(x) = 0$, "
     "\\textbf{Teorema} 12 (di Rolle).", ["sia", "continua", "lim", "teorema", "12", "di",
                                          "rolle"]),
    ("$$x \\mbox{ se } x \\geq 0$$ è l'insieme", ["se", "insieme"]),
    ("定理 2.3.1 若 $a_n$ 有上界", ["定", "理", "若", "有", "上", "界"]),
])
def test_source_words_are_what_the_pdf_prints(text: str, words: list[str]) -> None:
    assert source_words(text) == words


def test_page_words_leave_glyph_runs_of_one_letter_out() -> None:
    assert page_words("Teorema 43 (di Lagrange). Sia f : [a, b] → R, x2 ∈ ℝ") == [
        "teorema", "43", "di", "lagrange", "sia"]


def test_a_page_knows_what_it_prints_after_a_unit() -> None:
    page = Page.of("Teorema 43 (di Lagrange).\nSia f : [a, b] → R con f(a) = f(b).")
    assert (page.words, page.ends, page.size) == (
        ["teorema", "43", "di", "lagrange", "sia", "con"], [7, 9, 12, 20, 25, 37], 47)
    # after "di Lagrange", ").Siaf:[a,b]→Rconf(a)=f(b)." is left
    assert page.room_after({("di", "lagrange"), ("con", "teorema")}) == (27, "lagrange")
    assert page.room_after(set()) == (47, "")


@pytest.mark.parametrize(("text", "formulas", "size"), [
    ("Sia $f:[a,b]\\to\\mathbb{R}$.", True, 13),  # Siaf:[a,b]→R.
    ("Sia $f:[a,b]\\to\\mathbb{R}$.", False, 4),
    ("$$\\frac{1}{1-q}$$", True, 4),
])
def test_printed_size_counts_glyphs(text: str, formulas: bool, size: int) -> None:
    assert printed_size(text, formulas) == size


def test_grams_of_one_repeated_word_say_nothing() -> None:
    assert grams(["con", "con", "con", "alpha"]) == {("con", "alpha"), ("con", "con", "alpha")}


def test_scores_are_rare_shared_grams_above_the_median() -> None:
    pages = [["a", "b", "c"], ["a", "b", "x"], ["y", "z", "w"]]
    # (a, b) is on two of three pages, (b, c) and (a, b, c) on one; the median page scores
    # log(4/2), which every page loses
    got = scores([["a", "b", "c"], ["q", "r"]], pages)
    assert got.ravel().tolist() == pytest.approx([2 * math.log(4), 0, 0, 0, 0, 0])


def test_the_path_never_goes_back() -> None:
    score = np.array([[0.0, 5.0, 0.0], [4.0, 1.0, 0.0], [0.0, 0.0, 3.0]])
    assert monotone_path(score) == [1, 1, 2]  # not back to page 0 for the second unit
    assert monotone_path(np.zeros((0, 3))) == []


def test_units_without_evidence_take_their_neighbours_page() -> None:
    found = [None, 2, None, None, 2, None, 3, None, 5, None]
    assert fill(found) == [None, 2, 2, 2, 2, 2, 3, None, 5, None]
    # before page 0's first unit and after the last page's last one there is no other page
    assert fill([None, 0, None, 1, None], last=1) == [0, 0, 0, 1, 1]
    # between pages 1 and 2, the units that fit in the 25 characters page 1 has left after
    # unit 0 stay on it (a unit whose middle is past them goes on)
    sizes = [40, 10, 10, 10, 10, 40]
    assert fill([1, None, None, None, None, 2], sizes, lambda unit: 25) == [1, 1, 1, 2, 2, 2]
    assert fill([1, None, None, 2], [9, 9, 9, 9], lambda unit: 0) == [1, 2, 2, 2]


def test_place_reports_the_units_with_evidence() -> None:
    pages = [page_words("Newton's method converges quadratically near a simple root"),
             page_words("Bisection halves the bracket at every step of the search"),
             page_words("The secant method needs no derivative at all")]
    units = [source_words("Newton's method converges quadratically."), source_words("$x$"),
             source_words("The secant method needs no derivative.")]
    placement = place(units, [Page.of(" ".join(p)) for p in pages])
    assert (placement.pages, placement.evidence) == ([0, None, 2], 2)


def test_long_paragraphs_are_cut_at_sentences_outside_formulas() -> None:
    formula = "$" + "a. B" * 40 + "$"
    text = ("First sentence is long enough to stand. " * 6 + formula + " Then more. " +
            "Another sentence goes here. " * 6)
    cut = pieces(text, size=120)
    assert "".join(p.replace(" ", "") for p in cut) == text.replace(" ", "")
    assert all(p.count("$") % 2 == 0 for p in cut)
    assert len(cut) > 2
    assert pieces("Short. Text.") == ["Short. Text."]


PDF = ParsedDocument("Notes PDF", [
    Section("1 Newton\nNewton's method converges quadratically near a simple root.\n"
            "xn+1 = xn − f(xn)/f′(xn)", (), Locator(page=1)),
    Section("2 Secant\nThe secant method needs no derivative and converges superlinearly.",
            (), Locator(page=2)),
    Section("A table of the landau symbols, read from a scan the notes include.", (),
            Locator(page=3)),
], kind="pages", pages=3)


def test_the_source_takes_the_pdf_pages_and_keeps_the_pdf_own_ones() -> None:
    src = ParsedDocument("notes", [
        Section("Newton's method converges quadratically near a simple root.", ("1 Newton",),
                Locator(anchor="newton")),
        Section("$$x_{n+1} = x_n - f(x_n)/f'(x_n)$$", ("1 Newton",), Locator(anchor="newton")),
        Section("The secant method needs no derivative and converges superlinearly.",
                ("2 Secant",), Locator(anchor="secant")),
        Section("$$e_{n+1} \\approx C e_n^{1.618}$$", ("2 Secant", "Order"),
                Locator(anchor="order")),
    ], kind="prose")
    doc = with_pages(src, PDF, "notes.tex", "notes.pdf")
    assert [(s.path, s.locator, s.text[:20]) for s in doc.sections] == [
        (("1 Newton",), Locator(page=1), "Newton's method conv"),
        (("1 Newton",), Locator(page=1), "$$x_{n+1} = x_n - f("),
        (("2 Secant",), Locator(page=2), "The secant method ne"),
        (("2 Secant", "Order"), Locator(anchor="order"), "$$e_{n+1} \\approx C "),
        ((), Locator(page=3), "A table of the landa"),
    ]
    assert (doc.title, doc.pages, doc.aligned, doc.pdf_only_pages) == ("Notes PDF", 3, True,
                                                                       [3])


def test_a_source_of_another_document_is_refused() -> None:
    src = ParsedDocument("other", [
        Section("Gradient descent follows the negative gradient downhill.", ("1 GD",)),
        Section("Momentum adds a fraction of the previous step to the current one.",
                ("1 GD",)),
    ], kind="prose")
    with pytest.raises(InputError) as exc:
        with_pages(src, PDF, "other.tex", "notes.pdf")
    assert str(exc.value) == ("other.tex: no paragraph of it matches the text of notes.pdf; "
                              "is it the source of that PDF?")
