"""Plain frozen records passed between the layers."""

from __future__ import annotations

import dataclasses
from typing import Literal

from .errors import InputError

DocType = Literal[
    "lecture", "slides", "textbook", "exercise", "solution", "exam", "transcript", "summary"
]
DOC_TYPES: tuple[DocType, ...] = (
    "lecture",
    "slides",
    "textbook",
    "exercise",
    "solution",
    "exam",
    "transcript",
    "summary",
)


def check_doc_type(value: str) -> DocType:
    """Return `value` as a DocType or raise an error listing the valid ones."""
    if value not in DOC_TYPES:
        raise InputError(f"unknown document type {value!r}; valid: {', '.join(DOC_TYPES)}")
    return value  # type: ignore[return-value]


def check_difficulty(value: int) -> int:
    """Return `value` if it is a difficulty from 1 to 5."""
    if not 1 <= int(value) <= 5:
        raise InputError(f"difficulty must be 1-5, got {value}")
    return int(value)


@dataclasses.dataclass(frozen=True)
class Locator:
    """Where a chunk sits in its source: a page, a time range or a heading anchor."""

    page: int | None = None
    start: float | None = None
    end: float | None = None
    anchor: str | None = None

    def label(self) -> str:
        """A short human label: 'p. 3', '01:02-02:30' or '#anchor'."""
        if self.page is not None:
            return f"p. {self.page}"
        if self.start is not None and self.end is not None:
            return f"{_clock(self.start)}-{_clock(self.end)}"
        if self.anchor:
            return f"#{self.anchor}"
        return ""


def _clock(seconds: float) -> str:
    whole = int(seconds)
    h, rem = divmod(whole, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


@dataclasses.dataclass(frozen=True)
class FileMeta:
    """Metadata a teacher gives a file: from CLI flags or the course manifest."""

    doc_type: DocType = "lecture"
    topic: str = ""
    difficulty: int = 2
    title: str | None = None
    language: str | None = None
    source_name: str | None = None  # the name the document is known by (path in the course)


@dataclasses.dataclass(frozen=True)
class Section:
    """A piece of a parsed document before chunking (a page, a slide, a cue, a paragraph)."""

    text: str
    path: tuple[str, ...] = ()
    locator: Locator = Locator()


@dataclasses.dataclass(frozen=True)
class ChunkDraft:
    """A chunk ready to be stored: text plus its place in the document."""

    text: str
    section_path: tuple[str, ...]
    locator: Locator
    ordinal: int
    n_tokens: int
    cues: tuple[tuple[float, float, int], ...] = ()  # (start s, end s, char offset) per cue


@dataclasses.dataclass(frozen=True)
class Course:
    tenant: str
    id: str
    title: str
    language: str
    documents: int = 0
    chunks: int = 0


@dataclasses.dataclass(frozen=True)
class Document:
    tenant: str
    course: str
    id: str
    title: str
    doc_type: DocType
    topic: str
    difficulty: int
    language: str
    source_name: str
    content_hash: str
    pages: int
    chunks: int


@dataclasses.dataclass(frozen=True)
class Chunk:
    """A stored chunk with everything a citation needs."""

    id: str
    tenant: str
    course: str
    document_id: str
    document_title: str
    doc_type: DocType
    topic: str
    section_path: tuple[str, ...]
    difficulty: int
    language: str
    locator: Locator
    text: str
    content_hash: str
    ordinal: int
    cues: tuple[tuple[float, float, int], ...] = ()


@dataclasses.dataclass(frozen=True)
class Hit:
    """One search result: a chunk, its fused score and the rank each retriever gave it."""

    chunk: Chunk
    score: float
    ranks: dict[str, int | None]
    scores: dict[str, float | None]
    locator: Locator  # where a citation opens: the chunk's, or the best moment of a transcript


@dataclasses.dataclass(frozen=True)
class SearchFilters:
    """Filters applied inside every retriever's query."""

    tenant: str
    course: str
    doc_types: tuple[DocType, ...] | None = None
    max_difficulty: int | None = None
