"""Turn stage: reuse of past answers. A class asks the same questions; a lecture question
whose key is close enough to one answered before in the course, and that the meaning gate
(reuse_key.py) finds no difference in, is answered from that answer's passages instead of a
new search. The model still writes the answer, with the earlier one in the prompt as a
reference, and the reply says the question was asked before. A question is reused only from
one the course searches in the same language: in a course with notes in English and Italian an
Italian question is searched in Italian, and the English answer's passages would hide them.
Each answered lecture question that did not reuse one is kept for the next students
(store/reuse.py)."""

from __future__ import annotations

import dataclasses
import logging
import re
import time
from collections.abc import Callable
from typing import Protocol

import numpy as np
import numpy.typing as npt

from ..config import Settings
from ..errors import CoursetutorError
from ..retrieval.language import search_language
from ..store.base import CourseState
from ..store.reuse import AnsweredQuestion
from ..types import Answer, DocType, Hit, SearchFilters, Turn
from ..workspace import Workspace
from . import prompts
from .categorize import Categorization
from .evidence import Evidence
from .replies import reply
from .reuse_key import Meaning, differs, meaning, question_key

log = logging.getLogger(__name__)

REFERENCE_CHARS = 800  # of the earlier answer, shown to the model
_MARKER = re.compile(r"\s*\[\d+\]")


@dataclasses.dataclass(frozen=True)
class ReuseQuery:
    """A turn's question as the stage needs it, once categorized."""

    question: str
    language: str  # the question's
    category: str
    intent: str
    about_exercise: bool
    types: tuple[DocType, ...]  # the document types the student may see


@dataclasses.dataclass(frozen=True)
class Reused:
    """The earlier answer a turn reuses."""

    entry: AnsweredQuestion
    score: float
    hits: list[Hit]


class TurnOf(Protocol):
    """What the stage reads of the turn (tutor/stages/opened.py's Opened)."""

    @property
    def course(self) -> str: ...

    @property
    def student(self) -> str: ...

    @property
    def session_id(self) -> str: ...

    @property
    def question(self) -> str: ...

    @property
    def live(self) -> object | None:
        """The class in progress: questions during one are about its moment."""


def reusable(category: str, intent: str, about_exercise: bool) -> bool:
    """Only stand-alone lecture questions: a follow-up means what came before it, and
    exercise help follows the student's own hint ladder."""
    return category == "lecture" and intent != "exercise" and not about_exercise


def threshold(settings: Settings, a: Meaning, b: Meaning) -> float:
    """The cosine two keys must exceed: lower across scripts, where the embedder puts even
    the same question further apart (eval memory --reuse)."""
    if _cjk(a.text) != _cjk(b.text):
        return settings.reuse_threshold_cross_script
    return settings.reuse_threshold


def refusal(settings: Settings, asked: Meaning, earlier: Meaning, score: float) -> str:
    """Why an earlier question is not reused ("" when it is)."""
    if score <= threshold(settings, asked, earlier):
        return "distance"
    return differs(asked, earlier)


def _cjk(text: str) -> bool:
    return re.search(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]", text) is not None


class AnswerReuse:
    """One turn's reuse: the earlier answer found for its question, and the entry it leaves."""

    def __init__(self, ws: Workspace, turn: TurnOf, state: CourseState | None = None) -> None:
        self.ws = ws
        self.turn = turn
        self.state = state  # the course as the turn read it (else read when needed)
        self.settings = ws.settings
        self.found: Reused | None = None
        self.milliseconds = 0.0
        self.language = "en"  # the question's, for the asked-before line
        self._probe: tuple[str, str, npt.NDArray[np.float32], int] | None = None
        self._noted = False

    # -- before the search -------------------------------------------------------------------
    def applies(self, cat: Categorization) -> bool:
        """Whether the turn may reuse an earlier answer: a stand-alone lecture question,
        outside a class, with reuse on."""
        return (self.settings.reuse and self.turn.live is None
                and reusable(cat.category, cat.intent, cat.about_exercise))

    def find(self, cat: Categorization, types: tuple[DocType, ...]) -> Evidence | None:
        """The earlier answer's passages as the turn's evidence, or None to search."""
        return self.lookup(ReuseQuery(self.turn.question, cat.language, cat.category,
                                      cat.intent, cat.about_exercise, types))

    def lookup(self, q: ReuseQuery) -> Evidence | None:
        """`find` for a question already put as the stage needs it."""
        if (not self.settings.reuse or self.turn.live is not None
                or not reusable(q.category, q.intent, q.about_exercise)):
            return None
        started = time.perf_counter()
        self.language = q.language
        try:
            self.found = self._find(q)
        except CoursetutorError as exc:  # a store failure costs the reuse only
            log.warning("answer reuse skipped: %s", exc)
        self.milliseconds = round((time.perf_counter() - started) * 1000, 1)
        if self.found is None:
            return None
        return Evidence(self.found.hits, round(self.found.score, 4), "correct")

    def _find(self, q: ReuseQuery) -> Reused | None:
        tenant, course = self.ws.tenant, self.turn.course
        key = question_key(q.question)
        vector = self.ws.embedder.embed_query(key)
        generation = (self.state.generation if self.state
                      else self.ws.store.reuse.generation(tenant, course))
        self._probe = (key, q.language, vector, generation)
        asked = meaning(q.question, q.language)
        searched_in = self._searched_in(tenant, course)
        for near in self.ws.store.reuse.nearest(tenant, course, self.ws.embedder.model_id,
                                                vector, self.settings.reuse_candidates):
            entry = near.entry
            if refusal(self.settings, asked, meaning(entry.question, entry.language),
                       near.score):
                continue
            if searched_in(entry.language) != searched_in(q.language):
                # a course with material in both languages: each question is searched in
                # its own, and the English answer's passages would hide the Italian notes
                continue
            hits = self._hits(entry, q.types, generation)
            if hits:
                return Reused(entry, near.score, hits)
        return None

    def _searched_in(self, tenant: str, course: str) -> Callable[[str], str]:
        """The language a question in a given language is searched in, in this course."""
        if self.state:
            languages, main = self.state.languages, self.state.course.language
        else:
            languages = self.ws.store.course_languages(tenant, course)
            main = self.ws.store.course_language(tenant, course)
        return lambda language: search_language(language, main, languages)

    def _hits(self, entry: AnsweredQuestion, types: tuple[DocType, ...],
              generation: int) -> list[Hit]:
        """The entry's passages, in the order the answer had them; none when one is gone
        (the course changed: the entry is removed) or hidden from this student."""
        chunks = self.ws.store.get_chunks(SearchFilters(self.ws.tenant, entry.course),
                                          list(entry.chunk_ids))
        if len(chunks) < len(set(entry.chunk_ids)):
            if entry.generation != generation:
                self.ws.store.reuse.remove(self.ws.tenant, entry.course, [entry.id])
            return []
        if any(c.doc_type not in types for c in chunks.values()):
            return []
        n = len(entry.chunk_ids)
        return [Hit(chunks[cid], round(1.0 - i / (2 * n), 4), {}, {}, chunks[cid].locator)
                for i, cid in enumerate(entry.chunk_ids)]

    # -- in the prompt -----------------------------------------------------------------------
    def reference(self) -> str:
        """The earlier answer for the prompt ("" when the turn reuses none)."""
        if self.found is None:
            return ""
        earlier = _MARKER.sub("", self.found.entry.answer).strip()
        if len(earlier) > REFERENCE_CHARS:
            earlier = earlier[:REFERENCE_CHARS].rsplit(" ", 1)[0] + " ..."
        return "\n" + prompts.render("reuse_reference", answer=earlier) + "\n"

    def note(self, cited: bool) -> str:
        """The asked-before line the reply ends with (before its sources, stored with it),
        when the turn reused an earlier answer and cites passages; else ""."""
        if self.found is None or not cited:
            return ""
        self._noted = True
        return self._line()

    def _line(self) -> str:
        return reply("asked_before", self.language)

    # -- after the turn is stored -------------------------------------------------------------
    def keep(self, answer: Answer, stored: Turn) -> Answer:
        """The answer with the id of the entry it reused; an answered lecture question that
        reused none is kept for the next students."""
        if self._noted and self.found is not None:
            return dataclasses.replace(answer, reused_from=str(self.found.entry.id))
        self._remember(answer, stored)
        return answer

    def _remember(self, answer: Answer, stored: Turn) -> None:
        """Keep an answered lecture question for the next students."""
        if (self._probe is None or self.found is not None or not answer.covered
                or not answer.complete or answer.grade != "correct" or not answer.context
                or not reusable(answer.category, answer.intent, False)):
            return
        key, language, vector, generation = self._probe
        t = self.turn
        try:
            self.ws.store.reuse.add(AnsweredQuestion(
                tenant=self.ws.tenant, course=t.course, student=t.student,
                turn_id=f"{stored.session_id}:{stored.ordinal}", question=t.question, key=key,
                language=language, model=self.ws.embedder.model_id, vector=vector,
                chunk_ids=answer.context, answer=answer.text, generation=generation))
        except CoursetutorError as exc:
            log.warning("answer not kept for reuse: %s", exc)
