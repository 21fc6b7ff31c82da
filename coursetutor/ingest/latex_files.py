"""The files a LaTeX source reads: `\\input`, `\\include`, `\\subfile` and local packages,
found inside the main file's folder only (a name that leads outside it, through `..`, an
absolute path or a link, is never read), with verbatim text set aside before tokenizing."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from ..errors import CorruptFileError, InputError
from .markdown import read_text
from .tex_macros import PACKAGES
from .tex_tokens import Tok, tokenize

MAX_FILES = 200
VERBATIM = "\\ctVerbatim"  # the placeholder of a verbatim block (its index in the table)
VERB = "\\ctVerb"  # of inline \verb text
_BLOCK = re.compile(r"\\begin\{(verbatim\*?|Verbatim|lstlisting|minted|comment)\}(.*?)"
                    r"\\end\{\1\}", re.DOTALL)
_INLINE = re.compile(r"\\verb\*?([^A-Za-z\s*])(.*?)\1")
_ALLTT = re.compile(r"(\\begin\{alltt\})(.*?)(\\end\{alltt\})", re.DOTALL)
_ALLTT_CHARS = re.compile(r"(?<!\\)[%$&#_]")
_IFFALSE = re.compile(r"\\iffalse(?![A-Za-z])(.*?)\\fi(?![A-Za-z])", re.DOTALL)
_OPTIONS = re.compile(r"^\s*(\[[^\]\n]*\])?\s*(\{[^}\n]*\})?")
_INPUT = re.compile(r"\\(input|include|subfile)\s*\{([^}]*)\}"
                    r"|\\(?:usepackage|RequirePackage)\s*(?:\[[^\]]*\])?\s*\{([^}]*)\}")
_COMMENT = re.compile(r"(?<!\\)%[^\n]*")


@dataclasses.dataclass
class SourceFiles:
    """Reads a source and what it inputs, inside `root` only; keeps what it left out."""

    root: Path
    max_bytes: int
    verbatim: list[str] = dataclasses.field(default_factory=list)
    outside: list[str] = dataclasses.field(default_factory=list)  # names that lead outside
    missing: list[str] = dataclasses.field(default_factory=list)  # names not found
    read: list[Path] = dataclasses.field(default_factory=list)

    @classmethod
    def of(cls, main: Path, max_bytes: int) -> SourceFiles:
        return cls(main.parent.resolve(), max_bytes)

    def tokens(self, path: Path) -> list[Tok]:
        """The tokens of one file, its verbatim text set aside."""
        self.read.append(path)
        if len(self.read) > MAX_FILES:
            raise CorruptFileError(f"{self.read[0].name}: more than {MAX_FILES} files read "
                                   "through \\input (does a file input itself?)")
        size = path.stat().st_size
        if size > self.max_bytes:
            raise InputError(f"{path.name}: {size} bytes is over the {self.max_bytes}-byte "
                             "upload limit", code="file_too_large", file=path.name, size=size,
                             limit=self.max_bytes)
        return tokenize(self.protect(read_text(path)), self.label(path))

    def label(self, path: Path) -> str:
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return path.name

    def include(self, command: str, name: str, at: Tok) -> list[Tok] | None:
        """The tokens of the file `command{name}` reads, or None (noted) when it may not or
        cannot be read; a package that is not beside the source is a standard one."""
        found = self.resolve(command, name)
        return None if found is None else self.tokens(found)

    def resolve(self, command: str, name: str) -> Path | None:
        """The file `command{name}` reads (TeX tries `name.tex` first), inside the root."""
        if command in PACKAGES:
            candidates = [f"{name}.sty"]
        else:
            candidates = [f"{name}.tex", name] if Path(name).suffix else [f"{name}.tex"]
        for candidate in candidates:
            target = (self.root / candidate).resolve()
            if not target.is_relative_to(self.root):
                self.outside.append(f"{command}{{{name}}}")
                return None
            if target.is_file():
                return target
        if command not in PACKAGES:
            self.missing.append(f"{command}{{{name}}}")
        return None

    def protect(self, text: str) -> str:
        """`text` with verbatim blocks and `\\verb` set aside as placeholders, comment
        environments and `\\iffalse ... \\fi` dropped (line numbers kept), the `%` of alltt
        blocks escaped."""
        text = _IFFALSE.sub(lambda m: "\n" * m.group(1).count("\n"), text)
        text = _BLOCK.sub(self._block, text)
        # alltt keeps commands and braces but reads % $ & # _ as characters
        text = _ALLTT.sub(lambda m: m.group(1) + _ALLTT_CHARS.sub(r"\\\g<0>", m.group(2))
                          + m.group(3), text)
        return _INLINE.sub(lambda m: self._keep(VERB, m.group(2)), text)

    def _block(self, m: re.Match[str]) -> str:
        body = m.group(2)
        lines = "\n" * body.count("\n")
        if m.group(1) == "comment":
            return lines
        if m.group(1) in ("lstlisting", "minted"):
            body = body[_OPTIONS.match(body).end():]  # type: ignore[union-attr]
        return self._keep(VERBATIM, body.strip("\n")) + lines

    def _keep(self, placeholder: str, text: str) -> str:
        self.verbatim.append(text)
        return f"{placeholder}{{{len(self.verbatim) - 1}}}"


def local_files(main: Path, max_bytes: int) -> list[Path]:
    """The source and the files of its folder it reads, as far as a quick scan tells (their
    bytes make the document's hash, so a changed chapter re-reads the document)."""
    files = SourceFiles.of(main, max_bytes)
    found, todo = [main], [main]
    while todo and len(found) <= MAX_FILES:
        try:
            text = _COMMENT.sub("", todo.pop().read_text(encoding="utf-8", errors="replace"))
        except OSError:
            continue
        for m in _INPUT.finditer(text):
            command = f"\\{m.group(1)}" if m.group(1) else "\\usepackage"
            for name in (m.group(2) or m.group(3) or "").split(","):
                path = files.resolve(command, name.strip()) if name.strip() else None
                if path is not None and path not in found:
                    found.append(path)
                    todo.append(path)
    return found
