"""LaTeX loader: a `.tex` file, with what it inputs from its own folder, as paragraphs under
their section path, formulas kept as LaTeX (`$...$`, display maths as `$$...$$`).

The preamble's own macros are expanded (`tex_macros.py`); `\\part` to `\\subparagraph` and
beamer frames are the section path, numbered as LaTeX numbers them (`2.1 Insiemi`); theorem
environments, those of `\\newtheorem` with their printed names and counters included, open a
paragraph with their heading ("Teorema 3 (Rolle)."), proofs with the document language's
"Proof"; a `\\label` right after a heading is its anchor, and `\\ref` prints the number it
names (`latex_reader.py`, `latex_numbers.py`). Comments, pictures and layout commands are
dropped. A source LaTeX could not compile (a brace or an environment that never closes, a
formula still open at the end) is a CorruptFileError naming the file and line; a formula left
open in a paragraph is closed where TeX would close it, and noted.
"""

from __future__ import annotations

from pathlib import Path

from ..types import Section
from .latex_files import SourceFiles
from .latex_reader import Reader
from .parsed import Note, ParsedDocument
from .tex_macros import Expander
from .tex_tokens import check_balance

MAX_SOURCE_BYTES = 20 * 1024 * 1024


def parse_latex(main: Path, max_bytes: int = MAX_SOURCE_BYTES, whole_frames: bool = False
                ) -> tuple[ParsedDocument, SourceFiles]:
    """Read `main` and the files it inputs from its folder; returns the document and the
    reader of its files (what it read, and what it left out). With `whole_frames`, each
    beamer frame is one section (a slide)."""
    files = SourceFiles.of(main, max_bytes)
    expander = Expander(files.include)
    toks = expander.expand(files.tokens(main))
    check_balance(toks)
    reader = Reader(main.name, expander.macros, files.verbatim)
    doc = reader.read(toks)
    if whole_frames and reader.numbers.doc_class == "beamer":
        doc.sections = frames(doc.sections)
    doc.notes = notes(files)
    if reader.repairs:
        lines = ", ".join(map(str, reader.repairs[:5])) + (" ..." if len(reader.repairs) > 5
                                                           else "")
        doc.notes.append(Note(f"formula never closed on line(s) {lines}, ended as TeX ends it",
                              code="formula_unclosed", params={"lines": lines}))
    return doc, files


def notes(files: SourceFiles) -> list[Note]:
    """What the report says of the files a source names but that were not read."""
    out = []
    if files.outside:
        named = _first(files.outside)
        out.append(Note(f"not read, outside the source's folder: {named}",
                        code="source_outside", params={"files": named}))
    if files.missing:
        named = _first(files.missing)
        out.append(Note(f"not found beside the source: {named}",
                        code="source_missing", params={"files": named}))
    return out


def _first(names: list[str], shown: int = 5) -> str:
    return ", ".join(names[:shown]) + (" ..." if len(names) > shown else "")


def frames(sections: list[Section]) -> list[Section]:
    """Consecutive sections of one path joined: a beamer deck's frames, one section each."""
    out: list[Section] = []
    for s in sections:
        if out and out[-1].path == s.path and s.path:
            out[-1] = Section(f"{out[-1].text}\n\n{s.text}", s.path, out[-1].locator)
        else:
            out.append(s)
    return out


def load_latex(path: Path) -> ParsedDocument:
    """Load a .tex file (a document without pages: its sections are its locators)."""
    return parse_latex(path, whole_frames=True)[0]
