"""Loaders: Markdown/text, SRT/WebVTT/JSON transcripts, JSON exercise sheets and PDFs."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from fpdf import FPDF

from coursetutor.errors import (
    CorruptFileError,
    EmptyDocumentError,
    EncryptedFileError,
    NoTextLayerError,
    UnsupportedFileError,
)
from coursetutor.ingest import loaders
from coursetutor.ingest.formulas import GAP, count_blanks, mark_blanks, without_gaps
from coursetutor.ingest.loaders import load
from coursetutor.ingest.markdown import slugify
from coursetutor.ingest.parsed import ParsedDocument
from coursetutor.ingest.pdf import first_line_title, heading_of, structural_heading
from coursetutor.ingest.titles import distinct_title, metadata_title, readable_name
from coursetutor.ingest.transcript import parse_cues, parse_timestamp
from coursetutor.types import Locator, Section


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


# -- Markdown and plain text ---------------------------------------------------

MARKDOWN = """\
# Lecture 3: Newton's method

Newton's method uses the tangent.
It needs the deriv-
ative.

## 1 Derivation

The tangent at `x_n` meets the axis at `x_{n+1}`.

### 1.1 The update rule

```python
# not a heading inside a fence

x = x - f(x) / df(x)
```

## 2 When it fails ##

A flat tangent: `f'(x_n) = 0`.

Cycles and divergence.
"""


def test_markdown_heading_path_and_anchors(tmp_path: Path) -> None:
    doc = load(write(tmp_path / "lecture-03.md", MARKDOWN))
    title = "Lecture 3: Newton's method"
    assert doc == ParsedDocument(
        title=title,
        kind="prose",
        sections=[
            Section("Newton's method uses the tangent.\nIt needs the derivative.", (title,),
                    Locator(anchor="lecture-3-newtons-method")),
            Section("The tangent at `x_n` meets the axis at `x_{n+1}`.",
                    (title, "1 Derivation"), Locator(anchor="1-derivation")),
            Section("```python\n# not a heading inside a fence\n\nx = x - f(x) / df(x)\n```",
                    (title, "1 Derivation", "1.1 The update rule"),
                    Locator(anchor="11-the-update-rule")),
            Section("A flat tangent: `f'(x_n) = 0`.", (title, "2 When it fails"),
                    Locator(anchor="2-when-it-fails")),
            Section("Cycles and divergence.", (title, "2 When it fails"),
                    Locator(anchor="2-when-it-fails")),
        ],
    )


def test_markdown_without_h1_keeps_file_stem_as_title(tmp_path: Path) -> None:
    doc = load(write(tmp_path / "notes.markdown", "## Part A\n\nText a.\n\n# Late title\n\nB.\n"))
    assert doc.title == "notes"
    assert [(s.path, s.locator.anchor) for s in doc.sections] == [
        (("Part A",), "part-a"),
        (("Late title",), "late-title"),
    ]


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        ("4.3 Order of convergence of the secant method",
         "43-order-of-convergence-of-the-secant-method"),
        ("Newton's method: when it fails?", "newtons-method-when-it-fails"),
        ("Che cos'è una radice", "che-cosè-una-radice"),
        ("  Error  bound (bisection) ", "error-bound-bisection"),
        ("Fixed-point iteration", "fixed-point-iteration"),
        ("牛顿法", "牛顿法"),
    ],
)
def test_slugify(heading: str, anchor: str) -> None:
    assert slugify(heading) == anchor


def test_plain_text(tmp_path: Path) -> None:
    text = "First paragraph,\nwrapped.\n\n\nSecond paragraph.\n"
    doc = load(write(tmp_path / "notes.txt", text))
    assert doc == ParsedDocument(
        title="notes",
        kind="prose",
        sections=[Section("First paragraph,\nwrapped."), Section("Second paragraph.")],
    )


def test_text_is_nfkc_normalized_and_bom_dropped(tmp_path: Path) -> None:
    path = tmp_path / "wide.txt"
    path.write_bytes("\ufeffＮｅｗｔｏｎ ＝ ﬁne".encode())
    assert load(path).sections == [Section("Newton = fine")]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("caf\xe9".encode("latin-1"), "bad.md: not UTF-8 text"),
        (b"text\x00with a NUL", "bad.md: binary data in a text file"),
    ],
)
def test_unreadable_text_is_corrupt(tmp_path: Path, data: bytes, message: str) -> None:
    path = tmp_path / "bad.md"
    path.write_bytes(data)
    with pytest.raises(CorruptFileError) as exc:
        load(path)
    assert str(exc.value) == message


@pytest.mark.parametrize("text", ["", "\n\n   \n", "# Only a heading\n\n## And another\n"])
def test_markdown_without_text_is_empty(tmp_path: Path, text: str) -> None:
    with pytest.raises(EmptyDocumentError) as exc:
        load(write(tmp_path / "empty.md", text))
    assert str(exc.value) == "empty.md: no text"


# -- Transcripts ---------------------------------------------------------------

SRT = """\
1
00:00:04,200 --> 00:00:08,256
Okay, good morning <i>everyone</i>.
Let's get started.

2
00:00:08,616 --> 00:00:13,802
Today is all about <b>Newton's</b> method.

3
01:02:03,450 --> 01:02:05,000
<font color="red">Late</font> remark.

4
00:00:20,000 --> 00:00:19,000
ends before it starts

5
00:00:30,000 --> 00:00:31,000
<i></i>
"""

VTT = """\
WEBVTT
Kind: captions

NOTE this block is a comment

intro
00:01.000 --> 00:04.500 align:start position:10%
<v Anna>Hello <c.yellow>there</c>.</v>

00:00:04.500 --> 00:00:07.25
Second cue,
two lines.
"""


def test_srt_cues(tmp_path: Path) -> None:
    doc = load(write(tmp_path / "video.srt", SRT))
    assert doc == ParsedDocument(
        title="video",
        kind="timed",
        sections=[
            Section("Okay, good morning everyone. Let's get started.",
                    locator=Locator(start=4.2, end=8.256)),
            Section("Today is all about Newton's method.",
                    locator=Locator(start=8.616, end=13.802)),
            Section("Late remark.", locator=Locator(start=3723.45, end=3725.0)),
        ],
    )


def test_webvtt_cues(tmp_path: Path) -> None:
    doc = load(write(tmp_path / "video.vtt", VTT))
    assert doc.kind == "timed"
    assert doc.sections == [
        Section("Hello there.", locator=Locator(start=1.0, end=4.5)),
        Section("Second cue, two lines.", locator=Locator(start=4.5, end=7.25)),
    ]


def test_windows_line_endings_in_srt() -> None:
    text = (
        "1\r\n00:00:01,000 --> 00:00:02,500\r\nOne.\r\n\r\n"
        "2\r\n00:00:03,000 --> 00:00:04,000\r\nTwo.\r\n"
    )
    assert parse_cues(text) == [
        Section("One.", locator=Locator(start=1.0, end=2.5)),
        Section("Two.", locator=Locator(start=3.0, end=4.0)),
    ]


@pytest.mark.parametrize(
    ("stamp", "seconds"),
    [
        ("00:00:04,200", 4.2),
        ("01:02:03,450", 3723.45),
        ("02:03.450", 123.45),
        ("00:00:07.25", 7.25),
        ("0:00:01.5", 1.5),
        ("10:00:00.000", 36000.0),
    ],
)
def test_parse_timestamp(stamp: str, seconds: float) -> None:
    assert parse_timestamp(stamp) == seconds


@pytest.mark.parametrize("stamp", ["", "4.2", "00:00:04", "aa:bb:cc,ddd"])
def test_parse_timestamp_rejects_garbage(stamp: str) -> None:
    with pytest.raises(ValueError, match="bad timestamp"):
        parse_timestamp(stamp)


def test_transcript_without_cues_is_empty(tmp_path: Path) -> None:
    with pytest.raises(EmptyDocumentError) as exc:
        load(write(tmp_path / "video.vtt", "WEBVTT\n\nNOTE nothing here\n"))
    assert str(exc.value) == "video.vtt: no timed cues found"


@pytest.mark.parametrize(
    "data",
    [
        [{"start": 0, "end": 2.5, "text": " First. "}, {"start": 2.5, "end": 4, "text": "Second."}],
        {"segments": [{"start": 0.0, "end": 2.5, "text": "First."},
                      {"start": 2.5, "end": 4.0, "text": "Second."},
                      {"start": 4.0, "end": 5.0, "text": "   "}]},
    ],
)
def test_json_segments(tmp_path: Path, data: object) -> None:
    doc = load(write(tmp_path / "whisper.json", json.dumps(data)))
    assert doc == ParsedDocument(
        title="whisper",
        kind="timed",
        sections=[
            Section("First.", locator=Locator(start=0.0, end=2.5)),
            Section("Second.", locator=Locator(start=2.5, end=4.0)),
        ],
    )


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([{"start": 0, "end": "soon", "text": "x"}],
         "bad.json: segment 1 needs numeric start/end and text"),
        ([{"start": 0, "end": 1, "text": "a"}, {"start": 3, "end": 2, "text": "b"}],
         "bad.json: segment 2 ends before it starts"),
    ],
)
def test_bad_json_segments(tmp_path: Path, data: object, message: str) -> None:
    with pytest.raises(CorruptFileError) as exc:
        load(write(tmp_path / "bad.json", json.dumps(data)))
    assert str(exc.value) == message


# -- JSON exercise sheets --------------------------------------------------------


def test_json_exercise_sheet(tmp_path: Path) -> None:
    sheet = {
        "title": "Exercise sheet 2",
        "items": [
            {"title": "Bisection on a cubic", "text": "  Find a bracket for x^3 - x - 2.  "},
            {"text": "How many steps give 1e-6?"},
        ],
    }
    doc = load(write(tmp_path / "sheet-02.json", json.dumps(sheet)))
    assert doc == ParsedDocument(
        title="Exercise sheet 2",
        kind="prose",
        sections=[
            Section("Find a bracket for x^3 - x - 2.",
                    ("Exercise sheet 2", "Bisection on a cubic"),
                    Locator(anchor="bisection-on-a-cubic")),
            Section("How many steps give 1e-6?", ("Exercise sheet 2", "Exercise 2"),
                    Locator(anchor="exercise-2")),
        ],
    )


def test_json_exam_as_bare_list(tmp_path: Path) -> None:
    items = [{"title": "Q1", "text": "Define a root."}]
    doc = load(write(tmp_path / "exam.json", json.dumps(items)))
    assert doc.title == "exam"
    assert doc.sections == [Section("Define a root.", ("exam", "Q1"), Locator(anchor="q1"))]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "bad.json: invalid JSON (Expecting property name enclosed in double quotes)"),
        ('{"title": "x"}', "bad.json: expected 'items': a list of {title, text}"),
        ('{"items": [{"title": "no text"}]}', "bad.json: item 1 needs a 'text'"),
        ('{"items": ["just a string"]}', "bad.json: item 1 needs a 'text'"),
    ],
)
def test_bad_exercise_sheet(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(CorruptFileError) as exc:
        load(write(tmp_path / "bad.json", text))
    assert str(exc.value) == message


# -- PDF -----------------------------------------------------------------------

HEADER = "Numerical Methods 101 - Lecture 3"


def make_pdf(
    path: Path,
    pages: list[list[str]],
    margins: bool = True,
    user_password: str | None = None,
    owner_password: str | None = None,
    title: str | None = None,
) -> Path:
    """A PDF with one text line per list item (no wrapping), optionally with running margins
    and a metadata title."""
    pdf = FPDF()
    if title is not None:
        pdf.set_title(title)
    pdf.set_auto_page_break(False)
    pdf.set_font("Helvetica", size=11)
    for number, lines in enumerate(pages, start=1):
        pdf.add_page()
        if margins:
            pdf.set_xy(10, 8)
            pdf.cell(0, 6, HEADER)
            pdf.set_xy(10, 280)
            pdf.cell(0, 6, f"Page {number} of {len(pages)}")
        for i, line in enumerate(lines):
            pdf.set_xy(10, 30 + 7 * i)
            pdf.cell(0, 6, line)
    if owner_password or user_password:
        pdf.set_encryption(owner_password=owner_password or "owner",
                           user_password=user_password or "")
    pdf.output(str(path))
    return path


LECTURE_PAGES = [
    ["Lecture 3: Newton's method", "This lecture derives Newton's method from the tangent",
     "line and studies when and how fast it converges."],
    ["Contents", "1 Derivation ........ 3", "1.1 The update rule ........ 4",
     "2 Convergence ........ 6"],
    ["1 Derivation", "Replace the curve by its tangent line at the current iterate",
     "and take the point where the tangent meets the x-axis."],
    ["1.1 The update rule", "The new iterate is x_{n+1} = x_n - f(x_n) / f'(x_n), which",
     "needs one evaluation of f and one of its derivative per step."],
    ["Figure 1."],
    ["The rule fails when the tangent is horizontal, that is when",
     "the derivative vanishes at an iterate."],
    ["2 Convergence", "Near a simple root the number of correct digits roughly",
     "doubles at every step: the convergence is quadratic."],
]


@pytest.fixture(scope="module")
def lecture_pdf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_pdf(tmp_path_factory.mktemp("pdf") / "lecture-03.pdf", LECTURE_PAGES)


def test_pdf_pages_sections_and_margins(lecture_pdf: Path) -> None:
    doc = load(lecture_pdf)
    derivation, rule = ("1 Derivation",), ("1 Derivation", "1.1 The update rule")
    assert doc == ParsedDocument(
        title="lecture-03",  # no metadata title: the file's; its first line names page 1
        kind="pages",
        pages=7,
        no_text_pages=[5],
        dropped_pages=[2],
        sections=[
            Section("\n".join(LECTURE_PAGES[0]), (LECTURE_PAGES[0][0],), Locator(page=1)),
            Section("\n".join(LECTURE_PAGES[2]), derivation, Locator(page=3)),
            Section("\n".join(LECTURE_PAGES[3]), rule, Locator(page=4)),
            Section("\n".join(LECTURE_PAGES[5]), rule, Locator(page=6)),
            Section("\n".join(LECTURE_PAGES[6]), ("2 Convergence",), Locator(page=7)),
        ],
    )


def test_pdf_running_margins_are_gone(lecture_pdf: Path) -> None:
    text = "\n".join(s.text for s in load(lecture_pdf).sections)
    assert "Numerical Methods 101" not in text
    assert "Page " not in text


@pytest.mark.parametrize(
    ("line", "heading"),
    [
        ("2 Convergence", ((2,), "2 Convergence")),
        ("2. Convergence", ((2,), "2 Convergence")),
        ("3.1 Definitions", ((3, 1), "3.1 Definitions")),
        ("1.2.3.4 Deep", ((1, 2, 3, 4), "1.2.3.4 Deep")),
        ("3.1 Definitions.", None),
        ("2 + 2 = 4", None),
        ("12", None),
        ("Convergence", None),
        ("0.5 is the contraction constant:", None),
    ],
)
def test_heading_of(line: str, heading: tuple[tuple[int, ...], str] | None) -> None:
    assert heading_of(line) == heading


def test_pdf_wrapped_line_starting_with_a_number_is_not_a_heading(tmp_path: Path) -> None:
    pages = [
        ["1 Bisection", "Each step halves the bracket, so starting from [1, 2] we need",
         "10 iterations to get an error below one thousandth and",
         "20 iterations for one millionth."],
        ["The method needs only a sign change and never diverges, which",
         "makes it the safe fallback of every hybrid root finder."],
        ["Halving the bracket costs one evaluation of f per step, the",
         "cheapest step of all the methods in this lecture."],
    ]
    doc = load(make_pdf(tmp_path / "bisection.pdf", pages))
    assert [s.path for s in doc.sections] == [("1 Bisection",)] * 3


def test_pdf_without_text_layer_is_empty(tmp_path: Path) -> None:
    path = make_pdf(tmp_path / "scan.pdf", [["Fig."], [], ["3"]], margins=False)
    with pytest.raises(EmptyDocumentError) as exc:
        load(path)
    assert str(exc.value) == (
        "scan.pdf: no page has a text layer (3 pages); "
        "to read scanned pages: pip install 'coursetutor[ocr]'"
    )
    assert isinstance(exc.value, NoTextLayerError)
    assert (exc.value.pages, exc.value.no_text_pages) == (3, [1, 2, 3])


@pytest.mark.parametrize(
    "data",
    [
        random.Random(1).randbytes(4096),
        b"%PDF-1.7\n" + random.Random(2).randbytes(4096),
        b"%PDF-1.4\n%%EOF\n",
        b"not a pdf",
    ],
    ids=["random", "pdf-header", "header-and-eof", "text"],
)
def test_corrupt_pdf(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "broken.pdf"
    path.write_bytes(data)
    with pytest.raises(CorruptFileError) as exc:
        load(path)
    assert str(exc.value).startswith("broken.pdf: not a readable PDF (")


def test_encrypted_pdf(tmp_path: Path) -> None:
    path = make_pdf(tmp_path / "locked.pdf", LECTURE_PAGES[:1], user_password="secret")
    with pytest.raises(EncryptedFileError) as exc:
        load(path)
    assert str(exc.value) == "locked.pdf: the PDF is password protected"


def test_pdf_with_only_an_owner_password_is_readable(tmp_path: Path) -> None:
    path = make_pdf(tmp_path / "owner.pdf", LECTURE_PAGES[:1], margins=False,
                    owner_password="owner")
    assert load(path).sections == [
        Section("\n".join(LECTURE_PAGES[0]), (LECTURE_PAGES[0][0],), Locator(page=1))]


# -- Dispatch ------------------------------------------------------------------


@pytest.mark.parametrize("name", ["slides.pptx", "notes.docx", "README", "archive.pdf.gz"])
def test_unsupported_extension(tmp_path: Path, name: str) -> None:
    with pytest.raises(UnsupportedFileError) as exc:
        load(write(tmp_path / name, "content"))
    assert str(exc.value) == (
        f"{name}: unsupported file type; supported: .json, .markdown, .md, .pdf, .srt, .tex, "
        ".txt, .vtt"
    )


@pytest.mark.parametrize("name", ["NOTES.MD", "Notes.Txt"])
def test_extension_is_case_insensitive(tmp_path: Path, name: str) -> None:
    assert load(write(tmp_path / name, "Some text.")).sections == [Section("Some text.")]


# -- Any failure of a loader is the file's own error ----------------------------


def test_deeply_nested_json_is_a_corrupt_file(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000)
    with pytest.raises(CorruptFileError, match=r"^deep\.json: nested too deeply to read$"):
        load(path)


@pytest.mark.parametrize(
    ("raised", "message"),
    [
        (MemoryError(), "notes.md: too large to read in memory"),
        (RecursionError("maximum recursion depth exceeded"), "notes.md: nested too deeply to read"),
        (ValueError("bad glyph table\nin font F1"),
         "notes.md: could not be read (ValueError: bad glyph table)"),
        (KeyError("/Widths"), "notes.md: could not be read (KeyError: '/Widths')"),
    ],
    ids=["memory", "recursion", "value", "key"],
)
def test_any_loader_exception_becomes_a_corrupt_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, raised: BaseException, message: str,
) -> None:
    def explode(path: Path) -> ParsedDocument:
        raise raised

    monkeypatch.setitem(loaders.LOADERS, ".md", explode)
    with pytest.raises(CorruptFileError) as exc:
        load(write(tmp_path / "notes.md", "# Notes\n\nText.\n"))
    assert str(exc.value) == message


# -- Titles: the file's own, never its first heading ----------------------------


def test_pdf_metadata_title_is_the_title(tmp_path: Path) -> None:
    path = make_pdf(tmp_path / "05_notes_it.pdf", LECTURE_PAGES[:1], margins=False,
                    title="Analisi Matematica I")
    assert load(path).title == "Analisi Matematica I"


@pytest.mark.parametrize(
    ("value", "title"),
    [
        ("Optimization in Machine Learning", "Optimization in Machine Learning"),
        ("  Numerical   Methods ", "Numerical Methods"),
        ("untitled", None),
        ("Microsoft Word - notes.docx", None),
        ("lecture3.tex", None),
        ("ab", None),
        ("", None),
        (None, None),
    ],
)
def test_metadata_title(value: str | None, title: str | None) -> None:
    assert metadata_title(value) == title


@pytest.mark.parametrize(
    ("name", "readable"),
    [
        ("pdf/05_unimib_analisi-matematica_appunti_it.pdf", "Unimib analisi-matematica appunti"),
        ("02_lmu-optml_exercise-sheet-09_en.pdf", "Lmu-optml exercise-sheet-09"),
        ("03_lmu-optml_solutions-sheet-09_en.pdf", "Lmu-optml solutions-sheet-09"),
        ("hf-course_03_what-is-transfer-learning_zh-CN.srt",
         "Hf-course 03 what-is-transfer-learning"),
        ("what-is-transfer-learning.vtt", "What is transfer learning"),
        ("lecture 2 (newton).md", "Lecture 2 (newton)"),
        ("2024.pdf", "2024"),
    ],
)
def test_readable_name(name: str, readable: str) -> None:
    assert readable_name(name) == readable


def test_distinct_title() -> None:
    taken = {"Optimization in Machine Learning"}
    assert distinct_title("Newton", "sol9.pdf", taken) == "Newton"
    assert distinct_title("Optimization in Machine Learning", "03_solutions-sheet-09_en.pdf",
                          taken) == "Optimization in Machine Learning (Solutions sheet 09)"


def test_markdown_with_several_top_headings_is_titled_by_its_name(tmp_path: Path) -> None:
    doc = load(write(tmp_path / "notes.md", "# Chapter 1\n\nA.\n\n# Chapter 2\n\nB.\n"))
    assert doc.title == "notes"
    assert [s.path for s in doc.sections] == [("Chapter 1",), ("Chapter 2",)]


# -- Sections of a page: chapters, sections, slide titles -----------------------


@pytest.mark.parametrize(
    ("lines", "heading"),
    [
        (["第二章  序列的极限  ", " 序列极限的定义  §", "定义 2.1.1"], (1, "第二章 序列的极限")),
        (["第一章  函数", " 实数", "第二章  序列的极限"], None),  # a table of contents
        (["第六章  不定积分", "§", "§"], None),
        ([" 函数的性质  §", "定义 1.3.1"], (2, "函数的性质")),
        (["Capitolo 2", "Numeri Reali", "2.1 Insiemi"], (1, "2 Numeri Reali")),
        (["Chapter 3", "we saw that."], None),
        (["The Chapter 3 results"], None),
    ],
)
def test_structural_heading(lines: list[str], heading: tuple[int, str] | None) -> None:
    assert structural_heading(lines, 0) == heading


@pytest.mark.parametrize(
    ("lines", "path"),
    [
        (["FROM FIRST TO SECOND ORDER METHODS", "So far: first order"],
         ("FROM FIRST TO SECOND ORDER METHODS",)),
        (["The rule fails when the tangent is horizontal, that is when"], ()),
        (["ggplot(data.frame(x), aes(x=t)) +"], ()),
        (["= 2 x + 1 + 3 y = 7 - 4"], ()),
        ([], ()),
    ],
)
def test_first_line_title(lines: list[str], path: tuple[str, ...]) -> None:
    assert first_line_title(lines) == path


CHAPTERS = [
    ["Capitolo 1", "Introduzione", "Questi appunti sono presi a lezione durante il corso."],
    ["1.1 Insiemi", "Un insieme e una collezione di oggetti distinti fra loro."],
    ["Gli insiemi si confrontano con funzioni iniettive e suriettive, come segue."],
    ["1.2 Numeri", "I numeri naturali si costruiscono a partire dallo zero."],
    ["Capitolo 2", "Successioni", "Una successione e una funzione definita sui naturali."],
]


def test_pdf_chapters_name_the_sections_of_their_pages(tmp_path: Path) -> None:
    doc = load(make_pdf(tmp_path / "appunti.pdf", CHAPTERS, margins=False))
    assert [s.path for s in doc.sections] == [
        ("1 Introduzione",), ("1 Introduzione", "1.1 Insiemi"),
        ("1 Introduzione", "1.1 Insiemi"), ("1 Introduzione", "1.2 Numeri"),
        ("2 Successioni",)]


# -- Formulas missing from the text layer ----------------------------------------

BLANKS = [
    "Nested intervals",
    "Let    be a sequence of intervals, where    .",
    "Then    holds for every    ,    and    .",
    "The proof takes the supremum of the left ends.",
]


def test_blanks_where_formulas_were() -> None:
    text = "设区间套   ，其中  . 则  , , 成立 ( )"
    assert count_blanks(text) == 5
    assert mark_blanks(text) == (
        f"设区间套 {GAP} ，其中 {GAP} . 则 {GAP} , {GAP} , 成立 ( {GAP} )")
    assert without_gaps(mark_blanks("其中  .")) == "其中 ."
    assert count_blanks("Then x = 1, y = 2 (see [3]) and z... Done. A , B") == 0


def test_pdf_pages_missing_their_formulas_are_found_and_marked(tmp_path: Path) -> None:
    path = make_pdf(tmp_path / "intervals.pdf",
                    [BLANKS, ["A page whose formulas are all there: x = 1 and y = 2."]],
                    margins=False)
    doc = load(path)
    assert doc.formula_pages == [1]
    assert doc.sections[0].text.split("\n")[1:3] == [
        f"Let {GAP} be a sequence of intervals, where {GAP} .",
        f"Then {GAP} holds for every {GAP} , {GAP} and {GAP} .",
    ]
    assert GAP not in doc.sections[1].text


def test_pdf_formula_pages_are_read_by_ocr_when_it_is_there(tmp_path: Path) -> None:
    path = make_pdf(tmp_path / "intervals.pdf", [BLANKS], margins=False)
    read: list[int] = []

    text = ("Nested intervals\nLet I_n = [a_n, b_n] be a sequence of intervals, where "
            "I_n+1 ⊂ I_n.\nThen a_n ≤ b_n holds for every n, a_n ≤ a_n+1 and b_n+1 ≤ b_n.")

    def ocr(pdf: Path, page: int) -> str:
        read.append(page)
        return text

    doc = load(path, ocr)
    assert (read, doc.ocr_pages, doc.formula_pages) == ([1], [1], [])
    assert doc.sections[0].text == text
