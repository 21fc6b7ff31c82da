"""Cleaning extracted page text: NFKC, hyphenation, running headers/footers, contents pages."""

from __future__ import annotations

import pytest

from coursetutor.ingest.cleaning import (
    clean_pages,
    is_contents_page,
    join_hyphenated,
    nfkc,
    repeated_margins,
    strip_margins,
)

BODIES = [
    "Bisection halves a bracket at every step.\nIt always converges.",
    "Newton's method uses the tangent line.\nIt converges quadratically.",
    "The secant method needs no derivative.\nIts order is about 1.618.",
    "Stop when the step or the residual is small.\nCombine both tests.",
]


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("ＡＢＣ　１２３", "ABC 123"),
        ("ｆ（ｘ）＝０", "f(x)=0"),
        ("ﬁnding the ﬂat part", "finding the flat part"),
        ("x² − 2", "x2 − 2"),
        ("ｶﾀｶﾅ", "カタカナ"),
        ("line one\r\nline two\rline three", "line one\nline two\nline three"),
        # TeX's large delimiters, extracted as control characters (a Newton-Raphson slide)
        ("x [t+1] = x [t] − \x10 ∇2f (x [t]) \x11−1 ∇f (x [t])",
         "x [t+1] = x [t] − ( ∇2f (x [t]) )−1 ∇f (x [t])"),
        ("d[t] = − \x00 ∇2f (x [t]) \x01−1", "d[t] = − ( ∇2f (x [t]) )−1"),
        ("a\tb\x0cc", "a\tb\x0cc"),  # whitespace controls stay
    ],
)
def test_nfkc(raw: str, clean: str) -> None:
    assert nfkc(raw) == clean


@pytest.mark.parametrize(
    ("raw", "joined"),
    [
        ("the deriv-\native of f", "the derivative of f"),
        ("conver-\ngence and itera-\ntion", "convergence and iteration"),
        ("a well-known method", "a well-known method"),
        ("ends with a dash -\nthen more", "ends with a dash -\nthen more"),
        ("word-\n\nnew paragraph", "word-\n\nnew paragraph"),
    ],
)
def test_join_hyphenated(raw: str, joined: str) -> None:
    assert join_hyphenated(raw) == joined


def with_margins(body: str, page: int, total: int) -> str:
    return f"Numerical Methods 101 - Lecture 2\n{body}\nPage {page} of {total}"


def test_running_header_and_footer_are_removed_with_varying_page_numbers() -> None:
    pages = [with_margins(b, i, len(BODIES)) for i, b in enumerate(BODIES, start=1)]
    assert clean_pages(pages) == BODIES


def test_bare_page_numbers_are_removed() -> None:
    pages = [f"{b}\n{i}" for i, b in enumerate(BODIES, start=7)]
    assert clean_pages(pages) == BODIES


def test_margin_shapes() -> None:
    pages = [with_margins(b, i, 12) for i, b in enumerate(BODIES, start=9)]
    assert repeated_margins(pages) == {"numerical methods # - lecture #", "page # of #"}


def test_margins_need_at_least_three_pages() -> None:
    pages = [with_margins(b, i, 2) for i, b in enumerate(BODIES[:2], start=1)]
    assert repeated_margins(pages) == set()
    assert clean_pages(pages) == pages


@pytest.mark.parametrize(("with_header", "removed"), [(2, False), (3, True), (5, True)])
def test_a_margin_must_repeat_on_half_the_pages(with_header: int, removed: bool) -> None:
    bodies = [*BODIES, "A fifth page.\nWith two lines."]
    pages = [f"Draft\n{b}" if i < with_header else b for i, b in enumerate(bodies)]
    expected = bodies[:with_header] if removed else [f"Draft\n{b}" for b in bodies[:with_header]]
    assert clean_pages(pages) == expected + bodies[with_header:]


def test_repeated_line_in_the_middle_of_a_page_is_kept() -> None:
    pages = [f"Top {i} here.\nTop {i} again.\nRemember: f(r) = 0.\nEnd {i}.\nReally the end {i}."
             for i in ("one", "two", "three")]
    assert clean_pages(pages) == pages


def test_strip_margins_only_looks_at_the_edges() -> None:
    page = "Header\nHeader\nbody\nHeader\nlast\nHeader"
    assert strip_margins(page, {"header"}, edge=1) == "Header\nbody\nHeader\nlast"
    assert strip_margins(page, {"header"}, edge=2) == "body\nHeader\nlast"


def test_clean_pages_joins_hyphens_after_nfkc() -> None:
    pages = [with_margins(b, i, 3) for i, b in enumerate(
        ["The deriv-\native ｆ＇(x).", "Second page.", "Third page."], start=1)]
    assert clean_pages(pages) == ["The derivative f'(x).", "Second page.", "Third page."]


@pytest.mark.parametrize(
    "page",
    [
        "Contents\n1 Fixed-point iteration\n2 Contractions",
        "Table of Contents\nIntroduction\nNewton's method",
        "Lecture notes\nInhaltsverzeichnis\nEinleitung",
        "目录\n第一章 牛顿法",
        "Indice\nIntroduzione",
        "1 Introduction ........ 3\n1.1 Motivation ....... 4\n2 Bisection ........ 7\n"
        "2.1 The algorithm .... 9\n3 Newton's method ... 12",
        "1 Introduction 3\n1.1 Motivation 4\n2 Bisection 7\n2.1 The algorithm 9\n3 Newton 12",
        "Introduction\t3\nMotivation\t4\nBisection\t7\nThe algorithm\t9\nNewton\t12\nSecant\t15",
        "Preface\nIntroduction … 3\nMotivation … 4\nBisection … 7\nNewton … 12\nSecant … 15",
    ],
)
def test_contents_page_detected(page: str) -> None:
    assert is_contents_page(page)


@pytest.mark.parametrize(
    "page",
    [
        "",
        "\n  \n",
        BODIES[0],
        "Contents of a bracket\nThe interval [a, b] contains a root when f changes sign.",
        "Today we cover three methods. The contents are:\nbisection\nNewton\nsecant",
        # four contents-like lines are too few to call the page a table of contents
        "1 Introduction ........ 3\n1.1 Motivation ....... 4\n2 Bisection ........ 7\n"
        "3 Newton's method ... 12",
        # two contents-like lines out of six
        "2 Newton's method\nThe update is x_{n+1} = x_n - f(x_n) / f'(x_n).\n"
        "It needs the derivative.\nNear a simple root it converges quadratically.\n"
        "See the table on page 12\nExercise 3 ......... 4",
    ],
)
def test_ordinary_page_is_not_contents(page: str) -> None:
    assert not is_contents_page(page)
