"""The answer-leak guard on exercise help: rewrite a reply that gives the result away, or
withhold it."""

from __future__ import annotations

from ..llm import GenParams, Message
from ..llm.router import CallRecord, Router
from . import prompts
from .leak import final_answers, reveals
from .replies import reply


def guard_leak(router: Router, text: str, solution: str, exercise: str, language: str,
               log: list[CallRecord]) -> str:
    """`text` if it reveals nothing; else a rewrite that does not; else a withholding reply."""
    if not solution or not reveals(text, solution, exercise):
        return text
    answers = ", ".join(final_answers(solution, exercise)[:8]) or "the result"
    prompt = prompts.render("leak_rewrite", answer=answers, reply=text)
    rewritten = router.complete("answer", [Message("user", prompt)],
                                GenParams(temperature=0.0, max_tokens=320), log).text.strip()
    if rewritten and not reveals(rewritten, solution, exercise):
        return rewritten
    return reply("withheld", language)
