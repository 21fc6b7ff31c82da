"""`coursetutor eval grade`: does the evidence grade tell covered questions from uncovered ones?

A SQuAD-format set is split by article: the first articles (up to `paragraphs` paragraphs)
become the course. Questions of those articles are answerable; questions of the other
articles are not (the course holds nothing of their article). Each question is searched as
the tutor searches it, and its evidence score is graded with the current rule and with the
former one (the English floor and keyword share for every language), side by side:

- answerable graded `correct` (answered), `ambiguous` (the model decides) or `incorrect`
  (wrongly declined);
- unanswerable graded `correct` (answered with no check: the failure that matters), or not;
- the AUROC of each score.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..config import Settings
from ..retrieval.grading import auroc, evidence_score, grade
from ..retrieval.retriever import CJK_LANGUAGES, SearchTrace
from ..workspace import Workspace
from .datasets import Question, UnitSet, load_squad
from .retrieval import load_units

Progress = Callable[[int, int], None]


def split_by_article(units: UnitSet, paragraphs: int) -> tuple[UnitSet, list[Question],
                                                               list[Question]]:
    """The course (whole articles, up to `paragraphs` paragraphs), its questions and the
    questions of the articles left out."""
    kept: set[str] = set()
    last = ""
    for u in units.units:
        article = u.id.split("-")[0]
        if len(kept) >= paragraphs and article != last:
            break  # whole articles only
        kept.add(u.id)
        last = article
    inside = [q for q in units.questions if q.gold & kept]
    outside = [q for q in units.questions if not q.gold & kept]
    course = UnitSet(units.language, [u for u in units.units if u.id in kept], inside)
    return course, inside, outside


def _rates(scores: list[float], settings: Settings) -> dict[str, float]:
    verdicts = [grade(s, settings.grade_correct, settings.grade_incorrect) for s in scores]
    n = max(1, len(verdicts))
    return {v: round(verdicts.count(v) / n, 4) for v in ("correct", "ambiguous", "incorrect")}


def eval_grade(ws: Workspace, path: Path, language: str, paragraphs: int = 200,
               sample: int = 200, seed: int = 7, progress: Progress | None = None,
               ) -> dict[str, Any]:
    """Grade `sample` answerable and `sample` unanswerable questions of a SQuAD-format set."""
    started = time.perf_counter()
    units = load_squad(path, language)
    course_units, inside, outside = split_by_article(units, paragraphs)
    course = f"eval-grade-{path.stem}-{len(course_units.units)}"
    load_units(ws, course, course_units)
    rng = random.Random(seed)
    asked = {"answerable": rng.sample(inside, min(sample, len(inside))),
             "unanswerable": rng.sample(outside, min(sample, len(outside)))}
    scores: dict[str, dict[str, list[float]]] = {"current": {}, "former": {}}
    total = sum(len(q) for q in asked.values())
    done = 0
    for kind, questions in asked.items():
        for rule in scores.values():
            rule[kind] = []
        for q in questions:
            trace = SearchTrace()
            hits = ws.search(q.text, course, k=6, trace=trace)
            cross = bool(hits) and all(h.chunk.language != trace.language for h in hits[:3])
            cjk = trace.language in CJK_LANGUAGES and not cross
            scores["current"][kind].append(
                evidence_score(hits, trace.keyword_evidence, cross_lingual=cross, cjk=cjk))
            scores["former"][kind].append(
                evidence_score(hits, trace.keyword_evidence, cross_lingual=cross))
            done += 1
            if progress:
                progress(done, total)
    rules = {
        name: {"answerable": _rates(s["answerable"], ws.settings),
               "unanswerable": _rates(s["unanswerable"], ws.settings),
               "auroc": round(auroc(s["answerable"], s["unanswerable"]), 4)}
        for name, s in scores.items()
    }
    return {"dataset": path.name, "language": language, "course_paragraphs":
            len(course_units.units), "answerable": len(asked["answerable"]),
            "unanswerable": len(asked["unanswerable"]), "rules": rules,
            "seconds": round(time.perf_counter() - started, 1)}
