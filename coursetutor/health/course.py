"""The course health check: where will the tutor be weak, before students arrive?

For each section of each document a question is made from the section's own text (by the
model when generation is on, from its heading or first sentence when it is off), searched in
the course, and (with the model on) answered by the tutor. A section passes the search when one
of its own chunks comes back in the top k; an answer passes when it is not a refusal and the
answer check removed nothing. Pages without a text layer and pages whose text looks garbled
(`garble.py`) are listed per document.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

from ..errors import CoursetutorError
from ..ingest.loaders import load
from ..llm import GenParams, Message
from ..llm.router import CallRecord
from ..memory.privacy import forget_student
from ..retrieval.language import UNKNOWN
from ..tutor import prompts
from ..tutor.garble import garble_reasons
from ..tutor.replies import language_name
from ..tutor.turn import Tutor
from ..types import Answer, Document, Hit
from .sections import (
    Unit,
    heading_question,
    key_sentence,
    repeated_topics,
    sample_evenly,
    units_of,
)

__all__ = ["CHECK_STUDENT", "CourseCheck", "DocumentCheck", "SectionCheck", "check_course",
           "check_dict"]

CHECK_STUDENT = "course-check"  # the student id the check's questions are asked as
NOT_FOUND = "its own question does not find it"
Progress = Callable[[int, int], None]  # (sections done, sections in all)


@dataclasses.dataclass(frozen=True)
class SectionCheck:
    """One section: the question asked, where search ranked the section, the answer's fate."""

    name: str
    locator: str
    question: str
    asked_by: str  # model, heading or sentence
    rank: int | None  # 1-based rank of the section's best chunk; None when not in the top k
    passed: bool | None  # None when no answer was generated (model off)
    problems: tuple[str, ...]

    @property
    def found(self) -> bool:
        return self.rank is not None


@dataclasses.dataclass(frozen=True)
class DocumentCheck:
    """A document's sections with its pages that have no text or look garbled."""

    id: str
    title: str
    doc_type: str
    pages: int
    sections: tuple[SectionCheck, ...]
    unchecked: int  # sections left out beyond the per-document limit
    no_text_pages: tuple[int, ...]
    garbled_pages: tuple[tuple[int, tuple[str, ...]], ...]  # (page, reasons)

    @property
    def found_share(self) -> float | None:
        return _share([s.found for s in self.sections])

    @property
    def passed_share(self) -> float | None:
        return _share([s.passed for s in self.sections if s.passed is not None])

    @property
    def pages_flagged(self) -> int:
        return len(set(self.no_text_pages) | {p for p, _ in self.garbled_pages})


@dataclasses.dataclass(frozen=True)
class CourseCheck:
    course: str
    k: int
    answered: bool  # the model was on: questions generated and answered
    documents: tuple[DocumentCheck, ...]
    seconds: float


def _share(values: list[bool]) -> float | None:
    return round(sum(values) / len(values), 3) if values else None


class HealthCheck:
    """Runs the check of one course with one tutor (its workspace, store and model)."""

    def __init__(self, tutor: Tutor, course: str, k: int = 5, max_sections: int = 25,
                 answer: bool = True) -> None:
        self.tutor = tutor
        self.ws = tutor.ws
        self.course = course
        self.k = k
        self.max_sections = max_sections
        self.generate = tutor.router.enabled
        self.answer = answer and self.generate
        self.log: list[CallRecord] = []
        self._session: str | None = None
        self._answer_solutions = False

    def run(self, progress: Progress | None = None,
            stop: Callable[[], bool] = lambda: False) -> CourseCheck:
        started = time.perf_counter()
        # students never see hidden solutions, so the tutor is not asked about them
        self._answer_solutions = self.ws.store.get_course(self.ws.tenant,
                                                          self.course).allow_solutions
        plan = [(doc, units_of(self.ws.store.export_chunks(self.ws.tenant, self.course, doc.id)))
                for doc in self.ws.documents(self.course)]
        total = sum(min(len(units), self.max_sections) for _, units in plan)
        done = 0
        checked: list[DocumentCheck] = []
        for doc, units in plan:
            chosen = sample_evenly(units, self.max_sections)
            repeated = repeated_topics(units)
            sections = []
            for unit in chosen:
                if stop():
                    raise CoursetutorError("the course check was stopped")
                sections.append(self._section(doc, unit, repeated))
                done += 1
                if progress:
                    progress(done, total)
            no_text, garbled = self._pages(doc, units)
            checked.append(DocumentCheck(doc.id, doc.title, doc.doc_type, doc.pages,
                                         tuple(sections), len(units) - len(chosen),
                                         no_text, garbled))
        if self._session:
            # the check's questions are not a student's: nothing of them stays in profiles,
            # class views, reused answers or analytics
            forget_student(self.ws.store, self.ws.settings, self.ws.tenant, CHECK_STUDENT,
                           self.course)
        return CourseCheck(self.course, self.k, self.answer, tuple(checked),
                           round(time.perf_counter() - started, 2))

    def _section(self, doc: Document, unit: Unit, repeated: frozenset[str]) -> SectionCheck:
        question, asked_by = self._question(doc, unit, repeated)
        rank = self._rank(question, doc, unit)
        problems: list[str] = [] if rank is not None else [NOT_FOUND]
        if unit.page is None:  # paged documents are judged page by page
            problems.extend(garble_reasons(unit.text))
        passed: bool | None = None
        if self.answer and question and (doc.doc_type != "solution"
                                         or self._answer_solutions):
            answer = self.tutor.ask(question, self.course, CHECK_STUDENT, self._session)
            self._session = answer.session_id
            passed, why = answer_verdict(answer)
            problems.extend(why)
        return SectionCheck(unit.name, unit.locator, question, asked_by, rank, passed,
                            tuple(problems))

    def _question(self, doc: Document, unit: Unit, repeated: frozenset[str]
                  ) -> tuple[str, str]:
        if self.generate:
            asked = self._model_question(doc, unit)
            if asked:
                return asked, "model"
        if unit.heading:
            return heading_question(unit, doc.language, repeated), "heading"
        return key_sentence(unit.text), "sentence"

    def _model_question(self, doc: Document, unit: Unit) -> str:
        # a passage of no known language: asked about in its own, not "the student's"
        language = "the passage's language" if doc.language == UNKNOWN else language_name(
            doc.language)
        prompt = prompts.render("check_question", language=language, section=unit.name,
                                passage=unit.text[:1500])
        reply = self.tutor.router.complete(
            "summarize", [Message("user", prompt)], GenParams(temperature=0.0, max_tokens=60),
            self.log)
        return clean_question(reply.text, self.tutor.settings.max_question_chars)

    def _rank(self, question: str, doc: Document, unit: Unit) -> int | None:
        if not question.strip():
            return None
        own = {c.id for c in unit.chunks}
        hits = self.ws.search(question, self.course, k=self.k)
        return next((i for i, h in enumerate(hits, 1) if _is_own(h, doc, unit, own)), None)

    def _pages(self, doc: Document, units: list[Unit]
               ) -> tuple[tuple[int, ...], tuple[tuple[int, tuple[str, ...]], ...]]:
        """Pages without a text layer (from the document's stored file) and pages whose
        stored text, what the tutor reads, looks garbled."""
        text: dict[int, list[str]] = {}
        for chunk in (c for u in units for c in u.chunks):
            if chunk.locator.page is not None:
                text.setdefault(chunk.locator.page, []).append(chunk.text)
        judged = ((page, garble_reasons("\n".join(text[page]))) for page in sorted(text))
        garbled = tuple((page, reasons) for page, reasons in judged if reasons)
        path = self.ws.files.find(doc)
        if path is None or path.suffix.lower() != ".pdf":
            return (), garbled
        try:
            parsed = load(path)
        except CoursetutorError:  # not one page had text: all were read by OCR
            return tuple(p for p in range(1, doc.pages + 1) if p not in text), garbled
        return tuple(p for p in parsed.no_text_pages if p not in text), garbled


def _is_own(hit: Hit, doc: Document, unit: Unit, own: set[str]) -> bool:
    """The hit is one of the section's chunks (or the same text, stored once for the course)."""
    return hit.chunk.id in own or (hit.chunk.document_id == doc.id
                                   and hit.chunk.section_path == unit.chunks[0].section_path
                                   and hit.chunk.locator.page == unit.page)


def answer_verdict(answer: Answer) -> tuple[bool, tuple[str, ...]]:
    """Whether an answer passed (not a refusal, nothing removed by the check) and why not."""
    problems = []
    if not answer.covered or answer.grade == "incorrect":
        problems.append("the tutor did not answer it")
    if answer.removed:
        n = len(answer.removed)
        problems.append(f"the answer check removed {n} statement{'s' if n > 1 else ''}")
    return not problems, tuple(problems)


def clean_question(text: str, limit: int) -> str:
    """The model's question without quotes, labels or a second line; '' when unusable (too
    short, too long, or not a question: small models sometimes chat or copy a heading)."""
    quotes = "\"'“”«»` "
    line = next((ln.strip() for ln in text.strip().splitlines() if ln.strip()), "")
    line = line.strip(quotes)
    for label in ("Question:", "Q:", "问题：", "Domanda:", "Frage:"):
        if line.startswith(label):
            line = line[len(label):].strip(quotes)
    asks = line.endswith(("?", "？"))
    return line if asks and 3 <= len(line) <= limit else ""


def check_course(tutor: Tutor, course: str, k: int = 5, max_sections: int = 25,
                 answer: bool = True, progress: Progress | None = None,
                 stop: Callable[[], bool] = lambda: False) -> CourseCheck:
    """Check `course`: each section's own question searched (and answered with the model)."""
    return HealthCheck(tutor, course, k, max_sections, answer).run(progress, stop)


def check_dict(check: CourseCheck) -> dict[str, object]:
    """The check as plain JSON-ready data (the CLI's --json and the API's report)."""
    return {
        "course": check.course, "k": check.k, "answered": check.answered,
        "seconds": check.seconds,
        "documents": [{
            "id": d.id, "title": d.title, "type": d.doc_type, "pages": d.pages,
            "found_share": d.found_share, "passed_share": d.passed_share,
            "pages_flagged": d.pages_flagged, "unchecked_sections": d.unchecked,
            "no_text_pages": list(d.no_text_pages),
            "garbled_pages": [{"page": p, "reasons": list(r)} for p, r in d.garbled_pages],
            "sections": [{"name": s.name, "locator": s.locator, "question": s.question,
                          "asked_by": s.asked_by, "found": s.found, "rank": s.rank,
                          "passed": s.passed, "problems": list(s.problems)}
                         for s in d.sections],
        } for d in check.documents],
    }
