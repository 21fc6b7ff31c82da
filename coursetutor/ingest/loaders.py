"""Pick a loader by file type."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from ..errors import CorruptFileError, CoursetutorError, UnsupportedFileError
from .exercises import load_json
from .markdown import load_markdown
from .ocr import OcrFn
from .parsed import ParsedDocument
from .pdf import load_pdf
from .transcript import load_transcript

log = logging.getLogger(__name__)

LOADERS: dict[str, Callable[[Path], ParsedDocument]] = {
    ".pdf": load_pdf,
    ".md": load_markdown,
    ".markdown": load_markdown,
    ".txt": load_markdown,
    ".srt": load_transcript,
    ".vtt": load_transcript,
    ".json": load_json,
}


def check_supported(path: Path) -> None:
    """Raise UnsupportedFileError, naming the supported types, when no loader reads `path`."""
    if path.suffix.lower() not in LOADERS:
        valid = ", ".join(sorted(LOADERS))
        raise UnsupportedFileError(f"{path.name}: unsupported file type; supported: {valid}")


def load(path: Path, ocr: OcrFn | None = None) -> ParsedDocument:
    """Parse `path` with the loader for its extension (PDFs may use `ocr`).

    Whatever a loader or the library under it raises on a hostile or damaged file (deep
    nesting, a decompression bomb, a malformed font, memory) becomes a CorruptFileError
    naming the file, so one bad file is one failed line of its batch.
    """
    check_supported(path)
    try:
        if path.suffix.lower() == ".pdf":
            return load_pdf(path, ocr)
        return LOADERS[path.suffix.lower()](path)
    except CoursetutorError:
        raise
    except RecursionError as exc:
        raise CorruptFileError(f"{path.name}: nested too deeply to read") from exc
    except MemoryError as exc:
        raise CorruptFileError(f"{path.name}: too large to read in memory") from exc
    except Exception as exc:  # third-party parsers raise many internal types
        log.warning("loading %s failed", path.name, exc_info=True)
        raise CorruptFileError(f"{path.name}: could not be read ({why(exc)})") from exc


def why(exc: BaseException) -> str:
    """The exception's type and the first line of its message, short enough for a report."""
    first = (str(exc).strip().splitlines() or [""])[0][:160]
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__
