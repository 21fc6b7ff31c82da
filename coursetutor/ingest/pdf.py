"""PDF loader (pypdf): one section per page, page numbers kept, cleaned text."""

from __future__ import annotations

import logging
import re
from pathlib import Path

from ..errors import CorruptFileError, EmptyDocumentError, EncryptedFileError
from ..types import Locator, Section
from .cleaning import clean_pages, is_contents_page
from .ocr import INSTALL_HINT, OcrFn
from .parsed import ParsedDocument

MIN_PAGE_CHARS = 50
_HEADING = re.compile(r"^(\d+(?:\.\d+){0,3})\.?\s+([^\n]{2,80})$")


def _read_pages(path: Path) -> list[str]:
    try:
        from pypdf import PdfReader
        from pypdf.errors import PdfReadError
    except ImportError as exc:  # pragma: no cover - core dependency
        raise CorruptFileError("pypdf is not installed: pip install pypdf") from exc
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    try:
        reader = PdfReader(str(path))
        if reader.is_encrypted and not reader.decrypt(""):
            raise EncryptedFileError(f"{path.name}: the PDF is password protected")
        return [page.extract_text() or "" for page in reader.pages]
    except EncryptedFileError:
        raise
    except (PdfReadError, ValueError, KeyError, TypeError, AttributeError, OSError) as exc:
        if "encrypt" in str(exc).lower() or "password" in str(exc).lower():
            raise EncryptedFileError(f"{path.name}: the PDF is password protected") from exc
        raise CorruptFileError(f"{path.name}: not a readable PDF ({exc})") from exc
    except Exception as exc:  # pypdf raises many internal types on damaged files
        raise CorruptFileError(f"{path.name}: not a readable PDF ({type(exc).__name__})") from exc


def heading_of(line: str) -> tuple[tuple[int, ...], str] | None:
    """A numbered heading ('2.1 Newton's method') -> ((2, 1), text); None for body text."""
    m = _HEADING.match(line.strip())
    if not m:
        return None
    title = m.group(2).strip()
    if title.endswith((".", ",", ";", ":")) or not title[0].isupper() or len(title) > 60:
        return None
    return tuple(int(x) for x in m.group(1).split(".")), f"{m.group(1)} {title}"


def continues(outline: tuple[int, ...], numbers: tuple[int, ...]) -> bool:
    """True when `numbers` is the next heading after `outline` (a sibling, child or uncle).

    Body lines that start with a number ('10 iterations are enough') rarely continue the
    outline, so they are not taken for headings.
    """
    if not outline:
        return len(numbers) <= 2
    depth = len(numbers)
    if depth > len(outline) + 1:
        return False
    if depth == len(outline) + 1:
        return numbers[:-1] == outline and numbers[-1] == 1
    return numbers[:-1] == outline[: depth - 1] and numbers[-1] == outline[depth - 1] + 1


def load_pdf(path: Path, ocr: OcrFn | None = None) -> ParsedDocument:
    """Read a PDF into one section per page with a running section path.

    Pages without a text layer are read with `ocr` when given, else reported and skipped.
    """
    raw = _read_pages(path)
    if not raw:
        raise EmptyDocumentError(f"{path.name}: the PDF has no pages")
    ocr_pages: list[int] = []
    if ocr is not None:
        for i, text in enumerate(raw):
            if len(text.strip()) < MIN_PAGE_CHARS:
                try:
                    raw[i] = ocr(path, i + 1)
                except Exception as exc:  # an OCR failure loses the page, not the file
                    logging.getLogger(__name__).warning("OCR failed on page %d: %s", i + 1, exc)
                    continue
                ocr_pages.append(i + 1)
    pages = clean_pages(raw)
    doc = ParsedDocument(title=path.stem, sections=[], kind="pages", pages=len(raw),
                         ocr_pages=ocr_pages)
    trail: list[str] = []
    outline: tuple[int, ...] = ()
    for number, text in enumerate(pages, start=1):
        if len(text.strip()) < MIN_PAGE_CHARS:
            doc.no_text_pages.append(number)
            continue
        if is_contents_page(text):
            doc.dropped_pages.append(number)
            continue
        page_path = tuple(trail)
        lines = [ln for ln in text.split("\n") if ln.strip()]
        for i, line in enumerate(lines):
            found = heading_of(line)
            if found and continues(outline, found[0]):
                outline, title = found
                trail = [*trail[: len(outline) - 1], title]
                if i < 3 or not page_path:
                    page_path = tuple(trail)
        doc.sections.append(Section(text=text, path=page_path, locator=Locator(page=number)))
    if not doc.sections:
        raise EmptyDocumentError(
            f"{path.name}: no page has a text layer ({len(raw)} pages)"
            + ("" if ocr else f"; to read scanned pages: {INSTALL_HINT}")
        )
    first = doc.sections[0].text.strip().split("\n", 1)[0].strip()
    if 3 <= len(first) <= 120:
        doc.title = first
    return doc
