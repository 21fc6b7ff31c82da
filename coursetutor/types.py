"""Plain frozen records passed between the layers."""

from __future__ import annotations

import dataclasses
import re
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
        raise InputError(f"unknown document type {value!r}; valid: {', '.join(DOC_TYPES)}",
                         code="invalid_doc_type", value=value)
    return value  # type: ignore[return-value]


def check_difficulty(value: int) -> int:
    """Return `value` if it is a difficulty from 1 to 5."""
    if not 1 <= int(value) <= 5:
        raise InputError(f"difficulty must be 1-5, got {value}", code="invalid_difficulty",
                         value=value)
    return int(value)


def check_media_url(value: str) -> str:
    """Return `value` if it is empty or an http(s) URL (a link shown to students)."""
    if value and not re.match(r"^https?://[^\s<>\"']+$", value):
        raise InputError(f"media_url must be an http or https URL, got {value!r}",
                         code="invalid_media_url", value=value)
    return value


def media_at(url: str, seconds: float) -> str:
    """`url` opened at `seconds`: YouTube's t= parameter, else a media fragment (#t=)."""
    if not url:
        return ""
    base = url.split("#", 1)[0]
    if re.match(r"^https?://(www\.|m\.)?(youtube\.com|youtu\.be)/", base):
        return f"{base}{'&' if '?' in base else '?'}t={int(seconds)}s"
    return f"{base}#t={int(seconds)}"


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
            slide = self.slide()
            span = f"{_clock(self.start)}-{_clock(self.end)}"
            return f"{span}, slide {slide}" if slide else span
        if self.anchor:
            return f"#{self.anchor}"
        return ""

    def slide(self) -> int | None:
        """The slide page a transcript chunk was spoken over (anchor 'slide-12'), if known."""
        if self.anchor and self.anchor.startswith("slide-") and self.anchor[6:].isdigit():
            return int(self.anchor[6:])
        return None


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
    media_url: str = ""  # transcripts: the lecture video or audio it transcribes (http/https)
    slides: str = ""  # transcripts: the slide deck (PDF) spoken over; chunks get its pages
    # PDFs: the LaTeX or Markdown file they were made from (absolute, or relative to the
    # PDF's folder); chunks take its text and formulas, their pages from the PDF
    source: str = ""


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
    allow_solutions: bool = False  # students may see solution documents and full solutions


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
    media_url: str = ""  # the video or audio a transcript belongs to


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
    tier: str = ""  # during a class: "class" (its transcript or slides) or "history"
    tier_label: str = ""  # "from today's class, 10:23", "from Lecture 3"
    explain: tuple[str, ...] = ()  # why a rerank moved it ("weak area Limits: x1.5")


@dataclasses.dataclass(frozen=True)
class SearchFilters:
    """Filters applied inside every retriever's query."""

    tenant: str
    course: str
    doc_types: tuple[DocType, ...] | None = None
    max_difficulty: int | None = None


@dataclasses.dataclass(frozen=True)
class Citation:
    """A source the tutor cited as [number]: where it opens and what it says."""

    number: int
    chunk_id: str
    document_id: str
    title: str
    doc_type: DocType
    locator: Locator
    snippet: str
    section: str = ""  # the section of the cited page or passage (its innermost heading)
    tier: str = ""  # during a class: "class" or "history" (see Hit)
    tier_label: str = ""  # "from today's class, 10:23", "from Lecture 3"

    def label(self) -> str:
        """'Title, Section, p. 3' or 'Title, 01:02-02:30'."""
        parts = [self.title, self.section if self.section != self.title else "",
                 self.locator.label()]
        return ", ".join(p for p in parts if p)


@dataclasses.dataclass(frozen=True)
class Session:
    """A student's conversation in one course."""

    id: str
    tenant: str
    course: str
    student: str
    created: float
    updated: float
    ended: float | None = None
    turns: int = 0
    title: str = ""  # its first question (empty before one is asked)


@dataclasses.dataclass(frozen=True)
class Turn:
    """One question and the tutor's reply, as remembered for later turns."""

    session_id: str
    ordinal: int
    tenant: str
    course: str
    student: str
    question: str
    answer: str
    category: str
    intent: str
    grade: str
    level: str = ""  # scaffolding level on exercise help
    exercise_key: str = ""  # which exercise it was about, to climb the ladder
    complete: bool = True
    sources: tuple[Citation, ...] = ()
    created: float = 0.0


@dataclasses.dataclass(frozen=True)
class Answer:
    """One tutor turn: the reply, its cited sources and how it was produced."""

    text: str
    sources: tuple[Citation, ...]
    category: str
    intent: str
    grade: str  # correct, ambiguous, incorrect, or "" when nothing was retrieved
    evidence: float
    language: str
    level: str = ""  # scaffolding level of exercise help
    complete: bool = True
    covered: bool = True  # False when the course material does not cover the question
    note: str = ""
    session_id: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    timings: dict[str, float] = dataclasses.field(default_factory=dict)  # ms per stage
    calls: tuple[dict[str, object], ...] = ()  # every model call: task, model, tokens, cost
    context: tuple[str, ...] = ()  # ids of the chunks the model was shown, as [1]..[n]
    context_over_budget: bool = False  # some retrieved material did not fit the budget
    removed: tuple[str, ...] = ()  # statements the answer check took out (not in the sources)
    checked: bool = False  # the answer's claims were checked against its sources
    reused_from: str = ""  # the id of the earlier answer whose passages it reused
    tier: str = ""  # asked during a class: "class" (its own passages) or "course"
    explain: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (chunk id, why a rerank moved it)
    # where the citation markers are in `text`: (start, end) character offsets; a bracket
    # outside them (an interval, a source's own "[1, 2]") is text, not a citation
    markers: tuple[tuple[int, int], ...] = ()


Role = Literal["admin", "teacher", "student"]
ROLES: tuple[Role, ...] = ("admin", "teacher", "student")


def check_role(value: str) -> Role:
    """Return `value` as a Role or raise an error listing the valid ones."""
    if value not in ROLES:
        raise InputError(f"unknown role {value!r}; valid: {', '.join(ROLES)}")
    return value  # type: ignore[return-value]


@dataclasses.dataclass(frozen=True)
class CourseActivity:
    """What students did in a course: for teachers, to see where the material falls short."""

    students: int
    sessions: int
    turns: int
    categories: dict[str, int]
    intents: dict[str, int]
    grades: dict[str, int]
    levels: dict[str, int]  # scaffolding levels reached on exercise help ("" for the rest)
    not_covered: list[str]  # recent questions the material did not cover
    exercises: list[tuple[str, int, int]]  # (exercise, turns, students), busiest first


@dataclasses.dataclass(frozen=True)
class Tenant:
    """An institution or platform: the unit of isolation."""

    id: str
    name: str
    created: float


@dataclasses.dataclass(frozen=True)
class ApiKey:
    """An API key as stored: its public id, whom it belongs to, and the hash of its secret."""

    id: str
    tenant: str
    role: Role
    student: str  # the student a student key asks as; empty for other roles
    name: str
    secret_hash: str
    created: float
    revoked: float | None = None
    expires: float | None = None  # a short-lived key's end (an LTI launch's); None: never

    def expired(self, now: float) -> bool:
        return self.expires is not None and self.expires <= now


@dataclasses.dataclass(frozen=True)
class Job:
    """A background ingest job and its progress."""

    id: str
    tenant: str
    course: str
    status: str  # queued, running, done, failed
    files_total: int
    files_done: int = 0
    stage: str = "queued"
    current: str = ""
    embedded: int = 0
    to_embed: int = 0
    report: str | None = None  # the ingest report as JSON, when finished
    error: str = ""
    created: float = 0.0
    updated: float = 0.0


@dataclasses.dataclass(frozen=True)
class MetaEvent:
    """Sent before the answer streams: what kind of turn this is."""

    session_id: str
    category: str
    intent: str
    level: str
    grade: str
    language: str


@dataclasses.dataclass(frozen=True)
class TokenEvent:
    text: str


@dataclasses.dataclass(frozen=True)
class SourcesEvent:
    sources: tuple[Citation, ...]


@dataclasses.dataclass(frozen=True)
class DoneEvent:
    answer: Answer


StreamEvent = MetaEvent | TokenEvent | SourcesEvent | DoneEvent
