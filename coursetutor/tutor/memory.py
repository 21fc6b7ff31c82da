"""What the tutor remembers of a student beyond this session's recent turns.

At the start of a turn `recall` reads this session's running summary, the student's last
session summaries in the course and what their profile says (level, learning style, goals and
weak areas). `notes` turns that into the lines the prompt's "rest" budget holds, the ones
about the question's topic first; `recap` answers "what did we do last time?" from the
summaries, and `bridge` lets "let's continue with that exercise" in a new session find the
exercise the last one ended on.
"""

from __future__ import annotations

import dataclasses
import datetime
import re
from collections.abc import Callable, Sequence

from ..errors import NotFoundError
from ..llm.router import CallRecord, Router
from ..memory.adaptive import profile_view
from ..retrieval.adaptive import ProfileView
from ..store import Store
from ..store.base import LearnerState
from ..store.summaries import Summary
from ..types import Hit, Turn
from .remember import close_idle
from .summary import exercise_name

# "what did we do last time?", "where did we stop?", in the tutor's languages: a question about
# what was done, with a word for when ("recap the bisection method" is a course question)
_WHAT = re.compile(
    r"\b(what (did|have) we (do|done|cover|covered|discuss|discussed|study|studied|talk about|"
    r"talked about|work on|worked on)|what were we (doing|working on)|remind me what we|recap|"
    r"summary of|cosa abbiamo (fatto|visto|studiato)|di cosa abbiamo parlato|riassunto|"
    r"was haben wir|qu'est-ce qu'on a fait|qu'avons-nous fait|r[ée]sum[ée]|qu[eé] hicimos|"
    r"resumen)\b", re.IGNORECASE)
_WHEN = re.compile(
    r"\b(last time|last session|last week|yesterday|previous session|before|so far|"
    r"l'ultima volta|la volta scorsa|ieri|letztes mal|gestern|la derni[eè]re fois|"
    r"la [uú]ltima vez|ayer)\b", re.IGNORECASE)
_LEFT_OFF = re.compile(
    r"\b(where (did|were) we (leave|left|stop|stopped)|where we left off|dove eravamo rimasti|"
    r"wo waren wir stehen ?geblieben|o[uù] en [ée]tions-nous|d[oó]nde lo dejamos)\b"
    r"|上次.*(做|学|讲)了什么|지난번에?.*(했|배웠)|前回.*何", re.IGNORECASE)
# a new session's question that goes on with the last one: "let's continue with that exercise"
_BACK = re.compile(
    r"\b(continue|continuing|go on with|carry on|pick up where|resume|where we (left|stopped)|"
    r"last time|(that|the same|the last|the previous|my|our) exercise|yesterday|last session|"
    r"continuiamo|riprendiamo|l'ultima volta|quell'esercizio|machen wir weiter|weitermachen|"
    r"letztes mal|continuons|reprenons|la derni[eè]re fois|continuemos|sigamos|"
    r"la [uú]ltima vez)\b|继续|上次|계속|지난번|続き|前回", re.IGNORECASE)
RECAP_SESSIONS = 2  # session summaries a recap and the prompt read at most
DEFAULT_LEVEL = 3  # the level a request gets when it names none


@dataclasses.dataclass(frozen=True)
class Weak:
    """A recorded misconception of the student."""

    topic: str
    misconception: str


@dataclasses.dataclass(frozen=True)
class Learner:
    """What the student's profile tells the answer: all empty when nothing is stored."""

    level: int = 0  # 1-5; 0: not set
    style: str = ""  # "examples first", "theory first", "step by step"
    goals: str = ""
    weak: tuple[Weak, ...] = ()  # strongest first


@dataclasses.dataclass(frozen=True)
class Recall:
    """The memory a turn starts with."""

    running: Summary | None = None  # this session's running summary
    earlier: tuple[Summary, ...] = ()  # the last session summaries, newest first
    learner: Learner = Learner()
    bridge: tuple[Turn, ...] = ()  # the last session's turns this question goes on from
    level: int = DEFAULT_LEVEL  # the level to answer at
    # what the search's profile rerank knows of them
    view: ProfileView = dataclasses.field(default_factory=ProfileView)


@dataclasses.dataclass(frozen=True)
class TurnStart:
    """A turn about to run, as the memory sees it."""

    tenant: str
    course: str
    student: str
    session_id: str
    question: str
    history: tuple[Turn, ...]
    level: int  # the level the request asked for
    fresh: bool  # the session opened with this turn
    idle_minutes: float


def start_turn(store: Store, router: Router | None, t: TurnStart,
               log: list[CallRecord]) -> Recall:
    """The memory of a turn. A turn that opens a session first ends and summarizes the
    student's sessions that went idle; then the student is read once (profile, mastery,
    summaries); a question going on from the last session gets its last turns; the
    profile's level applies unless the request asked for another."""
    if t.fresh:
        close_idle(router, store, t.tenant, t.course, t.student, t.session_id, t.idle_minutes,
                   log)
    memory = recall(store.learner_state(t.tenant, t.course, t.student, t.session_id,
                                        RECAP_SESSIONS + 1), t.session_id)
    goes_on = refers_back(t.question) and not any(h.exercise_key for h in t.history)
    return dataclasses.replace(
        memory, bridge=tuple(bridge(store, memory.earlier)) if goes_on else (),
        level=t.level if t.level != DEFAULT_LEVEL else memory.learner.level or t.level)


def recall(state: LearnerState, session_id: str, sessions: int = RECAP_SESSIONS) -> Recall:
    """This session's running summary, the student's last session summaries and profile."""
    earlier = [s for s in state.latest if s.session_id != session_id][:sessions]
    return Recall(state.running, tuple(earlier), learner(state), view=profile_view(state))


def learner(state: LearnerState) -> Learner:
    """The profile's level, style and goals and the active weak areas, strongest first."""
    p = state.profile
    return Learner(p.level, p.style, p.goals, tuple(
        Weak(w.topic, w.misconception) for w in state.weak if w.misconception))


def asks_recap(question: str) -> bool:
    """True for "what did we do last time?" and the like."""
    return bool(_LEFT_OFF.search(question)
                or (_WHAT.search(question) and _WHEN.search(question)))


def refers_back(question: str) -> bool:
    """True for a question that goes on with an earlier session ("let's continue")."""
    return bool(_BACK.search(question))


def recap(earlier: Sequence[Summary], lead: Callable[[str], str]) -> str:
    """The last sessions' summaries, oldest first, each after `lead(date)`."""
    return "\n\n".join(f"{lead(_date(s.updated))} {_with_exercise(s)}"
                       for s in reversed(earlier))


def bridge(store: Store, earlier: Sequence[Summary], last: int = 2) -> list[Turn]:
    """The last turns of the latest summarized session, so a new session can go on with its
    exercise; a turn rebuilt from the summary when those turns are gone."""
    if not earlier:
        return []
    s = earlier[0]
    try:
        turns = store.list_turns(s.tenant, s.course, s.session_id, last=last)
    except NotFoundError:  # the session itself is gone; its summary stays
        turns = []
    if turns or not s.exercise_key:
        return turns
    return [Turn(s.session_id, 0, s.tenant, s.course, s.student, exercise_name(s.exercise_key),
                 "", "lecture", "exercise", "correct", s.level, s.exercise_key)]


def notes(memory: Recall, hits: Sequence[Hit], limit: int, count: Callable[[str], int]) -> str:
    """The memory lines of the prompt, within `limit` tokens: misconceptions on the question's
    topic, the learning style and goals, then the last sessions."""
    lines: list[str] = []
    about = " ".join(" ".join((h.chunk.topic, h.chunk.document_title, *h.chunk.section_path))
                     for h in hits).casefold()
    weak = sorted(memory.learner.weak, key=lambda w: w.topic.casefold() not in about)
    for w in weak[:2]:
        lines.append(f"- Earlier answers showed this misconception on {w.topic}: "
                     f"{w.misconception} If the question touches it, address it directly.")
    if memory.learner.style:
        lines.append(f"- The student prefers {memory.learner.style}.")
    if memory.learner.goals:
        lines.append(f"- The student's goal: {memory.learner.goals}")
    for s in memory.earlier:
        lines.append(f"- Session of {_date(s.updated)}: {_with_exercise(s)}")
    kept: list[str] = []
    used = count("About this student:")
    for line in lines:
        cost = count(line)
        if used + cost <= limit:
            kept.append(line)
            used += cost
    return "About this student:\n" + "\n".join(kept) if kept else ""


def _with_exercise(s: Summary) -> str:
    """The summary, naming its last exercise and rung when its text does not."""
    if not s.exercise_key or exercise_name(s.exercise_key) in s.text:
        return s.text
    return f"{s.text} (Last exercise: {exercise_name(s.exercise_key)}, {s.level or 'hint'} rung.)"


def _date(stamp: float) -> str:
    return datetime.datetime.fromtimestamp(stamp, datetime.UTC).strftime("%Y-%m-%d")
