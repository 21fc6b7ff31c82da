"""One turn of the tutor: categorize, retrieve, grade, build the context, teach, check."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator, Sequence

from ..config import summaries_by_model
from ..errors import EmptyQueryError, InputError, NotFoundError
from ..live.progress import ClassProgress, class_progress
from ..live.rewrite import with_progress
from ..llm import GenParams, Message
from ..llm.router import CallRecord, Router
from ..retrieval.glossary import has_glossary
from ..retrieval.language import detect_language, search_language
from ..student.adaptive import reranker
from ..student.profile import record_turn_topics
from ..types import (
    DOC_TYPES,
    Answer,
    Citation,
    DocType,
    DoneEvent,
    MetaEvent,
    SourcesEvent,
    StreamEvent,
    TokenEvent,
    Turn,
)
from ..workspace import Workspace
from . import prompts
from .categorize import Categorization, categorize_rules, parse_llm_categorization
from .check import AnswerChecker, CheckInput, CheckResult, model_judge
from .citations import check_citations, section_of, snippet, to_citation
from .context import Budget, Context, build_context, render_sources, source_header
from .diagnosis import DiagnoseInput, after_done
from .evidence import Evidence, EvidenceFinder
from .exercise import current_exercise, exercise_hit, find_exercise, solution_text
from .generate import Draft, stream_answer
from .guard import facts_for, fallback_help, guard_rung
from .markers import content_brackets, marker_spans
from .memory import Recall, TurnStart, asks_recap, notes, recap, start_turn
from .pedagogy import Level, level_hint, max_tokens, scaffold_level, task_prompt
from .remember import FoldInput, fold_history
from .replies import language_name, reply
from .reply_language import Gate, checked, gated, in_script, translate_reply
from .reuse import AnswerReuse
from .rewrite import rewrite_followup, translate_query
from .tidy import tidy
from .tiers import live_block, tier_of, with_tiers

ANSWERED = ("lecture", "followup")
# small models answer NOT_COVERED to "just give me the answer"; the exercise is in the sources
EXERCISE_REMINDER = ("The exercise is in the sources, so do not reply NOT_COVERED: help as the "
                     "task says, without the final answer.\n")
# the small models like to go on with an invented next question; cut them there
STOP = ("\nStudent:", "\nQuestion:", "\nNOT_COVERED", "\n\nNOT_COVERED")


@dataclasses.dataclass
class TurnState:
    """Working state of one turn."""

    question: str
    course: str
    student: str
    session_id: str
    level: int
    started: float
    history: list[Turn]
    allow_solutions: bool
    log: list[CallRecord] = dataclasses.field(default_factory=list)
    timings: dict[str, float] = dataclasses.field(default_factory=dict)
    reuse: AnswerReuse | None = None  # the reuse stage of this turn (tutor/reuse.py)
    live: ClassProgress | None = None  # the class in progress, when asked during one
    tier: str = ""  # during a class: the tier its passages came from
    translated: str = ""  # the question as translated for the search, else ""
    fresh: bool = False  # the session opened with this turn
    memory: Recall = dataclasses.field(default_factory=Recall)

    def lap(self, stage: str, since: float) -> float:
        now = time.perf_counter()
        self.timings[stage] = round((now - since) * 1000, 1)
        return now


class Tutor:
    """Answers students' questions from one workspace's courses."""

    def __init__(self, workspace: Workspace, router: Router | None = None) -> None:
        self.ws = workspace
        self.settings = workspace.settings
        self.router = router or Router(workspace.settings)

    def ask(self, question: str, course: str, student: str = "anonymous",
            session_id: str | None = None, level: int = 3,
            class_id: str | None = None) -> Answer:
        """Run one turn and return the whole answer."""
        answer: Answer | None = None
        for event in self.stream(question, course, student, session_id, level,
                                 class_id=class_id):
            if isinstance(event, DoneEvent):
                answer = event.answer
        assert answer is not None  # stream always ends with DoneEvent
        return answer

    def stream(self, question: str, course: str, student: str = "anonymous",
               session_id: str | None = None, level: int = 3,
               history: Sequence[Turn] | None = None,
               class_id: str | None = None) -> Iterator[StreamEvent]:
        """Run one turn as events: meta, tokens, sources, and always a final done.

        `history` replaces the stored session's earlier turns (a client that keeps the
        conversation itself, like an OpenAI-style chat client); `class_id` asks during
        that class of the course (tiers.py: its passages first, labelled).
        """
        turn = self.open(question, course, student, session_id, level, history, class_id)
        yield from self.run(turn)

    def open(self, question: str, course: str, student: str = "anonymous",
             session_id: str | None = None, level: int = 3,
             history: Sequence[Turn] | None = None,
             class_id: str | None = None) -> TurnState:
        """Check the question, course, session and backend, and start the turn: every error
        a caller can act on is raised here, before any work is queued or streamed."""
        turn = self._open(question, course, student, session_id, level)
        if history is not None:
            turn.history = list(history)[-self.settings.history_turns:]
        if class_id:  # an unknown class is a NotFoundError, raised before streaming
            turn.live = class_progress(self.ws.store, self.ws.tenant, course, class_id)
        return turn

    def run(self, turn: TurnState) -> Iterator[StreamEvent]:
        """The events of a turn `open` started; once the done event is out, what the
        student's own work showed is diagnosed (mastery, weak areas: diagnosis.py)."""
        events = AnswerReuse.attach(self.ws, turn).around(self._run(turn))
        yield from after_done(events, self.ws, self.router, turn.log, DiagnoseInput(
            turn.course, turn.student, turn.session_id, turn.question, _last_reply(turn)))

    # -- set-up and validation (errors here are raised before anything streams) ------------
    def _open(self, question: str, course: str, student: str, session_id: str | None,
              level: int) -> TurnState:
        question = question.strip()
        if not question:
            raise EmptyQueryError("the question is empty")
        if len(question) > self.settings.max_question_chars:
            raise InputError(
                f"the question has {len(question)} characters; the limit is "
                f"{self.settings.max_question_chars} (max_question_chars): shorten it"
            )
        if not student.strip():
            raise InputError("the student id is empty")
        info = self.ws.store.get_course(self.ws.tenant, course)
        if info.chunks == 0:
            raise NotFoundError(f"course {course!r} has no documents yet: ingest some first")
        if self.router.enabled:
            self.router.llm("answer")  # load the model or reach the server before streaming
        if session_id:
            session = self.ws.store.get_session(self.ws.tenant, course, session_id)
            if session.student != student:
                raise NotFoundError(f"session {session_id!r} does not exist")
        else:
            session = self.ws.store.start_session(self.ws.tenant, course, student)
        history = self.ws.turns.recent(self.ws.store, self.ws.tenant, course, session.id,
                                       self.settings.history_turns)
        return TurnState(question, course, student, session.id, level, time.perf_counter(),
                     history, info.allow_solutions, fresh=not session_id)

    # -- the pipeline -----------------------------------------------------------------------
    def _run(self, t: TurnState) -> Iterator[StreamEvent]:
        t.memory = start_turn(self.ws.store, self.summarizer, TurnStart(
            self.ws.tenant, t.course, t.student, t.session_id, t.question, tuple(t.history),
            t.level, t.fresh, self.settings.session_idle_minutes), t.log)
        t.history, t.level = [*t.memory.bridge, *t.history], t.memory.level
        since = t.lap("memory", t.started)
        language = self.ws.store.course_language(self.ws.tenant, t.course)
        cat = categorize_rules(t.question, bool(t.history), language)
        since = t.lap("categorize", since)
        if t.memory.earlier and asks_recap(t.question):
            yield from self._canned(t, cat, recap(
                t.memory.earlier, lambda day: reply("recap", cat.language, date=day)))
            return
        if cat.category not in ANSWERED and cat.sure:
            yield from self._canned(t, cat, reply(cat.category, cat.language))
            return
        suspected = cat  # an unsure off-topic or platform verdict, confirmed only by weak evidence
        if cat.category not in ANSWERED:
            cat = dataclasses.replace(cat, category="lecture")
        query = t.question
        if cat.category == "followup":
            query = rewrite_followup(self.router, t.question, t.history, t.log)
            since = t.lap("rewrite", since)
        # a course with documents in the question's language is searched in it, untranslated
        searched = search_language(cat.language, language,
                                   self.ws.store.course_languages(self.ws.tenant, t.course))
        if cat.language != searched:
            query = translate_query(self.router, query, language_name(searched), t.log,
                                    keep_original=has_glossary(cat.language, searched))
            since = t.lap("translate", since)
            t.translated = query
        query = with_progress(t.question, t.live, searched, query)  # "and the other one?"
        finder = EvidenceFinder(self.ws, self.router, t.log, reranker(
            self.ws.store, self.settings, self.ws.tenant, t.course, t.student))
        finder = with_tiers(finder, t.live)  # during a class: this class first
        followup = cat.category == "followup"
        if followup and _previous_intent(t.history) == "exercise" and not cat.about_exercise:
            cat = dataclasses.replace(cat, intent="exercise")
        pinned = (find_exercise(self.ws, t.course, query, t.history, followup)
                  if cat.intent == "exercise" or cat.about_exercise else None)
        evidence = (t.reuse and t.reuse.find(cat, self._allowed_types(t))) or finder.find(
            query, t.course, self._allowed_types(t), cat.intent, pinned=pinned,
            language=cat.language)
        if _about_an_exercise(cat, evidence):
            cat = dataclasses.replace(cat, intent="exercise")
        elif _previous_intent(t.history) == "exercise" and not cat.about_exercise:
            # the student's own working on the last turn's exercise ("I added 3 and 4") is
            # still help with it when it matches the course weakly or brings that exercise up
            pinned = find_exercise(self.ws, t.course, query, t.history, followup=True)
            if pinned is not None and (evidence.grade != "correct" or pinned.chunk.id in {
                    h.chunk.id for h in evidence.hits}):
                cat = dataclasses.replace(cat, intent="exercise")
                evidence = dataclasses.replace(
                    evidence, grade="correct",
                    hits=[pinned, *(h for h in evidence.hits if h.chunk.id != pinned.chunk.id)])
        since = t.lap("retrieve_grade", since)
        t.timings["retrieve"] = round(finder.search_ms, 1)
        t.tier = tier_of(finder, t.timings)
        t.timings["grade"] = round(t.timings["retrieve_grade"] - finder.search_ms, 1)
        if not cat.sure and evidence.grade != "correct":
            if self.router.enabled:
                cat = self._categorize_with_model(t, suspected)
                t.lap("categorize_model", since)
            else:
                cat = suspected
            if cat.category not in ANSWERED:
                yield from self._canned(t, cat, reply(cat.category, cat.language))
                return
        if evidence.grade == "incorrect" or not evidence.hits:
            yield from self._not_covered(t, cat, evidence)
            return
        if not self.router.enabled:
            yield from self._passages_only(t, cat, evidence)
            return
        yield from self._answer(t, cat, evidence, query)

    @property
    def summarizer(self) -> Router | None:
        """The router that writes summaries; None: they are extracted from the turns."""
        return self.router if summaries_by_model(self.settings) else None

    def _allowed_types(self, t: TurnState) -> tuple[DocType, ...]:
        """Every document type a student may see in this course."""
        return tuple(d for d in DOC_TYPES if t.allow_solutions or d != "solution")

    def _categorize_with_model(self, t: TurnState, cat: Categorization) -> Categorization:
        history = "\n".join(f"Student: {h.question}" for h in t.history[-2:])
        prompt = prompts.render("categorize", course=t.course, history=history,
                                message=t.question)
        raw = self.router.complete("categorize", [Message("user", prompt)],
                                   GenParams(temperature=0.0, max_tokens=60, json=True), t.log)
        return parse_llm_categorization(raw.text, cat)

    def _answer(self, t: TurnState, cat: Categorization, ev: Evidence,
                query: str) -> Iterator[StreamEvent]:
        llm = self.router.llm("answer")
        budget = Budget.split(self.settings.context_budget_tokens or llm.default_context_budget)
        # exercise help needs the whole exercise; other questions only what bears on them
        refined = 0 if cat.intent == "exercise" else self.settings.refine_context_tokens
        since = time.perf_counter()
        past = fold_history(self.summarizer, self.ws.store, FoldInput(
            self.ws.tenant, t.course, t.student, t.session_id, tuple(t.history),
            t.memory.running, budget.history, self.settings.summary_threshold),
            llm.count_tokens, t.log)
        if past.folded:
            t.lap("summarize", since)
        ctx = build_context(ev.hits, query, detect_language(query, cat.language), budget,
                            llm.count_tokens, past.turns, refined=refined, summary=past.summary,
                            translated=bool(t.translated),
                            notes=notes(t.memory, ev.hits, budget.rest, llm.count_tokens))
        level: Level | None = None
        key = ""
        if cat.intent == "exercise":
            key = current_exercise(ev.hits, t.history, cat.category == "followup")
            earlier = self.ws.store.count_exercise_turns(self.ws.tenant, t.course, t.student,
                                                         key) if key else 0
            level = scaffold_level(earlier, t.allow_solutions, cat.wants_answer)
        yield MetaEvent(t.session_id, cat.category, cat.intent, level or "", ev.grade,
                        cat.language)
        messages = self._messages(t, cat, ctx, level)
        params = GenParams(temperature=self.settings.llm_temperature,
                           max_tokens=max_tokens(level, self.settings.llm_max_tokens),
                           stop=STOP)
        # exercise help is checked for a leaked result before the student sees any of it
        buffered = level is not None and level != "solution"
        # a reply in the wrong script is never shown: held until its first words tell
        gate = Gate() if checked(cat.language) and not buffered else None
        draft = Draft()
        since = time.perf_counter()
        pieces = stream_answer(self.router, messages, params, t.log, draft, t.started,
                               emit=not buffered)
        shown: float | None = None
        for piece in gated(pieces, cat.language, gate) if gate else pieces:
            shown = shown or time.perf_counter()
            yield TokenEvent(piece)
        since = t.lap("generate", since)
        if draft.first_token_ms is not None and not buffered:
            t.timings["first_token"] = round(
                (shown - t.started) * 1000 if gate and shown else draft.first_token_ms, 1)
        quoted = False  # the sources' own sentences, true by construction: not checked
        if draft.declined and level is not None and ctx.sources:
            # the small model refused an exercise it was given: the rung's own help instead
            draft.text = fallback_help(level, cat.language, _exercise_source(ctx, ev))
        elif draft.declined and ev.grade == "correct" and not ev.deferred and _across(
                cat, ctx) and (
                quote := self._quote(t, cat, ctx)):
            # the evidence says covered, but the sources are in another language than the
            # question, which a small model often fails to read: their own words instead
            draft.text, quoted = quote, True
            yield TokenEvent(quote)
        elif draft.declined:
            yield from self._not_covered(t, cat, ev, meta_sent=True)
            return
        # quoted lines are the sources' own: tidying could take one for a copied header
        written = draft.text.strip() if quoted else _tidied(draft.text.strip(), t.question,
                                                            ctx, cat, level)
        text, cited = check_citations(written, ctx.sources)
        if not cited and ctx.sources and written:
            text, cited = _attribute(text, ctx)
        hidden = gate is not None and gate.right is False and not quoted  # quotes stay verbatim
        if text and (hidden or (buffered and checked(cat.language)
                                and not in_script(text, cat.language))):
            translated = translate_reply(self.router, text, language_name(cat.language),
                                         t.log)
            if translated:  # else the reply as the model wrote it
                text, cited = check_citations(translated, ctx.sources)
            since = t.lap("translate_reply", since)
        if hidden:
            t.timings["first_token"] = round((time.perf_counter() - t.started) * 1000, 1)
            yield TokenEvent(text)
        if buffered:
            assert level is not None  # buffered: a rung below solution
            hit = exercise_hit(ev.hits)
            solution = solution_text(self.ws, t.course, hit) if hit else ""
            facts = facts_for(hit.chunk.text if hit else "", solution, _student_said(t),
                              "\n".join([*(s.text for s in ctx.sources),
                                         *(h.answer for h in t.history)]))
            # a reply tidied down to "here are the passages" gives no help on this rung
            helps = not text.startswith(reply("passages", cat.language))
            text = guard_rung(self.router, level, text if helps else "", facts, cat.language,
                              _exercise_source(ctx, ev), t.log).text
            # the rung's numbers, formulas and names against the sources, before it is shown
            check = self._check(t, text, ctx, cat, level)
            text = (check.text if check.changed else text).strip() or fallback_help(
                level, cat.language, _exercise_source(ctx, ev))
            text, cited = check_citations(text, ctx.sources)
            t.lap("leak_check", since)
            t.timings["first_token"] = round((time.perf_counter() - t.started) * 1000, 1)
            yield TokenEvent(text)
        else:
            check = (CheckResult(text, (), ()) if quoted
                     else self._check(t, text, ctx, cat, level))
            if check.changed:
                text, cited = check_citations(check.text, ctx.sources)
        if check.verdicts:
            since = t.lap("check", since)
        if not draft.complete:
            marker = reply("incomplete", cat.language)
            text = f"{text}\n\n{marker}"
            yield TokenEvent(f"\n\n{marker}")
        if t.reuse and (asked := t.reuse.note(bool(cited))):  # "asked before in this course"
            text = f"{text}\n\n{asked}"
            yield TokenEvent(f"\n\n{asked}")
        yield SourcesEvent(cited)
        yield self._done(t, cat, ev, text, cited, level or "", key, complete=draft.complete,
                         context_over=ctx.over_budget,
                         context=tuple(s.hit.chunk.id for s in ctx.sources), check=check,
                         content=content_brackets(s.hit.chunk.text for s in ctx.sources))

    def _check(self, t: TurnState, text: str, ctx: Context, cat: Categorization,
               level: Level | None) -> CheckResult:
        """The reply's claims against its sources. Exercise help below the solution words
        its hints its own way: only its numbers, formulas and names are checked (against
        the sources and what the student wrote), and an analogous example, which must use
        other numbers than the exercise, is left to its rung's contract."""
        if not self.settings.answer_check or level == "example":
            return CheckResult(text, (), ())
        if level is not None and level != "solution":
            checker = AnswerChecker(self.ws.embedder)
            return checker.check_terms(CheckInput(text, _student_said(t), ctx.sources,
                                                  cat.language))
        judge = model_judge(self.router, t.log) if self.settings.answer_check_judge else None
        checker = AnswerChecker(self.ws.embedder, judge, self.settings.answer_check_max_judged,
                                reply("quote_first", cat.language))
        return checker.check(CheckInput(text, t.question, ctx.sources, cat.language,
                                        search=t.translated))

    def _quote(self, t: TurnState, cat: Categorization, ctx: Context) -> str:
        """The framing line and the source sentences closest to the question, verbatim."""
        checker = AnswerChecker(self.ws.embedder, framing=reply("quote_first", cat.language))
        return checker.quote(CheckInput("", t.question, ctx.sources, cat.language,
                                        search=t.translated))

    def _messages(self, t: TurnState, cat: Categorization, ctx: Context,
                  level: Level | None) -> list[Message]:
        history = f"\nEarlier in this conversation:\n{ctx.history}\n" if ctx.history else ""
        memory = f"\n{ctx.notes}\n" if ctx.notes else ""
        user = prompts.render(
            "answer", sources=live_block(t.live) + render_sources(ctx.sources),
            history=history, memory=memory,
            task=prompts.load(task_prompt(cat.intent, level, cat.about_exercise)),
            level=t.level,
            level_hint=level_hint(t.level), language=language_name(cat.language),
            question=t.question, reminder=EXERCISE_REMINDER if level else "",
            native=_native_instruction(cat.language),
            reference=t.reuse.reference() if t.reuse else "",
        )
        return [Message("system", prompts.load("system")), Message("user", user)]

    # -- replies that need no generation ------------------------------------------------------
    def _canned(self, t: TurnState, cat: Categorization, text: str) -> Iterator[StreamEvent]:
        yield MetaEvent(t.session_id, cat.category, cat.intent, "", "", cat.language)
        yield TokenEvent(text)
        yield SourcesEvent(())
        yield self._done(t, cat, None, text, (), "", "", covered=False)

    def _not_covered(self, t: TurnState, cat: Categorization, ev: Evidence,
                     meta_sent: bool = False) -> Iterator[StreamEvent]:
        if not meta_sent:
            yield MetaEvent(t.session_id, cat.category, cat.intent, "", "incorrect",
                            cat.language)
        text = reply("not_covered", cat.language)
        topics = _closest_topics(ev)
        if topics:
            text += " " + reply("closest", cat.language, topics=topics)
        yield TokenEvent(text)
        yield SourcesEvent(())
        yield self._done(t, cat, ev, text, (), "", "", covered=False, grade="incorrect")

    def _passages_only(self, t: TurnState, cat: Categorization,
                       ev: Evidence) -> Iterator[StreamEvent]:
        yield MetaEvent(t.session_id, cat.category, cat.intent, "", ev.grade, cat.language)
        cited = tuple(
            Citation(i + 1, h.chunk.id, h.chunk.document_id, h.chunk.document_title,
                     h.chunk.doc_type, h.locator, snippet(h.chunk.text),
                     section_of(h.chunk.section_path), h.tier, h.tier_label)
            for i, h in enumerate(ev.hits[:5])
        )
        text = reply("no_llm", cat.language)
        yield TokenEvent(text)
        if t.reuse and (asked := t.reuse.note(bool(cited))):
            text = f"{text}\n\n{asked}"
            yield TokenEvent(f"\n\n{asked}")
        yield SourcesEvent(cited)
        yield self._done(t, cat, ev, text, cited, "", "", note="passages only")

    def _done(self, t: TurnState, cat: Categorization, ev: Evidence | None, text: str,
              cited: tuple[Citation, ...], level: str, key: str, complete: bool = True,
              covered: bool = True, grade: str | None = None, note: str = "",
              context_over: bool = False, context: tuple[str, ...] = (),
              check: CheckResult | None = None,
              content: frozenset[str] = frozenset()) -> DoneEvent:
        t.lap("total", t.started)
        verdict = grade if grade is not None else (ev.grade if ev else "")
        stored = self.ws.store.add_turn(Turn(
            t.session_id, 0, self.ws.tenant, t.course, t.student, t.question, text,
            cat.category, cat.intent, verdict, level, key, complete, cited,
        ))
        self.ws.turns.append(stored)
        record_turn_topics(self.ws.store, stored, ev.hits if ev else ())
        prompt_tokens = sum(c.usage.prompt_tokens for c in t.log)
        completion_tokens = sum(c.usage.completion_tokens for c in t.log)
        if context_over:
            note = (note + "; " if note else "") + "context over budget"
        return DoneEvent(Answer(
            text=text, sources=cited, category=cat.category, intent=cat.intent, grade=verdict,
            evidence=round(ev.score, 4) if ev else 0.0, language=cat.language, level=level,
            complete=complete, covered=covered, note=note, session_id=t.session_id,
            prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
            cost=sum(c.cost for c in t.log), timings=dict(t.timings),
            calls=tuple({"task": c.task, "backend": c.backend, "model": c.model,
                         "prompt_tokens": c.usage.prompt_tokens,
                         "completion_tokens": c.usage.completion_tokens,
                         "cost": c.cost, "ms": round(c.seconds * 1000, 1)} for c in t.log),
            context=context, context_over_budget=context_over, tier=t.tier,
            removed=check.removed if check else (), checked=bool(check and check.verdicts),
            explain=tuple((h.chunk.id, h.explain) for h in ev.hits if h.explain) if ev else (),
            markers=marker_spans(text, content) if cited else (),
        ))


def _tidied(text: str, question: str, ctx: Context, cat: Categorization,
            level: Level | None) -> str:
    """The reply without echoes, copied source lists, parroted instructions or loops; the
    three best passages when nothing else is left."""
    # what a copied "source list" can be made of: the headers and any path-like line
    headers = [source_header(s.number, s.hit) for s in ctx.sources] + [
        line for s in ctx.sources for line in s.text.splitlines() if _path_like(line)]
    written = tidy(text, question, headers,
                   (prompts.load(task_prompt(cat.intent, level, cat.about_exercise)),
                    prompts.load("system")), cat.language)
    if text and not written and ctx.sources:
        written = reply("passages", cat.language) + " " + " ".join(
            f"[{s.number}]" for s in ctx.sources[:3])
    return written


def _path_like(line: str) -> bool:
    """A line of a passage that reads like a section path ("Notes > 5 Series > 5.2"), not
    maths that has a "greater than" in it ("step size α > 0 with x = ...")."""
    return line.count(" > ") >= 2 or (" > " in line and not any(c in line for c in "=<≤≥∇∑∫"))


def _native_instruction(language: str) -> str:
    """The reply-language instruction again, written in that language: small models answer
    Chinese or Korean questions about an English course in English without it."""
    line = reply("reply_language", language)
    return f"\n{line}" if line else ""


def _about_an_exercise(cat: Categorization, ev: Evidence) -> bool:
    """A concept or definition question whose best passage is an exercise: exercise help."""
    return (cat.intent in ("concept", "definition") and not cat.about_exercise
            and bool(ev.hits)
            and ev.grade != "incorrect"
            and ev.hits[0].chunk.doc_type in ("exercise", "exam"))


def _across(cat: Categorization, ctx: Context) -> bool:
    """The first sources are all in another language than the question."""
    first = [s.hit.chunk.language for s in ctx.sources[:3]]
    return bool(first) and all(lang and lang != cat.language for lang in first)


def _exercise_source(ctx: Context, ev: Evidence) -> int | None:
    """The source number of the exercise in the prompt (the first source when it is not)."""
    hit = exercise_hit(ev.hits)
    numbers = [s.number for s in ctx.sources if hit and s.hit.chunk.id == hit.chunk.id]
    return numbers[0] if numbers else (ctx.sources[0].number if ctx.sources else None)


def _student_said(t: TurnState) -> str:
    """The student's messages of this turn and the earlier ones: numbers they wrote are
    theirs, not results the tutor gave away."""
    return "\n".join([*(h.question for h in t.history), t.question])


def _last_reply(t: TurnState) -> str:
    """The tutor's reply before this turn (a question it asked the student, maybe)."""
    return t.history[-1].answer if t.history else ""


def _previous_intent(history: list[Turn]) -> str:
    """The intent of the last answered turn (canned replies, like a recap, answer nothing)."""
    return next((h.intent for h in reversed(history) if h.grade not in ("", "incorrect")), "")


def _closest_topics(ev: Evidence) -> str:
    """Up to three section or document names the course does cover, nearest first."""
    seen: list[str] = []
    for h in ev.hits:
        name = h.chunk.section_path[-1] if h.chunk.section_path else h.chunk.document_title
        if name and name not in seen:
            seen.append(name)
    return "; ".join(seen[:3])


def _attribute(text: str, ctx: Context) -> tuple[str, tuple[Citation, ...]]:
    """The model cited nothing: cite the source whose words the answer shares most."""
    words = set(text.lower().split())
    best = max(ctx.sources, key=lambda s: len(words & set(s.text.lower().split())))
    marked = f"{text} [{best.number}]"
    return marked, (to_citation(best),)
