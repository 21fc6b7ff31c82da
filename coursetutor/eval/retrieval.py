"""Retrieval evaluation: BM25 alone, vectors alone and hybrid on one dataset."""

from __future__ import annotations

import dataclasses
import hashlib
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import EmptyQueryError, InputError
from ..ingest.pipeline import DraftDocument, Ingestor
from ..llm.router import CallRecord, Router
from ..retrieval.glossary import has_glossary
from ..retrieval.language import UNKNOWN, detect_language
from ..retrieval.retriever import MODES
from ..tutor.replies import language_name
from ..tutor.rewrite import translation
from ..types import ChunkDraft, FileMeta, Hit, Locator
from ..workspace import Workspace
from . import datasets, tvqa
from .datasets import Question, UnitSet
from .metrics import summarize

K = 10
Rerank = Callable[[list[Hit]], list[Hit]]
Judge = Callable[[Any, list[Hit]], list[bool]]


def _digest(*parts: str) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode("utf-8"))
    return h.hexdigest()[:12]


def load_units(ws: Workspace, course: str, units: UnitSet) -> None:
    """Store every unit as one chunk (documents group them), embedding only new texts."""
    ws.create_course(course, course, units.language)
    ingestor = Ingestor(ws.store, ws.embedder, ws.settings)
    by_doc: dict[str, list[Any]] = {}
    for u in units.units:
        by_doc.setdefault(u.document, []).append(u)
    for doc_id, members in by_doc.items():
        digest = _digest(*(u.text for u in members))
        old = ws.store.find_document(ws.tenant, course, doc_id)
        if old is not None and old.content_hash == digest:
            continue
        drafts = [
            ChunkDraft(u.text, (), Locator(anchor=u.id), i, ws.embedder.token_count(u.text))
            for i, u in enumerate(members)
        ]
        doc = DraftDocument(doc_id, members[0].title, doc_id, digest, 0, drafts)
        ingestor.add(ws.tenant, course, units.language, doc,
                     FileMeta(doc_type="textbook", language=units.language))


@dataclasses.dataclass
class QueryTranslator:
    """The tutor's translation step: a question in another language than the course's is
    searched as its translation, with the original appended where a keyword dictionary reads
    it (`translate_query`, the same prompt, model and rule)."""

    router: Router
    log: list[CallRecord] = dataclasses.field(default_factory=list)
    seconds: list[float] = dataclasses.field(default_factory=list)
    unchanged: int = 0  # translated questions the model gave no usable line for

    alone: str = ""  # the last question's translation alone ("" when not translated)

    def __call__(self, question: str, language: str) -> str:
        """`question` as the tutor would search it in a course written in `language`."""
        # the language is decided as a turn decides it (the course's when unclear)
        self.alone = ""
        if language == UNKNOWN or detect_language(question, default=language) == language:
            return question  # a course of no known language: nothing to translate into
        started = time.perf_counter()
        self.alone = translation(self.router, question, language_name(language), self.log)
        self.seconds.append(time.perf_counter() - started)
        self.unchanged += not self.alone
        source = detect_language(question, default=language)
        if not self.alone:
            return question
        return (f"{self.alone} {question}" if has_glossary(source, language) else self.alone)

    def report(self) -> dict[str, Any]:
        llm = self.router.llm("categorize")  # the task translate_query runs under
        model = Path(llm.model).name if llm.backend == "local" else llm.model
        median = round(statistics.median(self.seconds), 3) if self.seconds else None
        return {"backend": llm.backend, "model": model, "translated": len(self.seconds),
                "unchanged": self.unchanged, "median_seconds": median,
                "seconds": round(sum(self.seconds), 1)}


def run_modes(
    ws: Workspace, course: str, questions: list[Any], text_of: Callable[[Any], str],
    judge: Judge, progress: Callable[[int, int], None] | None = None,
    translator: QueryTranslator | None = None, rerank: Rerank | None = None,
) -> dict[str, dict[str, float]]:
    """Search every question in every mode and summarize the hit flags per mode.

    With a `translator`, each question is first translated as the tutor would translate it
    for this course; with a `rerank` (a student's profile rerank), the hybrid results are
    also judged as reranked ("hybrid_profile", with the number of rankings it changed).
    """
    flags: dict[str, list[list[bool]]] = {m: [] for m in MODES}
    other: list[list[bool]] = []  # hybrid, the other way: with the original, or without it
    profiled: list[list[bool]] = []
    changed = 0
    language = ws.store.course_language(ws.tenant, course)
    for n, q in enumerate(questions):
        text = text_of(q)
        if translator is not None:
            original, text = text, translator(text, language)
            variant = (f"{translator.alone} {original}" if translator.alone and
                       text == translator.alone else translator.alone or text)
            other.append(judge(q, _search(ws, variant, course, "hybrid")))
        for mode in MODES:
            hits = _search(ws, text, course, mode)
            flags[mode].append(judge(q, hits))
            if mode == "hybrid" and rerank is not None:
                reranked = rerank(hits)
                changed += [h.chunk.id for h in reranked] != [h.chunk.id for h in hits]
                profiled.append(judge(q, reranked))
        if progress:
            progress(n + 1, len(questions))
    out = {mode: summarize(flags[mode]) for mode in ("bm25", "vector", "hybrid")}
    if translator is not None:
        # the tutor's way is `hybrid`; this is the other one ("translation + original" where
        # the tutor searches the translation alone, the translation alone where it keeps both)
        out["hybrid_other_query"] = summarize(other)
    if rerank is not None:
        out["hybrid_profile"] = {**summarize(profiled), "rankings_changed": changed}
    return out


def _search(ws: Workspace, text: str, course: str, mode: str) -> list[Any]:
    try:
        return ws.search(text, course, k=K, mode=mode)
    except EmptyQueryError:  # a dataset question with no words counts as a miss
        return []


@dataclasses.dataclass
class Prepared:
    """A dataset loaded as a course: its questions, how to read them and how to judge hits."""

    name: str
    course: str
    questions: list[Any]
    text_of: Callable[[Any], str]
    judge: Judge
    units: int
    started: float
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)


def prepare_units(ws: Workspace, name: str, units: UnitSet,
                  query_texts: dict[str, str] | None = None) -> Prepared:
    """Store `units` as a course; `query_texts` replaces question texts (cross-lingual runs)."""
    started = time.perf_counter()
    course = f"eval-{name}-{_digest(*(u.text for u in units.units))}"
    load_units(ws, course, units)
    questions: list[Question] = [
        q for q in units.questions if query_texts is None or q.id in query_texts
    ]

    def text_of(q: Question) -> str:
        return query_texts[q.id] if query_texts is not None else q.text

    def judge(q: Question, hits: list[Hit]) -> list[bool]:
        return [h.chunk.locator.anchor in q.gold for h in hits]

    return Prepared(name, course, questions, text_of, judge, len(units.units), started,
                    {"language": units.language})


def prepare_tvqa(ws: Workspace, videos: Path, questions_path: Path,
                 limit: int | None = None) -> Prepared:
    """Ingest every transcript through the real loader and chunker; judge time hits."""
    started = time.perf_counter()
    course = f"eval-tvqa-{_digest(videos.read_text(encoding='utf-8'))}"
    ws.create_course(course, "TutorialVQA", "en")
    with tempfile.TemporaryDirectory() as tmp:
        files = tvqa.write_segments(videos, Path(tmp))
        # the video's title is its document title, as a teacher would give it
        items = [(f, FileMeta(doc_type="transcript", language="en", title=title))
                 for f, title in files]
        report = ws.ingest(course, items)
    questions = tvqa.load_questions(videos, questions_path)[:limit]

    def judge(q: tvqa.TimedQuestion, hits: list[Hit]) -> list[bool]:
        return [tvqa.is_hit(q, _video_of(h.chunk.document_id), h.locator) for h in hits]

    chunks = report.totals()["chunks"] or sum(d.chunks for d in ws.documents(course))
    return Prepared("tvqa", course, questions, lambda q: q.text, judge, chunks, started,
                    {"language": "en"})


def evaluate(ws: Workspace, prepared: Prepared,
             progress: Callable[[int, int], None] | None = None,
             translator: QueryTranslator | None = None,
             rerank: Rerank | None = None) -> dict[str, Any]:
    """Search a prepared set in every mode; the report of `eval retrieval`."""
    p = prepared
    result = run_modes(ws, p.course, p.questions, p.text_of, p.judge, progress, translator,
                       rerank)
    return {"dataset": p.name, **p.extra, "questions": len(p.questions), "units": p.units,
            "seconds": round(time.perf_counter() - p.started, 1), **result,
            **_translation(translator)}


def eval_units(
    ws: Workspace, name: str, units: UnitSet, query_texts: dict[str, str] | None = None,
    progress: Callable[[int, int], None] | None = None,
    translator: QueryTranslator | None = None,
) -> dict[str, Any]:
    """Evaluate unit retrieval; `query_texts` replaces question texts (cross-lingual runs),
    `translator` translates them as the tutor does (its report is added as `translate`)."""
    return evaluate(ws, prepare_units(ws, name, units, query_texts), progress, translator)


def eval_tvqa(
    ws: Workspace, videos: Path, questions_path: Path,
    progress: Callable[[int, int], None] | None = None, limit: int | None = None,
    translator: QueryTranslator | None = None,
) -> dict[str, Any]:
    """Evaluate TutorialVQA: time hits in the right video."""
    return evaluate(ws, prepare_tvqa(ws, videos, questions_path, limit), progress, translator)


@dataclasses.dataclass(frozen=True)
class SetSpec:
    """One set of `eval retrieval --all`: files inside the datasets folder."""

    name: str
    dataset: str
    path: str
    query_lang: str | None = None
    videos: str | None = None


ALL_SETS = (
    SetSpec("korquad-ko", "squad", "korquad-dev-ko.json"),
    SetSpec("drcd-zh", "squad", "drcd-dev-zh.json"),
    SetSpec("xquadr-en", "xquadr", "xquadr-en.json"),
    SetSpec("xquadr-de", "xquadr", "xquadr-de.json"),
    SetSpec("xquadr-zh", "xquadr", "xquadr-zh.json"),
    SetSpec("xquadr-de-en", "xquadr", "xquadr-en.json", query_lang="xquadr-de.json"),
    SetSpec("xquadr-zh-en", "xquadr", "xquadr-en.json", query_lang="xquadr-zh.json"),
    SetSpec("squad-it", "squad", "squadit-dev.json"),
    SetSpec("clapnq", "clapnq", "clapnq-ans.jsonl"),
    SetSpec("tvqa", "tvqa", "tvqa-dev.json", videos="tvqa-videos.json"),
)


def dataset_language(dataset: str, path: Path, given: str | None) -> tuple[str, str | None]:
    """The course language of a dataset file and a warning, if any.

    `given` (`--language`) wins; otherwise the language is detected from the file's text as
    ingest detects a document's. A `-xx` suffix of the file name whose script disagrees with
    the text's is reported (the text decides); text of no known language takes the suffix's.
    """
    if dataset == "clapnq" or dataset == "tvqa":
        return given or "en", None
    suffix = datasets.suffix_language(path)
    detected = datasets.text_language(path)
    if given:
        return given, None
    if detected == UNKNOWN and suffix:
        return suffix, None  # the text does not tell: the name does
    if datasets.suffix_disagrees(suffix, detected):
        return detected, (f"{path.name}: the name says {suffix!r} but the text reads as "
                          f"{detected!r}; evaluating as {detected!r} (--language overrides)")
    return detected, None


def prepare(ws: Workspace, dataset: str, path: Path, query_lang: Path | None = None,
            videos: Path | None = None, limit: int | None = None,
            language: str | None = None, name: str | None = None) -> tuple[Prepared, list[str]]:
    """Load one dataset file as a course; returns it and the warnings about its labels."""
    if dataset == "tvqa":
        if videos is None:
            raise InputError("--videos FILE (tvqa-videos.json) is required for tvqa")
        return prepare_tvqa(ws, videos, path, limit), []
    lang, warning = dataset_language(dataset, path, language)
    if dataset == "xquadr":
        units = datasets.load_xquadr(path, lang)
    elif dataset == "squad":
        units = datasets.load_squad(path, lang)
    else:
        units = datasets.load_clapnq(path)
    if limit:
        units.questions = units.questions[:limit]
    queries = datasets.xquadr_questions(query_lang) if query_lang else None
    if name is None:
        base = path.stem if dataset == "squad" else dataset
        if query_lang is not None:
            asked = datasets.suffix_language(query_lang) or datasets.text_language(query_lang)
            base = f"{base}-{asked}"
        name = base if dataset == "squad" else f"{base}-{lang}"
    return prepare_units(ws, name, units, queries), [warning] if warning else []


def _translation(translator: QueryTranslator | None) -> dict[str, Any]:
    return {} if translator is None else {"translate": translator.report()}


def _video_of(document_id: str) -> str:
    """'video-14643-json' -> '14643'."""
    return document_id.removeprefix("video-").removesuffix("-json")
