"""Stage: write. The prompt's context under its token budget (the sources trimmed to what
bears on the question, the conversation folded into a summary when long, what the tutor
remembers of the student), the rung of the hint ladder for exercise help, and the model's
answer streamed as it comes (held back while its script is unsure, and whole for exercise
help, which is checked for a leaked result before the student sees any of it)."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Generator
from functools import partial

from ...llm import GenParams, Message
from ...retrieval.language import detect_language
from ...types import MetaEvent, StreamEvent, TokenEvent
from .. import prompts
from ..arithmetic import slips
from ..categorize import Categorization
from ..context import Budget, Context, build_context, render_sources, source_header
from ..exercise import current_exercise
from ..generate import Draft, stream_answer
from ..memory import notes
from ..pedagogy import (
    FROM_STEP,
    Level,
    level_hint,
    max_tokens,
    scaffold_level,
    task_prompt,
)
from ..remember import FoldInput, fold_history
from ..replies import language_name, reply
from ..reply_language import Gate, checked, gated
from ..tidy import begins_sentence, fills, first_sentences, tidy, whole_sentences
from ..tiers import live_block
from .find import Found
from .tools import Tools

# small models answer NOT_COVERED to "just give me the answer"; the exercise is in the sources
EXERCISE_REMINDER = ("The exercise is in the sources, so do not reply NOT_COVERED: help as the "
                     "task says, without the final answer.\n")
# the small models like to go on with an invented next question; cut them there
STOP = ("\nStudent:", "\nQuestion:", "\nNOT_COVERED", "\n\nNOT_COVERED")


@dataclasses.dataclass(frozen=True)
class Prompted:
    """The answer's prompt: its numbered sources and, for exercise help, the rung."""

    found: Found
    ctx: Context
    level: Level | None  # the rung of exercise help; None for other questions
    key: str  # the exercise helped with ("" when none)
    messages: tuple[Message, ...]
    laps: dict[str, float] = dataclasses.field(default_factory=dict)
    solution: str | None = None  # the exercise's hidden solution, once the plan read it
    step: str = ""  # the next step of that solution the hint is written from (plan.py)
    # the course's language when the reply is written in it, from the question as
    # translated, checked there and translated for the student (verify.py); else ""
    pivot: str = ""
    # help the project wrote from the step itself, which the model does not write: a hint
    # that is the step's `reason`, in the solution's own words (plan.py)
    prepared: str = ""
    reason: str = ""

    @property
    def buffered(self) -> bool:
        """Exercise help below the solution: checked whole before it is shown."""
        return self.level is not None and self.level != "solution"

    def written_as(self) -> tuple[Categorization, str]:
        """What the reply is written in and answers: the course's language and the question
        as translated into it when the reply pivots through it, else the student's."""
        f = self.found
        if not self.pivot:
            return f.cat, f.understood.recalled.opened.question
        return dataclasses.replace(f.cat, language=self.pivot), f.understood.translated

    @property
    def hidden(self) -> bool:
        """Nothing is shown while the model writes: exercise help (checked for a leak
        first), or a reply written in the course's language (translated once checked)."""
        return self.buffered or bool(self.pivot)


@dataclasses.dataclass(frozen=True)
class Written:
    """What the model wrote, and what of it the student has seen."""

    prompted: Prompted
    draft: Draft
    gate: Gate | None  # the script check the stream went through, when it did
    laps: dict[str, float] = dataclasses.field(default_factory=dict)


def prepare(tools: Tools, f: Found) -> Prompted:
    r, cat, ev = f.understood.recalled, f.cat, f.evidence
    o, ws = r.opened, tools.ws
    llm = tools.router.llm("answer")
    budget = Budget.split(tools.settings.context_budget_tokens or llm.default_context_budget)
    # exercise help needs the whole exercise; other questions only what bears on them
    refined = 0 if cat.intent == "exercise" else tools.settings.refine_context_tokens
    since = time.perf_counter()
    past = fold_history(tools.summarizer, ws.store, FoldInput(
        ws.tenant, o.course, o.student, o.session_id, r.history, r.memory.running,
        budget.history, tools.settings.summary_threshold), llm.count_tokens, tools.log)
    laps = {"summarize": _ms(since)} if past.folded else {}
    ctx = build_context(ev.hits, f.query, detect_language(f.query, cat.language), budget,
                        llm.count_tokens, past.turns, refined=refined, summary=past.summary,
                        translated=bool(f.understood.translated),
                        notes=notes(r.memory, ev.hits, budget.rest, llm.count_tokens))
    level: Level | None = None
    key = ""
    if cat.intent == "exercise":
        key = current_exercise(ev.hits, list(r.history), cat.category == "followup")
        earlier = ws.store.count_exercise_turns(ws.tenant, o.course, o.student,
                                                key) if key else 0
        level = scaffold_level(earlier, o.allow_solutions, cat.wants_answer)
    pivot = pivot_language(tools, f, ctx) if level is None else ""
    return Prompted(f, ctx, level, key, messages(tools, f, ctx, level, pivot=pivot), laps,
                    pivot=pivot)


def pivot_language(tools: Tools, f: Found, ctx: Context) -> str:
    """The course's language when the answer is written in it (`answer_across = "pivot"`):
    the question was translated into it for the search, and the first sources are all in
    it. The small model reads English slides and writes a correct English answer where its
    Korean one from the same slides is wrong, off-target or a refusal; its answer is then
    checked against the sources in their own language, which is the reliable check, and
    translated for the student last. "" when the answer is written in the student's
    language."""
    u = f.understood
    if tools.settings.answer_across != "pivot" or not u.translated or not u.translates:
        return ""
    first = [s.hit.chunk.language for s in ctx.sources[:3]]
    return u.searched if first and all(lang == u.searched for lang in first) else ""


def generate(tools: Tools, p: Prompted) -> Generator[StreamEvent, None, Written]:
    f, cat = p.found, p.found.cat
    o = f.understood.recalled.opened
    yield MetaEvent(o.session_id, cat.category, cat.intent, p.level or "", f.evidence.grade,
                    cat.language)
    if p.prepared:  # checked and shown whole like the model's help (verify.py)
        return Written(p, Draft(text=p.prepared), None)
    params = GenParams(temperature=tools.settings.llm_temperature,
                       max_tokens=max_tokens(p.level, tools.settings.llm_max_tokens), stop=STOP)
    # a reply in the wrong script is never shown: held until its first words tell
    gate = Gate() if checked(cat.language) and not p.hidden else None
    draft = Draft()
    pieces = stream_answer(tools.router, list(p.messages), params, tools.log, draft, o.started,
                           emit=not p.hidden,
                           deadline=o.started + tools.settings.answer_deadline_s,
                           enough=partial(_enough, p)
                           if p.buffered and p.level in SENTENCES else None)
    shown: float | None = None
    for piece in gated(pieces, cat.language, gate) if gate else pieces:
        shown = shown or time.perf_counter()
        yield TokenEvent(piece)
    laps = {}
    if draft.first_token_ms is not None and not p.hidden:
        laps["first_token"] = round(
            (shown - o.started) * 1000 if gate and shown else draft.first_token_ms, 1)
    return Written(p, draft, gate, laps)


def _enough(p: Prompted, text: str) -> bool:
    """Has the model written all of a hint (or guiding questions) that the student will be
    shown: as many sentences as the rung shows, once tidied? The model writes on to its
    token limit (2-3 s more on 2 cores) to have all but the first two cut (verify.py)."""
    assert p.level in SENTENCES  # only these rungs are cut to their first sentences
    if not begins_sentence(text):
        return False
    cat, asked = p.written_as()
    return fills(tidied(text, asked, p.ctx, cat, p.level), SENTENCES[p.level])


# a rung's help is this many sentences at most (its task asks for one or two, or for two or
# three questions): a small model goes on with a lead-in and a list the token limit cuts
SENTENCES: dict[str, int] = {"hint": 2, "guiding": 3}


def short(text: str, level: Level) -> str:
    """A rung's checked help without a last sentence cut off, within its length."""
    text = whole_sentences(text.strip())
    return first_sentences(text, SENTENCES[level]) if level in SENTENCES else text


def tidied(text: str, question: str, ctx: Context, cat: Categorization,
           level: Level | None) -> str:
    """The reply without echoes, copied source lists, parroted instructions or loops; the
    three best passages when nothing else is left."""
    # what a copied "source list" can be made of: the headers and any path-like line
    headers = [source_header(s.number, s.hit) for s in ctx.sources] + [
        line for s in ctx.sources for line in s.text.splitlines() if _path_like(line)]
    # the instructions a reply may parrot: the task's, and a rung's task from its step
    # ("Ecco i passaggi che il studente dovrebbe seguire, uno per riga, parlando
    # direttamente a loro …", step_steps.txt translated)
    tasks = [prompts.load(task_prompt(cat.intent, level, cat.about_exercise)),
             prompts.load("system")]
    if level in FROM_STEP:
        tasks.append(prompts.load(f"step_{level}"))
    written = tidy(text, question, headers, tuple(tasks), cat.language)
    if text and not written and ctx.sources:
        written = reply("passages", cat.language) + " " + " ".join(
            f"[{s.number}]" for s in ctx.sources[:3])
    return written


def _path_like(line: str) -> bool:
    """A line of a passage that reads like a section path ("Notes > 5 Series > 5.2"), not
    maths that has a "greater than" in it ("step size α > 0 with x = ...")."""
    return line.count(" > ") >= 2 or (" > " in line and not any(c in line for c in "=<≤≥∇∑∫"))


def messages(tools: Tools, f: Found, ctx: Context, level: Level | None,
             pivot: str = "") -> tuple[Message, ...]:
    """The answer's prompt: the task of the intent (or rung), the sources and what the tutor
    remembers (a hint that knows the solution's next step has a prompt of its own: plan.py).
    With a `pivot` language the question is given as translated into it, and answered in it."""
    r, cat = f.understood.recalled, f.cat
    o = r.opened
    language = pivot or cat.language
    history = f"\nEarlier in this conversation:\n{ctx.history}\n" if ctx.history else ""
    memory = f"\n{ctx.notes}\n" if ctx.notes else ""
    user = prompts.render(
        "answer", sources=live_block(o.live) + render_sources(ctx.sources,
                                                              tools.settings.context_maths),
        history=history, memory=memory,
        task=prompts.load(task_prompt(cat.intent, level, cat.about_exercise)),
        level=r.level, level_hint=level_hint(r.level), language=language_name(language),
        question=f.understood.translated if pivot else o.question,
        reminder=EXERCISE_REMINDER if level else "",
        native=native_instruction(language), reference=tools.reuse.reference(),
        mistakes=mistakes(o.question),
    )
    return Message("system", prompts.load("system")), Message("user", user)


def mistakes(message: str) -> str:
    """A line for the prompt naming the computations of the student's message that do not
    hold ("70 divided by 3 is equal to 24"): the small model repeated them as true."""
    found = slips(message)
    if not found:
        return ""
    return "\n" + prompts.render("wrong_sum", sums="; ".join(e.text for e in found[:3])) + "\n"


def native_instruction(language: str) -> str:
    """The reply-language instruction again, written in that language: small models answer
    Chinese or Korean questions about an English course in English without it."""
    line = reply("reply_language", language)
    return f"\n{line}" if line else ""


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 1)
