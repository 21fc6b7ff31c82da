"""The plain records: locator labels and the document-type and difficulty checks."""

from __future__ import annotations

import pytest

from coursetutor.errors import InputError
from coursetutor.types import (
    DOC_TYPES,
    Citation,
    Locator,
    check_difficulty,
    check_doc_type,
    check_media_url,
    media_at,
)


@pytest.mark.parametrize(
    ("locator", "label"),
    [
        (Locator(page=3), "p. 3"),
        (Locator(page=3, anchor="x"), "p. 3"),
        (Locator(start=62.4, end=150.9), "01:02-02:30"),
        (Locator(start=0.0, end=59.99), "00:00-00:59"),
        (Locator(start=3723.45, end=7322.0), "1:02:03-2:02:02"),
        (Locator(anchor="43-order-of-convergence"), "#43-order-of-convergence"),
        (Locator(start=5.0), ""),
        (Locator(), ""),
    ],
)
def test_locator_label(locator: Locator, label: str) -> None:
    assert locator.label() == label


@pytest.mark.parametrize("value", DOC_TYPES)
def test_check_doc_type_accepts_every_type(value: str) -> None:
    assert check_doc_type(value) == value


def test_check_doc_type_lists_valid_types() -> None:
    with pytest.raises(InputError) as exc:
        check_doc_type("Lecture")
    assert str(exc.value) == (
        "unknown document type 'Lecture'; valid: lecture, slides, textbook, exercise, "
        "solution, exam, transcript, summary"
    )


@pytest.mark.parametrize("value", [1, 2, 3, 4, 5])
def test_check_difficulty(value: int) -> None:
    assert check_difficulty(value) == value


@pytest.mark.parametrize("value", [0, 6, -1])
def test_check_difficulty_out_of_range(value: int) -> None:
    with pytest.raises(InputError) as exc:
        check_difficulty(value)
    assert str(exc.value) == f"difficulty must be 1-5, got {value}"


@pytest.mark.parametrize(("url", "seconds", "expected"), [
    ("https://media.example.edu/l1.mp4", 37.9, "https://media.example.edu/l1.mp4#t=37"),
    ("https://media.example.edu/l1.mp4#t=5", 62, "https://media.example.edu/l1.mp4#t=62"),
    ("https://www.youtube.com/watch?v=abc", 75, "https://www.youtube.com/watch?v=abc&t=75s"),
    ("https://youtu.be/abc", 0, "https://youtu.be/abc?t=0s"),
    ("", 10, ""),
])
def test_media_at(url: str, seconds: float, expected: str) -> None:
    assert media_at(url, seconds) == expected


@pytest.mark.parametrize("url", ["javascript:alert(1)", "ftp://x/y.mp4", "https://x/a b",
                                 "https://x/\"onerror=", "/relative.mp4"])
def test_check_media_url_refuses_what_is_not_a_web_link(url: str) -> None:
    with pytest.raises(InputError, match="media_url"):
        check_media_url(url)


def test_check_media_url_accepts_empty_and_web_links() -> None:
    assert check_media_url("") == ""
    assert check_media_url("http://x.org/v.mp4") == "http://x.org/v.mp4"


@pytest.mark.parametrize(
    ("section", "locator", "label"),
    [
        ("第五章 导数的应用", Locator(page=19), "Pku notes, 第五章 导数的应用, p. 19"),
        ("", Locator(page=3), "Pku notes, p. 3"),
        ("Pku notes", Locator(page=3), "Pku notes, p. 3"),
        ("Newton", Locator(start=62.0, end=150.0), "Pku notes, Newton, 01:02-02:30"),
        ("Newton", Locator(), "Pku notes, Newton"),
    ],
)
def test_citation_label_names_title_section_and_place(
    section: str, locator: Locator, label: str
) -> None:
    citation = Citation(1, "c1", "notes-pdf", "Pku notes", "lecture", locator, "…", section)
    assert citation.label() == label
