"""The turn stage that records what a stored turn was about in the student's profile."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..store import Store
from ..types import Chunk, Hit, SearchFilters, Turn
from .topics import chunk_topics, course_topics

__all__ = ["cited_topics", "record_turn_topics", "turn_topics"]


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


def cited_topics(store: Store, turn: Turn, hits: Sequence[Hit],
                 topics: Callable[[], Sequence[str]]) -> tuple[str, ...]:
    """The course topics (`topics()`, read only when the turn cites something) of the chunks
    a turn cites: the turn's search `hits` give most of them, the rest are read."""
    cited = {c.chunk_id for c in turn.sources}
    if not cited:
        return ()
    chunks = {h.chunk.id: h.chunk for h in hits if h.chunk.id in cited}
    missing = sorted(cited - chunks.keys())
    if missing:
        chunks.update(store.get_chunks(SearchFilters(turn.tenant, turn.course), missing))
    return turn_topics(turn, list(chunks.values()), topics())


def record_turn_topics(store: Store, turn: Turn, hits: Sequence[Hit] = ()) -> tuple[str, ...]:
    """Count a stored turn for each topic its cited chunks are about; return those topics."""
    topics = cited_topics(store, turn, hits,
                          lambda: course_topics(store, turn.tenant, turn.course))
    if not topics:
        return ()
    store.profiles.record_topics(turn.tenant, turn.course, turn.student, topics,
                                 f"{turn.session_id}:{turn.ordinal}", turn.created or None)
    return topics
