"""Time saved per reused turn, measured side by side in one run.

The XQuAD-R English sentences are a course. For each of the first N English questions whose
German or Chinese version the gate would let reuse it, the English question is answered as far
as the context (search, grade, context: the tutor's own stages) and kept as an entry; then its
other-language version is taken both ways, alternately first: searched and graded as if
nothing were kept, and through the reuse stage (key embedding, lookup, gate, the kept
passages). Both build the same context. What a turn not reused pays for the lookup is
measured on questions with no entry. The model the settings name grades ambiguous searches
and counts the context's tokens, as in a turn; with `llm_backend = "none"` neither happens.
"""

from __future__ import annotations

import dataclasses
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..llm.router import CallRecord, Router
from ..store.reuse import AnsweredQuestion
from ..tutor.context import Budget, build_context
from ..tutor.evidence import Evidence, EvidenceFinder
from ..tutor.reuse import AnswerReuse, ReuseQuery, refusal
from ..tutor.reuse_key import question_key
from ..types import DOC_TYPES, DocType
from ..workspace import Workspace
from . import datasets
from .memory_reuse import Side
from .retrieval import prepare_units

STUDENT = "eval-reuse"
LOCAL_BUDGET = 1500  # the local model's context budget, when no model is built


@dataclasses.dataclass
class _Turn:
    """The turn the reuse stage reads."""

    course: str
    question: str
    student: str = STUDENT
    session_id: str = "eval"
    live: object | None = None
    reuse: AnswerReuse | None = None


def time_reuse(ws: Workspace, router: Router, folder: Path, sides: dict[str, Side],
               limit: int, progress: Callable[[int, int], None] | None = None
               ) -> dict[str, Any]:
    """Medians of search + context against reuse + context, on up to `limit` reused turns."""
    units = datasets.load_xquadr(folder / "xquadr-en.json", "en")
    course = prepare_units(ws, "xquadr-reuse-en", units).course
    ws.store.reuse.forget(ws.tenant, STUDENT, course)
    llm = router.llm("answer") if router.enabled else None
    count = llm.count_tokens if llm else ws.embedder.token_count
    budget = Budget.split(ws.settings.context_budget_tokens or (
        llm.default_context_budget if llm else LOCAL_BUDGET))
    types: tuple[DocType, ...] = tuple(d for d in DOC_TYPES if d != "solution")
    log: list[CallRecord] = []
    finder = EvidenceFinder(ws, router, log)

    def context_ids(ev: Evidence, text: str) -> tuple[str, ...]:
        ctx = build_context(ev.hits, text, "en", budget, count,
                            refined=ws.settings.refine_context_tokens)
        return tuple(s.hit.chunk.id for s in ctx.sources)

    def searched(text: str) -> float:
        before = finder.search_ms
        started = time.perf_counter()
        context_ids(finder.find(text, course, types, "concept"), text)
        search_only.append(finder.search_ms - before)
        return (time.perf_counter() - started) * 1000

    def reused(text: str, language: str) -> float | None:
        started = time.perf_counter()
        stage = AnswerReuse(ws, _Turn(course, text))
        ev = stage.lookup(ReuseQuery(text, language, "lecture", "concept", False, types))
        if ev is None:
            return None
        context_ids(ev, text)
        return (time.perf_counter() - started) * 1000

    pairs = _reusable_pairs(ws, sides)[:limit]
    with_reuse: list[float] = []
    without: list[float] = []
    search_only: list[float] = []
    skipped = 0
    for n, (i, lang) in enumerate(pairs):
        english, other = sides["en"].questions[i].text, sides[lang].questions[i].text
        ev = finder.find(english, course, types, "concept")
        if ev.grade == "incorrect" or not ev.hits:
            skipped += 1  # the English question is not answered: nothing to keep
            continue
        _keep(ws, course, english, context_ids(ev, english))
        # alternate which goes first, so neither always meets a warmer cache
        first_reuse = n % 2 == 0
        a = reused(other, lang) if first_reuse else None
        b = searched(other)
        a = a if first_reuse else reused(other, lang)
        if a is not None:
            with_reuse.append(a)
            without.append(b)
        else:
            search_only.pop()
            skipped += 1
        if progress:
            progress(n + 1, len(pairs))
    misses = [m for m in (_miss(ws, course, q.text, types)
                          for q in sides["zh"].questions[-limit:]) if m is not None]
    ws.store.reuse.forget(ws.tenant, STUDENT, course)
    report = _report(with_reuse, without, misses, router, llm is not None, log)
    report["median_ms_search_alone"] = _median(search_only)
    report["skipped"] = skipped
    return report


def _reusable_pairs(ws: Workspace, sides: dict[str, Side]) -> list[tuple[int, str]]:
    """(index, language) of paraphrases the configured thresholds and gate pass, German and
    Chinese taken in turn."""
    english = sides["en"]
    found: dict[str, list[tuple[int, str]]] = {}
    for lang in ("de", "zh"):
        found[lang] = [
            (i, lang) for i in range(len(english.questions))
            if not refusal(ws.settings, sides[lang].meanings[i], english.meanings[i],
                           float(sides[lang].vectors[i] @ english.vectors[i]))]
    return [p for pair in zip(found["de"], found["zh"], strict=False) for p in pair]


def _keep(ws: Workspace, course: str, question: str, chunk_ids: Sequence[str]) -> None:
    key = question_key(question)
    ws.store.reuse.add(AnsweredQuestion(
        tenant=ws.tenant, course=course, student=STUDENT, turn_id="eval:0", question=question,
        key=key, language="en", model=ws.embedder.model_id, vector=ws.embedder.embed_query(key),
        chunk_ids=tuple(chunk_ids), answer="(kept by eval memory --reuse)",
        generation=ws.store.reuse.generation(ws.tenant, course)))


def _miss(ws: Workspace, course: str, text: str, types: tuple[DocType, ...]) -> float | None:
    """What the lookup costs a question it finds nothing for (None when it did find one)."""
    stage = AnswerReuse(ws, _Turn(course, text))
    found = stage.lookup(ReuseQuery(text, "zh", "lecture", "concept", False, types))
    return None if found is not None else stage.milliseconds


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 1) if values else None


def _report(with_reuse: list[float], without: list[float], misses: list[float],
            router: Router, model: bool, log: list[CallRecord]) -> dict[str, Any]:
    median = _median
    saved = [b - a for a, b in zip(with_reuse, without, strict=True)]
    reuse_ms, search_ms = median(with_reuse), median(without)
    return {
        "turns": len(with_reuse),
        "model": f"{router.settings.llm_backend} {router.settings.llm_model or 'bundled'}"
                 if model else "none (no grading calls, approximate token counts)",
        "grade_model_calls": sum(1 for c in log if c.task == "grade"),
        "median_ms_search_and_context": search_ms,
        "median_ms_reuse_and_context": reuse_ms,
        "median_ms_saved_per_reused_turn": median(saved),
        "ratio": round(search_ms / reuse_ms, 2) if search_ms and reuse_ms else None,
        "median_ms_lookup_on_a_miss": median(misses),
        "misses_measured": len(misses),
    }
