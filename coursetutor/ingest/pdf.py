"""PDF loader (pypdf): one section per page, page numbers kept, cleaned text."""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

from ..errors import CorruptFileError, EmptyDocumentError, EncryptedFileError, NoTextLayerError
from ..types import Locator, Section
from .cleaning import clean_pages, is_contents_page, nfkc
from .formulas import mark_blanks, missing_formulas
from .ocr import INSTALL_HINT, OcrFn
from .parsed import ParsedDocument
from .titles import metadata_title

MIN_PAGE_CHARS = 50
_HEADING = re.compile(r"^(\d+(?:\.\d+){0,3})\.?\s+([^\n]{2,80})$")
_CJK_CHAPTER = re.compile(r"^第\s*([一二三四五六七八九十百零〇两\d]+)\s*章\s*(\S.{0,40})$")
_SECTION_MARK = re.compile(r"^(\S.{1,40}?)\s*§$")
_CHAPTER_WORD = re.compile(
    r"^(?:chapter|capitolo|kapitel|chapitre|cap[ií]tulo|hoofdstuk)\s+(\d{1,3})$", re.IGNORECASE)
MAX_TITLE_WORDS = 10
_TOC_WINDOW = 6  # lines after a chapter heading that must hold no other chapter


def _read_pages(path: Path) -> tuple[list[str], str | None]:
    """The text of every page and the metadata title."""
    try:
        from pypdf import PdfReader
        from pypdf.errors import PdfReadError
    except ImportError as exc:  # pragma: no cover - core dependency
        raise CorruptFileError("pypdf is not installed: pip install pypdf") from exc
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    try:
        reader = PdfReader(str(path))
        if reader.is_encrypted and not reader.decrypt(""):
            raise EncryptedFileError(f"{path.name}: the PDF is password protected",
                                     code="pdf_encrypted", file=path.name)
        pages = [page.extract_text() or "" for page in reader.pages]
        return pages, _title(reader)
    except EncryptedFileError:
        raise
    except (PdfReadError, ValueError, KeyError, TypeError, AttributeError, OSError) as exc:
        if "encrypt" in str(exc).lower() or "password" in str(exc).lower():
            raise EncryptedFileError(f"{path.name}: the PDF is password protected",
                                     code="pdf_encrypted", file=path.name) from exc
        raise CorruptFileError(f"{path.name}: not a readable PDF ({exc})", code="pdf_unreadable",
                               file=path.name) from exc
    except (RecursionError, MemoryError):
        raise
    except Exception as exc:  # pypdf raises many internal types on damaged files
        raise CorruptFileError(f"{path.name}: not a readable PDF ({type(exc).__name__})",
                               code="pdf_unreadable", file=path.name) from exc


def _title(reader: Any) -> str | None:
    """The metadata title when it names the document (a damaged info dictionary: None)."""
    try:
        return metadata_title(reader.metadata.title if reader.metadata else None)
    except Exception:  # a broken info dictionary only loses the title
        return None


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


def structural_heading(lines: list[str], i: int) -> tuple[int, str] | None:
    """An unnumbered heading at `lines[i]` as (level, title): a Chinese chapter ('第二章 序列的
    极限', level 1), a section named before a '§' (level 2), or 'Chapter 2' / 'Capitolo 2'
    over its title line (level 1, '2 Title'); None for anything else.

    A chapter line followed within a few lines by another chapter (or by bare '§' marks)
    belongs to a table of contents, not to the text.
    """
    line = " ".join(lines[i].split())
    chapter = _CJK_CHAPTER.match(line)
    if chapter:
        after = [" ".join(x.split()) for x in lines[i + 1 : i + 1 + _TOC_WINDOW]]
        if any(_CJK_CHAPTER.match(x) or x == "§" for x in after):
            return None
        return 1, f"第{chapter.group(1)}章 {chapter.group(2)}"
    section = _SECTION_MARK.match(line)
    if section:
        return 2, section.group(1)
    numbered = _CHAPTER_WORD.match(line)
    if numbered and i + 1 < len(lines):
        title = " ".join(lines[i + 1].split())
        if 2 <= len(title) <= 60 and not title.endswith((".", ",", ";", ":")):
            return 1, f"{numbered.group(1)} {title}"
    return None


def first_line_title(lines: list[str]) -> tuple[str, ...]:
    """A page outside any heading is named by its first line when that reads as a title
    (a slide's title, a sheet's header): a few words, with letters, not a sentence."""
    if not lines:
        return ()
    first = " ".join(lines[0].split())
    if len(first.split()) > MAX_TITLE_WORDS or first[:1].islower():
        return ()
    if not 3 <= len(first) <= 80 or first.endswith((".", ",", ";", ":", "=", "+", "\\", "{")):
        return ()
    letters = sum(ch.isalpha() for ch in first)
    return (first,) if letters >= len(first) // 2 else ()


def _ocr_pages(path: Path, raw: list[str], ocr: OcrFn) -> list[int]:
    """Read pages without a text layer, or missing their formulas, with `ocr` (in place)."""
    done: list[int] = []
    for i, text in enumerate(raw):
        if len(text.strip()) >= MIN_PAGE_CHARS and not missing_formulas(nfkc(text)):
            continue
        try:
            read = ocr(path, i + 1)
        except Exception as exc:  # an OCR failure loses the page, not the file
            logging.getLogger(__name__).warning("OCR failed on page %d: %s", i + 1, exc)
            continue
        if len(read.strip()) >= len(text.strip()) // 2:  # a worse reading keeps the text
            raw[i] = read
            done.append(i + 1)
    return done


def load_pdf(path: Path, ocr: OcrFn | None = None) -> ParsedDocument:
    """Read a PDF into one section per page with a running section path.

    Pages without a text layer, or whose formulas left blanks in it, are read with `ocr`
    when given; else the first are reported and skipped, the blanks marked (formulas.GAP).
    The title is the PDF's metadata title when it has a real one, else the file's stem.
    """
    raw, title = _read_pages(path)
    if not raw:
        raise EmptyDocumentError(f"{path.name}: the PDF has no pages", code="pdf_no_pages",
                                 file=path.name)
    ocr_pages = _ocr_pages(path, raw, ocr) if ocr is not None else []
    pages = clean_pages(raw)
    doc = ParsedDocument(title=title or path.stem, sections=[], kind="pages", pages=len(raw),
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
        if missing_formulas(text):
            doc.formula_pages.append(number)
            text = mark_blanks(text)
        page_path = tuple(trail)
        lines = [ln for ln in text.split("\n") if ln.strip()]
        for i, line in enumerate(lines):
            found = heading_of(line)
            if found and continues(outline, found[0]):
                outline, heading = found
                trail = [*trail[: len(outline) - 1], heading]
            else:
                other = structural_heading(lines, i)
                if other is None:
                    continue
                level, heading = other
                if level == 1 and heading[0].isdigit():
                    outline = (int(heading.split()[0]),)
                trail = [*trail[: level - 1], heading]
            if i < 3 or not page_path:
                page_path = tuple(trail)
        page_path = page_path or first_line_title(lines)
        doc.sections.append(Section(text=text, path=page_path, locator=Locator(page=number)))
    if not doc.sections:
        raise NoTextLayerError(
            f"{path.name}: no page has a text layer ({len(raw)} pages)"
            + ("" if ocr else f"; to read scanned pages: {INSTALL_HINT}"),
            len(raw), doc.no_text_pages, code="pdf_no_text_layer", file=path.name, count=len(raw),
        )
    return doc
