"""Live classes: start and end them, feed their transcript (JSON, WebVTT, SubRip, WebSocket),
the teacher's slide changes, and their state."""

from __future__ import annotations

import json
import time
from typing import Any

from fastapi import APIRouter, Request, WebSocket, WebSocketDisconnect
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool

from ..errors import CoursetutorError, InputError, PayloadTooLargeError
from ..live.intake import events_from_json, events_from_text, parse_body
from ..live.queue import JobResult
from ..live.session import ClassStatus, LiveClasses
from ..live.standing import ClassProgress, class_progress
from ..store.classes import ClassEvent, LiveClass, TranscriptEvent
from . import errors, validate
from .deps import Caller, CallerDep, State, caller_of, check_course, require_teacher
from .state import AppState
from .validate import Line, Name

router = APIRouter(prefix="/v1", tags=["classes"])
CLASSES = "/courses/{course}/classes"
ONE = CLASSES + "/{class_id}"


class ClassIn(BaseModel):
    title: Name = ""  # empty: "Class <YYYY-MM-DD HH:MM>"
    slides: Line | None = Field(None, max_length=300)  # a document of the course: the deck


class SlideIn(BaseModel):
    page: int = Field(ge=1, le=100_000)


def live_of(state: AppState) -> LiveClasses:
    assert state.live is not None, "create_app builds the live classes"
    return state.live


def encode_class(c: LiveClass) -> dict[str, Any]:
    return {"id": c.id, "course": c.course, "title": c.title, "slides": c.slides_document_id,
            "document": f"{c.course}:{c.document_id}", "started": c.started, "ended": c.ended,
            "running": c.running, "slide_page": c.slide_page, "slide_source": c.slide_source,
            "slide_changed": c.slide_changed}


def encode_event(e: ClassEvent) -> dict[str, Any]:
    return {"seq": e.seq, "start": e.start, "end": e.end, "text": e.text, "raw_text": e.raw_text,
            "speaker": e.speaker, "final": e.final, "page": e.page, "received": e.received}


def encode_status(s: ClassStatus) -> dict[str, Any]:
    return {**encode_class(s.live), "events": s.events, "chunks": s.chunks,
            "last_event": encode_event(s.last) if s.last else None}


def encode_result(class_id: str, r: JobResult) -> dict[str, Any]:
    return {"class": class_id, "accepted": len(r.seqs), "seqs": list(r.seqs),
            "slide_page": r.slide_page}


@router.post(CLASSES, status_code=201)
def start_class(course: str, caller: CallerDep, state: State,
                body: ClassIn | None = None) -> dict[str, Any]:
    """Start a class of the course (teachers and admins)."""
    require_teacher(caller)
    title, slides = (body.title, body.slides) if body else ("", None)
    return encode_class(live_of(state).start(caller.tenant, course, title, slides))


@router.get(CLASSES)
def list_classes(course: str, caller: CallerDep, state: State) -> dict[str, Any]:
    """The course's classes, the latest first (students of the course see them too)."""
    check_course(state, caller, course)
    found = state.workspace.store.classes.list_classes(caller.tenant, course)
    return {"classes": [encode_class(c) for c in found]}


@router.get(ONE)
def get_class(course: str, class_id: str, caller: CallerDep, state: State) -> dict[str, Any]:
    """A class: its slide, how many events and chunks it holds, its last event."""
    check_course(state, caller, course)
    return encode_status(live_of(state).status(caller.tenant, course, class_id))


@router.get(ONE + "/progress")
def get_progress(course: str, class_id: str, caller: CallerDep,
                 state: State) -> dict[str, Any]:
    """Where the class stands: the slide on screen, the last minutes in brief, its topics."""
    check_course(state, caller, course)
    return encode_progress(class_progress(state.workspace.store, caller.tenant, course,
                                          class_id))


def encode_progress(p: ClassProgress) -> dict[str, Any]:
    return {"class": p.class_id, "now": round(p.now, 1), "started": p.started,
            "slide": {"page": p.slide_page, "title": p.slide_title}, "line": p.line(),
            "summary": p.summary, "topics": list(p.topics)}


@router.post(ONE + "/end")
def end_class(course: str, class_id: str, caller: CallerDep, state: State) -> dict[str, Any]:
    """End the class once the events sent before are in."""
    require_teacher(caller)
    return encode_class(live_of(state).end(caller.tenant, course, class_id))


@router.post(ONE + "/slide")
def set_slide(course: str, class_id: str, body: SlideIn, caller: CallerDep,
              state: State) -> dict[str, Any]:
    """The presentation moved to `page`: it overrides the slide tracked from the speech."""
    require_teacher(caller)
    return encode_class(live_of(state).set_slide(caller.tenant, course, class_id, body.page))


def _events(body: bytes, content_type: str) -> list[TranscriptEvent]:
    """The body's events, or a 422 naming what is wrong with it."""
    try:
        events = parse_body(body, content_type)
    except InputError as exc:
        raise validate.invalid("body", "events", str(exc)) from exc
    if not events:
        raise validate.invalid("body", "events", "no event with text in the body")
    return events


@router.post(ONE + "/events")
async def add_events(course: str, class_id: str, request: Request, caller: CallerDep,
                     state: State) -> dict[str, Any]:
    """Transcript events: JSON (one event, a list or {"events": [...]}), `text/vtt` or
    `application/x-subrip`; answered once they are searchable."""
    received = time.time()
    require_teacher(caller)
    body = await request.body()
    if len(body) > state.settings.api_max_json_bytes:
        raise PayloadTooLargeError(f"the body is over {state.settings.api_max_json_bytes} bytes "
                                   "(api_max_json_bytes); send smaller batches")
    events = _events(body, request.headers.get("content-type", "application/json"))
    live = live_of(state)
    result = await run_in_threadpool(live.post, caller.tenant, course, class_id, events,
                                     received)
    return encode_result(class_id, result)


def _message_events(text: str) -> list[TranscriptEvent]:
    """A WebSocket message's events: JSON, else WebVTT or SubRip cues."""
    if text.lstrip().startswith(("{", "[")):
        try:
            return events_from_json(json.loads(text))
        except json.JSONDecodeError as exc:
            raise InputError(f"the message is not JSON ({exc.msg})") from exc
    return events_from_text(text)


@router.websocket(ONE + "/stream")
async def stream(websocket: WebSocket, course: str, class_id: str) -> None:
    """For captioning tools that keep a connection open: each text message holds events
    (as the events route takes them) and is answered with what was accepted, or an error."""
    state: AppState = websocket.app.state.coursetutor
    try:
        caller: Caller = await run_in_threadpool(caller_of, websocket, state)  # type: ignore[arg-type]
        require_teacher(caller)
        live = live_of(state)
        await run_in_threadpool(live.running, caller.tenant, course, class_id)
    except CoursetutorError as exc:
        await websocket.close(code=4000 + errors.status_of(exc), reason=str(exc)[:120])
        return
    await websocket.accept()
    try:
        while True:
            text = await websocket.receive_text()
            received = time.time()
            try:
                events = _message_events(text)
                result = await run_in_threadpool(live.post, caller.tenant, course, class_id,
                                                 events, received)
                await websocket.send_json(encode_result(class_id, result))
            except CoursetutorError as exc:
                status = errors.status_of(exc)
                await websocket.send_json({"error": {"type": errors.error_type(exc),
                                                     "status": status,
                                                     "message": errors.scrub(str(exc))}})
                if status == 409:  # the class ended: nothing more will go in
                    await websocket.close(code=4409, reason="the class has ended")
                    return
    except WebSocketDisconnect:
        return
