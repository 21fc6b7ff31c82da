"""Stage: record. The reply's last words are streamed, then its sources; the turn is stored
with the topics it cited (the student's profile), and the answer is made, with the model
calls and the time of every stage."""

from __future__ import annotations

from collections.abc import Generator

from ...memory.profile import cited_topics
from ...types import Answer, SourcesEvent, StreamEvent, TokenEvent, Turn
from ..markers import marker_spans
from ..pipeline import Pipeline, Reply
from .opened import Opened
from .tools import Tools


def say(tools: Tools, reply: Reply) -> Generator[StreamEvent, None, str]:
    """The reply's events up to its sources; the whole text, as it will be stored."""
    if reply.meta is not None:
        yield reply.meta
    if not reply.shown:
        yield TokenEvent(reply.text)
    for piece in reply.tail:
        yield TokenEvent(piece)
    text = reply.text
    if asked := tools.reuse.note(bool(reply.cited)):  # "asked before in this course"
        text = f"{text}\n\n{asked}"
        yield TokenEvent(f"\n\n{asked}")
    yield SourcesEvent(reply.cited)
    return text


def record(tools: Tools, o: Opened, reply: Reply, text: str,
           run: Pipeline) -> tuple[Answer, Turn]:
    """Store the turn and make its answer; the stored turn (numbered) with it."""
    run.timings["total"] = run.elapsed_ms()
    cat, ev = reply.cat, reply.evidence
    verdict = reply.grade if reply.grade is not None else (ev.grade if ev else "")
    ws = tools.ws
    turn = Turn(o.session_id, 0, ws.tenant, o.course, o.student, o.question, text,
                cat.category, cat.intent, verdict, reply.level, reply.key, reply.complete,
                reply.cited)
    stored = ws.store.record_turn(turn, cited_topics(ws.store, turn, ev.hits if ev else (),
                                                     tools.topics))
    ws.turns.append(stored)
    note = reply.note
    if reply.context_over:
        note = (note + "; " if note else "") + "context over budget"
    log, check = run.log, reply.check
    return Answer(
        text=text, sources=reply.cited, category=cat.category, intent=cat.intent,
        grade=verdict, evidence=round(ev.score, 4) if ev else 0.0, language=cat.language,
        level=reply.level, complete=reply.complete, covered=reply.covered, note=note,
        session_id=o.session_id, prompt_tokens=sum(c.usage.prompt_tokens for c in log),
        completion_tokens=sum(c.usage.completion_tokens for c in log),
        cost=sum(c.cost for c in log), timings=dict(run.timings),
        calls=tuple({"task": c.task, "backend": c.backend, "model": c.model,
                     "prompt_tokens": c.usage.prompt_tokens,
                     "completion_tokens": c.usage.completion_tokens,
                     "cost": c.cost, "ms": round(c.seconds * 1000, 1)} for c in log),
        context=reply.context, context_over_budget=reply.context_over,
        tier=reply.tier, removed=check.removed if check else (),
        checked=bool(check and check.verdicts),
        explain=tuple((h.chunk.id, h.explain) for h in ev.hits if h.explain) if ev else (),
        markers=marker_spans(text, reply.content) if reply.cited else (),
    ), stored
