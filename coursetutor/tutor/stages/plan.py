"""Stage: plan. Exercise help below the solution reads the exercise's hidden worked
solution and what the student wrote, finds the next step they have not taken
(next_step.py: its computed numbers masked) and puts it in the prompt, so the hint names
this exercise's next concrete step, not a generic "reread the exercise". The solution
read here is the one the leak check (verify) holds the reply against."""

from __future__ import annotations

import dataclasses

from .. import prompts
from ..exercise import exercise_hit, solution_text
from ..next_step import Step, next_step
from .tools import Tools
from .write import Prompted, messages

# the rungs that point at a step; an analogous example uses other numbers and another
# function, and the solution rung has the whole solution in its sources anyway
RUNGS = ("hint", "guiding", "steps")


def applies(tools: Tools, p: Prompted) -> bool:
    return tools.settings.hint_next_step and p.level in RUNGS and bool(p.key)


def plan(tools: Tools, p: Prompted) -> Prompted:
    f = p.found
    hit = exercise_hit(f.evidence.hits)
    solution = solution_text(tools.ws, f.understood.recalled.opened.course, hit) if hit else ""
    if not hit or not solution:
        return dataclasses.replace(p, solution=solution)
    # the exercise as the sheet states it: every passage of its document that was found (a
    # solution restates its data, which then is no step)
    stated = "\n".join(h.chunk.text for h in f.evidence.hits
                       if h.chunk.document_id == hit.chunk.document_id)
    step = next_step(solution, stated, f.understood.student_said, f.cat.language)
    if step is None:
        return dataclasses.replace(p, solution=solution)
    return dataclasses.replace(p, solution=solution, messages=messages(
        tools, f, p.ctx, p.level, render(step, whole=p.level == "steps")))


def render(step: Step, whole: bool = False) -> str:
    """The prompt's lines for `step`: the next one alone for a hint or guiding questions,
    the ones after it too for the steps rung."""
    lines = [step.text, *(step.later if whole else ())]
    numbered = "\n".join(f"{step.number + n}. {line}" for n, line in enumerate(lines))
    return prompts.render("next_step", steps=numbered, number=str(step.number),
                          total=str(step.total))
