"""What a loader returns: the sections of a document plus what it had to skip."""

from __future__ import annotations

import dataclasses
from typing import Any

from ..errors import Param
from ..types import Section


@dataclasses.dataclass(frozen=True)
class Note:
    """A remark the report makes on a file that went in: its English `text`, and the same as a
    code with the values it names, for a page to say in its language (see errors.py)."""

    text: str
    code: str
    params: dict[str, Param] = dataclasses.field(default_factory=dict)

    def coded(self) -> dict[str, Any]:
        """The note as a report line lists it."""
        return {"code": self.code, "params": dict(self.params)}


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
    notes: list[Note] = dataclasses.field(default_factory=list)  # what the report should say
    aligned: bool = False  # a source's paragraphs placed on the pages of its PDF
    pdf_only_pages: list[int] = dataclasses.field(default_factory=list)  # no source text
