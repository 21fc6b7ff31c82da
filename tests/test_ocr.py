"""OCR of PDF pages without a text layer (the ocr extra), on a real image-only PDF."""

from __future__ import annotations

from pathlib import Path

import pytest

from coursetutor.config import load_settings
from coursetutor.errors import ConfigError
from coursetutor.ingest.ocr import available, make_ocr
from coursetutor.ingest.pdf import load_pdf

pytestmark = pytest.mark.skipif(not available(), reason="the ocr extra is not installed")


@pytest.fixture(scope="module")
def scanned_pdf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A one-page PDF whose only content is a picture of a sentence (no text layer)."""
    from fpdf import FPDF
    from PIL import Image, ImageDraw, ImageFont

    folder = tmp_path_factory.mktemp("scan")
    image = Image.new("L", (1400, 300), color=255)
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=56)
    draw.text((40, 60), "Newton method converges", fill=0, font=font)
    draw.text((40, 160), "quadratically near a simple root", fill=0, font=font)
    picture = folder / "page.png"
    image.save(picture)
    pdf = FPDF()
    pdf.add_page()
    pdf.image(str(picture), x=10, y=20, w=190)
    path = folder / "scan.pdf"
    pdf.output(str(path))
    return path


def test_page_without_text_layer_is_skipped_without_ocr(scanned_pdf: Path) -> None:
    from coursetutor.errors import EmptyDocumentError

    with pytest.raises(EmptyDocumentError, match="no page has a text layer"):
        load_pdf(scanned_pdf)


def test_ocr_reads_the_page(scanned_pdf: Path) -> None:
    ocr = make_ocr("on")
    doc = load_pdf(scanned_pdf, ocr)
    assert doc.ocr_pages == [1]
    assert doc.no_text_pages == []
    words = doc.sections[0].text.lower().replace(" ", "")
    assert "newtonmethodconverges" in words
    assert "simpleroot" in words
    assert doc.sections[0].locator.page == 1


def test_ocr_setting() -> None:
    assert make_ocr("off") is None
    assert load_settings(env={}, ocr="off").ocr == "off"
    with pytest.raises(ConfigError, match="ocr must be auto, on or off"):
        load_settings(env={}, ocr="sometimes")
    with pytest.raises(ConfigError, match="ocr must be auto, on or off"):
        make_ocr("sometimes")
