"""Retrieve and grade (corrective RAG): answer, widen the search, or say it is not covered."""

from __future__ import annotations

import dataclasses
import itertools
import json
import re
import time
from collections.abc import Callable, Sequence

from ..llm import GenParams, Message
from ..llm.router import CallRecord, Router
from ..retrieval.grading import Grade, evidence_score, grade
from ..retrieval.language import STOPWORDS
from ..retrieval.retriever import CJK_LANGUAGES, SearchTrace
from ..types import DocType, Hit
from ..workspace import Workspace
from . import prompts
from .context import source_header, trim_to_question
from .exercise import EXERCISE_TYPES
from .pedagogy import preferred_types

PREFERENCE_BOOST = 1.15  # preferred document types rank first among close candidates
# exercise help reads the exercise and this many passages of the course that teach its method:
# searched with the question alone ("Can you help me with exercise 3?"), the sources were four
# other exercises and a passage on Newton's convergence, and not the bisection error bound
# that exercise 3 asks the student to prove
TAUGHT = 2
_QUESTION_WORDS = frozenset(
    "what which who how why when where does do did is are can could would should explain tell "
    "me please about give".split()
)
_DROPPED = _QUESTION_WORDS.union(*STOPWORDS.values())  # built once, not per query


@dataclasses.dataclass(frozen=True)
class Evidence:
    """The graded passages for one question."""

    hits: list[Hit]
    score: float
    grade: Grade
    widened: bool = False
    checked_by_model: bool = False
    # ambiguous, and the passages are in another language than the question: the grade model
    # would judge a machine translation of it, so the answer model, which reads the question
    # as asked, decides whether they cover it (it may still reply NOT_COVERED)
    deferred: bool = False


def keyword_query(query: str) -> str:
    """The question without question and stop words (a second, sharper query)."""
    words = [w for w in re.findall(r"\w+", query) if w.lower() not in _DROPPED]
    return " ".join(words) or query


def prefer(hits: list[Hit], types: Sequence[str]) -> list[Hit]:
    """Re-rank so preferred document types win among close candidates."""
    def key(h: Hit) -> float:
        return h.score * (PREFERENCE_BOOST if h.chunk.doc_type in types else 1.0)

    return sorted(hits, key=key, reverse=True)


class EvidenceFinder:
    """Searches a course for a question and grades what it found."""

    def __init__(self, workspace: Workspace, router: Router, log: list[CallRecord],
                 rerank: Callable[[list[Hit]], list[Hit]] = list,
                 state: tuple[str, int | None] | None = None) -> None:
        self.ws = workspace
        self.state = state  # the course's search state, when the turn has read it
        self.rerank = rerank  # the student's profile rerank (memory/adaptive.py)
        self.settings = workspace.settings
        self.router = router
        self.log = log
        self.search_ms = 0.0  # time spent searching; the rest of find() is grading

    def _search(self, query: str, course: str, types: tuple[DocType, ...], k: int,
                intent: str) -> tuple[list[Hit], float]:
        trace = SearchTrace()
        started = time.perf_counter()
        hits = self.ws.search(query, course, k=k, doc_types=types, trace=trace,
                              state=self.state)
        self.search_ms += (time.perf_counter() - started) * 1000
        cross = bool(hits) and all(h.chunk.language != trace.language for h in hits[:3])
        cjk = trace.language in CJK_LANGUAGES and not cross
        score = evidence_score(hits, trace.keyword_evidence, cross_lingual=cross, cjk=cjk)
        # the grade stays the course's: a profile orders the passages, never decides coverage
        return prefer(self.rerank(hits), preferred_types(intent)), score

    def find(self, query: str, course: str, types: tuple[DocType, ...], intent: str,
             k: int = 6, pinned: Hit | None = None, language: str = "",
             asked: str = "") -> Evidence:
        """Search, grade, and on an ambiguous grade widen the search and decide again: by
        the grade model, or, when the passages are in another language than the question, by
        the answer model itself (`Evidence.deferred`). `language` is the question's as the
        student asked it (`query` may be its translation).

        A `pinned` passage (the exercise the student names) comes first and makes the
        evidence sufficient: the question is about the course's own material. After it come
        the passages that teach its method (`taught`), not other exercises.

        `asked`, the question as the student wrote it when `query` is its translation, is
        searched too, and the two searches take turns, the better graded first: the small
        model mistranslates names ("뉴턴-랩슨" as "Newton-Laplace", "헤시안" as "Hamiltonian"),
        and e5 matches the original across languages better than such a translation; but
        a search in the course's own language finds the passage that names what is asked
        ("Cosa dice il teorema degli zeri?": "Teorema 33 (degli zeri)" first, where the
        English question's passages were a derivative's limits and a corollary).
        """
        if pinned is not None:
            taught, score = self.taught(pinned, query, course, types, intent)
            return Evidence([pinned, *taught], score, "correct")
        hits, score = self._search(query, course, types, k, intent)
        if asked and asked != query:
            other, other_score = self._search(asked, course, types, k, intent)
            first, second = (other, hits) if other_score > score else (hits, other)
            hits, score = _alternate(first, second, k), max(score, other_score)
        verdict = grade(score, self.settings.grade_correct, self.settings.grade_incorrect)
        if verdict != "ambiguous":
            return Evidence(hits, score, verdict)
        sharper = keyword_query(query)
        more, more_score = self._search(sharper, course, types, 2 * k, intent)
        merged = _merge(hits, more, 2 * k)
        score = max(score, more_score)
        verdict = grade(score, self.settings.grade_correct, self.settings.grade_incorrect)
        if verdict != "ambiguous" or not self.router.enabled:
            return Evidence(merged, score, verdict, widened=True)
        if language and all(h.chunk.language and h.chunk.language != language
                            for h in merged[:3]):
            return Evidence(merged, score, "correct", widened=True, deferred=True)
        supported = self._model_check(query, merged[:3])
        return Evidence(merged, score, "correct" if supported else "incorrect", True, True)

    def taught(self, exercise: Hit, query: str, course: str, types: tuple[DocType, ...],
               intent: str) -> tuple[list[Hit], float]:
        """The passages of the lectures, slides, textbook or transcripts that teach what
        `exercise` asks, searched with its own text and the student's words (`query`), and
        how well they match; never another exercise, and a solution only where the course
        shows its solutions (`types`)."""
        teaching = tuple(t for t in types if t not in EXERCISE_TYPES)
        if not teaching:
            return [], 0.0
        hits, score = self._search(f"{exercise.chunk.text}\n{query}", course, teaching,
                                   TAUGHT, intent)
        return hits[:TAUGHT], score

    def _model_check(self, question: str, hits: Sequence[Hit]) -> bool:
        """Ask the grading model whether the passages hold the answer (JSON yes/no)."""
        llm = self.router.llm("grade")
        language = (self.state[0] if self.state else
                    self.ws.store.course_language(self.ws.tenant, hits[0].chunk.course))
        blocks = [
            source_header(i + 1, h) + "\n"
            + trim_to_question(h.chunk.text, question, language, 180, llm.count_tokens)
            for i, h in enumerate(hits)
        ]
        prompt = prompts.render("grade", sources="\n\n".join(blocks), question=question)
        reply = self.router.complete(
            "grade", [Message("user", prompt)], GenParams(temperature=0.0, max_tokens=16,
                                                          json=True), self.log)
        return parse_supported(reply.text)


def parse_supported(raw: str) -> bool:
    """Read {"supported": bool}; anything unreadable counts as not supported."""
    match = re.search(r"\{.*?\}", raw, re.DOTALL)
    try:
        data = json.loads(match.group(0)) if match else None
    except json.JSONDecodeError:
        data = None
    if isinstance(data, dict) and isinstance(data.get("supported"), bool):
        return bool(data["supported"])
    return raw.strip().lower().startswith(("yes", "true"))


def _alternate(first: list[Hit], second: list[Hit], k: int) -> list[Hit]:
    """The two lists' passages in turns, `first`'s first, each once, `k` at most."""
    out: list[Hit] = []
    seen: set[str] = set()
    for pair in itertools.zip_longest(first, second):
        for hit in pair:
            if hit is not None and hit.chunk.id not in seen:
                seen.add(hit.chunk.id)
                out.append(hit)
    return out[:k]


def _merge(first: list[Hit], second: list[Hit], k: int) -> list[Hit]:
    seen = {h.chunk.id for h in first}
    return (first + [h for h in second if h.chunk.id not in seen])[:k]
