"""OCR for PDF pages without a text layer (the `ocr` extra: rapidocr-onnxruntime, pypdfium2).

Both packages ship everything they need (the ONNX detection and recognition models, PDFium),
so OCR works offline. It is slow on a CPU (seconds per page), so it runs only on pages whose
text layer is empty.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import ConfigError, MissingDependencyError

INSTALL_HINT = "pip install 'coursetutor[ocr]'"
OcrFn = Callable[[Path, int], str]


def available() -> bool:
    """True when the OCR extra is installed."""
    return all(importlib.util.find_spec(m) for m in ("rapidocr_onnxruntime", "pypdfium2"))


class PageOCR:
    """Renders one PDF page and reads its text with RapidOCR."""

    def __init__(self, scale: float = 2.0) -> None:
        try:
            import pypdfium2
            from rapidocr_onnxruntime import RapidOCR
        except ImportError as exc:
            raise MissingDependencyError(f"OCR needs the ocr extra: {INSTALL_HINT}") from exc
        self._pdfium = pypdfium2
        self._engine: Any = RapidOCR()
        self.scale = scale

    def __call__(self, path: Path, page: int) -> str:
        """Text of 1-based `page` of the PDF at `path`, lines in reading order."""
        import numpy as np

        document = self._pdfium.PdfDocument(str(path))
        try:
            image = document[page - 1].render(scale=self.scale).to_pil()
        finally:
            document.close()
        result, _ = self._engine(np.array(image))
        return "\n".join(str(line[1]) for line in result or [])


class LazyOCR:
    """Builds the OCR engine (about a second and 150 MiB) on the first page that needs it."""

    def __init__(self) -> None:
        self._engine: PageOCR | None = None

    def __call__(self, path: Path, page: int) -> str:
        if self._engine is None:
            self._engine = PageOCR()
        return self._engine(path, page)


def make_ocr(mode: str) -> OcrFn | None:
    """The OCR function for the `ocr` setting: 'auto' (if installed), 'on' or 'off'."""
    if mode not in ("auto", "on", "off"):
        raise ConfigError(f"ocr must be auto, on or off, got {mode!r}")
    if mode == "off" or (mode == "auto" and not available()):
        return None
    if not available():
        raise MissingDependencyError(f"ocr = on needs the ocr extra: {INSTALL_HINT}")
    return LazyOCR()
