"""Stage: verify. The reply as the student may read it: a refusal replaced by the rung's own
help or by the sources' words, echoes and loops tidied away, markers to unknown sources
dropped, a reply in the wrong language translated, exercise help checked for a leaked result
(guard.py), and every claim checked against the sources it cites (check.py). A reply written
in the course's language (write.py, `answer_across = "pivot"`) is checked there, against the
sources in their own words, and translated for the student last."""

from __future__ import annotations

import time
from collections.abc import Generator

from ...types import Citation, StreamEvent, TokenEvent
from ..categorize import Categorization
from ..check import AnswerChecker, CheckInput, CheckResult, model_judge
from ..citations import check_citations, to_citation
from ..context import Context
from ..evidence import Evidence
from ..exercise import exercise_hit, exercise_text, solution_text
from ..guard import facts_for, fallback_help, guard_rung
from ..lists import relabel
from ..markers import content_brackets
from ..pedagogy import Level
from ..pipeline import Reply
from ..replies import language_name, reply
from ..reply_language import checked, in_script, keeps_terms, translate_reply
from ..rungs import says_something
from ..slips import point_out
from ..tidy import whole_sentences
from .find import not_covered
from .tools import Tools
from .understand import Understood
from .write import Written, short, tidied


def verify(tools: Tools, w: Written) -> Generator[StreamEvent, None, Reply]:
    p, draft = w.prompted, w.draft
    f, ctx, level = p.found, p.ctx, p.level
    u, cat, ev = f.understood, f.cat, f.evidence
    o = u.recalled.opened
    wcat, asked = p.written_as()  # the course's language when the reply pivots through it
    laps: dict[str, float] = {}
    since = time.perf_counter()
    said = draft.text
    quoted = False  # the sources' own sentences, true by construction: not checked
    if draft.declined and level is not None and ctx.sources:
        # the small model refused an exercise it was given: the rung's own help instead
        said = fallback_help(level, cat.language, _exercise_source(ctx, ev))
    elif draft.declined and ev.grade == "correct" and not ev.deferred and _across(
            cat, ctx) and (quote := _quote(tools, u, cat, ctx)):
        # the evidence says covered, but the sources are in another language than the
        # question, which a small model often fails to read: their own words instead
        said, quoted = quote, True
        yield TokenEvent(quote)
    elif draft.declined:
        return not_covered(o.session_id, f, meta_sent=True)
    # quoted lines are the sources' own: tidying could take one for a copied header
    written = said.strip() if quoted else tidied(said.strip(), asked, ctx, wcat, level)
    text, cited = check_citations(written, ctx.sources)
    if not cited and ctx.sources and written:
        text, cited = _attribute(text, ctx)
    hidden = w.gate is not None and w.gate.right is False and not quoted  # quotes: verbatim
    original = ""  # a hint written in the exercise's language, when its translation lost a name
    if text and p.buffered and p.pivot and level is not None:
        # a hint written in the exercise's language: shortened, then translated; a
        # translation that lost a name or a number of it ("Gauss-Newton" became "梯度下降法")
        # is shown with the hint as written under it
        text = short(text, level)
        translated = translate_reply(tools.router, text, language_name(cat.language),
                                     tools.log)
        if translated and not keeps_terms(text, translated):
            original = text
        if translated:
            text, cited = check_citations(translated, ctx.sources)
        since = _lap(laps, "translate_reply", since)
    elif text and (hidden or (
            p.buffered and checked(cat.language) and not in_script(text, cat.language))):
        translated = translate_reply(tools.router, text, language_name(cat.language),
                                     tools.log)
        if translated:  # else the reply as the model wrote it
            text, cited = check_citations(translated, ctx.sources)
        since = _lap(laps, "translate_reply", since)
    if hidden:
        laps["first_token"] = _ms(o.started)
        yield TokenEvent(text)
    if p.buffered:
        assert level is not None  # buffered: a rung below solution
        hit = exercise_hit(ev.hits)
        solution = p.solution if p.solution is not None else (
            solution_text(tools.ws, o.course, hit) if hit else "")
        # the exercise's whole text: part (e)'s "do 30 iterations" is on the page after
        # its heading, and a hint that said "after 30 iterations" stated no result of its own
        facts = facts_for(exercise_text(tools.ws, o.course, hit) if hit else "", solution,
                          u.student_said,
                          "\n".join([*(s.text for s in ctx.sources),
                                     *(h.answer for h in u.recalled.history)]),
                          "\n".join(s.text for s in ctx.sources
                                    if not hit or s.hit.chunk.document_id != hit.chunk.document_id),
                          reason=p.reason)  # a hint that shows its step's reason
        # a reply tidied down to "here are the passages", or cut off after a word or two
        # ("Certainly [1]", the deadline), gives no help on this rung
        text = whole_sentences(text)  # a hint cut at its token limit ends where one did
        helps = not text.startswith(reply("passages", cat.language)) and says_something(text)
        guarded = guard_rung(tools.router, level, text if helps else "", facts, cat.language,
                             _exercise_source(ctx, ev), tools.log)
        text = guarded.text
        # the rung's numbers, formulas and names against the sources, before it is shown
        # (the rung's own fixed help is the project's text: its steps are no claims)
        check = (CheckResult(text, (), ()) if guarded.fallback
                 else _check(tools, u, text, ctx, cat, level, step=p.step))
        kept = check.text if check.changed else text
        # the rung's own help and a hint the project wrote (a step's reason) are shown whole
        text = kept if guarded.fallback or p.prepared else short(kept, level)
        # a list some of whose items were taken out counts on without gaps; what the check
        # left of it may be a lead-in and markers ("Here are the steps …: [1]\n\n5 [1].")
        text = relabel(text.strip())
        if guarded.fallback or not says_something(text):
            text = fallback_help(level, cat.language, _exercise_source(ctx, ev))
        if original and not (guarded.fallback or guarded.found):
            text = f"{text}\n\n{reply('in_course_language', cat.language)} {original}"
        text, cited = check_citations(point_out(text, o.question, cat.language), ctx.sources)
        _lap(laps, "leak_check", since)
        laps["first_token"] = _ms(o.started)
        yield TokenEvent(text)
    else:
        check = CheckResult(text, (), ()) if quoted else _check(tools, u, text, ctx, wcat,
                                                                 level, asked)
        if check.changed:
            text, cited = check_citations(relabel(check.text), ctx.sources)
        if p.pivot and not quoted:
            if ev.deferred and check.verdicts and not any(v.supported for v in check.verdicts):
                # the answer model was to decide whether the passages cover the question, and
                # nothing it said is in them: it answered from elsewhere ("How does the
                # Q-learning algorithm work?" over Newton-Raphson slides)
                return not_covered(o.session_id, f, meta_sent=True)
            if check.quote_first:  # the sources' own lines, as quoted in any language
                framing = reply("quote_first", wcat.language)
                text = reply("quote_first", cat.language) + text.removeprefix(framing)
            else:
                since = _lap(laps, "check", since)
                text = _translated(tools, text, cat.language)
                text, cited = check_citations(text, ctx.sources)
                since = _lap(laps, "translate_reply", since)
            laps["first_token"] = _ms(o.started)
            yield TokenEvent(text)
    if check.verdicts and "check" not in laps:
        _lap(laps, "check", since)
    tail: tuple[str, ...] = ()
    if not draft.complete:
        marker = reply("incomplete", cat.language)
        text, tail = f"{text}\n\n{marker}", (f"\n\n{marker}",)
    return Reply(cat, ev, text, cited, shown=True, tail=tail, level=level or "", key=p.key,
                 complete=draft.complete, context_over=ctx.over_budget,
                 context=tuple(s.hit.chunk.id for s in ctx.sources), check=check,
                 content=content_brackets(s.hit.chunk.text for s in ctx.sources),
                 tier=f.tier, laps=laps,
                 note="the answer deadline was reached" if draft.late else "")


def _check(tools: Tools, u: Understood, text: str, ctx: Context, cat: Categorization,
           level: Level | None, asked: str = "", step: str = "") -> CheckResult:
    """The reply's claims against its sources. Exercise help below the solution words
    its hints its own way: only its numbers, formulas and names are checked (against
    the sources, what the student wrote and the solution's step the hint names, its
    results masked), and an analogous example, which must use other numbers than the
    exercise, is left to its rung's contract."""
    settings = tools.settings
    if not settings.answer_check or level == "example":
        return CheckResult(text, (), ())
    if level is not None and level != "solution":
        checker = AnswerChecker(tools.ws.embedder)
        said = f"{u.student_said}\n{step}" if step else u.student_said
        return checker.check_terms(CheckInput(text, said, ctx.sources, cat.language))
    judge = model_judge(tools.router, tools.log) if settings.answer_check_judge else None
    checker = AnswerChecker(tools.ws.embedder, judge, settings.answer_check_max_judged,
                            reply("quote_first", cat.language))
    return checker.check(CheckInput(text, asked or u.recalled.opened.question, ctx.sources,
                                    cat.language, search=u.translated))


def _translated(tools: Tools, text: str, language: str) -> str:
    """A checked reply in the course's language, translated for the student; when the
    translation lost a name or a number of it (the small model's Korean turns "Hessian" into
    "허스턴"), the checked reply follows it under "In the course's own language:"."""
    translated = translate_reply(tools.router, text, language_name(language), tools.log)
    if not translated:
        return text
    if keeps_terms(text, translated):
        return translated
    return f"{translated}\n\n{reply('in_course_language', language)} {text}"


def _quote(tools: Tools, u: Understood, cat: Categorization, ctx: Context) -> str:
    """The framing line and the source sentences closest to the question, verbatim."""
    checker = AnswerChecker(tools.ws.embedder, framing=reply("quote_first", cat.language))
    return checker.quote(CheckInput("", u.recalled.opened.question, ctx.sources, cat.language,
                                    search=u.translated))


def _across(cat: Categorization, ctx: Context) -> bool:
    """The first sources are all in another language than the question."""
    first = [s.hit.chunk.language for s in ctx.sources[:3]]
    return bool(first) and all(lang and lang != cat.language for lang in first)


def _exercise_source(ctx: Context, ev: Evidence) -> int | None:
    """The source number of the exercise in the prompt (the first source when it is not)."""
    hit = exercise_hit(ev.hits)
    numbers = [s.number for s in ctx.sources if hit and s.hit.chunk.id == hit.chunk.id]
    return numbers[0] if numbers else (ctx.sources[0].number if ctx.sources else None)


def _attribute(text: str, ctx: Context) -> tuple[str, tuple[Citation, ...]]:
    """The model cited nothing: cite the source whose words the answer shares most."""
    words = set(text.lower().split())
    best = max(ctx.sources, key=lambda s: len(words & set(s.text.lower().split())))
    return f"{text} [{best.number}]", (to_citation(best),)


def _lap(laps: dict[str, float], name: str, since: float) -> float:
    now = time.perf_counter()
    laps[name] = round((now - since) * 1000, 1)
    return now


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)
