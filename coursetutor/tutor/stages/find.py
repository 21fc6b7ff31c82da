"""Stage: find. The passages that answer the question, graded (evidence.py): an earlier
answer's passages when the reuse stage found one, else a search of the course (by tiers
during a class), with the exercise the student works on pinned first. Weak evidence for an
unsure message asks the model what it is; no evidence is "not covered"; with no model the
passages are the reply."""

from __future__ import annotations

import dataclasses

from ...ingest.tex_unicode import to_unicode
from ...live.rewrite import with_progress
from ...llm import GenParams, Message
from ...memory.adaptive import view_rerank
from ...types import Hit, MetaEvent, Turn
from ...workspace import Workspace
from .. import prompts
from ..categorize import ANSWERED, Categorization, parse_llm_categorization
from ..citations import as_citations
from ..claims import absent_names, mentioned_names
from ..evidence import Evidence, EvidenceFinder
from ..exercise import exercise_text, find_exercise, parts, referenced_part
from ..next_step import asks_part, closest_part
from ..pipeline import Reply
from ..replies import reply
from ..statement_check import content_words
from ..tiers import tier_of, with_tiers
from .tools import Tools
from .understand import Understood, canned

NAMED_PASSAGES = 6  # the passages a name the question asks about must be in
EXERCISE_WORDS = 3  # words of an exercise's own text a question must share to ask it


@dataclasses.dataclass(frozen=True)
class Found:
    """The graded passages for the question, and what the question turned out to be."""

    understood: Understood
    cat: Categorization
    evidence: Evidence
    query: str  # the query searched
    tier: str = ""  # during a class: the tier the passages came from
    laps: dict[str, float] = dataclasses.field(default_factory=dict)
    part: str = ""  # the part of the exercise asked about ("e" of "exercise 1 (e)"), if any
    # the exercise pinned, when one was: its passage's id and its whole text (plan.py)
    exercise: tuple[str, str] = ("", "")


def find(tools: Tools, u: Understood, reused: Evidence | None) -> Found:
    r, o = u.recalled, u.recalled.opened
    ws = tools.ws
    query = with_progress(o.question, o.live, u.searched, u.query)  # "and the other one?"
    finder = with_tiers(EvidenceFinder(ws, tools.router, tools.log, view_rerank(
        r.memory.view, tools.settings, tools.topics), o.state.search), o.live)
    cat, history = u.cat, list(r.history)
    if u.followup and previous_intent(history) == "exercise" and not cat.about_exercise:
        cat = dataclasses.replace(cat, intent="exercise")
    evidence, part, exercise = reused, "", ("", "")
    if evidence is None:
        pinned = (find_exercise(ws, o.course, query, history, u.followup, o.question)
                  if cat.intent == "exercise" or cat.about_exercise else None)
        if pinned is not None:
            asked = asked_part(ws, o.course, pinned, o.question, u.translated or o.question,
                               u.searched or cat.language)
            part, exercise = asked.part, (pinned.chunk.id, asked.text)
            if cat.about_exercise and asked.of_part:
                # "Why is Gauss-Newton applicable in exercise 1 (e)?" asks what part (e)
                # asks ("Explain why Gauss-Newton is applicable here"): help with that part
                cat = dataclasses.replace(cat, intent="exercise", about_exercise=False)
            elif asked.of_statement and not cat.wants_answer and not cat.about_exercise:
                # "Which loss does exercise 1 minimise?" asks what the exercise says ("…
                # minimizes the Brier-loss"): answered from its sentences, like any question
                # about the material (its solution stays hidden)
                cat = dataclasses.replace(cat, intent="concept", about_exercise=True)
        evidence = finder.find(query, o.course, o.allowed_types, cat.intent, pinned=pinned,
                               language=cat.language,
                               asked=o.question if u.translated and not u.followup else "")
    if _about_an_exercise(cat, evidence, u.translated or o.question, u.searched or cat.language):
        cat = dataclasses.replace(cat, intent="exercise")
    elif previous_intent(history) == "exercise" and not cat.about_exercise:
        # the student's own working on the last turn's exercise ("I added 3 and 4") is
        # still help with it when it matches the course weakly or brings that exercise up
        pinned = find_exercise(ws, o.course, query, history, followup=True)
        if pinned is not None and (evidence.grade != "correct" or pinned.chunk.id in {
                h.chunk.id for h in evidence.hits}):
            cat = dataclasses.replace(cat, intent="exercise")
            evidence = dataclasses.replace(
                evidence, grade="correct",
                hits=[pinned, *(h for h in evidence.hits if h.chunk.id != pinned.chunk.id)])
    laps = {"retrieve": round(finder.search_ms, 1)}
    return Found(u, cat, evidence, query, tier_of(finder, laps), laps, part, exercise)


@dataclasses.dataclass(frozen=True)
class Asked:
    """What a question about an exercise asks about."""

    text: str  # the exercise's whole text (exercise.exercise_text)
    part: str = ""  # the part it names or shares the most words with ("e"), or ""
    of_part: bool = False  # what that part asks (two of its words)
    of_statement: bool = False  # no part: what the exercise's opening states


def asked_part(ws: Workspace, course: str, exercise: Hit, question: str, words: str,
               language: str) -> Asked:
    """The part of `exercise` the question names ("exercise 1 (e)") or, unnamed, shares
    the most words with (`words`: the question as translated for the search, in the
    exercise's language), and whether the question asks what that part asks; with no
    part, whether it asks what the exercise's opening (before its parts) states."""
    text = exercise_text(ws, course, exercise)
    whole = parts(text)
    named = referenced_part(question)
    part = named if named in whole else closest_part(words, whole, language)
    if part:
        return Asked(text, part, asks_part(words, whole[part], language))
    opening = text[:text.index(next(iter(whole.values())))] if whole else text
    heading = exercise.chunk.section_path[-1] if exercise.chunk.section_path else ""
    return Asked(text, of_statement=asks_part(words, f"{heading}\n{opening}", language))


def confirm(tools: Tools, f: Found) -> Found | Reply:
    """An unsure message the course covers only weakly: the model says what it is (or, off,
    the rules' first verdict stands); an off-topic or platform message is answered so."""
    u = f.understood
    if tools.router.enabled:
        cat = _categorize_with_model(tools, u.recalled.opened.question, u.recalled.history,
                                     u.recalled.opened.course, u.suspected)
    else:
        cat = u.suspected
    if cat.category not in ANSWERED:
        return dataclasses.replace(canned(u.recalled.opened.session_id, cat, reply(
            cat.category, cat.language)), tier=f.tier)
    return dataclasses.replace(f, cat=cat)


def covered(tools: Tools, f: Found) -> Found | Reply:
    """Passages that answer; else "not covered" with the closest topics the course has (also
    when the question names a result or method no passage names: "il teorema di Stokes"),
    and, with no model to write the answer, the passages themselves."""
    o, cat, ev = f.understood.recalled.opened, f.cat, f.evidence
    if ev.grade == "incorrect" and ev.hits and cat.intent != "exercise" and mentioned_names(
            f.understood.translated or o.question, _read(ev), cat.language):
        # "What are the Wolfe conditions used for?": the slides name them once ("Use step
        # size α > 0 … to satisfy Wolfe conditions (or just Armijo rule)"), too far from the
        # question's other words for the grade; that line is what the course says of them
        ev = dataclasses.replace(ev, grade="correct")
        f = dataclasses.replace(f, evidence=ev)
    if ev.grade == "incorrect" or not ev.hits:
        return not_covered(o.session_id, f, meta_sent=False)
    # a name is looked for in passages of the question's language only ("Bisektionsverfahren"
    # is no name an English course would write)
    same = ev.hits[0].chunk.language in ("", cat.language)
    if cat.intent != "exercise" and same and (
            absent := absent_names(o.question, _read(ev), cat.language)):
        return dataclasses.replace(not_covered(o.session_id, f, meta_sent=False),
                                   note="the course never names " + ", ".join(absent))
    if not tools.router.enabled:
        cited = as_citations(ev.hits[:5])
        return Reply(cat, ev, reply("no_llm", cat.language), cited,
                     meta=MetaEvent(o.session_id, cat.category, cat.intent, "", ev.grade,
                                    cat.language), note="passages only", tier=f.tier)
    return f


def not_covered(session_id: str, f: Found, meta_sent: bool) -> Reply:
    """The course does not cover the question: the closest topics it does cover."""
    cat, ev = f.cat, f.evidence
    text = reply("not_covered", cat.language)
    topics = _closest_topics(ev)
    if topics:
        text += " " + reply("closest", cat.language, topics=topics)
    meta = None if meta_sent else MetaEvent(session_id, cat.category, cat.intent, "",
                                            "incorrect", cat.language)
    return Reply(cat, ev, text, meta=meta, covered=False, grade="incorrect", tier=f.tier)


def _read(ev: Evidence) -> list[str]:
    """What the first passages say, with the titles they sit under."""
    return [f"{h.chunk.document_title} {' '.join(h.chunk.section_path)} {h.chunk.text}"
            for h in ev.hits[:NAMED_PASSAGES]]


def previous_intent(history: list[Turn]) -> str:
    """The intent of the last answered turn (canned replies, like a recap, answer nothing)."""
    return next((h.intent for h in reversed(history) if h.grade not in ("", "incorrect")), "")


def _categorize_with_model(tools: Tools, question: str, history: tuple[Turn, ...],
                           course: str, cat: Categorization) -> Categorization:
    earlier = "\n".join(f"Student: {h.question}" for h in history[-2:])
    prompt = prompts.render("categorize", course=course, history=earlier, message=question)
    raw = tools.router.complete("categorize", [Message("user", prompt)],
                                GenParams(temperature=0.0, max_tokens=60, json=True),
                                tools.log)
    return parse_llm_categorization(raw.text, cat)


def _about_an_exercise(cat: Categorization, ev: Evidence, question: str,
                       language: str) -> bool:
    """A concept or definition question whose best passage is an exercise and which asks
    what that exercise asks: exercise help. The exercise must share with the question three
    words of its own text, not of its title: "What is the secant method?" found "Exercise 4:
    The secant method" first (its title is the question's words) and was answered with
    homework hints instead of the lecture's definition."""
    if not (cat.intent in ("concept", "definition") and not cat.about_exercise
            and bool(ev.hits) and ev.grade != "incorrect"
            and ev.hits[0].chunk.doc_type in ("exercise", "exam")):
        return False
    top = ev.hits[0].chunk
    title = content_words(" ".join((top.document_title, *top.section_path)), language)
    own = content_words(top.text, language) - title
    return len(content_words(question, language) & own) >= EXERCISE_WORDS


def _closest_topics(ev: Evidence) -> str:
    """Up to three section or document names the course does cover, nearest first."""
    seen: list[str] = []
    for h in ev.hits:
        # as the student reads it: "§3.2 函数的连续性", not "$\S3.2$ 函数的连续性"
        name = to_unicode(h.chunk.section_path[-1] if h.chunk.section_path
                          else h.chunk.document_title)
        if name and name not in seen:
            seen.append(name)
    return "; ".join(seen[:3])
