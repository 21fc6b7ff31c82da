"""Markdown with LaTeX formulas: the macros its formulas define expanded, display formulas
kept whole, the HTML a Markdown editor leaves reduced to text, code left alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from coursetutor.errors import CorruptFileError
from coursetutor.ingest.loaders import load
from coursetutor.ingest.markdown_source import prepare

TYPORA = """[TOC]

$$
\\newcommand{\\R}{\\mathbb{R}}
% symbols
\\newcommand{\\abs}[1]{\\left|#1\\right|}
$$

# 第一章 函数

## $\\S1.1$ 实数

> **定理 1.1.2 (确界)**
>
> &emsp;&emsp;若 $E\\subset\\R$ 有上界, 则 $\\sup E$ 存在.

&nbsp;

<u>定理 1.1.2</u> 给出 $\\abs{x}\\le 1$:
$$
f(x)=\\abs{x}

+1
$$
<img src="assets/1-1.webp" alt="1-1.webp" style="zoom:25%;" />
"""


def test_formulas_are_expanded_and_kept_whole(tmp_path: Path) -> None:
    path = tmp_path / "final.md"
    path.write_text(TYPORA, encoding="utf-8")
    doc = load(path)
    assert [(s.path, s.text) for s in doc.sections] == [
        (("第一章 函数", "$\\S1.1$ 实数"), "**定理 1.1.2 (确界)**"),
        (("第一章 函数", "$\\S1.1$ 实数"),
         "若 $E\\subset\\mathbb{R}$ 有上界, 则 $\\sup E$ 存在."),
        (("第一章 函数", "$\\S1.1$ 实数"),
         "定理 1.1.2 给出 $\\left|x\\right|\\le 1$:\n$$\nf(x)=\\left|x\\right|\n+1\n$$"),
    ]


@pytest.mark.parametrize("text", [
    "Prices: $5 and $10, 50% off.\n",
    "Code `$x$ <b>` stays.\n",
    "```\n$$ \\newcommand{\\x}{y} $$ <u>\n```\n",
    "    a < b and c > d\n",
])
def test_text_without_macros_is_left_as_written(text: str) -> None:
    assert prepare(text, "notes.md") == text


def test_code_is_not_expanded() -> None:
    text = "$\\newcommand{\\x}{y}$ $\\x$ `\\x` and\n```\n$\\x$\n```\n"
    assert prepare(text, "notes.md") == " $y$ `\\x` and\n```\n$\\x$\n```\n"


def test_a_bad_definition_names_its_line() -> None:
    with pytest.raises(CorruptFileError, match=r"^notes.md: line 3: \\newcommand"):
        prepare("# Title\n\n$\\newcommand{\\x}[12]{y}$\n", "notes.md")
