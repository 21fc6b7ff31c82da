"""The guard on exercise help: a reply that gives the result away or breaks its rung's contract
is rewritten once with what is wrong named, then cut back to the sentences that hold; only
when nothing of it holds does the rung's own fixed help stand in. Never a blank refusal."""

from __future__ import annotations

import dataclasses

from ..llm import GenParams, Message
from ..llm.router import CallRecord, Router
from . import prompts
from .citations import MARKER
from .leak import final_answers, stated_finals
from .pedagogy import LADDER, Level, task_prompt
from .replies import reply
from .rungs import (
    RungFacts,
    Violation,
    check,
    cite,
    contract_lines,
    cut_back,
    says_something,
)
from .tidy import whole_sentences

REWRITE_TOKENS = 320


@dataclasses.dataclass(frozen=True)
class Guarded:
    """The reply the student sees, and how it got there."""

    text: str
    found: tuple[Violation, ...] = ()  # what the model's reply broke
    rewritten: bool = False  # the model was asked once to rewrite it
    cut: bool = False  # sentences were taken out
    fallback: bool = False  # nothing held: the rung's fixed help


def facts_for(exercise: str, solution: str, student: str = "", shown: str = "",
              course: str = "", reason: str = "") -> RungFacts:
    """What the replies on one exercise are checked against (`course`: the passages shown
    from other documents than the exercise's; `reason`: the solution's words a hint shows
    by design, reason.py)."""
    answers = tuple(final_answers(solution, exercise)[:8]) if solution else ()
    return RungFacts(exercise=exercise, student=student, shown=shown, answers=answers,
                     solution=solution, results=tuple(stated_finals(solution)[:4]),
                     course=course, reason=reason)


def fallback_help(level: Level, language: str, number: int | None) -> str:
    """The rung's own fixed help in the student's language, citing the exercise."""
    marker = f" [{number}]" if number is not None else ""
    return reply(f"rung_{level}", language, cite=marker)


def is_fallback(text: str, level: str, language: str) -> bool:
    """Is `text` the rung's own fixed help (whatever exercise it cites, after the line that
    names the student's slip, if any)? For the eval: how often a rung had nothing of the
    model's to show."""
    if level not in LADDER or level == "solution":  # the solution rung has no fixed help
        return False

    def plain(said: str) -> str:
        return "".join(MARKER.sub("", said).split())

    return plain(text).endswith(plain(reply(f"rung_{level}", language, cite="")))


def guard_rung(router: Router, level: Level, text: str, facts: RungFacts, language: str,
               number: int | None, log: list[CallRecord]) -> Guarded:
    """`text` when it keeps `level`'s contract; its questions when it only ends on a
    statement after them; else a rewrite that keeps the contract; else the sentences of the
    rewrite (or of `text`) that hold; else the rung's fixed help. The result cites
    source `number` (the exercise). An empty `text` gets the rung's fixed help at once."""
    if not text.strip():
        return Guarded(fallback_help(level, language, number), fallback=True)
    found = check(level, text, facts)
    if not found:
        return Guarded(cite(text, number))
    # guiding questions and then a closing remark ("These questions will help you …"): the
    # questions are the help, and a rewrite (8 s on 2 cores) gave the rung's fixed help
    if all(v.rule == "ends_in_statement" for v in found) and (
            kept := cut_back(level, text, facts)):
        return Guarded(cite(kept, number), found, cut=True)
    prompt = prompts.render(
        "leak_rewrite", task=prompts.load(task_prompt("exercise", level)),
        exercise=facts.exercise[:800], problems=contract_lines(found), reply=text)
    rewritten = router.complete("answer", [Message("user", prompt)],
                                GenParams(temperature=0.0, max_tokens=REWRITE_TOKENS),
                                log).text.strip()
    rewritten = whole_sentences(rewritten)  # a rewrite cut at its token limit
    if says_something(rewritten) and not check(level, rewritten, facts):
        return Guarded(cite(rewritten, number), found, rewritten=True)
    kept = (cut_back(level, rewritten, facts) if rewritten else "") or cut_back(level, text, facts)
    if kept:
        return Guarded(cite(kept, number), found, rewritten=True, cut=True)
    return Guarded(fallback_help(level, language, number), found, rewritten=True,
                   fallback=True)
