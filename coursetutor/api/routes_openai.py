"""An OpenAI-compatible /v1/chat/completions: the model name is the course id."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..errors import InputError
from ..types import Answer, Citation, DoneEvent, StreamEvent, TokenEvent, Turn
from . import encode
from .deps import Caller, CallerDep, State, acting_student
from .errors import body as error_body
from .errors import error_type, log_stream_error, status_of
from .pump import KEEPALIVE, EventPump
from .routes_tutor import drain, next_event, open_turn
from .state import AppState
from .validate import Id, Line, Text, refusal, refused

router = APIRouter(prefix="/v1", tags=["openai"])
MAX_CONTENT = 100_000  # characters in one message (or part)


class ContentPart(BaseModel):
    model_config = ConfigDict(extra="allow")  # image_url ... are accepted and unused
    type: Line = Field(max_length=64)
    text: Text | None = Field(None, max_length=MAX_CONTENT)


def _also_a_string(schema: dict[str, Any]) -> None:
    schema["anyOf"].insert(0, {"type": "string"})


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: Line = Field(max_length=64)
    # a string is read as one text part: an error then names `content` or `content.0.text`,
    # not a member of a union (`content.list[ContentPart].0`)
    content: list[ContentPart] | None = Field(None, json_schema_extra=_also_a_string)

    @field_validator("content", mode="before")
    @classmethod
    def _checked(cls, value: Any) -> Any:
        """The text of the message, or of each of its parts, checked first: an error then
        names `content` rather than one of its parts."""
        if not isinstance(value, str | list | None):
            raise refused("must be text or a list of parts")
        parts = value if isinstance(value, list) else [{"text": value}]
        for part in parts:
            text = part.get("text") if isinstance(part, dict) else None
            reason = refusal(text, MAX_CONTENT, multiline=True) if isinstance(
                text, str) else None
            if reason:
                raise refused(reason)
        return [{"type": "text", "text": value}] if isinstance(value, str) else value


class ChatIn(BaseModel):
    model_config = ConfigDict(extra="allow")  # temperature, top_p ... are accepted and unused
    model: Id = Field(description="the course id")
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool = False
    session_id: Id | None = Field(None, description="continue a stored session")
    user: Id | None = Field(None, description="teachers and admins: the student to ask as")


def _text(message: ChatMessage) -> str:
    return " ".join(p.text or "" for p in message.content or () if p.type == "text")


def conversation(body: ChatIn) -> tuple[str, list[tuple[str, str]]]:
    """The question (last user message) and the earlier (question, answer) pairs."""
    turns = [m for m in body.messages if m.role in ("user", "assistant")]
    if not turns or turns[-1].role != "user":
        raise InputError("the last message must be the student's (role 'user')")
    pairs: list[tuple[str, str]] = []
    for i, m in enumerate(turns[:-1]):
        if m.role == "user":
            answer = turns[i + 1] if turns[i + 1].role == "assistant" else None
            pairs.append((_text(m), _text(answer) if answer else ""))
    return _text(turns[-1]), pairs


def footnote(sources: tuple[Citation, ...]) -> str:
    """The cited sources as text under the answer, for clients that show only text."""
    if not sources:
        return ""
    lines = [f"[{c.number}] {c.label()}" for c in sources]
    return "\n\nSources:\n" + "\n".join(lines)


def _extra(answer: Answer, caller: Caller, course: str, state: AppState) -> dict[str, Any]:
    media = state.media_links(caller.tenant, course) if answer.sources else None
    return {"sources": [encode.source(c, caller.tenant, course, state.signer.bound(caller.key),
                                      media)
                        for c in answer.sources],
            "session_id": answer.session_id,
            "coursetutor": {"category": answer.category, "intent": answer.intent,
                            "grade": answer.grade, "level": answer.level,
                            "covered": answer.covered, "cost": answer.cost}}


def _usage(answer: Answer) -> dict[str, int]:
    return {"prompt_tokens": answer.prompt_tokens, "completion_tokens": answer.completion_tokens,
            "total_tokens": answer.prompt_tokens + answer.completion_tokens}


def _chunk(cid: str, course: str, delta: dict[str, Any], finish: str | None = None,
           **extra: Any) -> str:
    data = {"id": cid, "object": "chat.completion.chunk", "created": int(time.time()),
            "model": course, "choices": [{"index": 0, "delta": delta,
                                          "finish_reason": finish}], **extra}
    return f"data: {json.dumps(data, ensure_ascii=False)}\n\n"


async def _stream(state: AppState, caller: Caller, course: str, pump: EventPump,
                  first: StreamEvent | None, cid: str, request_id: str) -> AsyncIterator[str]:
    state.metrics.active_streams.inc()
    try:
        yield _chunk(cid, course, {"role": "assistant", "content": ""})
        event: Any = first if first is not None else await next_event(pump)
        while event is not None:
            if event is KEEPALIVE:
                yield ": keep-alive\n\n"
            elif isinstance(event, TokenEvent):
                yield _chunk(cid, course, {"content": event.text})
            elif isinstance(event, DoneEvent):
                answer = event.answer
                state.metrics.observe_answer(answer)
                yield _chunk(cid, course, {"content": footnote(answer.sources)})
                yield _chunk(cid, course, {}, "stop" if answer.complete else "length",
                             usage=_usage(answer), **_extra(answer, caller, course, state))
                break
            event = await next_event(pump)
    except Exception as exc:
        log_stream_error(exc, request_id)
        err = error_body(exc, request_id)["error"]
        payload = {"error": {**err, "type": error_type(exc), "code": status_of(exc)}}
        yield f"data: {json.dumps(payload)}\n\n"
    finally:
        pump.cancelled.set()
        state.limiter.close_stream(caller.limits_key)
        state.metrics.active_streams.dec()
    yield "data: [DONE]\n\n"


@router.post("/chat/completions", responses={200: {"content": {
    "text/event-stream": {"schema": {"type": "string"}}}}})
async def chat_completions(body: ChatIn, request: Request, caller: CallerDep,
                           state: State) -> Any:
    """One tutor turn for OpenAI-style chat clients (streaming or not)."""
    course = body.model
    question, pairs = conversation(body)
    student = acting_student(caller, body.user)
    history = None
    if not body.session_id:
        history = [Turn("", i, caller.tenant, course, student, q, a, "lecture", "concept",
                        "correct") for i, (q, a) in enumerate(pairs)]
    pump, first = await open_turn(state, caller, course, question, student, body.session_id,
                                  3, history, may_queue=body.stream,
                                  field=("body", "messages"))
    cid = "chatcmpl-" + uuid.uuid4().hex[:24]
    if body.stream:
        return StreamingResponse(
            _stream(state, caller, course, pump, first, cid, request.state.request_id),
            media_type="text/event-stream", headers={"Cache-Control": "no-cache"})
    answer = (await drain(state, caller, pump, first)).answer
    return {"id": cid, "object": "chat.completion", "created": int(time.time()),
            "model": course,
            "choices": [{"index": 0, "finish_reason": "stop" if answer.complete else "length",
                         "message": {"role": "assistant",
                                     "content": answer.text + footnote(answer.sources)}}],
            "usage": _usage(answer), **_extra(answer, caller, course, state)}
