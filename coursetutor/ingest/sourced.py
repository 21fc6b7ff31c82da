"""A PDF read with its LaTeX or Markdown source: the text and formulas come from the source,
each paragraph's page from the PDF (`align_source.py`); a citation opens the PDF at it."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

from ..errors import InputError
from ..types import Locator, Section
from .align_source import Page, pieces, place, source_words
from .formulas import GAP
from .latex import MAX_SOURCE_BYTES, parse_latex
from .markdown_source import load_markdown_source
from .parsed import ParsedDocument

MIN_MATCHED = 0.3  # share of a source's paragraphs with words that must be found in its PDF


def _latex(path: Path, max_bytes: int) -> ParsedDocument:
    return parse_latex(path, max_bytes)[0]


def _markdown(path: Path, max_bytes: int) -> ParsedDocument:
    size = path.stat().st_size
    if size > max_bytes:
        raise InputError(f"{path.name}: {size} bytes is over the {max_bytes}-byte upload limit",
                         code="file_too_large", file=path.name, size=size, limit=max_bytes)
    return load_markdown_source(path)


SOURCES: dict[str, Callable[[Path, int], ParsedDocument]] = {
    ".tex": _latex, ".md": _markdown, ".markdown": _markdown,
}


def check_source(path: Path, source: Path) -> None:
    """Raise InputError unless `source` is a LaTeX or Markdown file beside a PDF `path`."""
    if path.suffix.lower() != ".pdf":
        raise InputError(f"{path.name}: a source goes with a PDF, not a "
                         f"{path.suffix or 'file without a suffix'}")
    if source.suffix.lower() not in SOURCES:
        raise InputError(f"{source.name}: a source is LaTeX or Markdown; supported: "
                         f"{', '.join(sorted(SOURCES))}")
    if not source.is_file():
        raise InputError(f"{path.name}: the source {source.name!r} is not a file")


def load_source(path: Path, max_bytes: int = MAX_SOURCE_BYTES) -> ParsedDocument:
    """The source's paragraphs under their section path."""
    return SOURCES[path.suffix.lower()](path, max_bytes)


def with_pages(src: ParsedDocument, pdf: ParsedDocument, source_name: str,
               pdf_name: str) -> ParsedDocument:
    """The source's paragraphs, each with the PDF page it is printed on (where one is found),
    as the document of the PDF: its pages, title and page report. A page no paragraph of
    the source is on (a page the source includes as a picture or a PDF) keeps its own text."""
    units = [(i, piece) for i, s in enumerate(src.sections) for piece in pieces(s.text)]
    words = _unit_words(src.sections, units)
    placement = place(words, [Page.of(s.text.replace(GAP, " ")) for s in pdf.sections],
                      [text for _, text in units], formulas=not pdf.formula_pages)
    _check_match(placement.evidence, sum(len(w) >= 3 for w in words), source_name, pdf_name)
    numbers = [s.locator.page or 0 for s in pdf.sections]
    pages = [None if p is None else numbers[p] for p in placement.pages]
    sections = _merged(src.sections, units, pages)
    covered = {s.locator.page for s in sections}
    own = [s for s in pdf.sections if s.locator.page not in covered]
    own_pages = [s.locator.page or 0 for s in own]
    return ParsedDocument(
        title=src.title if src.title != Path(source_name).stem else pdf.title,
        sections=_interleave(sections, own), kind="prose", pages=pdf.pages,
        no_text_pages=pdf.no_text_pages, dropped_pages=pdf.dropped_pages,
        ocr_pages=pdf.ocr_pages, formula_pages=[p for p in pdf.formula_pages if p in own_pages],
        notes=src.notes, aligned=True, pdf_only_pages=own_pages)


def _merged(paragraphs: list[Section], units: list[tuple[int, str]],
            pages: list[int | None]) -> list[Section]:
    """The placed units as sections: the pieces of a paragraph on one page joined again; a
    unit without a page is cited by its section's anchor."""
    sections: list[Section] = []
    last: tuple[int, int | None] = (-1, None)
    for (i, text), page in zip(units, pages, strict=True):
        if sections and last == (i, page):
            sections[-1] = dataclasses.replace(sections[-1], text=f"{sections[-1].text} {text}")
        else:
            para = paragraphs[i]
            locator = Locator(page=page) if page else Locator(anchor=para.locator.anchor)
            sections.append(Section(text, para.path, locator))
        last = (i, page)
    return sections


def _check_match(evidence: int, worded: int, source_name: str, pdf_name: str) -> None:
    """Refuse a source too little of which is found in the PDF (another document's)."""
    if evidence == 0:
        raise InputError(f"{source_name}: no paragraph of it matches the text of {pdf_name}; "
                         "is it the source of that PDF?", code="source_mismatch",
                         source=source_name, pdf=pdf_name)
    if evidence < MIN_MATCHED * worded:
        raise InputError(f"{source_name}: only {evidence} of its {worded} paragraphs match the "
                         f"text of {pdf_name}; is it the source of that PDF?",
                         code="source_mismatch", source=source_name, pdf=pdf_name)


def _interleave(sections: list[Section], own: list[Section]) -> list[Section]:
    """The source's sections with the PDF's own pages among them, in page order."""
    out: list[Section] = []
    waiting = list(own)
    for s in sections:
        page = s.locator.page
        while waiting and page is not None and (waiting[0].locator.page or 0) < page:
            out.append(waiting.pop(0))
        out.append(s)
    return out + waiting


def _unit_words(sections: list[Section], units: list[tuple[int, str]]) -> list[list[str]]:
    """Each unit's words; the first one under a heading begins with the heading's, which the
    PDF prints just before it."""
    out: list[list[str]] = []
    previous: tuple[str, ...] | None = None
    for i, text in units:
        path = sections[i].path
        words = source_words(text)
        if path != previous and path:
            words = source_words(path[-1]) + words
        previous = path
        out.append(words)
    return out
