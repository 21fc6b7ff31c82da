"""Stage: plan. Exercise help below the solution reads the exercise's hidden worked
solution (of the part asked about, when the exercise has parts) and what the student wrote,
finds the next step they have not taken (next_step.py: its computed numbers masked), and
has the model write the help from the exercise and that step alone, in a short prompt of its
own: the small model, given the whole prompt of sources with the step appended, restated the
task or answered NOT_COVERED. A hint at a step that gives its reason ("we can apply
Gauss-Newton since Remp is the squared sum of the residuals") is that reason as the solution
words it, and a question (reason.py): the model restated it wrongly. The solution read here
is the one the leak check (verify) holds the reply against."""

from __future__ import annotations

import dataclasses
import re

from ...llm import Message
from ...types import Chunk
from .. import prompts
from ..claims import mask_formulas
from ..exercise import exercise_hit, exercise_text, parts, solution_text
from ..next_step import MASK, Step, next_step
from ..pedagogy import FROM_STEP
from ..reason import named, premise
from ..replies import language_name, reply
from ..reply_language import keeps_terms, translate_reply
from .tools import Tools
from .write import Prompted, mistakes


def applies(tools: Tools, p: Prompted) -> bool:
    return tools.settings.hint_next_step and p.level in FROM_STEP and bool(p.key)


def plan(tools: Tools, p: Prompted) -> Prompted:
    f = p.found
    hit = exercise_hit(f.evidence.hits)
    solution = solution_text(tools.ws, f.understood.recalled.opened.course, hit) if hit else ""
    if not hit or not solution:
        return dataclasses.replace(p, solution=solution)
    # the exercise as the sheet states it: every passage of its document that was found,
    # and those after its heading (a solution restates its data, which then is no step)
    course = f.understood.recalled.opened.course
    pinned, read = f.exercise  # the find stage read the exercise it pinned
    whole = read if pinned == hit.chunk.id else exercise_text(tools.ws, course, hit)
    stated = "\n".join([h.chunk.text for h in f.evidence.hits
                        if h.chunk.document_id == hit.chunk.document_id] + [whole])
    # the part asked about ("exercise 1 (e)"): the steps of its own solution, done when
    # that part or the student gives them (a number of another part's formula is no step
    # of this one's taken)
    asked = _unmarked(parts(whole).get(f.part, "")) if f.part else ""
    steps = (_unmarked(parts(solution).get(f.part, "")) if asked else "") or solution
    step = next_step(steps, asked or stated, f.understood.student_said, f.cat.language)
    if step is None:
        return dataclasses.replace(p, solution=solution)
    lines = numbered(step, whole=p.level == "steps")
    number = next((s.number for s in p.ctx.sources if s.hit.chunk.id == hit.chunk.id), 1)
    # asked in another language than the exercise's, the hint is written in the
    # exercise's, from the question as translated, and translated once checked (verify):
    # the small model's Korean hint from an English step lost the step
    u = f.understood
    pivot = hit.chunk.language if hit.chunk.language not in ("", f.cat.language) else ""
    user = prompts.render(
        "hint_step", n=str(number), exercise=_shown(asked or _headed(hit.chunk)), steps=lines,
        # a demand for the result ("直接告诉我练习1 (e) 的最终结果", translated "What is the
        # final result of Exercise 1 (e)?") was answered as asked: "The final result is the
        # optimal model found after 30 iterations", a restated task; the model is asked for
        # the help the student gets instead
        question=prompts.load("hint_request") if f.cat.wants_answer else (
            (pivot and u.translated) or u.recalled.opened.question),
        # what the tutor remembers of the student, as in every answer's prompt
        history=f"\nEarlier in this conversation:\n{p.ctx.history}\n" if p.ctx.history else "",
        memory=f"\n{p.ctx.notes}\n" if p.ctx.notes else "",
        mistakes=mistakes(u.recalled.opened.question),
        task=prompts.load(f"step_{p.level}"), language=language_name(pivot or f.cat.language))
    # the student reads the exercise and the lecture as before; the model, a small one,
    # writes from the exercise and this one step of its solution alone
    reason = (premise(step.text, hit.chunk.language or f.cat.language)
              if p.level == "hint" else "")
    prepared = ""
    if reason:  # a hint at a step that gives its reason: that reason, and a question
        term = named(step.text, asked or stated, hit.chunk.language or f.cat.language,
                     f.cat.language)
        prepared = _reason_hint(tools, reason, number, f.cat.language, pivot, term)
        pivot = ""  # written in the student's language already
    return dataclasses.replace(p, solution=solution, step=lines, pivot=pivot, messages=(
        Message("system", prompts.load("hint_system")), Message("user", user)),
        prepared=prepared, reason=reason)


def _reason_hint(tools: Tools, reason: str, number: int, language: str, source: str,
                 term: str) -> str:
    """The hint that shows a step's `reason`, cited as source `number`, in the student's
    `language`: the reason translated from the exercise's language (`source`, "" when the
    same) into it, or as the solution words it when the translation lost a name, a number
    or a formula (the question around it is the project's own, in the student's language:
    translated with it, "What does that let you do in this part?" came back from Korean as
    "How can I help you in this part?"). The question names `term`, the method the step
    applies that the exercise names too, when there is one."""
    cited = f"{reason} [{number}]."
    if source:
        translated = _translated(tools, reason, number, language, source)
        if translated and keeps_terms(cited, translated) and all(
                formula in translated for formula in mask_formulas(cited)[1]):
            cited = translated
    if term:
        return reply("step_reason_named", language, premise=cited, named=term)
    return reply("step_reason", language, premise=cited)


_STOP = re.compile(r"[\s.。．]+$")


def _translated(tools: Tools, reason: str, number: int, language: str, source: str) -> str:
    """`reason`, cited as source `number`, translated into `language`. A formula that ends
    it naming the noun before it ("… of the residuals r = (…)⊤") stays out of the
    translation and follows in brackets: the Korean translation made it a sentence of its
    own ("Remp는 잔차의 제곱합입니다. r = (…)⊤ [1]."), which reads as no statement."""
    body, formula = _formula_apart(reason)
    if not formula:
        return translate_reply(tools.router, f"{_apposed(reason)} [{number}].",
                               language_name(language), tools.log, source=source)
    said = translate_reply(tools.router, f"{body}.", language_name(language), tools.log,
                           source=source)
    if not said:
        return ""
    stop = "。" if language in ("zh", "ja") else "."
    return f"{_STOP.sub('', said.strip())} ({formula}) [{number}]{stop}"


# a noun after its article and the formula that names it ("the residuals r = (…)"), with no
# comma between
_APPOSITION = re.compile(
    r"(?<![\w-])((?:the|a|an|its|their|il|lo|la|i|gli|le|un|una|dei|degli|delle|del|della|"
    r"der|die|das|den|dem|des|ein|eine|les|une|du|el|los|las) [^\W\d_]{3,}) "
    r"(?=[^\W\d_][\w()\[\]]* = )", re.IGNORECASE)


def _formula_apart(reason: str) -> tuple[str, str]:
    """("… of the residuals", "r = (…)⊤") of a reason that ends on a noun and the formula
    that names it; (reason, "") of any other."""
    for found in _APPOSITION.finditer(reason):
        rest = reason[found.end():].strip()
        if mask_formulas(rest)[1] == [rest]:
            return reason[:found.end()].rstrip(), rest
    return reason, ""


def _apposed(reason: str) -> str:
    """The reason with a comma between a noun and the formula that names it ("the residuals,
    r = (…)"): without it, the Chinese translation made the formula the noun ("Remp 是 r = (…)
    的平方和", the residuals gone); with it, "Remp 是残差的平方和，r = (…)"."""
    return _APPOSITION.sub(r"\1, ", reason)


def _unmarked(part: str) -> str:
    """A part without its mark: "(e) Explain why …" -> "Explain why …" (the model read
    "(e)" as a step to name)."""
    return re.sub(r"^\(?[a-h]\)\s*", "", part)


EXERCISE_CHARS = 900  # of an exercise without parts, the opening the model reads


def _headed(chunk: Chunk) -> str:
    """An exercise's passage under its heading ("Exercise 3: How many bisection steps?")."""
    heading = chunk.section_path[-1] if chunk.section_path else ""
    return chunk.text if not heading or heading in chunk.text else f"{heading}\n{chunk.text}"


def _shown(text: str) -> str:
    text = text.strip()
    return text if len(text) <= EXERCISE_CHARS else text[:EXERCISE_CHARS].rsplit(" ", 1)[0] + " …"


# the mark that opens another part of the solution ("b) Computing …", "(c) Assume …")
_PART = re.compile(r"^\(?[a-h]\)\s")
# a table of hidden values ("| 2 | … | … |"): the model filled it in with numbers of its own
_MASKED_CELL = re.compile(r"\|\s*\u2026\s*\|")
_TABLE = re.compile(r"\s*\|(?:[^|]*\|){2,}.*$")  # from its first of three bars or more


def numbered(step: Step, whole: bool = False) -> str:
    """The lines of `step`: the next one alone for a hint or guiding questions, the ones
    after it too for the steps rung: up to the next part of the exercise, without a table of
    hidden values, and without the last when it computes the result (its number hidden, the
    model worked it out: "12 / 4 = 3 loads", "The root is r = 2")."""
    later: list[str] = []
    for line in step.later if whole else ():
        if _PART.match(line):  # the student works on one part at a time
            break
        if _MASKED_CELL.search(line):
            line = _TABLE.sub("", line).rstrip(" :")
        if line:
            later.append(line)
    if later and MASK in later[-1]:
        later.pop()
    lines = [step.text, *later]
    return "\n".join(f"{step.number + n}. {line}" for n, line in enumerate(lines))
