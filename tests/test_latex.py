"""The LaTeX loader: macros expanded, structure and numbering as LaTeX prints them, inputs
read inside the source's folder only, sources LaTeX could not compile refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from coursetutor.errors import CorruptFileError
from coursetutor.ingest.latex import load_latex, parse_latex
from coursetutor.ingest.latex_files import local_files
from coursetutor.ingest.loaders import load
from coursetutor.ingest.parsed import Note
from coursetutor.types import Locator, Section


def tex(folder: Path, body: str, preamble: str = "", cls: str = "article",
        name: str = "notes.tex") -> Path:
    path = folder / name
    path.write_text(f"\\documentclass{{{cls}}}\n{preamble}\n\\begin{{document}}\n{body}\n"
                    "\\end{document}\n", encoding="utf-8")
    return path


def texts(path: Path) -> list[str]:
    return [s.text for s in load_latex(path).sections]


@pytest.mark.parametrize(("preamble", "body", "expected"), [
    ("\\newcommand{\\R}{\\mathbb{R}}", "Sia $x \\in \\R$.", "Sia $x \\in \\mathbb{R}$."),
    ("\\newcommand{\\norm}[1]{\\lVert #1 \\rVert}", "$\\norm{x+y}$",
     "$\\lVert x+y \\rVert$"),
    ("\\newcommand{\\pair}[2]{(#1, #2)}", "$\\pair{a}{b} = \\pair xy$", "$(a, b) = (x, y)$"),
    ("\\newcommand{\\seq}[2][n]{#2_{#1}}", "$\\seq{a} \\seq[k]{b}$", "$a_{n} b_{k}$"),
    ("\\def\\eps{\\varepsilon}", "$\\eps > 0$", "$\\varepsilon > 0$"),
    ("\\def\\abs#1{|#1|}", "$\\abs{x}$", "$|x|$"),
    ("\\let\\phi\\varphi", "$\\phi$", "$\\varphi$"),
    ("\\DeclareMathOperator{\\rank}{rank}", "$\\rank A$", "$\\operatorname{rank} A$"),
    ("\\newcommand{\\opn}[1]{\\operatorname{#1}}\\newcommand{\\tr}{\\opn{tr}}", "$\\tr A$",
     "$\\operatorname{tr} A$"),
    ("\\newcommand{\\R}{\\mathbb{R}}\\renewcommand{\\R}{\\mathbf{R}}", "$\\R$",
     "$\\mathbf{R}$"),
    ("\\newcommand{\\name}{Newton}", "The \\name{} method.", "The Newton method."),
])
def test_macros_of_the_preamble_are_expanded(tmp_path: Path, preamble: str, body: str,
                                             expected: str) -> None:
    assert texts(tex(tmp_path, body, preamble)) == [expected]


def test_a_macro_that_uses_itself_is_refused(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("coursetutor.ingest.tex_macros.MAX_STEPS", 1000)
    path = tex(tmp_path, "$\\loop$", "\\def\\loop{\\loop x}")
    with pytest.raises(CorruptFileError, match=r"^notes.tex: line 4: \\loop expands without end"):
        load_latex(path)


def test_formulas_stay_latex_and_comments_go(tmp_path: Path) -> None:
    body = ("The sum is $\\frac{1}{1-q}$ % for |q| < 1\nwhen $|q|<1$, 50\\% of the time:\n"
            "\\[ \\sum_{n=0}^\\infty q^n \\]\n\\begin{align*} a &= b \\\\ c &= d \\end{align*}\n"
            "\\begin{equation}\\label{eq:e} e^{i\\pi} + 1 = 0 \\end{equation}")
    assert texts(tex(tmp_path, body)) == [
        "The sum is $\\frac{1}{1-q}$ when $|q|<1$, 50% of the time: "
        "$$\\sum_{n=0}^\\infty q^n$$ $$\\begin{aligned}a &= b \\\\ c &= d\\end{aligned}$$ "
        "$$e^{i\\pi} + 1 = 0$$"
    ]


def test_sections_are_numbered_as_latex_numbers_them(tmp_path: Path) -> None:
    body = ("\\chapter{Limits}\\label{ch:lim}\nIntro.\n\\section{Sequences}\\label{sec:seq}\n"
            "Text.\n\\subsection{Monotone}\nMore.\n\\section*{Aside}\nAside text.\n"
            "\\chapter{Series}\nSee Section \\ref{sec:seq} of Chapter~\\ref{ch:lim}.")
    doc = load_latex(tex(tmp_path, body, cls="book"))
    assert [(s.path, s.locator.anchor, s.text) for s in doc.sections] == [
        (("1 Limits",), "ch:lim", "Intro."),
        (("1 Limits", "1.1 Sequences"), "sec:seq", "Text."),
        (("1 Limits", "1.1 Sequences", "1.1.1 Monotone"), "monotone", "More."),
        (("1 Limits", "Aside"), "aside", "Aside text."),
        (("2 Series",), "series", "See Section 1.1 of Chapter 1."),
    ]


def test_theorems_print_their_names_and_numbers(tmp_path: Path) -> None:
    preamble = ("\\usepackage[italian]{babel}\n\\newtheorem{teo}{Teorema}[section]\n"
                "\\newtheorem{lem}[teo]{Lemma}\n\\newtheorem*{oss}{Osservazione}")
    body = ("\\section{Derivate}\n\\begin{teo}[Rolle]\\label{t:rolle} Se $f(a)=f(b)$...\n"
            "\\end{teo}\n\\begin{proof} Per Weierstrass.\\end{proof}\n"
            "\\begin{lem} Un lemma.\\end{lem}\n\\begin{oss} Nota bene.\\end{oss}\n"
            "\\section{Integrali}\n\\begin{teo}Il teorema fondamentale.\\end{teo}\n"
            "Per il Teorema \\ref{t:rolle}.")
    assert texts(tex(tmp_path, body, preamble)) == [
        "Teorema 1.1 (Rolle). Se $f(a)=f(b)$...",
        "Dimostrazione. Per Weierstrass.",
        "Lemma 1.2. Un lemma.",
        "Osservazione. Nota bene.",
        "Teorema 2.1. Il teorema fondamentale.",
        "Per il Teorema 1.1.",
    ]


def test_lists_text_commands_and_verbatim(tmp_path: Path) -> None:
    body = ("\\begin{enumerate}\\item First \\textbf{bold}\\item Second\\end{enumerate}\n"
            "\\begin{itemize}\\item[(a)] Labelled\\end{itemize}\n"
            "Caf\\'e, na\\\"ive, \\emph{``quoted''} -- \\url{https://x.org}\\footnote{A note.}\n"
            "\\begin{verbatim}\nx = 1 % not a comment\n\\end{verbatim}\n"
            "\\begin{tikzpicture}\\draw (0,0) -- (1,1);\\end{tikzpicture}")
    assert texts(tex(tmp_path, body)) == [
        "1. First bold", "2. Second", "(a) Labelled",
        "Café, naïve, “quoted” – https://x.org (A note.)",
        "```\nx = 1 % not a comment\n```",
    ]


def test_beamer_frames_are_slides(tmp_path: Path) -> None:
    body = ("\\section{Newton}\n\\begin{frame}{The update}\n\\begin{itemize}\n"
            "\\item<2-> $x_{t+1} = x_t - f(x_t)/f'(x_t)$\n\\item Quadratic\n\\end{itemize}\n"
            "\\end{frame}\n\\begin{frame}\\frametitle{Limits}\nMay diverge.\n\\end{frame}")
    doc = load_latex(tex(tmp_path, body, cls="beamer"))
    assert [(s.path, s.text) for s in doc.sections] == [
        (("Newton", "The update"), "- $x_{t+1} = x_t - f(x_t)/f'(x_t)$\n\n- Quadratic"),
        (("Newton", "Limits"), "May diverge."),
    ]


def test_a_tex_alone_is_a_document_cited_by_section(tmp_path: Path) -> None:
    path = tex(tmp_path, "\\section{Sets}\\label{sec:sets}\nA set.", "\\title{Analysis I}")
    doc = load(path)
    assert (doc.title, doc.kind, doc.pages) == ("Analysis I", "prose", 0)
    assert doc.sections == [Section("A set.", ("1 Sets",), Locator(anchor="sec:sets"))]


def test_inputs_are_read_inside_the_folder_only(tmp_path: Path) -> None:
    folder = tmp_path / "course"
    (folder / "chapters").mkdir(parents=True)
    (tmp_path / "secret.tex").write_text("TOP SECRET\n", encoding="utf-8")
    (folder / "macros.sty").write_text("\\newcommand{\\R}{\\mathbb{R}}\n", encoding="utf-8")
    (folder / "chapters" / "one.tex").write_text("Chapter one on $\\R$.\n", encoding="utf-8")
    main = tex(folder, "\\input{chapters/one}\n\n\\input{../secret}\n\n\\include{missing}",
               "\\usepackage{amsmath,macros}")
    doc, files = parse_latex(main)
    assert [s.text for s in doc.sections] == ["Chapter one on $\\mathbb{R}$."]
    assert doc.notes == [
        Note("not read, outside the source's folder: \\input{../secret}", "source_outside",
             {"files": "\\input{../secret}"}),
        Note("not found beside the source: \\include{missing}", "source_missing",
             {"files": "\\include{missing}"})]
    assert local_files(main, 10**6) == [main, folder / "macros.sty",
                                        folder / "chapters" / "one.tex"]
    assert files.read == [main, folder / "macros.sty", folder / "chapters" / "one.tex"]


def test_a_link_out_of_the_folder_is_not_followed(tmp_path: Path) -> None:
    folder = tmp_path / "course"
    folder.mkdir()
    (tmp_path / "secret.tex").write_text("TOP SECRET\n", encoding="utf-8")
    (folder / "link.tex").symlink_to(tmp_path / "secret.tex")
    doc, _ = parse_latex(tex(folder, "Text.\n\n\\input{link}"))
    assert ([s.text for s in doc.sections], doc.notes) == (["Text."], [Note(
        "not read, outside the source's folder: \\input{link}", "source_outside",
        {"files": "\\input{link}"})])


@pytest.mark.parametrize(("body", "message"), [
    ("Text {with a brace.", "notes.tex: line 5: '{' is never closed"),
    ("Text} too many.", "notes.tex: line 5: '}' without an opening '{'"),
    ("\\begin{itemize}\\item A", "notes.tex: line 5: \\begin{itemize} is never closed"),
    ("\\begin{itemize}\\item A\\end{enumerate}",
     "notes.tex: line 5: \\end{enumerate} closes \\begin{itemize} of line 5"),
    ("\\begin{equation} x = 1", "notes.tex: line 5: \\begin{equation} is never closed"),
    ("A formula $x + y", "notes.tex: line 5: the formula opened here is never closed"),
])
def test_a_source_latex_could_not_compile_is_refused(tmp_path: Path, body: str,
                                                     message: str) -> None:
    path = tmp_path / "notes.tex"
    path.write_text(f"\\documentclass{{article}}\n\n\n\\begin{{document}}\n{body}",
                    encoding="utf-8")
    with pytest.raises(CorruptFileError) as exc:
        load(path)
    assert str(exc.value) == message


def test_a_formula_left_open_ends_where_tex_ends_it(tmp_path: Path) -> None:
    doc, _ = parse_latex(tex(tmp_path, "A stray $ dollar\n\n\\section{Next}\nText."))
    assert [s.text for s in doc.sections] == ["A stray $dollar$", "Text."]
    assert doc.notes == [Note("formula never closed on line(s) 4, ended as TeX ends it",
                              "formula_unclosed", {"lines": "4"})]
