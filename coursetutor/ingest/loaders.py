"""Pick a loader by file type."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..errors import UnsupportedFileError
from .exercises import load_json
from .markdown import load_markdown
from .ocr import OcrFn
from .parsed import ParsedDocument
from .pdf import load_pdf
from .transcript import load_transcript

LOADERS: dict[str, Callable[[Path], ParsedDocument]] = {
    ".pdf": load_pdf,
    ".md": load_markdown,
    ".markdown": load_markdown,
    ".txt": load_markdown,
    ".srt": load_transcript,
    ".vtt": load_transcript,
    ".json": load_json,
}


def load(path: Path, ocr: OcrFn | None = None) -> ParsedDocument:
    """Parse `path` with the loader for its extension (PDFs may use `ocr`)."""
    if path.suffix.lower() == ".pdf":
        return load_pdf(path, ocr)
    loader = LOADERS.get(path.suffix.lower())
    if loader is None:
        valid = ", ".join(sorted(LOADERS))
        raise UnsupportedFileError(f"{path.name}: unsupported file type; supported: {valid}")
    return loader(path)
