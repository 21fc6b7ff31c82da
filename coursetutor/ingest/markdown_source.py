"""Markdown with LaTeX formulas (Typora, Obsidian, Jupyter, pandoc): the macros its formulas
define (MathJax reads `\\newcommand` in any formula, for the rest of the page) expanded in
every formula, a block left empty by its definitions dropped, display formulas kept whole
across their lines; blockquote marks and the HTML editors leave (`&emsp;`, `<u>`, `<img>`,
`[TOC]`) reduced to text. Code is left as it is."""

from __future__ import annotations

import html
import re
from pathlib import Path

from .markdown import parse_markdown, read_text
from .parsed import ParsedDocument
from .tex_macros import DEFINERS, Expander
from .tex_tokens import PAR, Tok, source, tokenize

_FENCE = re.compile(r"^\s*(```|~~~)")
_CODE = re.compile(r"(`+)[^`\n]+?\1")
_MATH = re.compile(r"\$\$(.+?)\$\$|(?<![\\$])\$(?!\$)((?:\\.|[^$\\\n])+?)\$", re.DOTALL)
_QUOTE = re.compile(r"^(?: {0,3}> ?)+")
_TOC = re.compile(r"^\s*\[TOC\]\s*$", re.IGNORECASE | re.MULTILINE)
_TAG = re.compile(r"</?(?:u|b|i|em|strong|sup|sub|span|font|br|img|div|p|center|mark|small|"
                  r"big|ins|del|s|a|hr|kbd|details|summary)\b[^<>]*>", re.IGNORECASE)
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_ENTITY = re.compile(r"&(?:#\d{1,6}|#x[0-9a-fA-F]{1,6}|[A-Za-z]{2,10});")


def unquote(text: str) -> str:
    """`text` without blockquote marks (outside fenced code)."""
    out, fenced = [], False
    for line in text.split("\n"):
        if _FENCE.match(_QUOTE.sub("", line)):
            fenced = not fenced
        out.append(line if fenced and not line.lstrip().startswith(">") else _QUOTE.sub("",
                                                                                      line))
    return "\n".join(out)


def code_parts(text: str) -> list[tuple[bool, str]]:
    """`text` cut into (is code, part): fenced blocks and inline code are code."""
    parts: list[tuple[bool, str]] = []
    prose: list[str] = []
    fence: list[str] = []
    for line in text.split("\n"):
        if fence:
            fence.append(line)
            if _FENCE.match(line):
                parts.append((True, "\n".join(fence) + "\n"))
                fence = []
        elif _FENCE.match(line):
            parts.append((False, "\n".join(prose) + "\n" if prose else ""))
            prose, fence = [], [line]
        else:
            prose.append(line)
    if fence:
        parts.append((True, "\n".join(fence)))
    parts.append((False, "\n".join(prose)))
    return [p for p in parts if p[1]]


class _Formulas:
    """Expands the formulas of one document in order, its definitions read as they come."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.expander = Expander()
        self.line = 1

    def prose(self, text: str) -> str:
        out, pos = [], 0
        for m in _MATH.finditer(text):
            out.append(_text(text[pos:m.start()]))
            out.append(self.formula(m, text[:m.start()].count("\n")))
            pos = m.end()
        out.append(_text(text[pos:]))
        self.line += text.count("\n")
        return "".join(out)

    def formula(self, m: re.Match[str], lines_before: int) -> str:
        display = m.group(1) is not None
        body = m.group(1) if display else m.group(2)
        toks = tokenize(body, self.name, self.line + lines_before)
        if any(t.text in self.expander.macros or t.text in DEFINERS for t in toks):
            body = source([Tok("\n", t.file, t.line) if t.text == PAR else t
                           for t in self.expander.expand(toks)])
            if not body.strip():
                return ""
        elif not display or not _BLANK_LINE.search(body):
            return m.group()  # nothing to expand: the formula stays as it was written
        if not display:
            return f"${body}$"
        lines = [ln for ln in body.split("\n") if ln.strip()]  # a blank line would end it
        return "$$\n" + "\n".join(lines) + "\n$$"


def _text(text: str) -> str:
    """Prose without the HTML an editor leaves: entities as characters, tags dropped."""
    text = _TAG.sub("", _TOC.sub("", text))
    return _ENTITY.sub(lambda m: html.unescape(m.group()), text)


def prepare(text: str, name: str) -> str:
    """Markdown whose formulas are expanded and whole (see the module's docstring)."""
    formulas = _Formulas(name)
    out = []
    for is_code, part in code_parts(unquote(text)):
        if is_code:
            out.append(part)
            formulas.line += part.count("\n")
            continue
        pieces, pos = [], 0
        for m in _CODE.finditer(part):  # inline code stays as it is
            pieces.append(formulas.prose(part[pos:m.start()]))
            pieces.append(m.group())
            pos = m.end()
        pieces.append(formulas.prose(part[pos:]))
        out.append("".join(pieces))
    return "".join(out)


def load_markdown_source(path: Path) -> ParsedDocument:
    """Load a .md file: headings as its section path, formulas as LaTeX."""
    return parse_markdown(prepare(read_text(path), path.name), path.name)
