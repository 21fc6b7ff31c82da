"""Live classes: start and end them, feed their transcript (JSON, WebVTT, SubRip, WebSocket),
the teacher's slide changes, and their state."""

from __future__ import annotations

import time
from typing import Annotated, Any

from fastapi import APIRouter, Request, WebSocket, WebSocketDisconnect
from fastapi.exceptions import RequestValidationError
from pydantic import (
    BaseModel,
    Field,
    Strict,
    StrictBool,
    TypeAdapter,
    ValidationInfo,
    field_validator,
)
from starlette.concurrency import run_in_threadpool

from ..errors import CoursetutorError, InputError, PayloadTooLargeError
from ..live.intake import MAX_SECONDS, MAX_SPEAKER, MAX_TEXT, body_items, message_items
from ..live.queue import JobResult
from ..live.session import ClassStatus, LiveClasses
from ..live.standing import ClassProgress, class_progress
from ..store.classes import ClassEvent, LiveClass, TranscriptEvent
from . import errors, validate
from .deps import Caller, CallerDep, State, caller_of, check_course, require_teacher
from .state import AppState
from .validate import Line, Name, Text, refused

router = APIRouter(prefix="/v1", tags=["classes"])
CLASSES = "/courses/{course}/classes"
ONE = CLASSES + "/{class_id}"


class ClassIn(BaseModel):
    title: Name = ""  # empty: "Class <YYYY-MM-DD HH:MM>"
    slides: Line | None = Field(None, max_length=300)  # a document of the course: the deck


class SlideIn(BaseModel):
    page: int = Field(ge=1, le=100_000)


# seconds since the class started: a JSON number (not a string, not true), finite, at most a
# week; a cue's time is one too
Seconds = Annotated[float, Strict(), Field(ge=0, le=MAX_SECONDS, allow_inf_nan=False)]


class EventIn(BaseModel):
    """One transcript event, however it came (JSON, a WebVTT or SubRip cue, a message)."""

    start: Seconds
    end: Seconds
    text: Text = Field(max_length=MAX_TEXT)
    speaker: Line = Field("", max_length=MAX_SPEAKER)
    final: StrictBool = True

    @field_validator("end")
    @classmethod
    def _not_before_start(cls, end: float, info: ValidationInfo) -> float:
        start = info.data.get("start")
        if start is not None and end < start:
            raise refused(f"must not be before start ({start:g} s)")
        return end

    def event(self) -> TranscriptEvent:
        return TranscriptEvent(self.start, self.end, " ".join(self.text.split()),
                               self.speaker.strip(), self.final)


EVENTS = TypeAdapter(list[EventIn])


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
            "last_event": encode_event(s.last) if s.last else None,
            "slide_following": s.slide_following}


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


def read_events(text: str, content_type: str | None) -> list[TranscriptEvent]:
    """The events of a body by its content type (None: a WebSocket message, JSON or cues),
    each checked by `EventIn`, or a 422 naming what is wrong."""
    try:
        items = message_items(text) if content_type is None else body_items(text,
                                                                              content_type)
    except InputError as exc:
        raise validate.invalid("body", "body", str(exc)) from None
    events = [e.event() for e in validate.validated(EVENTS, items, "events")]
    kept = [e for e in events if e.text or not e.final]
    if not kept:
        raise validate.invalid("body", "events", "no event with text in the body")
    return kept


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
                                   "(api_max_json_bytes); send smaller batches",
                                   code="body_too_large", limit=state.settings.api_max_json_bytes)
    events = read_events(validate.check_body(body),
                         request.headers.get("content-type", "application/json"))
    live = live_of(state)
    result = await run_in_threadpool(live.post, caller.tenant, course, class_id, events,
                                     received)
    return encode_result(class_id, result)


async def _message(websocket: WebSocket, max_bytes: int) -> list[TranscriptEvent]:
    """The events of the next message, text or binary (WebSocketDisconnect when the client
    went away)."""
    message = await websocket.receive()
    if message["type"] == "websocket.disconnect":
        raise WebSocketDisconnect(message.get("code", 1000))
    raw, text = message.get("bytes"), message.get("text")
    size = len(raw if raw is not None else (text or "").encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise PayloadTooLargeError(f"the message is over {max_bytes} bytes "
                                   "(api_max_json_bytes); send smaller batches",
                                   code="body_too_large", limit=max_bytes)
    body = validate.check_body(raw) if raw is not None else validate.check_text("body",
                                                                                 text or "")
    return read_events(body, None)


def _refusal(exc: CoursetutorError | RequestValidationError) -> dict[str, Any]:
    """The error message a WebSocket client gets for a message that went wrong."""
    if isinstance(exc, RequestValidationError):
        return {"error": {**validate.describe(exc), "status": 422}}
    return {"error": {"type": errors.error_type(exc), "status": errors.status_of(exc),
                      "message": errors.scrub(str(exc)), "code": exc.code,
                      "params": dict(exc.params)}}


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
            try:
                events = await _message(websocket, state.settings.api_max_json_bytes)
                received = time.time()
                result = await run_in_threadpool(live.post, caller.tenant, course, class_id,
                                                 events, received)
                await websocket.send_json(encode_result(class_id, result))
            except (CoursetutorError, RequestValidationError) as exc:
                refusal = _refusal(exc)
                await websocket.send_json(refusal)
                if refusal["error"]["status"] == 409:  # the class ended: nothing more goes in
                    await websocket.close(code=4409, reason="the class has ended")
                    return
    except WebSocketDisconnect:
        return
