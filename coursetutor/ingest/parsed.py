"""What a loader returns: the sections of a document plus what it had to skip."""

from __future__ import annotations

import dataclasses

from ..types import Section


@dataclasses.dataclass
class ParsedDocument:
    """A document turned into sections, before chunking."""

    title: str
    sections: list[Section]
    kind: str  # "pages", "prose" or "timed"
    pages: int = 0
    no_text_pages: list[int] = dataclasses.field(default_factory=list)
    dropped_pages: list[int] = dataclasses.field(default_factory=list)
    ocr_pages: list[int] = dataclasses.field(default_factory=list)
    formula_pages: list[int] = dataclasses.field(default_factory=list)  # formulas left blanks
    language: str | None = None
    notes: list[str] = dataclasses.field(default_factory=list)  # what the report should say
    aligned: bool = False  # a source's paragraphs placed on the pages of its PDF
    pdf_only_pages: list[int] = dataclasses.field(default_factory=list)  # no source text
