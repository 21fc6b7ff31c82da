"""Writing the memory: the running summary of a long session and the summary of an ended one.

`fold_history` keeps the conversation in the prompt within its history budget: once the
recent turns (and the summary so far) would fill more than `summary_threshold` of it, the
oldest of them are folded into the session's running summary, stored with their turn ids.
`end_session` ends a session and stores its summary; `close_idle` does so for a student's
earlier sessions that ended or went idle (`session_idle_minutes`) when a new one opens.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence

from ..llm.router import CallRecord, Router
from ..store import Store
from ..store.summaries import Summary, turn_id
from ..types import Turn
from .context import format_history
from .summary import RUNGS, Digest, Fold, extractive, last_exercise, summarize, turn_topics

# shares of the history budget a fold leaves to the recent turns and gives the summary: well
# under the threshold together, so that the next turns fit before the next fold
KEEP = 0.25
SUMMARY = 0.25
SESSION_WORDS = 60  # a session summary; two of them and the profile share the "rest" budget
MODEL_SESSIONS = 2  # idle sessions summarized by the model at once; older ones extractively


@dataclasses.dataclass(frozen=True)
class History:
    """The conversation the prompt shows: the summary of its start and its recent turns."""

    summary: str
    turns: tuple[Turn, ...]
    folded: int = 0  # turns this call folded into the summary


@dataclasses.dataclass(frozen=True)
class FoldInput:
    """A turn's conversation and the budget it must fit."""

    tenant: str
    course: str
    student: str
    session_id: str
    turns: tuple[Turn, ...]  # oldest first; turns of other sessions are shown, never folded
    running: Summary | None  # the session's running summary so far
    limit: int  # the history budget in tokens
    threshold: float = 0.7  # fold when more than this share of `limit` would be used


def _id(turn: Turn) -> str:
    return turn_id(turn.session_id, turn.ordinal)


def fold_history(router: Router | None, store: Store, f: FoldInput, count: Callable[[str], int],
                 log: list[CallRecord]) -> History:
    """The summary and the turns to show, folding the oldest turns in when they fill more
    than the threshold of the budget (written by the router's model; extracted with None)."""
    summary = f.running.text if f.running else ""
    done = set(f.running.turn_ids) if f.running else set()
    shown = [t for t in f.turns if _id(t) not in done]
    used = count(format_history(shown, 1 << 30, count)) + (count(summary) if summary else 0)
    if used <= f.threshold * f.limit:
        return History(summary, tuple(shown))
    keep = _newest(shown, int(KEEP * f.limit), count)
    old = [t for t in shown[:len(shown) - len(keep)]
           if t.session_id == f.session_id and t.ordinal > 0]
    if not old:
        return History(summary, tuple(shown))
    right, wrong = evidence(store, f.tenant, f.course, f.student, {_id(t) for t in old})
    words = max(25, int(SUMMARY * f.limit / 1.4))  # ~1.4 tokens a word
    digest = summarize(router, Fold(tuple(old), summary, right, wrong, words), log)
    stored = store.summaries.put(_merged(f, digest, [_id(t) for t in old]))
    return History(stored.text, tuple(t for t in shown if t not in old), len(old))


def _newest(turns: Sequence[Turn], limit: int, count: Callable[[str], int]) -> list[Turn]:
    """The newest turns whose history lines fit `limit` tokens (the last one always)."""
    kept: list[Turn] = []
    for turn in reversed(turns):
        if kept and count(format_history([turn, *kept], 1 << 30, count)) > limit:
            break
        kept.insert(0, turn)
    return kept


def _merged(f: FoldInput, digest: Digest, ids: list[str]) -> Summary:
    """The running summary with `digest` folded in (the rung never goes down)."""
    before = f.running
    level = digest.level
    if before and before.exercise_key == digest.exercise_key and before.level in RUNGS:
        level = max(level or "hint", before.level, key=RUNGS.index)
    return Summary(
        f.tenant, f.course, f.student, f.session_id, "running", digest.text,
        (*(before.turn_ids if before else ()), *ids),
        tuple(dict.fromkeys([*digest.topics, *(before.topics if before else ())]))[:6],
        digest.exercise_key or (before.exercise_key if before else ""),
        level or (before.level if before else ""))


def evidence(store: Store, tenant: str, course: str, student: str,
             ids: set[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Topics the student answered right and wrong in the turns `ids` (with the
    misconception where one was recorded: `store.mastery`)."""
    if not ids:
        return (), ()
    seen = [o for o in store.mastery.observations(tenant, course, student) if o.turn_id in ids]
    right = tuple(dict.fromkeys(o.topic for o in seen if o.correct))
    wrong = {o.topic: o.topic for o in seen if not o.correct}
    for w in store.mastery.weak_areas(tenant, course, student, active_only=False):
        if ids & set(w.turn_ids) and w.misconception:
            wrong[w.topic] = f"{w.topic} ({w.misconception})"
    return right, tuple(wrong.values())


def summarize_session(router: Router | None, store: Store, tenant: str, course: str,
                      session_id: str, log: list[CallRecord]) -> Summary | None:
    """Store the summary of a session's turns (its running summary and the turns after it);
    None when it has no turns. With no router the summary is extractive."""
    session = store.get_session(tenant, course, session_id)
    turns = store.list_turns(tenant, course, session_id)
    if not turns:
        return None
    running = store.summaries.get(tenant, course, session_id, "running")
    done = set(running.turn_ids) if running else set()
    rest = tuple(t for t in turns if _id(t) not in done)
    right, wrong = evidence(store, tenant, course, session.student, {_id(t) for t in turns})
    fold = Fold(rest, running.text if running else "", right, wrong, SESSION_WORDS)
    digest = summarize(router, fold, log) if router is not None else extractive(fold)
    key, level = last_exercise(turns)
    return store.summaries.put(Summary(
        tenant, course, session.student, session_id, "session", digest.text,
        tuple(_id(t) for t in turns), turn_topics(turns, 6), key, level))


def end_session(router: Router | None, store: Store, tenant: str, course: str,
                session_id: str, log: list[CallRecord]) -> Summary | None:
    """End the session and store its summary (None when it has no turns)."""
    store.end_session(tenant, course, session_id)
    return summarize_session(router, store, tenant, course, session_id, log)


def close_idle(router: Router | None, store: Store, tenant: str, course: str, student: str,
               session_id: str, idle_minutes: float, log: list[CallRecord]) -> list[Summary]:
    """End and summarize the student's other sessions in the course that ended or saw no turn
    for `idle_minutes`; the newest few by the model, the rest extractively."""
    idle_before = time.time() - idle_minutes * 60
    pending = store.summaries.pending(tenant, course, student, idle_before, exclude=session_id)
    written = []
    for i, sid in enumerate(pending):
        by_model = router if i >= len(pending) - MODEL_SESSIONS else None
        store.end_session(tenant, course, sid)
        summary = summarize_session(by_model, store, tenant, course, sid, log)
        if summary is not None:
            written.append(summary)
    return written
