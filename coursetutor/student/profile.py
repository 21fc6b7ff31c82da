"""The turn stage that records what a stored turn was about in the student's profile."""

from __future__ import annotations

from collections.abc import Sequence

from ..store import Store
from ..types import Chunk, Hit, SearchFilters, Turn
from .topics import chunk_topics, course_topics

__all__ = ["record_turn_topics", "turn_topics"]


def turn_topics(turn: Turn, chunks: Sequence[Chunk], topics: Sequence[str]) -> tuple[str, ...]:
    """The course topics of the chunks a turn cited, in the order they were cited."""
    by_id = {c.id: c for c in chunks}
    found: list[str] = []
    for citation in turn.sources:
        chunk = by_id.get(citation.chunk_id)
        for topic in chunk_topics(chunk, topics) if chunk else ():
            if topic not in found:
                found.append(topic)
    return tuple(found)


def record_turn_topics(store: Store, turn: Turn, hits: Sequence[Hit] = ()) -> tuple[str, ...]:
    """Count a stored turn for each topic its cited chunks are about (the turn's search
    `hits` give most of the chunks; the rest are read); return those topics."""
    cited = {c.chunk_id for c in turn.sources}
    if not cited:
        return ()
    chunks = {h.chunk.id: h.chunk for h in hits if h.chunk.id in cited}
    missing = sorted(cited - chunks.keys())
    if missing:
        chunks.update(store.get_chunks(SearchFilters(turn.tenant, turn.course), missing))
    topics = turn_topics(turn, list(chunks.values()),
                         course_topics(store, turn.tenant, turn.course))
    store.profiles.record_topics(turn.tenant, turn.course, turn.student, topics,
                                 f"{turn.session_id}:{turn.ordinal}", turn.created or None)
    return topics
