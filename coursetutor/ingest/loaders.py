"""Pick a loader by file type."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from ..errors import CorruptFileError, CoursetutorError, UnsupportedFileError
from .exercises import load_json
from .latex import MAX_SOURCE_BYTES, load_latex
from .markdown import load_markdown
from .markdown_source import load_markdown_source
from .ocr import OcrFn
from .parsed import ParsedDocument
from .pdf import load_pdf
from .sourced import check_source, load_source, with_pages
from .transcript import load_transcript

log = logging.getLogger(__name__)

LOADERS: dict[str, Callable[[Path], ParsedDocument]] = {
    ".pdf": load_pdf,
    ".md": load_markdown_source,
    ".markdown": load_markdown_source,
    ".tex": load_latex,
    ".txt": load_markdown,
    ".srt": load_transcript,
    ".vtt": load_transcript,
    ".json": load_json,
}


def check_supported(path: Path) -> None:
    """Raise UnsupportedFileError, naming the supported types, when no loader reads `path`."""
    if path.suffix.lower() not in LOADERS:
        valid = ", ".join(sorted(LOADERS))
        raise UnsupportedFileError(f"{path.name}: unsupported file type; supported: {valid}",
                                   code="unsupported_file_type", file=path.name,
                                   supported=valid)


def load(path: Path, ocr: OcrFn | None = None, source: Path | None = None,
         max_bytes: int = MAX_SOURCE_BYTES) -> ParsedDocument:
    """Parse `path` with the loader for its extension (PDFs may use `ocr`); a PDF with its
    LaTeX or Markdown `source` (files of at most `max_bytes`) is the source's text on the
    PDF's pages."""
    check_supported(path)
    if source is None:
        if path.suffix.lower() == ".pdf":
            return guarded(path, lambda: load_pdf(path, ocr))
        return guarded(path, lambda: LOADERS[path.suffix.lower()](path))
    check_source(path, source)
    pdf = guarded(path, lambda: load_pdf(path))  # the source has the formulas: no OCR
    src = guarded(source, lambda: load_source(source, max_bytes))
    return guarded(path, lambda: with_pages(src, pdf, source.name, path.name))


def guarded(path: Path, read: Callable[[], ParsedDocument]) -> ParsedDocument:
    """`read()`, whatever it raises on a hostile or damaged file (deep nesting, a
    decompression bomb, a malformed font, memory) turned into a CorruptFileError naming
    `path`, so one bad file is one failed line of its batch."""
    try:
        return read()
    except CoursetutorError:
        raise
    except RecursionError as exc:
        raise CorruptFileError(f"{path.name}: nested too deeply to read",
                               code="file_unreadable", file=path.name) from exc
    except MemoryError as exc:
        raise CorruptFileError(f"{path.name}: too large to read in memory",
                               code="file_unreadable", file=path.name) from exc
    except Exception as exc:  # third-party parsers raise many internal types
        log.warning("loading %s failed", path.name, exc_info=True)
        raise CorruptFileError(f"{path.name}: could not be read ({why(exc)})",
                               code="file_unreadable", file=path.name) from exc


def why(exc: BaseException) -> str:
    """The exception's type and the first line of its message, short enough for a report."""
    first = (str(exc).strip().splitlines() or [""])[0][:160]
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__
