"""The incremental chunker: a live class's final sentences, as they arrive, into chunks.

The live counterpart of `ingest.chunking.chunk_timed`. Sentences gather in an open chunk; it
closes at a cut (a pause longer than `pause_seconds`, a sentence that opens with a discourse
marker from `markers/<language>.txt`, or the slide changing) once it holds `min_chars`, before
it would pass `max_chars`, and whenever it spans more than `buffer_seconds`, so no text waits
longer than that. The open chunk is indexed too (and replaced as it grows), so a sentence is
searchable as soon as it is said, not only once its chunk closes.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from importlib import resources

from ..ingest.chunking import split_sentences

MARKER_LANGUAGES = ("de", "en", "it", "ko", "zh")
_LEADING = re.compile(r"^[\W_]+")
_SPACES = re.compile(r"\s+")
# scripts written without spaces between words (sentences join without one)
_NO_SPACES = re.compile(r"[\u3000-\u30ff\u3400-\u9fff\uff00-\uffef]")
# markers in these need no word boundary after them (Korean attaches particles)
_CLOSED_SCRIPT = re.compile(r"[\u3000-\u30ff\u3400-\u9fff\uac00-\ud7af\uff00-\uffef]")


@dataclasses.dataclass(frozen=True)
class Piece:
    """One final sentence of the transcript (seconds since the class started)."""

    start: float
    end: float
    text: str
    page: int | None = None  # the slide on screen while it was said


@dataclasses.dataclass(frozen=True)
class LiveChunk:
    """A chunk of a class's transcript: its sentences, their time span and slide."""

    text: str
    start: float
    end: float
    page: int | None
    cues: tuple[tuple[float, float, int], ...]  # (start s, end s, char offset) per sentence


@dataclasses.dataclass(frozen=True)
class ChunkerSizes:
    """Where the chunker cuts (settings live_pause_seconds, live_chunk_min_chars,
    live_chunk_max_chars, live_buffer_seconds)."""

    pause_seconds: float = 2.0
    min_chars: int = 300
    max_chars: int = 500
    buffer_seconds: float = 180.0


@functools.lru_cache(maxsize=16)
def load_markers(language: str) -> tuple[str, ...]:
    """The discourse markers of `language` (its file, else English's), normalized."""
    code = language if language in MARKER_LANGUAGES else "en"
    text = (resources.files("coursetutor.live") / "markers" / f"{code}.txt").read_text("utf-8")
    lines = (normalize(line) for line in text.splitlines() if not line.startswith("#"))
    return tuple(sorted({line for line in lines if line}, key=len, reverse=True))


def normalize(text: str) -> str:
    """NFKC, case folded, leading punctuation dropped, spaces collapsed."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return _SPACES.sub(" ", _LEADING.sub("", folded)).strip()


def opens_with_marker(text: str, markers: Sequence[str]) -> bool:
    """Whether `text` starts with one of `markers` as whole words (Chinese and Korean
    markers need no word boundary after them)."""
    head = normalize(text)
    for marker in markers:
        if head.startswith(marker):
            rest = head[len(marker):]
            if not rest or not rest[0].isalnum() or _CLOSED_SCRIPT.match(marker[-1]):
                return True
    return False


def split_long(piece: Piece, max_chars: int) -> list[Piece]:
    """`piece` cut at sentence ends (or between words) into parts of at most `max_chars`,
    its time shared out by their length."""
    text = piece.text.strip()
    if len(text) <= max_chars:
        return [piece] if text else []
    parts: list[str] = []
    for sentence in split_sentences(text) or [text]:
        words = sentence.split(" ")
        current = ""
        for word in words:
            while len(word) > max_chars:  # a "word" longer than a chunk: a script without spaces
                if current:
                    parts.append(current)
                    current = ""
                parts.append(word[:max_chars])
                word = word[max_chars:]
            if current and len(current) + 1 + len(word) > max_chars:
                parts.append(current)
                current = word
            else:
                current = f"{current} {word}" if current else word
        if current:
            parts.append(current)
    total = sum(len(p) for p in parts) or 1
    span, at, out = piece.end - piece.start, piece.start, []
    for part in parts:
        end = at + span * len(part) / total
        out.append(Piece(at, end, part, piece.page))
        at = end
    return out


def _join(texts: Iterable[str]) -> tuple[str, list[int]]:
    """The sentences as one text and where each starts (no space between two sentences of a
    script written without spaces)."""
    out, offsets = "", []
    for text in texts:
        if out and not (_NO_SPACES.match(out[-1]) and _NO_SPACES.match(text[0])):
            out += " "
        offsets.append(len(out))
        out += text
    return out, offsets


def make_chunk(pieces: Sequence[Piece]) -> LiveChunk:
    """The chunk of `pieces`: its slide is the one most of its characters were said over."""
    text, offsets = _join(p.text for p in pieces)
    pages: Counter[int] = Counter()
    for p in pieces:
        if p.page is not None:
            pages[p.page] += len(p.text)
    page = max(pages, key=lambda k: (pages[k], k)) if pages else None
    cues = tuple((p.start, p.end, off) for p, off in zip(pieces, offsets, strict=True))
    return LiveChunk(text, pieces[0].start, pieces[-1].end, page, cues)


class LiveChunker:
    """Chunks of one class's transcript, built sentence by sentence (not thread-safe: a
    class's events are processed one at a time)."""

    def __init__(self, sizes: ChunkerSizes, markers: Sequence[str] = ()) -> None:
        self.sizes = sizes
        self.markers = tuple(markers)
        self.closed: list[LiveChunk] = []
        self._open: list[Piece] = []
        self._open_chars = 0

    def add(self, piece: Piece) -> list[LiveChunk]:
        """Take one final sentence; return the chunks it closed."""
        closed: list[LiveChunk] = []
        for part in split_long(piece, self.sizes.max_chars):
            if self._open and self._cuts_before(part):
                closed.append(self._close())
            self._open.append(part)
            self._open_chars += len(part.text) + 1
        return closed

    def _cuts_before(self, part: Piece) -> bool:
        s, last, first = self.sizes, self._open[-1], self._open[0]
        if self._open_chars + len(part.text) > s.max_chars:
            return True
        if part.end - first.start > s.buffer_seconds:
            return True
        if self._open_chars < s.min_chars:
            return False
        moved = part.page is not None and last.page is not None and part.page != last.page
        return (part.start - last.end > s.pause_seconds or moved
                or opens_with_marker(part.text, self.markers))

    def _close(self) -> LiveChunk:
        chunk = make_chunk(self._open)
        self.closed.append(chunk)
        self._open, self._open_chars = [], 0
        return chunk

    @property
    def open_chunk(self) -> LiveChunk | None:
        """The chunk still growing (indexed as it is until it closes)."""
        return make_chunk(self._open) if self._open else None

    def flush(self) -> list[LiveChunk]:
        """Close the open chunk (the class ended); return it."""
        return [self._close()] if self._open else []

    def chunks(self) -> list[LiveChunk]:
        """Every chunk so far, the open one last: what the class document holds now."""
        tail = self.open_chunk
        return [*self.closed, tail] if tail else list(self.closed)
