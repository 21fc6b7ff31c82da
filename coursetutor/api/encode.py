"""Library records as the JSON the API sends."""

from __future__ import annotations

import json
from typing import Any

from ..ingest.report import NO_FILE
from ..tutor.tiers import tier_code
from ..types import (
    Answer,
    ApiKey,
    Chunk,
    Citation,
    Course,
    Document,
    Hit,
    Job,
    Session,
    Tenant,
    Turn,
    media_at,
)
from .jobs import CANCELLED
from .signing import Signer


def course(c: Course) -> dict[str, Any]:
    return {"id": c.id, "title": c.title, "language": c.language, "documents": c.documents,
            "chunks": c.chunks, "allow_solutions": c.allow_solutions}


def document(d: Document) -> dict[str, Any]:
    return {"id": f"{d.course}:{d.id}", "document": d.id, "course": d.course, "title": d.title,
            "type": d.doc_type, "topic": d.topic, "difficulty": d.difficulty,
            "language": d.language, "name": d.source_name, "pages": d.pages, "chunks": d.chunks,
            "media_url": d.media_url}


def source(c: Citation, tenant: str, course_id: str, signer: Signer,
           media: dict[str, str] | None = None) -> dict[str, Any]:
    """A cited passage; `media` maps document ids to the video a transcript belongs to."""
    loc = c.locator
    video = (media or {}).get(c.document_id, "")
    code, params = tier_code(c.tier_label)
    return {"media": media_at(video, loc.start) if video and loc.start is not None else "",
            "number": c.number, "chunk": c.chunk_id, "document": f"{course_id}:{c.document_id}",
            "title": c.title, "type": c.doc_type, "page": loc.page, "start": loc.start,
            "end": loc.end, "anchor": loc.anchor, "label": c.label(), "snippet": c.snippet,
            "section": c.section, "tier": c.tier, "tier_label": c.tier_label,
            "tier_code": code, "tier_params": params,
            "url": signer.url(tenant, course_id, c.document_id, loc)}


def passage(ch: Chunk) -> dict[str, Any]:
    """A whole stored passage (GET /v1/courses/{course}/passages/{chunk})."""
    loc = ch.locator
    return {"chunk": ch.id, "document": f"{ch.course}:{ch.document_id}",
            "title": ch.document_title, "type": ch.doc_type, "section": list(ch.section_path),
            "page": loc.page, "start": loc.start, "end": loc.end, "anchor": loc.anchor,
            "text": ch.text}


def hit(h: Hit, rank: int, tenant: str, signer: Signer, snippet: str,
        media: dict[str, str] | None = None) -> dict[str, Any]:
    ch, loc = h.chunk, h.locator
    video = (media or {}).get(ch.document_id, "")
    return {"media": media_at(video, loc.start) if video and loc.start is not None else "",
            "rank": rank, "score": round(h.score, 4), "chunk": ch.id,
            "document": f"{ch.course}:{ch.document_id}", "title": ch.document_title,
            "type": ch.doc_type, "topic": ch.topic, "section": list(ch.section_path),
            "page": loc.page, "start": loc.start, "end": loc.end, "anchor": loc.anchor,
            "snippet": snippet, "text": ch.text,
            "url": signer.url(tenant, ch.course, ch.document_id, loc)}


def answer(a: Answer, tenant: str, course_id: str, signer: Signer,
           media: dict[str, str] | None = None) -> dict[str, Any]:
    return {"text": a.text,
            "sources": [source(c, tenant, course_id, signer, media) for c in a.sources],
            "markers": [list(span) for span in a.markers],
            "category": a.category, "intent": a.intent, "grade": a.grade,
            "evidence": a.evidence, "level": a.level, "covered": a.covered,
            "complete": a.complete, "language": a.language, "note": a.note,
            "session_id": a.session_id, "checked": a.checked, "removed": list(a.removed),
            "reused_from": a.reused_from,
            "tier": a.tier,
            "usage": {"prompt_tokens": a.prompt_tokens, "completion_tokens": a.completion_tokens,
                      "cost": a.cost},
            "timings": a.timings}


def session(s: Session) -> dict[str, Any]:
    return {"id": s.id, "course": s.course, "student": s.student, "created": s.created,
            "updated": s.updated, "ended": s.ended, "turns": s.turns, "title": s.title}


def turn(t: Turn, tenant: str, signer: Signer,
         media: dict[str, str] | None = None) -> dict[str, Any]:
    return {"ordinal": t.ordinal, "question": t.question, "answer": t.answer,
            "category": t.category, "intent": t.intent, "grade": t.grade, "level": t.level,
            "complete": t.complete, "created": t.created,
            "covered": t.grade != "incorrect" and t.category in ("lecture", "followup"),
            "sources": [source(c, tenant, t.course, signer, media) for c in t.sources]}


# a job's error as a code a page translates; an error not listed has none ("")
JOB_ERRORS = {NO_FILE: "no_file_ingested", CANCELLED: "job_cancelled"}


def job(j: Job) -> dict[str, Any]:
    return {"id": j.id, "course": j.course, "status": j.status, "files_total": j.files_total,
            "files_done": j.files_done, "stage": j.stage, "current": j.current,
            "embedded": j.embedded, "to_embed": j.to_embed, "created": j.created,
            "updated": j.updated, "report": json.loads(j.report) if j.report else None,
            "error": j.error, "error_code": JOB_ERRORS.get(j.error, "")}


def key(k: ApiKey) -> dict[str, Any]:
    return {"id": k.id, "tenant": k.tenant, "role": k.role, "student": k.student,
            "name": k.name, "created": k.created, "revoked": k.revoked}


def tenant(t: Tenant) -> dict[str, Any]:
    return {"id": t.id, "name": t.name, "created": t.created}
