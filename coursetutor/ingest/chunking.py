"""Chunking: slides one per chunk, prose to ~300-500 tokens with overlap, transcripts by time."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterator

from ..types import ChunkDraft, Locator, Section

Counter = Callable[[str], int]

_SENTENCE_END = re.compile(
    r"[.!?;:][\"'”’)\]]*(\s+)(?=[\"'“‘(\[]?[A-ZÀ-ÖØ-Þ0-9])|[。！？；][”’」』)]*()"
)
_ENDS_SENTENCE = re.compile(r"[.!?。！？…]['\")\]]*$")


@dataclasses.dataclass(frozen=True)
class ChunkSizes:
    target: int = 400
    maximum: int = 500
    overlap: float = 0.12
    window_seconds: float = 25.0
    max_seconds: float = 40.0
    pause_seconds: float = 1.5


def split_sentences(text: str) -> list[str]:
    """Split text into sentences at terminal punctuation followed by a capital (or CJK stops)."""
    text = text.replace("\n", " ")
    parts: list[str] = []
    start = 0
    for m in _SENTENCE_END.finditer(text):
        cut = m.start(1) if m.group(1) is not None else m.end()
        parts.append(text[start:cut].strip())
        start = cut
    parts.append(text[start:].strip())
    return [p for p in parts if p]


def _units(sections: list[Section], count: Counter, maximum: int) -> list[tuple[str, int]]:
    """Paragraphs with token counts; paragraphs over `maximum` are broken into sentences."""
    units: list[tuple[str, int]] = []
    for s in sections:
        for para in re.split(r"\n\s*\n", s.text):
            para = " ".join(para.split()) if "```" not in para else para.strip()
            if not para:
                continue
            n = count(para)
            if n <= maximum:
                units.append((para, n))
                continue
            for sentence in split_sentences(para):
                units.extend(_hard_split(sentence, count, maximum))
    return units


def _hard_split(sentence: str, count: Counter, maximum: int) -> list[tuple[str, int]]:
    n = count(sentence)
    if n <= maximum:
        return [(sentence, n)]
    words = sentence.split()
    if len(words) <= 1:  # unspaced script: cut by characters
        step = max(1, len(sentence) * maximum // n)
        pieces = [sentence[i : i + step] for i in range(0, len(sentence), step)]
    else:
        step = max(1, len(words) * maximum // n)
        pieces = [" ".join(words[i : i + step]) for i in range(0, len(words), step)]
    return [(p, count(p)) for p in pieces]


def pack(units: list[tuple[str, int]], sizes: ChunkSizes, count: Counter) -> list[tuple[str, int]]:
    """Greedily pack units to ~target tokens, carrying ~overlap of trailing sentences forward.

    A chunk is closed before a unit that would pass the target once it holds at least half
    the target (or before one that would pass the maximum); a short remainder is folded
    into the chunk before it when both fit under the maximum.
    """
    groups: list[list[tuple[str, int]]] = []
    fresh_of: list[list[tuple[str, int]]] = []
    current: list[tuple[str, int]] = []
    fresh: list[tuple[str, int]] = []
    for unit in units:
        total = sum(n for _, n in current)
        over_target = total + unit[1] > sizes.target and total >= sizes.target // 2
        if fresh and (over_target or total + unit[1] > sizes.maximum):
            groups.append(current)
            fresh_of.append(fresh)
            current = _tail(current, int(sizes.overlap * sizes.target), count)
            if sum(n for _, n in current) + unit[1] > sizes.maximum:
                current = []
            fresh = []
        current.append(unit)
        fresh.append(unit)
    if fresh:
        rest = sum(n for _, n in fresh)
        if groups and rest < sizes.target // 4 and (
            sum(n for _, n in groups[-1]) + rest <= sizes.maximum
        ):
            groups[-1] = groups[-1] + fresh
        else:
            groups.append(current)
    return [("\n\n".join(t for t, _ in g), sum(n for _, n in g)) for g in groups]


def _tail(units: list[tuple[str, int]], budget: int, count: Counter) -> list[tuple[str, int]]:
    """The last whole sentences of `units` fitting in `budget` tokens."""
    if budget <= 0 or not units:
        return []
    picked: list[str] = []
    used = 0
    for sentence in reversed(split_sentences(units[-1][0])):
        n = count(sentence)
        if used + n > budget:
            break
        picked.insert(0, sentence)
        used += n
    return [(" ".join(picked), used)] if picked else []


def _groups(sections: list[Section]) -> Iterator[list[Section]]:
    """Consecutive sections sharing a section path and page (chunks never cross them)."""
    group: list[Section] = []
    for s in sections:
        if group and (s.path, s.locator.page) != (group[0].path, group[0].locator.page):
            yield group
            group = []
        group.append(s)
    if group:
        yield group


def chunk_prose(sections: list[Section], sizes: ChunkSizes, count: Counter) -> list[ChunkDraft]:
    """Pack paragraphs of each section (or page) into overlapping chunks."""
    drafts: list[ChunkDraft] = []
    for group in _groups(sections):
        units = _units(group, count, sizes.maximum)
        for text, n in pack(units, sizes, count):
            drafts.append(ChunkDraft(text, group[0].path, group[0].locator, len(drafts), n))
    return drafts


def chunk_slides(sections: list[Section], sizes: ChunkSizes, count: Counter) -> list[ChunkDraft]:
    """One slide (page) = one chunk; an overlong slide is split like prose."""
    drafts: list[ChunkDraft] = []
    for s in sections:
        n = count(s.text)
        pieces = [(s.text, n)] if n <= sizes.maximum else pack(
            _units([s], count, sizes.maximum), sizes, count
        )
        for text, k in pieces:
            drafts.append(ChunkDraft(text, s.path, s.locator, len(drafts), k))
    return drafts


def chunk_timed(cues: list[Section], sizes: ChunkSizes, count: Counter) -> list[ChunkDraft]:
    """Windows of ~window_seconds cut at a pause or sentence end, never over max_seconds."""
    drafts: list[ChunkDraft] = []
    window: list[Section] = []
    tokens = 0

    def close() -> None:
        nonlocal tokens
        text = " ".join(c.text for c in window)
        start, end = window[0].locator.start or 0.0, window[-1].locator.end or 0.0
        offsets, pos = [], 0
        for c in window:
            offsets.append((c.locator.start or 0.0, c.locator.end or 0.0, pos))
            pos += len(c.text) + 1
        drafts.append(ChunkDraft(text, window[0].path,
                                 Locator(start=start, end=end, anchor=_anchor(window)),
                                 len(drafts), tokens, tuple(offsets)))
        window.clear()
        tokens = 0

    for i, cue in enumerate(cues):
        n = count(cue.text)
        if window:
            span = (cue.locator.end or 0.0) - (window[0].locator.start or 0.0)
            if span > sizes.max_seconds or tokens + n > sizes.maximum:
                close()
        window.append(cue)
        tokens += n
        span = (cue.locator.end or 0.0) - (window[0].locator.start or 0.0)
        nxt = cues[i + 1] if i + 1 < len(cues) else None
        gap = (nxt.locator.start or 0.0) - (cue.locator.end or 0.0) if nxt else 0.0
        pause = gap >= sizes.pause_seconds
        if span >= sizes.window_seconds and (pause or _ENDS_SENTENCE.search(cue.text)):
            close()
    if window:
        close()
    return drafts


def _anchor(cues: list[Section]) -> str | None:
    """The anchor most of a window's cues carry (the slide most of it was spoken over)."""
    anchors = [c.locator.anchor for c in cues if c.locator.anchor]
    return max(anchors, key=anchors.count) if anchors else None
