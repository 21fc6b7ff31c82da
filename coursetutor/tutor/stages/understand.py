"""Stage: understand. What the student asks (categorize.py's rules), in the words the course
is searched with: a follow-up rewritten to stand alone, a question in another language than
the course's material translated for the search. A recap or a sure off-topic message is
answered here, with no search."""

from __future__ import annotations

import dataclasses

from ...retrieval.glossary import has_glossary
from ...retrieval.language import search_language
from ...types import MetaEvent
from ..categorize import ANSWERED, Categorization, categorize_rules
from ..memory import asks_recap, recap
from ..pipeline import Reply
from ..replies import language_name, reply
from ..rewrite import rewrite_followup, translate_query
from ..terms import course_terms, result_names
from .recall import Recalled
from .tools import Tools


@dataclasses.dataclass(frozen=True)
class Understood:
    """The question as the search will read it."""

    recalled: Recalled
    cat: Categorization
    suspected: Categorization  # an unsure verdict, confirmed only by weak evidence
    query: str
    searched: str  # the language the course is searched in
    translated: str = ""  # the question as translated for the search, else ""

    @property
    def followup(self) -> bool:
        return self.cat.category == "followup"

    @property
    def translates(self) -> bool:
        return self.cat.language != self.searched

    @property
    def student_said(self) -> str:
        """The student's messages of this turn and the earlier ones: numbers they wrote are
        theirs, not results the tutor gave away."""
        r = self.recalled
        return "\n".join([*(h.question for h in r.history), r.opened.question])


def canned(session_id: str, cat: Categorization, text: str) -> Reply:
    """A reply that needs no search and no model."""
    return Reply(cat, None, text, meta=MetaEvent(session_id, cat.category, cat.intent, "", "",
                                                 cat.language), covered=False)


def categorize(r: Recalled) -> Understood | Reply:
    o = r.opened
    cat = categorize_rules(o.question, bool(r.history), o.language)
    if r.memory.earlier and asks_recap(o.question):
        return canned(o.session_id, cat, recap(r.memory.earlier,
                                 lambda day: reply("recap", cat.language, date=day)))
    if cat.category not in ANSWERED and cat.sure:
        return canned(o.session_id, cat, reply(cat.category, cat.language))
    suspected = cat
    if cat.category not in ANSWERED:
        cat = dataclasses.replace(cat, category="lecture")
    # a course with documents in the question's language is searched in it, untranslated
    searched = search_language(cat.language, o.language, o.state.languages)
    return Understood(r, cat, suspected, o.question, searched)


def rewrite(tools: Tools, u: Understood) -> Understood:
    """A follow-up as a standalone query ("and its order?" -> "the secant method's order")."""
    query = rewrite_followup(tools.router, u.query, u.recalled.history, tools.log)
    return dataclasses.replace(u, query=query)


TERM_PASSAGES = 4  # the passages the original question finds, whose names the translator reads
RESULT_NAMES = 16  # and at most this many names of the course's results ("di Rolle")


def translate(tools: Tools, u: Understood) -> Understood:
    """The query in the language the course is searched in, its names spelled as the
    passages the original finds spell them and as the course names its results (terms.py)."""
    o = u.recalled.opened
    found: list[str] = []
    named: list[str] = []
    if tools.router.enabled:  # (without a model the original is searched as it is)
        found = course_terms(tools.ws.search(u.query, o.course, k=TERM_PASSAGES,
                                             doc_types=o.allowed_types, state=o.state.search))
        named = [n for n in result_names(tools.ws.store, tools.ws.tenant, o.course)
                 if n not in found][:RESULT_NAMES]
    query = translate_query(tools.router, u.query, language_name(u.searched), tools.log,
                            keep_original=has_glossary(u.cat.language, u.searched),
                            terms=[*found, *named])
    return dataclasses.replace(u, query=query, translated=query)
