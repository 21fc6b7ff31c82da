"""Turning session records into rows and back (shared by every SQL backend)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..types import Chunk, Citation, Course, Locator, Session, Turn, check_doc_type
from .base import ChunkRow

TURN_COLUMNS = (
    "session_id, ordinal, tenant, course, student, question, answer, category, intent, grade, "
    "level, exercise_key, complete, sources, created"
)
SESSION_COLUMNS = (
    "s.id, s.tenant, s.course, s.student, s.created, s.updated, s.ended, "
    "(SELECT COUNT(*) FROM turns t WHERE t.session_id = s.id), "
    "(SELECT f.question FROM turns f WHERE f.session_id = s.id ORDER BY f.ordinal LIMIT 1)"
)


def citations_json(citations: tuple[Citation, ...]) -> str:
    """Citations as a JSON array."""
    return json.dumps([
        {
            "number": c.number, "chunk_id": c.chunk_id, "document_id": c.document_id,
            "title": c.title, "doc_type": c.doc_type, "page": c.locator.page,
            "start": c.locator.start, "end": c.locator.end, "anchor": c.locator.anchor,
            "snippet": c.snippet, "section": c.section,
        }
        for c in citations
    ], ensure_ascii=False)


def citations_from_json(raw: str) -> tuple[Citation, ...]:
    return tuple(
        Citation(
            number=int(d["number"]), chunk_id=d["chunk_id"], document_id=d["document_id"],
            title=d["title"], doc_type=check_doc_type(d["doc_type"]),
            locator=Locator(d.get("page"), d.get("start"), d.get("end"), d.get("anchor")),
            snippet=d["snippet"], section=d.get("section", ""),
        )
        for d in json.loads(raw or "[]")
    )


def turn_values(turn: Turn, ordinal: int, created: float) -> tuple[Any, ...]:
    return (
        turn.session_id, ordinal, turn.tenant, turn.course, turn.student, turn.question,
        turn.answer, turn.category, turn.intent, turn.grade, turn.level, turn.exercise_key,
        int(turn.complete), citations_json(turn.sources), created,
    )


def turn_from_row(row: tuple[Any, ...]) -> Turn:
    v = list(row)
    return Turn(
        session_id=v[0], ordinal=int(v[1]), tenant=v[2], course=v[3], student=v[4],
        question=v[5], answer=v[6], category=v[7], intent=v[8], grade=v[9], level=v[10],
        exercise_key=v[11], complete=bool(v[12]), sources=citations_from_json(v[13]),
        created=float(v[14]),
    )


def session_from_row(row: tuple[Any, ...]) -> Session:
    v = list(row)
    return Session(v[0], v[1], v[2], v[3], float(v[4]), float(v[5]),
                   None if v[6] is None else float(v[6]), int(v[7]), str(v[8] or ""))


CHUNK_COLUMNS = (
    "k.id, k.tenant, k.course, k.document_id, d.title, d.doc_type, d.topic, k.section_path, "
    "d.difficulty, d.language, k.page, k.start_s, k.end_s, k.anchor, k.text, k.content_hash, "
    "k.ordinal, k.cues"
)


def course_from_row(r: Sequence[Any]) -> Course:
    return Course(r[0], r[1], r[2], r[3], int(r[4]), int(r[5]), bool(r[6]))


def chunk_from_row(r: Sequence[Any]) -> Chunk:
    """A chunk from a row of `CHUNK_COLUMNS`."""
    return Chunk(
        id=r[0], tenant=r[1], course=r[2], document_id=r[3], document_title=r[4],
        doc_type=check_doc_type(r[5]), topic=r[6], section_path=tuple(json.loads(r[7])),
        difficulty=r[8], language=r[9],
        locator=Locator(page=r[10], start=r[11], end=r[12], anchor=r[13]),
        text=r[14], content_hash=r[15], ordinal=r[16],
        cues=tuple((float(a), float(b), int(c)) for a, b, c in json.loads(r[17])),
    )


EXPORT_COLUMNS = (
    "id, text, section_path, page, start_s, end_s, anchor, ordinal, n_tokens, vector_key, "
    "content_hash, cues"
)


def chunk_row(r: Sequence[Any], terms: tuple[str, ...]) -> ChunkRow:
    """A stored chunk (a row of `EXPORT_COLUMNS`) back as the ingest pipeline's `ChunkRow`."""
    return ChunkRow(
        id=r[0], text=r[1], section_path=tuple(json.loads(r[2])),
        locator=Locator(page=r[3], start=r[4], end=r[5], anchor=r[6]), ordinal=int(r[7]),
        n_tokens=int(r[8]), terms=terms, vector_key=r[9], content_hash=r[10],
        cues=tuple((float(a), float(b), int(c)) for a, b, c in json.loads(r[11])),
    )


def expand_terms(term_ids: Sequence[int], tfs: Sequence[float],
                 names: dict[int, str]) -> tuple[str, ...]:
    """A chunk's terms with their repeats, from its term ids and frequencies."""
    return tuple(names[int(t)] for t, tf in zip(term_ids, tfs, strict=True)
                 for _ in range(round(float(tf))))
