"""One class's path from a transcript event to a searchable chunk.

For each event, in order: the course lexicon corrects its text (the raw text is kept), the
slide tracker moves with each final sentence (unless the teacher's presentation sets the
slide), the store records the event, and the incremental chunker takes each final sentence.
After a batch of jobs the class document (`class-<id>`, type transcript) is written again
whole with the new text: `replace_document` in one transaction, the vector cache embedding
only the chunks whose text is new (the growing last chunk, usually).

The lexicon (`live/lexicon.py`) and the slide tracker (`live/slides.py`) are used when those
modules are there. A class's state in this process is checked against the store before each
batch and rebuilt from the stored events when another process has moved it on.
"""

from __future__ import annotations

import dataclasses
import importlib
import logging
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from ..errors import ConflictError, CoursetutorError
from ..ingest.pipeline import DraftDocument, Ingestor, text_hash
from ..ingest.slide_align import MIN_PAGE_CHARS
from ..retrieval.language import detect_language, majority
from ..store.classes import ClassEvent, LiveClass, TranscriptEvent
from ..types import ChunkDraft, FileMeta, Locator
from ..workspace import Workspace
from .chunker import ChunkerSizes, LiveChunk, LiveChunker, Piece, load_markers
from .queue import Job, JobResult

log = logging.getLogger("coursetutor.live")
LagFn = Callable[[float], None]
SlideFn = Callable[[str], None]


def optional_module(name: str) -> Any | None:
    """`coursetutor.live.<name>` when it is installed, else None."""
    full = f"coursetutor.live.{name}"
    try:
        return importlib.import_module(full)
    except ModuleNotFoundError as exc:
        if exc.name == full:
            return None
        raise


def sizes_of(ws: Workspace) -> ChunkerSizes:
    s = ws.settings
    return ChunkerSizes(s.live_pause_seconds, s.live_chunk_min_chars, s.live_chunk_max_chars,
                        s.live_buffer_seconds)


def slide_pages(ws: Workspace, live: LiveClass) -> list[str]:
    """The text of each page of the class's slide deck as ingest read it (OCR text where the
    `ocr` extra read a page without a text layer), page 1 first; '' for a page without
    text. Every page of the deck is there, with text or not."""
    if not live.slides_document_id:
        return []
    rows = ws.store.export_chunks(live.tenant, live.course, live.slides_document_id)
    deck = ws.store.find_document(live.tenant, live.course, live.slides_document_id)
    count = max([deck.pages if deck else 0, *(r.locator.page or 0 for r in rows)])
    pages = [""] * count
    for r in sorted(rows, key=lambda r: r.ordinal):
        if r.locator.page:
            pages[r.locator.page - 1] = f"{pages[r.locator.page - 1]}\n{r.text}".strip()
    return pages


def slide_following(pages: Sequence[str], tracker: bool) -> str:
    """How a class finds the slide on screen: "speech" (the tracker compares what is said
    with the deck's pages, and the teacher's page events override it), "time" (the deck has
    pages but none with readable text: the tracker moves on with time alone, and the
    teacher's page events set it) or "teacher" (no deck with pages, or no tracker: only the
    teacher's page events)."""
    if not tracker or not pages:
        return "teacher"
    return "speech" if any(len(p.strip()) >= MIN_PAGE_CHARS for p in pages) else "time"


def course_texts(ws: Workspace, tenant: str, course: str) -> list[str]:
    """The texts of the course's documents, live class transcripts left out (the lexicon's
    source)."""
    return [r.text for d in ws.store.list_documents(tenant, course)
            if not d.id.startswith("class-")
            for r in ws.store.export_chunks(tenant, course, d.id)]


@dataclasses.dataclass
class ClassState:
    """What this process holds of one class between batches."""

    live: LiveClass
    chunker: LiveChunker
    language: str
    seq: int = 0  # the store's number of the last event applied
    last_final: bool = True
    tracker: Any | None = None  # live.slides.SlideTracker
    lexicon: Any | None = None  # live.lexicon.Lexicon
    tokens: dict[str, int] = dataclasses.field(default_factory=dict)
    languages: dict[str, str] = dataclasses.field(default_factory=dict)  # per chunk text


class ClassPipeline:
    """Runs the jobs of one class at a time (the serial queue makes sure of that)."""

    def __init__(self, workspace_for: Callable[[str], Workspace],
                 on_lag: LagFn | None = None, on_slide: SlideFn | None = None) -> None:
        self.workspace_for = workspace_for
        self.on_lag = on_lag or (lambda _s: None)
        self.on_slide = on_slide or (lambda _s: None)
        self._states: dict[tuple[str, str], ClassState] = {}  # one writer per class: the lane

    def handle(self, jobs: list[Job]) -> list[JobResult]:
        """Apply the jobs of one class in order; write its document once; their results."""
        first = jobs[0]
        ws = self.workspace_for(first.tenant)
        key = (first.tenant, first.class_id)
        try:
            state = self._state(ws, first)
        except CoursetutorError as exc:
            return [JobResult.failed(j.id, exc) for j in jobs]
        results, arrivals, dirty = [], [], False
        try:
            for job in jobs:
                try:
                    result, changed = self._apply(ws, state, job)
                except CoursetutorError as exc:
                    result, changed = JobResult.failed(job.id, exc), False
                results.append(result)
                dirty = dirty or changed
                if changed and job.kind == "events":
                    arrivals.append(job.received)
            if dirty and state.live.running:
                self.index(ws, state)
        except BaseException:
            self._states.pop(key, None)  # rebuilt from the store by the next batch
            raise
        if not state.live.running:
            self._states.pop(key, None)
        done = time.time()
        for received in arrivals:
            self.on_lag(max(0.0, done - received))
        return results

    # -- state ------------------------------------------------------------------------------
    def _state(self, ws: Workspace, job: Job) -> ClassState:
        key = (job.tenant, job.class_id)
        state = self._states.get(key)
        live = ws.store.classes.get_class(job.tenant, job.course, job.class_id)
        if state is not None and self._in_sync(ws, state):
            state.live = live  # another process may have moved the slide or ended it
            return state
        state = self._build(ws, live, state)
        self._states[key] = state
        return state

    def _in_sync(self, ws: Workspace, state: ClassState) -> bool:
        live = state.live
        tail = ws.store.classes.list_events(live.tenant, live.course, live.id,
                                            since=max(0, state.seq - 1))
        if state.seq == 0:
            return not tail
        return ([(e.seq, e.final) for e in tail if e.seq >= state.seq]
                == [(state.seq, state.last_final)])

    def _build(self, ws: Workspace, live: LiveClass, old: ClassState | None) -> ClassState:
        language = ws.store.course_language(live.tenant, live.course)
        state = ClassState(live, LiveChunker(sizes_of(ws), load_markers(language)), language)
        if old is not None:
            state.tracker, state.lexicon = old.tracker, old.lexicon
            state.tokens, state.languages = old.tokens, old.languages
        else:
            state.tracker, state.lexicon = self._tracker(ws, live), self._lexicon(ws, live)
        events = ws.store.classes.list_events(live.tenant, live.course, live.id)
        for e in events:
            if e.final and e.text:
                state.chunker.add(Piece(e.start, e.end, e.text, e.page))
        if events:
            state.seq, state.last_final = events[-1].seq, events[-1].final
        if state.tracker is not None and live.slide_page:
            state.tracker.set_page(live.slide_page)
        return state

    @staticmethod
    def _tracker(ws: Workspace, live: LiveClass) -> Any | None:
        slides = optional_module("slides")
        pages = slide_pages(ws, live)
        if slides is None or not pages:
            return None
        if slide_following(pages, True) == "time":
            log.info("class %s: the deck %s has no readable page; its slide follows time and "
                     "the teacher's page events", live.id, live.slides_document_id)
        return slides.SlideTracker(pages, ws.embedder)

    @staticmethod
    def _lexicon(ws: Workspace, live: LiveClass) -> Any | None:
        lexicon = optional_module("lexicon")
        if lexicon is None:
            return None
        return lexicon.Lexicon.from_texts(course_texts(ws, live.tenant, live.course))

    # -- jobs -------------------------------------------------------------------------------
    def _apply(self, ws: Workspace, state: ClassState, job: Job) -> tuple[JobResult, bool]:
        """Run one job; returns its result and whether the class document must change."""
        live = state.live
        if not live.running:
            raise ConflictError(f"class {live.id!r} has ended", code="class_ended",
                                klass=live.id)
        if job.kind == "slide":
            state.live = ws.store.classes.set_slide(live.tenant, live.course, live.id,
                                                    job.page, "teacher")
            if state.live.slide_changed != live.slide_changed:
                self.on_slide("teacher")
            if state.tracker is not None:
                state.tracker.set_page(job.page)
            return JobResult(job.id, slide_page=state.live.slide_page), False
        if job.kind == "end":
            state.chunker.flush()
            self.index(ws, state)
            state.live = ws.store.classes.end_class(live.tenant, live.course, live.id)
            return JobResult(job.id, slide_page=state.live.slide_page), False
        stored = [self._event(ws, state, e, job.received) for e in job.events]
        changed = any(e.final and e.text for e in stored)
        return JobResult(job.id, tuple(e.seq for e in stored), state.live.slide_page), changed

    def _event(self, ws: Workspace, state: ClassState, event: TranscriptEvent,
               received: float) -> ClassEvent:
        live = state.live
        text = event.text
        if state.lexicon is not None and text:
            text = state.lexicon.correct(text)[0]
        page = live.slide_page
        if event.final and text and state.tracker is not None and live.slide_source != "teacher":
            page = int(state.tracker.update(text, event.start, event.end))
            if page != live.slide_page:
                state.live = ws.store.classes.set_slide(live.tenant, live.course, live.id, page,
                                                        "tracked")
                self.on_slide("tracked")
        stored = ws.store.classes.add_event(
            live.tenant, live.course, live.id, dataclasses.replace(event, text=text),
            raw_text=event.text, page=page, received=received or None)
        state.seq, state.last_final = stored.seq, stored.final
        if stored.final and stored.text:
            state.chunker.add(Piece(stored.start, stored.end, stored.text, page))
        return stored

    # -- the class document -----------------------------------------------------------------
    def index(self, ws: Workspace, state: ClassState) -> int:
        """Write the class document with every chunk so far; returns how many."""
        chunks = state.chunker.chunks()
        if not chunks:
            return 0
        live = state.live
        drafts = [self._draft(ws, state, c, i) for i, c in enumerate(chunks)]
        doc = DraftDocument(live.document_id, live.title, live.document_id,
                            text_hash("\n".join(c.text for c in chunks)), 0, drafts)
        ingestor = Ingestor(ws.store, ws.embedder, ws.settings)
        stored, _embedded, _language = ingestor.add(
            live.tenant, live.course, state.language, doc,
            FileMeta(doc_type="transcript", title=live.title, source_name=live.document_id,
                     language=self._language(state, chunks)))
        return stored

    @staticmethod
    def _language(state: ClassState, chunks: list[LiveChunk]) -> str:
        """The language most chunks are in, each chunk's detected once (detecting them all
        again on every write took longer than the write)."""
        votes: Counter[str] = Counter()
        for c in chunks:
            found = state.languages.get(c.text)
            if found is None:
                found = state.languages[c.text] = detect_language(c.text, default="")
            if found:
                votes[found] += 1
        if len(state.languages) > 4096:
            state.languages.clear()
        return majority(votes, state.language)

    @staticmethod
    def _draft(ws: Workspace, state: ClassState, chunk: LiveChunk, ordinal: int) -> ChunkDraft:
        tokens = state.tokens.get(chunk.text)
        if tokens is None:
            tokens = state.tokens[chunk.text] = ws.embedder.token_count(chunk.text)
            if len(state.tokens) > 4096:  # the closed chunks' counts are the ones reused
                state.tokens.clear()
        anchor = f"slide-{chunk.page}" if chunk.page else None
        return ChunkDraft(chunk.text, (), Locator(start=chunk.start, end=chunk.end,
                                                  anchor=anchor), ordinal, tokens, chunk.cues)
