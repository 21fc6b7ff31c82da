"""LaTeX source as tokens: control sequences, braces, math shifts, text runs and spaces, each
with the file and line it came from (for messages), and back to source text."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from ..errors import CorruptFileError

_TOKEN = re.compile(
    r"(?P<cs>\\(?:[A-Za-z@]+|.))"
    r"|(?P<comment>%[^\n]*(?:\n[ \t]*)?)"
    r"|(?P<par>[ \t]*\n(?:[ \t]*\n)+[ \t]*)"
    r"|(?P<space>\s+)"
    r"|(?P<param>#{1,2}[1-9])"
    r"|(?P<char>[{}$&~#^_\[\]])"
    r"|(?P<text>[^\\{}$&~#^_\[\]%\s]+)",
    re.DOTALL,
)
_WORD = re.compile(r"\\[A-Za-z@]+")
PAR = "\n\n"
SPACES = frozenset({" ", "\n"})  # a space token: "\n" when it holds a line break


@dataclasses.dataclass(frozen=True)
class Tok:
    """One token and where it was read."""

    text: str
    file: str
    line: int

    @property
    def is_space(self) -> bool:
        """A space between words (a paragraph break is not one)."""
        return self.text in SPACES

    def where(self) -> str:
        return f"{self.file}: line {self.line}"


def tokenize(text: str, file: str, first_line: int = 1) -> list[Tok]:
    """The tokens of `text` (comments dropped, runs of blank lines one paragraph token)."""
    toks: list[Tok] = []
    line = first_line
    for m in _TOKEN.finditer(text):
        kind, value = m.lastgroup, m.group()
        if kind == "par":
            toks.append(Tok(PAR, file, line))
        elif kind == "space":
            toks.append(Tok("\n" if "\n" in value else " ", file, line))
        elif kind != "comment":
            toks.append(Tok(value, file, line))
        line += value.count("\n")
    return toks


def is_word(text: str) -> bool:
    """Whether `text` is a control word (`\\alpha`), not a control symbol (`\\,`)."""
    return _WORD.fullmatch(text) is not None


def source(toks: Sequence[Tok]) -> str:
    """Tokens back to LaTeX; a control word keeps a space before a letter that follows."""
    out: list[str] = []
    prev = ""
    for t in toks:
        text = t.text
        if is_word(prev) and (text[:1].isalpha() or text[:1] == "@"):
            out.append(" ")
        out.append(text)
        prev = text
    return "".join(out)


def group_end(toks: Sequence[Tok], start: int) -> int:
    """The index of the `}` closing the `{` at `start`."""
    depth = 0
    for i in range(start, len(toks)):
        if toks[i].text == "{":
            depth += 1
        elif toks[i].text == "}":
            depth -= 1
            if depth == 0:
                return i
    raise CorruptFileError(f"{toks[start].where()}: '{{' is never closed")


def check_balance(toks: Sequence[Tok]) -> None:
    """Raise CorruptFileError at the first brace that does not pair."""
    opened: list[Tok] = []
    for t in toks:
        if t.text == "{":
            opened.append(t)
        elif t.text == "}":
            if not opened:
                raise CorruptFileError(f"{t.where()}: '}}' without an opening '{{'")
            opened.pop()
    if opened:
        raise CorruptFileError(f"{opened[-1].where()}: '{{' is never closed")
