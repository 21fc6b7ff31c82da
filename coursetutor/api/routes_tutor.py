"""Search (the context service), ask (one tutor turn, JSON or SSE) and sessions."""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool

from ..config import summaries_by_model
from ..errors import NotFoundError, RateLimitError
from ..retrieval.retriever import MODES
from ..tutor import Tutor, remember
from ..tutor.citations import snippet
from ..types import (
    DOC_TYPES,
    Course,
    DocType,
    DoneEvent,
    Hit,
    MetaEvent,
    SearchFilters,
    Session,
    SourcesEvent,
    StreamEvent,
    TokenEvent,
)
from . import cost, encode
from .deps import (
    Caller,
    CallerDep,
    State,
    acting_student,
    check_course,
    hides_solutions,
    require_teacher,
)
from .errors import body as error_body
from .errors import error_type, log_stream_error, status_of
from .pump import KEEPALIVE, EventPump
from .ratelimit import Limits
from .state import AppState
from .validate import Id, Text

router = APIRouter(prefix="/v1", tags=["tutor"])


class AskIn(BaseModel):
    question: Text = Field(max_length=100_000)
    session_id: Id | None = Field(None, description="continue this session; default: new")
    level: int = Field(3, ge=1, le=5, description="the student's level, 1 (beginner) to 5")
    student: Id | None = Field(None, description="teachers and admins only: ask as this "
                                                 "student")
    class_id: Id | None = Field(None, description="asked during this class of the course: "
                                                  "its passages first, labelled by tier")


@router.get("/courses/{course}/search")
async def search(course: str, caller: CallerDep, state: State,
                 q: Annotated[str, Query(min_length=1, max_length=4000)],
                 k: Annotated[int, Query(ge=1, le=50)] = 5,
                 mode: Annotated[str, Query(pattern="^(" + "|".join(MODES) + ")$")] = "hybrid",
                 type: Annotated[list[DocType] | None, Query()] = None,
                 max_difficulty: Annotated[int | None, Query(ge=1, le=5)] = None,
                 ) -> JSONResponse:
    """Retrieval only: the passages that best answer `q`, with citations' URLs."""
    started = time.perf_counter()
    info = await run_in_threadpool(check_course, state, caller, course)
    types = tuple(type) if type else DOC_TYPES
    if hides_solutions(caller.key, info):
        types = tuple(t for t in types if t != "solution")
    ws = state.workspace_for(caller.tenant)

    def compute() -> list[Hit]:
        charge = cost.reserve(state, caller, "search",
                              cost.query_tokens(state, q, ("query", "q")))
        cpu = time.thread_time()
        try:
            return ws.search(q, course, k=k, mode=mode, doc_types=types,
                             max_difficulty=max_difficulty) if types else []
        finally:
            charge.settle(time.thread_time() - cpu)

    # a tenant's burst of heavy searches queues behind itself, not in front of the others,
    # and queues on the event loop: a queued search holds none of the server's threads
    queued = time.perf_counter()
    async with state.searches.waiting_slot(caller.tenant):
        computing = time.perf_counter()
        hits = await run_in_threadpool(compute)
        done = time.perf_counter()
    state.metrics.retrievals.labels("search", "hits" if hits else "empty").inc()

    def encoded() -> list[dict[str, Any]]:
        media = (state.media_links(caller.tenant, course)
                 if any(h.chunk.doc_type == "transcript" for h in hits) else None)
        signer = state.signer.bound(caller.key)
        return [encode.hit(h, i + 1, caller.tenant, signer, snippet(h.chunk.text), media)
                for i, h in enumerate(hits)]

    found = await run_in_threadpool(encoded) if hits else []
    # a ready JSONResponse skips FastAPI's generic encoder: the hot path of the context service
    # where the time went: before the search's turn (check), waiting for a free search slot
    # (queue), searching (search)
    timing = (f"check;dur={(queued - started) * 1000:.1f}, "
              f"queue;dur={(computing - queued) * 1000:.1f}, "
              f"search;dur={(done - computing) * 1000:.1f}")
    return JSONResponse({"query": q, "ms": round((time.perf_counter() - started) * 1000, 1),
                         "hits": found}, headers={"Server-Timing": timing})


def _sse(name: str, data: dict[str, Any]) -> str:
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


def event_payload(event: StreamEvent, caller: Caller, course: str,
                  state: AppState) -> tuple[str, dict[str, Any]]:
    """An SSE event name and its data."""
    tenant, signer = caller.tenant, state.signer.bound(caller.key)
    if isinstance(event, MetaEvent):
        return "meta", {"session_id": event.session_id, "category": event.category,
                        "intent": event.intent, "level": event.level, "grade": event.grade,
                        "language": event.language}
    if isinstance(event, TokenEvent):
        return "token", {"text": event.text}
    if isinstance(event, SourcesEvent):
        media = state.media_links(tenant, course) if event.sources else None
        return "sources", {"sources": [encode.source(c, tenant, course, signer, media)
                                       for c in event.sources]}
    media = state.media_links(tenant, course) if event.answer.sources else None
    return "done", encode.answer(event.answer, tenant, course, signer, media)


KEEPALIVE_SECONDS = 15.0  # an SSE comment this often keeps proxies from timing out


async def open_turn(state: AppState, caller: Caller, course: str, question: str,
                    student: str, session_id: str | None, level: int,
                    history: list[Any] | None = None, may_queue: bool = False,
                    field: tuple[str, ...] = ("body", "question"),
                    class_id: str | None = None) -> tuple[EventPump, StreamEvent | None]:
    """Start a turn. Every error a caller can act on (question, course, session, backend
    down, compute budget) raises here. Then wait for the first event (retrieval and grading
    done), unless `may_queue` and every worker is busy: the stream then opens at once (first
    is None)."""
    await run_in_threadpool(check_course, state, caller, course)
    if class_id is not None:  # an unknown class is a 404 before the tutor opens a session
        await state.call(state.workspace.store.classes.get_class, caller.tenant, course,
                         class_id)
    # a question over max_question_chars gets the tutor's own 400 before anything is embedded
    tokens = (await run_in_threadpool(cost.query_tokens, state, question, field)
              if len(question) <= state.settings.max_question_chars else 0)
    charge = cost.reserve(state, caller, "ask", tokens)
    try:
        await state.call(state.limiter.open_stream, caller.limits_key,
                         Limits.for_role(state.settings, caller.role))
    except RateLimitError:
        charge.settle(0.0)
        state.metrics.rate_limited.labels(caller.role).inc()
        raise
    opening = time.perf_counter()
    try:
        tutor = Tutor(state.workspace_for(caller.tenant), state.router)
        opened = await run_in_threadpool(tutor.open, question, course, student, session_id,
                                         level, history, class_id)
        queued = may_queue and state.asks.busy()
        spent = time.perf_counter() - opening
        pump = state.asks.start(lambda: cost.metered(tutor.run(opened), charge, spent))
    except BaseException:
        charge.settle(time.perf_counter() - opening)
        state.limiter.close_stream(caller.limits_key)
        raise
    if queued:
        return pump, None
    try:
        first = await pump.next()
        if first is None:
            raise RuntimeError("the turn ended without an event")
    except BaseException:
        pump.cancelled.set()
        state.limiter.close_stream(caller.limits_key)
        raise
    return pump, first


async def next_event(pump: EventPump) -> Any:
    """The turn's next event, or KEEPALIVE after a quiet spell."""
    return await pump.next(timeout=KEEPALIVE_SECONDS)


async def drain(state: AppState, caller: Caller, pump: EventPump,
                first: StreamEvent | None) -> DoneEvent:
    """Consume a turn to its end (JSON replies), releasing its stream slot."""
    try:
        event: StreamEvent | None = first or await pump.next()
        while event is not None and not isinstance(event, DoneEvent):
            event = await pump.next()
        if event is None:
            raise RuntimeError("the turn ended without an answer")
        state.metrics.observe_answer(event.answer)
        return event
    finally:
        pump.cancelled.set()
        state.limiter.close_stream(caller.limits_key)


async def stream_events(state: AppState, caller: Caller, course: str, pump: EventPump,
                        first: StreamEvent | None, request_id: str) -> AsyncIterator[str]:
    """SSE text of a turn (a `queued` event first when it waits for a worker); always ends
    with `done` or `error`."""
    state.metrics.active_streams.inc()
    try:
        event: Any = first
        if first is None:
            yield _sse("queued", {"waiting": state.asks.waiting})
            event = await next_event(pump)
        while event is not None:
            if event is KEEPALIVE:
                yield ": keep-alive\n\n"
            else:
                name, data = event_payload(event, caller, course, state)
                yield _sse(name, data)
                if isinstance(event, DoneEvent):
                    state.metrics.observe_answer(event.answer)
                    state.turn_done(caller.tenant, course, caller.role, caller.student)
                    return
            event = await next_event(pump)
        yield _sse("error", {"type": "internal", "status": 500, "request_id": request_id,
                             "message": "the answer ended early", "code": "answer_ended_early",
                             "params": {}})
    except Exception as exc:
        log_stream_error(exc, request_id)
        payload = error_body(exc, request_id)["error"]
        yield _sse("error", {**payload, "type": error_type(exc), "status": status_of(exc)})
    finally:
        pump.cancelled.set()  # a client that went away stops the model
        state.limiter.close_stream(caller.limits_key)
        state.metrics.active_streams.dec()


@router.get("/courses/{course}/passages/{chunk}")
def get_passage(course: str, chunk: str, caller: CallerDep, state: State) -> dict[str, Any]:
    """One passage of the course, whole: the text a citation's snippet was cut from."""
    info = check_course(state, caller, course)
    found = state.workspace.store.get_chunks(SearchFilters(caller.tenant, course), [chunk])
    passage = found.get(chunk)
    if passage is None or (passage.doc_type == "solution" and hides_solutions(caller.key, info)):
        raise NotFoundError(f"passage {chunk!r} does not exist", code="passage_not_found",
                            passage=chunk)
    return encode.passage(passage)


@router.post("/courses/{course}/ask", responses={200: {"content": {
    "text/event-stream": {"schema": {"type": "string"}}}}})
async def ask(course: str, body: AskIn, request: Request, caller: CallerDep,
              state: State) -> Any:
    """One tutor turn: one JSON answer, or Server-Sent Events with `Accept: text/event-stream`."""
    streaming = "text/event-stream" in request.headers.get("accept", "")
    pump, first = await open_turn(state, caller, course, body.question,
                                  acting_student(caller, body.student), body.session_id, body.level,
                                  may_queue=streaming, class_id=body.class_id)
    if streaming:
        return StreamingResponse(
            stream_events(state, caller, course, pump, first, request.state.request_id),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
    done = await drain(state, caller, pump, first)
    state.turn_done(caller.tenant, course, caller.role, caller.student)
    media = state.media_links(caller.tenant, course) if done.answer.sources else None
    return encode.answer(done.answer, caller.tenant, course, state.signer.bound(caller.key),
                         media)


def _own_session(state: AppState, caller: Caller, course: str,
                 session_id: str) -> tuple[Session, Course]:
    """The session and its course, if the caller may see them."""
    info = check_course(state, caller, course)
    found = state.workspace.store.get_session(caller.tenant, course, session_id)
    if caller.role == "student" and found.student != caller.student:
        raise NotFoundError(f"session {session_id!r} does not exist",
                            code="session_not_found", session=session_id)
    return found, info


@router.get("/courses/{course}/sessions")
def list_sessions(course: str, caller: CallerDep, state: State,
                  student: Annotated[str | None, Query()] = None) -> dict[str, Any]:
    """A student's sessions, most recent first (teachers name the student)."""
    check_course(state, caller, course)
    student = acting_student(caller, student)
    sessions = state.workspace.store.list_sessions(caller.tenant, course, student)
    return {"sessions": [encode.session(s) for s in sessions]}


@router.get("/courses/{course}/sessions/{session_id}")
def get_session(course: str, session_id: str, caller: CallerDep,
                state: State) -> dict[str, Any]:
    found, info = _own_session(state, caller, course, session_id)
    turns = state.workspace.store.list_turns(caller.tenant, course, session_id)
    if hides_solutions(caller.key, info):
        # the course may have hidden its solutions since: cite (and sign) none of them now
        turns = [dataclasses.replace(t, sources=tuple(
            c for c in t.sources if c.doc_type != "solution")) for t in turns]
    media = state.media_links(caller.tenant, course)
    return {"session": encode.session(found),
            "turns": [encode.turn(t, caller.tenant, state.signer.bound(caller.key), media)
                      for t in turns]}


@router.post("/courses/{course}/sessions/{session_id}/end")
def end_session(course: str, session_id: str, caller: CallerDep,
                state: State) -> dict[str, Any]:
    """End the session; its summary (`summary`, null without turns) is stored with it."""
    _own_session(state, caller, course, session_id)
    store = state.workspace.store
    summary = remember.end_session(state.router if summaries_by_model(state.settings) else None,
                                   store, caller.tenant, course, session_id, [])
    return {**encode.session(store.get_session(caller.tenant, course, session_id)),
            "summary": summary.as_dict() if summary else None}


@router.get("/courses/{course}/analytics")
def analytics(course: str, caller: CallerDep, state: State,
              days: Annotated[float, Query(gt=0, le=3650)] = 30) -> dict[str, Any]:
    """Teachers: what students asked in the last `days`, and what the material did not cover."""
    require_teacher(caller)
    since = time.time() - days * 86400
    a = state.workspace.store.course_activity(caller.tenant, course, since)
    return {"days": days, "students": a.students, "sessions": a.sessions, "turns": a.turns,
            "categories": a.categories, "intents": a.intents, "grades": a.grades,
            "levels": {k: v for k, v in a.levels.items() if k}, "not_covered": a.not_covered,
            "exercises": [{"exercise": e, "turns": n, "students": s}
                          for e, n, s in a.exercises]}
