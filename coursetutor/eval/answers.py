"""Answer evaluation with the real tutor: abstention, citations, answer leaks, languages."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import re
import time
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..ingest.pipeline import DraftDocument, Ingestor
from ..llm import GenParams, Message
from ..retrieval.grading import auroc
from ..retrieval.language import detect_language
from ..retrieval.tokenize import has_cjk
from ..tutor import Tutor, prompts
from ..tutor.evidence import parse_supported
from ..tutor.exercise import EXERCISE_TYPES, exercise_text, solution_text
from ..tutor.guard import is_fallback
from ..tutor.leak import reveals, states_number
from ..tutor.markers import MARKER, cited_numbers
from ..tutor.next_step import uses_solution
from ..tutor.replies import reply
from ..tutor.warm import warm
from ..types import (
    Answer,
    Chunk,
    ChunkDraft,
    DocType,
    DoneEvent,
    FileMeta,
    Hit,
    Locator,
    SearchFilters,
    TokenEvent,
    Turn,
)
from . import key_facts as kf
from .answer_data import (
    Asked,
    Dialogue,
    PackQuestion,
    load_clapnq_abstention,
    load_coursepack,
    load_mrbench,
)
from .faithfulness import AnswerScorer, ClaimCheck, context_precision, context_recall, terms_found
from .retrieval import load_units

Progress = Callable[[str, int, int], None]
# students of one run: the ladder counts a student's earlier turns, so runs must not share them
RUN = uuid.uuid4().hex[:8]


def new_run() -> str:
    """Start a new run: the students of the suites run from now on are new ones."""
    global RUN
    RUN = uuid.uuid4().hex[:8]
    return RUN


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()[:12]


def answered(a: Answer) -> bool:
    """The tutor answered from the course (it did not say the material does not cover it)."""
    return a.covered and a.category in ("lecture", "followup")


def ask_streamed(tutor: Tutor, question: str, course: str, student: str) -> tuple[Answer, str]:
    """One turn, and the text streamed to the student before the answer check had its say."""
    streamed: list[str] = []
    answer: Answer | None = None
    for event in tutor.stream(question, course, student):
        if isinstance(event, TokenEvent):
            streamed.append(event.text)
        elif isinstance(event, DoneEvent):
            answer = event.answer
    assert answer is not None  # a turn always ends with its done event
    return answer, "".join(streamed).strip()


def _rate(flags: Sequence[bool]) -> float | None:
    return round(sum(flags) / len(flags), 4) if flags else None


def eval_abstention(tutor: Tutor, folder: Path, limit: int | None,
                    progress: Progress | None = None) -> dict[str, Any]:
    """ClapNQ: answer the answerable questions with a citation, decline the others."""
    units, answerable, unanswerable = load_clapnq_abstention(folder)
    course = f"eval-clapnq-abst-{_digest(*(u.text for u in units.units))}"
    load_units(tutor.ws, course, units)
    answerable, unanswerable = answerable[:limit], unanswerable[:limit]
    results: dict[str, list[tuple[Asked, Answer]]] = {"ans": [], "unans": []}
    total = len(answerable) + len(unanswerable)
    for key, items in (("ans", answerable), ("unans", unanswerable)):
        for q in items:
            results[key].append((q, tutor.ask(q.text, course, student=f"eval-{RUN}-{q.id}")))
            if progress:
                progress("clapnq", len(results["ans"]) + len(results["unans"]), total)
    ans = [a for _, a in results["ans"]]
    unans = [a for _, a in results["unans"]]
    scorer = AnswerScorer(tutor.ws.embedder)
    records = [
        score_answer(tutor, scorer, course, q.id, q.text, a,
                     [_anchor_in(q.gold)] if q.gold else [])
        for key in ("ans", "unans") for q, a in results[key]
    ]
    cited_ok = [
        any(c.locator.anchor in q.gold for c in a.sources)
        for q, a in results["ans"] if answered(a)
    ]
    outside = sum(1 for a in ans + unans if any(c.chunk_id not in a.context for c in a.sources))
    return {
        "answerable": len(ans), "unanswerable": len(unans),
        "answer_rate": _rate([answered(a) for a in ans]),
        "abstain_rate": _rate([not answered(a) for a in unans]),
        "evidence_auroc": round(auroc([a.evidence for a in ans], [a.evidence for a in unans]), 4),
        "citation_accuracy": _rate(cited_ok),
        "answers_citing_outside_context": outside,
        "grades": _count(a.grade or "-" for a in ans + unans),
        "median_seconds": _median([a.timings.get("total", 0) / 1000 for a in ans + unans]),
        "misses": [_miss(q, a) for q, a in results["ans"] if not answered(a)][:MISSES]
        + [_miss(q, a) for q, a in results["unans"] if answered(a)][:MISSES],
        "metrics": summarize(records),
        "records": records,
    }


def _anchor_in(gold: frozenset[str]) -> Callable[[Chunk, str], bool]:
    """A ClapNQ gold test: the chunk is one of the gold passages."""
    return lambda chunk, _source: chunk.locator.anchor in gold


GoldTest = Callable[[Chunk, str], bool]  # (chunk, its document's source name) -> gold?


def _solutions(tutor: Tutor, course: str, shown: Sequence[Chunk]) -> list[str]:
    """The exercise among `shown` as the student has it, every part of it (part (b) names
    "the Hessian ∇2 θ Remp" that a hint on part (c) may call by its name), and its worked
    solution: what a hint may say beyond the passages it cites (the course holds the
    solution; the student does not read it)."""
    exercise = next((c for c in shown if c.doc_type in EXERCISE_TYPES), None)
    if exercise is None:
        return []
    hit = Hit(exercise, 0.0, {}, {}, exercise.locator)
    return [text for text in (exercise_text(tutor.ws, course, hit),
                              solution_text(tutor.ws, course, hit)) if text]


def outcome(a: Answer) -> str:
    """declined (the material does not cover it), exercise_help, or answered."""
    if not answered(a):
        return "declined"
    if a.intent == "exercise" and a.level:
        return "exercise_help"
    return "answered"


def score_answer(tutor: Tutor, scorer: AnswerScorer, course: str, qid: str, question: str,
                 a: Answer, gold: Sequence[GoldTest], terms: Sequence[str] = (),
                 draft: str = "", key_facts: Sequence[Sequence[str]] = ()) -> dict[str, Any]:
    """Every per-answer figure of one reply; refusals get no faithfulness or relevance.

    With `draft` (the text streamed before the answer check), the record also scores that
    text against the passages it cited: the same answer without the check, paired."""
    store, filters = tutor.ws.store, _filters(tutor, course)
    cited = [c.chunk_id for c in a.sources]
    chunks = store.get_chunks(filters, list(dict.fromkeys([*a.context, *cited])))
    names = {d.id: d.source_name for d in tutor.ws.documents(course)}

    def is_gold(chunk: Chunk) -> bool:
        return any(test(chunk, names.get(chunk.document_id, "")) for test in gold)

    # the chunks the model was shown; without a model, the passages the reply lists
    context = [chunks[i] for i in (a.context or cited) if i in chunks]
    kind = outcome(a)
    record: dict[str, Any] = {
        "id": qid, "question": question, "language": a.language, "answerable": bool(gold),
        "outcome": kind, "category": a.category, "intent": a.intent, "grade": a.grade,
        "evidence": a.evidence,
        "wrongly_declined": bool(gold) and kind == "declined",
        "wrongly_answered": not gold and kind != "declined",
        "checked": bool(getattr(a, "checked", False)),
        "removed": len(getattr(a, "removed", ())),
        "seconds": round(a.timings.get("total", 0) / 1000, 2),
        "first_token_seconds": round(a.timings.get("first_token", 0) / 1000, 2) or None,
        "claims": None, "supported": None, "faithfulness": None, "unsupported_terms": None,
        "unsupported": [], "answer_relevance": None,
        "draft_faithfulness": None, "draft_unsupported_terms": None,
        "context_precision": None, "context_recall": None, "cited_gold": None,
        "terms_found": terms_found(a.text, terms),
        "key_facts": len(key_facts) or None,
        # the reply alone; and with the lines its citations open (what the student reads)
        "key_fact_recall": kf.recall(a.text, key_facts) if kind != "declined" else (
            0.0 if key_facts else None),
        "key_fact_recall_with_lines": kf.recall(
            "\n".join([a.text, *(c.snippet for c in a.sources)]), key_facts)
        if kind != "declined" else (0.0 if key_facts else None),
        "false_removals": kf.removed_facts(getattr(a, "removed", ()), a.text, key_facts),
        "empty": kind != "declined" and _empty(a),
        "quote_first": kind != "declined" and _quoted(a),
        "fixed_help": kind == "exercise_help" and is_fallback(a.text, a.level, a.language),
        "correct_complete": None,
        "reply": a.text[:REPLY_CHARS],
    }
    if gold:
        record["context_precision"] = context_precision([is_gold(c) for c in context])
        record["context_recall"] = context_recall(
            [functools.partial(_holds, t, names) for t in gold], context)
    if kind == "declined":
        return record
    if gold and cited:
        record["cited_gold"] = any(is_gold(chunks[i]) for i in cited if i in chunks)
    if not tutor.router.enabled:  # the reply lists passages: no statement of its own
        return record
    sources = [_with_titles(chunks[i]) for i in (cited or list(a.context)) if i in chunks]
    # and the lines the reply cites as shown to the student (an evidence line may hold the
    # statement a proof proves, from the passage before: stages/select.continued)
    sources += [c.snippet for c in a.sources if c.snippet and c.snippet not in sources]
    if kind == "exercise_help":  # a hint names a step of the exercise's hidden solution
        sources += _solutions(tutor, course, [chunks[i] for i in a.context if i in chunks])
    checks = scorer.check_claims(a.text, sources, question, a.language,
                                 _language_of([chunks[i] for i in cited or a.context
                                               if i in chunks]))
    supported = sum(c.supported for c in checks)
    missing = [m for c in checks for m in c.missing]
    record.update({
        "claims": len(checks), "supported": supported,
        "faithfulness": round(supported / len(checks), 4) if checks else None,
        "unsupported_terms": len(missing), "unsupported": missing[:20],
        "answer_relevance": scorer.relevance(question, a.text),
    })
    if key_facts:  # every key fact, and no number or formula the sources lack
        record["correct_complete"] = record["key_fact_recall"] == 1.0 and not missing
    if draft:
        drafted = _draft_checks(scorer, draft, a, chunks, question)
        record.update({
            "draft": draft, "context_ids": list(a.context),
            "draft_faithfulness": (round(sum(c.supported for c in drafted) / len(drafted), 4)
                                   if drafted else None),
            "draft_unsupported_terms": sum(len(c.missing) for c in drafted),
        })
    return record


def _empty(a: Answer) -> bool:
    """A reply that says nothing: bare markers, a framing line alone, a few letters (a
    Chinese, Japanese or Korean character counts as two: "压缩映像证明了…的情形" says
    something in ten)."""
    letters = sum((2 if has_cjk(c) else 1) for c in MARKER.sub(" ", a.text) if c.isalpha())
    return letters < 12 or a.text.strip().startswith(reply("passages", a.language))


def _quoted(a: Answer) -> bool:
    """A quote-first reply: the material's own sentences under a framing line."""
    return a.text.strip().startswith(reply("quote_first", a.language)) or "\n> " in a.text


def _draft_checks(scorer: AnswerScorer, draft: str, a: Answer, chunks: dict[str, Chunk],
                  question: str) -> list[ClaimCheck]:
    """The draft's claims against the passages it cited ([n] is the n-th context passage)."""
    cited = [a.context[n - 1] for n in dict.fromkeys(cited_numbers(draft))
             if 0 < n <= len(a.context)]
    sources = [_with_titles(chunks[i]) for i in (cited or list(a.context)) if i in chunks]
    return scorer.check_claims(draft, sources, question, a.language,
                               _language_of([chunks[i] for i in cited or a.context
                                             if i in chunks]))


def _language_of(chunks: Sequence[Chunk]) -> str:
    """The language most of `chunks` are in, as their course gives it ("" when none says)."""
    found = Counter(c.language for c in chunks if c.language).most_common(1)
    return found[0][0] if found else ""


def _with_titles(chunk: Chunk) -> str:
    """A cited passage as the model read it: under the titles of its sections ("5.2.3 Serie
    armonica" over "… diverge"), each a line of its own."""
    return "\n".join([*chunk.section_path, chunk.text])


def _holds(test: GoldTest, names: dict[str, str], chunk: Chunk) -> bool:
    return test(chunk, names.get(chunk.document_id, ""))


REPLY_CHARS = 400  # of each reply kept in the records
MEANS = ("faithfulness", "answer_relevance", "context_precision", "context_recall",
         "cited_gold", "terms_found", "seconds")
# over the answerable questions with key facts, declined ones included (they give none)
FACT_MEANS = ("key_fact_recall", "key_fact_recall_with_lines", "correct_complete")
RATES = ("wrongly_declined", "wrongly_answered")


def summarize(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Means of the per-answer figures; refusals are counted apart from answers."""
    answers = [r for r in records if r["outcome"] != "declined"]
    out: dict[str, Any] = {
        "questions": len(records),
        "answerable": sum(r["answerable"] for r in records),
        "outcomes": _count(r["outcome"] for r in records),
    }
    for key in MEANS:
        pool = records if key.startswith("context") else answers
        values = [float(r[key]) for r in pool if r[key] is not None]
        out[key] = round(sum(values) / len(values), 4) if values else None
    out["unsupported_terms"] = sum(r["unsupported_terms"] or 0 for r in answers)
    out["answers_with_unsupported_terms"] = sum(bool(r["unsupported_terms"]) for r in answers)
    out["wrongly_declined"] = _rate([r["wrongly_declined"] for r in records if r["answerable"]])
    out["wrongly_answered"] = _rate([r["wrongly_answered"] for r in records
                                     if not r["answerable"]])
    out["removed_claims"] = sum(r["removed"] for r in records)
    facts = [r for r in records if r.get("key_facts")]
    for key in FACT_MEANS:
        values = [float(r[key] or 0) for r in facts]
        out[key] = round(sum(values) / len(values), 4) if values else None
    out["false_removals"] = sum(r.get("false_removals") or 0 for r in records)
    out["empty_replies"] = sum(bool(r.get("empty")) for r in answers)
    out["quote_first_share"] = _rate([bool(r.get("quote_first")) for r in answers])
    helped = [bool(r.get("fixed_help")) for r in answers if r["outcome"] == "exercise_help"]
    if helped:  # exercise help that was the rung's own fixed text
        out["fixed_help"] = sum(helped)
    out["first_token_p50"] = _median([r["first_token_seconds"] for r in answers
                                      if r.get("first_token_seconds")])
    out["seconds_p50"] = _median([r["seconds"] for r in records if r["seconds"]])
    drafts = [r for r in answers if r.get("draft_faithfulness") is not None]
    if drafts:  # the same answers as streamed, before the check
        out["draft_faithfulness"] = round(
            sum(r["draft_faithfulness"] for r in drafts) / len(drafts), 4)
        out["draft_unsupported_terms"] = sum(r["draft_unsupported_terms"] for r in drafts)
        out["draft_answers_with_unsupported_terms"] = sum(
            bool(r["draft_unsupported_terms"]) for r in drafts)
    return out



def _sample(items: Sequence[PackQuestion], limit: int | None) -> list[PackQuestion]:
    """A fixed pseudo-random sample: the first `limit` in the order of a hash of their ids."""
    ordered = sorted(items, key=lambda q: _digest(q.id))
    return ordered[:limit] if limit else list(items)


def _spot_test(spot: Any) -> GoldTest:
    return lambda chunk, source: spot.holds(source, chunk.locator.page, chunk.locator.start,
                                            chunk.locator.end)


def split_ids(questions: Path, split: str) -> frozenset[str]:
    """The question ids a question set's `splits` name under `split`."""
    splits = json.loads(questions.read_text(encoding="utf-8")).get("splits", {})
    if split not in splits:
        known = ", ".join(sorted(splits)) or "none"
        raise InputError(f"{questions}: no split {split!r} (splits: {known})")
    return frozenset(splits[split])


def eval_coursepack(tutor: Tutor, questions: Path, pack: Path, limit: int | None,
                    progress: Progress | None = None, sources: bool = True,
                    only: Sequence[str] = (), split: str = "") -> dict[str, Any]:
    """The course-pack question set on courses built from the pack's files (one per language).

    A file the set gives a `source` (the LaTeX or Markdown the PDF was made from) is ingested
    with it; `sources=False` ingests the PDFs alone, into courses of their own (`…-pdf`), the
    baseline of what a source adds. `only` keeps the questions of those courses, `split` those
    the set's `splits` name under it."""
    courses, asked = load_coursepack(questions, pack)
    if split:
        chosen_ids = split_ids(questions, split)
        asked = [q for q in asked if q.id in chosen_ids]
    unknown = sorted(set(only) - {c.id for c in courses})
    if unknown:
        raise InputError(f"{questions}: no course {', '.join(unknown)} in the question set")
    if only:
        courses = [c for c in courses if c.id in only]
        asked = [q for q in asked if q.course in only]
    ws = tutor.ws
    ids: dict[str, str] = {}
    for c in courses:
        files = c.files if sources else [(p, dataclasses.replace(m, source=""))
                                         for p, m in c.files]
        pdf_only = not sources and any(m.source for _, m in c.files)
        ids[c.id] = f"eval-pack-{c.id}" + ("-pdf" if pdf_only else "")
        ws.create_course(ids[c.id], c.title, c.language)
        ws.ingest(ids[c.id], files)
        warm(ws, ids[c.id])  # as every ingest of the product does
    chosen = (_sample([q for q in asked if q.answerable], limit)
              + _sample([q for q in asked if not q.answerable], limit))
    scorer = AnswerScorer(ws.embedder)
    records: list[dict[str, Any]] = []
    for n, q in enumerate(chosen, start=1):
        a, draft = ask_streamed(tutor, q.text, ids[q.course], f"eval-{RUN}-{q.id}")
        record = score_answer(tutor, scorer, ids[q.course], q.id, q.text, a,
                              [_spot_test(s) for s in q.gold], q.terms, draft, q.key_facts)
        record.update({"asked_in": q.language, "kind": q.kind, "course": q.course})
        records.append(record)
        if progress:
            progress("coursepack", n, len(chosen))
    by_language = {lang: summarize([r for r in records if r["asked_in"] == lang])
                   for lang in sorted({r["asked_in"] for r in records})}
    by_kind = {kind: summarize([r for r in records if r["kind"] == kind])
               for kind in sorted({r["kind"] for r in records})}
    results_given = [bool(r["terms_found"]) for r in records
                     if r["kind"] == "exercise_answer" and r["terms_found"] is not None]
    return {"metrics": summarize(records), "by_language": by_language, "by_kind": by_kind,
            "exercise_results_given": _rate(results_given), "records": records}

MISSES = 25  # wrong decisions listed in the report, per set


def _miss(q: Asked, a: Answer) -> dict[str, Any]:
    return {"question": q.text, "answerable": bool(q.gold), "category": a.category,
            "grade": a.grade, "evidence": a.evidence, "reply": a.text[:160]}


def _count(values: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return out


def _median(values: list[float]) -> float | None:
    if not values:
        return None
    s = sorted(values)
    return round(s[len(s) // 2], 2)


def _add_exercise(tutor: Tutor, course: str, problem: str, solution: str) -> None:
    """A course holding one exercise and its (hidden) solution."""
    ws = tutor.ws
    ws.create_course(course, course, "en")
    ingestor = Ingestor(ws.store, ws.embedder, ws.settings)
    for doc_type, title, text in (("exercise", "Exercise 1", problem),
                                  ("solution", "Solution 1", solution)):
        draft = ChunkDraft(text, (title,), Locator(anchor=doc_type), 0,
                           ws.embedder.token_count(text))
        doc = DraftDocument(doc_type, title, doc_type, _digest(text), 0, [draft])
        kind: DocType = "exercise" if doc_type == "exercise" else "solution"
        ingestor.add(ws.tenant, course, "en", doc, FileMeta(doc_type=kind, language="en"))


def judge_leak(tutor: Tutor, reply: str, solution: str, final: str) -> bool:
    """Does `reply` reveal the answer? The model as judge, plus the gold final answer check."""
    if final and states_number(reply, [final]):
        return True
    if not tutor.router.enabled:
        return False
    prompt = prompts.render("leak_judge", solution=solution, reply=reply)
    raw = tutor.router.complete("grade", [Message("user", prompt)],
                                GenParams(temperature=0.0, max_tokens=16, json=True), [])
    return parse_reveals(raw.text)


def parse_reveals(raw: str) -> bool:
    return parse_supported(raw.replace('"reveals"', '"supported"'))


def eval_mrbench(tutor: Tutor, path: Path, limit: int | None,
                 progress: Progress | None = None) -> dict[str, Any]:
    """Continue each MRBench dialogue as the tutor; how often does the reply reveal the answer?"""
    dialogues = load_mrbench(path)[:limit]
    leaks: list[bool] = []
    gold_hits: list[bool] = []
    judged: list[bool] = []
    gold_new: list[bool] = []
    levels: list[str] = []
    fixed: list[bool] = []  # a rung's own fixed help: nothing the model wrote held
    named: list[bool] = []
    flagged: list[dict[str, Any]] = []
    for n, d in enumerate(dialogues, start=1):
        course = f"eval-mrbench-{_digest(d.id)}"
        _add_exercise(tutor, course, d.problem, d.solution)
        session = _seed(tutor, course, d)
        a = tutor.ask(d.last_student, course, student=f"eval-{RUN}-{d.id}",
                       session_id=session)
        gold_hits.append(bool(d.final_answer) and states_number(a.text, [d.final_answer]))
        # an answer that is also a number of the problem ("$50") may just be restated data
        given = states_number(d.problem, [d.final_answer])
        gold_new.append(gold_hits[-1] and not given)
        leaks.append(judge_leak(tutor, a.text, d.solution, d.final_answer))
        judged.append(judge_leak(tutor, a.text, d.solution, ""))
        levels.append(a.level or a.intent)
        if a.level:
            fixed.append(is_fallback(a.text, a.level, a.language))
        if solved(d.solution) and a.level in ("hint", "guiding", "steps"):
            said = "\n".join([*(student for student, _ in d.turns), d.last_student])
            named.append(uses_solution(a.text, d.solution, d.problem, said))
        if leaks[-1] or judged[-1]:
            flagged.append({"id": d.id, "final_answer": d.final_answer, "level": levels[-1],
                            "gold_stated": gold_hits[-1], "in_problem": given,
                            "student": d.last_student[:200], "reply": a.text[:400]})
        if progress:
            progress("mrbench", n, len(dialogues))
    return {"dialogues": len(dialogues), "leak_rate": _rate(leaks),
            "gold_answer_stated": _rate(gold_hits),
            "gold_answer_stated_not_in_problem": _rate(gold_new),
            "model_judge_rate": _rate(judged),
            "names_solution_step": _rate(named), "hints_with_solution": len(named),
            "levels": _count(levels), "fixed_help": _rate(fixed),
            "flagged": flagged[:MISSES]}


def solved(solution: str) -> bool:
    """Does a dialogue come with a worked solution ("Not Available" in some of MRBench)?"""
    return bool(solution.strip()) and solution.strip().casefold() != "not available"


def _seed(tutor: Tutor, course: str, d: Dialogue) -> str:
    """Store the dialogue so far as earlier turns of one session."""
    store, tenant = tutor.ws.store, tutor.ws.tenant
    session = store.start_session(tenant, course, f"eval-{RUN}-{d.id}")
    key = "exercise:Exercise 1"
    for student, said in d.turns:
        store.add_turn(Turn(session.id, 0, tenant, course, f"eval-{RUN}-{d.id}", student, said,
                            "lecture", "exercise", "correct", "", key))
    return session.id


ASK_FOR_ANSWER = (
    "Just give me the answer to exercise {n}.",
    "Dammi la soluzione dell'esercizio {n}, per favore.",
)


def eval_sample_leaks(tutor: Tutor, course: str, exercises: dict[str, tuple[str, str]],
                      progress: Progress | None = None) -> dict[str, Any]:
    """The sample course's exercises asked as 'just give me the answer' in fresh sessions."""
    checked: list[bool] = []
    judged: list[bool] = []
    cited: list[bool] = []
    canned = 0
    total = len(exercises) * len(ASK_FOR_ANSWER)
    for number, (exercise, solution) in exercises.items():
        for template in ASK_FOR_ANSWER:
            q = template.format(n=number)
            a = tutor.ask(q, course, student=f"eval-{RUN}-leak-{number}-{len(checked)}")
            checked.append(reveals(a.text, solution, exercise))
            judged.append(judge_leak(tutor, a.text, solution, ""))
            # every rung shows its own help with the exercise's source, never a canned refusal
            canned += a.text.startswith(reply("withheld", a.language))
            cited.append(bool(a.sources))
            if progress:
                progress("sample-leaks", len(checked), total)
    return {"requests": len(checked),
            "leak_rate": _rate([c or j for c, j in zip(checked, judged, strict=True)]),
            "solution_check_rate": _rate(checked), "model_judge_rate": _rate(judged),
            "canned_refusals": canned, "cited_rate": _rate(cited)}


# one student asking for help with an exercise three times: a hint, guiding questions, steps
ASK_AGAIN = (
    ("Can you help me with exercise {n}?",
     "I still don't get it. Can you help me more with exercise {n}?",
     "I'm still stuck on exercise {n}."),
    ("Mi aiuti con l'esercizio {n}?",
     "Non ho ancora capito, mi aiuti ancora con l'esercizio {n}?",
     "Sono ancora bloccato sull'esercizio {n}."),
)


def eval_sample_ladder(tutor: Tutor, course: str, exercises: dict[str, tuple[str, str]],
                       progress: Progress | None = None,
                       languages: Sequence[Sequence[str]] = ASK_AGAIN) -> dict[str, Any]:
    """The hint ladder on the sample course's exercises: one student per exercise and
    language asks for help three times. Per rung: how many replies were its own fixed help
    (nothing the model wrote held), named a step of the worked solution, stated its result
    or copied it (`solution_check`), or were judged to reveal it by the model (`judge`)."""
    rows: list[dict[str, Any]] = []
    total = len(exercises) * sum(len(asks) for asks in languages)
    for number, (exercise, solution) in exercises.items():
        for k, asks in enumerate(languages):
            student = f"eval-{RUN}-ladder-{number}-{k}"
            said: list[str] = []
            for template in asks:
                q = template.format(n=number)
                said.append(q)
                a = tutor.ask(q, course, student=student)
                level = a.level or a.intent
                rows.append({
                    "exercise": number, "language": a.language, "level": level,
                    "fixed_help": bool(a.level) and is_fallback(a.text, a.level, a.language),
                    "names_solution_step": uses_solution(a.text, solution, exercise,
                                                         "\n".join(said)),
                    # the result or the worked solution in the reply; and the model's verdict
                    "solution_check": reveals(a.text, solution, exercise),
                    "judge": judge_leak(tutor, a.text, solution, ""),
                    "reply": a.text[:REPLY_CHARS]})
                if progress:
                    progress("sample-ladder", len(rows), total)
    rungs: dict[str, dict[str, int]] = {}
    for row in rows:
        rung = rungs.setdefault(row["level"], {"replies": 0, "fixed_help": 0,
                                               "names_solution_step": 0, "solution_check": 0,
                                               "judge": 0})
        for key in rung:
            rung[key] += 1 if key == "replies" else row[key]
    return {"replies": len(rows), "rungs": rungs,
            "fixed_help": sum(r["fixed_help"] for r in rows),
            "solution_check": sum(r["solution_check"] for r in rows),
            "judge": sum(r["judge"] for r in rows), "records": rows}


# The same question in four languages about the English sample course, with the words (a
# regular expression) one of the cited passages must contain.
LANGUAGE_PROBES: tuple[tuple[str, dict[str, str]], ...] = (
    ("bisect|bisezion", {
        "en": "How does the bisection method work?",
        "it": "Come funziona il metodo di bisezione?",
        "zh": "二分法是如何工作的？",
        "ko": "이분법은 어떻게 작동하나요?",
    }),
    ("secant", {
        "en": "What is the order of convergence of the secant method?",
        "it": "Qual è l'ordine di convergenza del metodo delle secanti?",
        "zh": "割线法的收敛阶是多少？",
        "ko": "할선법의 수렴 차수는 얼마인가요?",
    }),
    ("newton", {
        "en": "When does Newton's method fail?",
        "it": "Quando fallisce il metodo di Newton?",
        "zh": "牛顿法什么时候会失败？",
        "ko": "뉴턴 방법은 언제 실패하나요?",
    }),
    ("intermedi", {
        "en": "What does the intermediate value theorem say?",
        "it": "Che cosa dice il teorema dei valori intermedi?",
        "zh": "介值定理说的是什么？",
        "ko": "중간값 정리는 무엇을 말하나요?",
    }),
    ("stop|arrest", {
        "en": "When should an iterative method stop?",
        "it": "Quando bisogna fermare un metodo iterativo?",
        "zh": "迭代方法应该在什么时候停止？",
        "ko": "반복법은 언제 멈춰야 하나요?",
    }),
    ("quadratic", {
        "en": "Why does Newton's method converge quadratically?",
        "it": "Perché il metodo di Newton converge in modo quadratico?",
        "zh": "为什么牛顿法是二次收敛的？",
        "ko": "뉴턴 방법은 왜 이차 수렴하나요?",
    }),
)


def eval_languages(tutor: Tutor, course: str,
                   progress: Progress | None = None) -> dict[str, Any]:
    """Answer language and citation correctness per asking language."""
    per: dict[str, dict[str, list[bool]]] = {}
    total = sum(len(v) for _, v in LANGUAGE_PROBES)
    done = 0
    for word, questions in LANGUAGE_PROBES:
        for lang, q in questions.items():
            a = tutor.ask(q, course, student=f"eval-{RUN}-lang-{lang}-{word}")
            texts = {c.chunk_id: c for c in a.sources}
            chunks = tutor.ws.store.get_chunks(_filters(tutor, course), list(texts))
            cited = any(re.search(word, (c.text + " ".join(c.section_path)).lower())
                        for c in chunks.values())
            stats = per.setdefault(lang, {"language": [], "citation": []})
            stats["language"].append(detect_language(a.text, default="?") == lang)
            stats["citation"].append(cited)
            done += 1
            if progress:
                progress("languages", done, total)
    return {lang: {k: _rate(v) for k, v in s.items()} for lang, s in per.items()}


def _filters(tutor: Tutor, course: str) -> SearchFilters:
    return SearchFilters(tutor.ws.tenant, course)


def sample_exercises(folder: Path) -> dict[str, tuple[str, str]]:
    """Exercise number -> (exercise text, solution text) from the sample course's sheets."""
    def sections(path: Path, word: str) -> dict[str, str]:
        parts = re.split(rf"^## {word} (\d+)", path.read_text(encoding="utf-8"), flags=re.M)
        return {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}

    exercises = sections(folder / "exercises-01.md", "Exercise")
    solutions = sections(folder / "solutions-01.md", "Solution")
    return {n: (text, solutions[n]) for n, text in exercises.items() if n in solutions}


def timed(fn: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    started = time.perf_counter()
    result = fn()
    result["seconds"] = round(time.perf_counter() - started, 1)
    return result



@dataclasses.dataclass(frozen=True)
class Paths:
    """Where each suite's questions are (None where a suite is not run)."""

    data: Path | None = None  # the datasets folder: clapnq-*.jsonl, mrbench-v1.json
    pack: Path | None = None  # the course pack folder
    questions: Path | None = None  # the course-pack question set
    sources: bool = True  # the pack's PDFs ingested with their LaTeX or Markdown sources
    courses: tuple[str, ...] = ()  # only the course-pack questions of these courses
    split: str = ""  # only the course-pack questions of this split of the set


RECORD_SUITES = ("abstention", "coursepack")  # the suites with one record per question


def run_suites(tutor: Tutor, suites: Sequence[str], paths: Paths, limit: int | None,
               progress: Progress | None = None) -> dict[str, Any]:
    """Run the chosen suites; each result under its suite's key."""
    new_run()  # fresh student ids: a second run must not see the first one's turns
    result: dict[str, Any] = {}
    data = paths.data or Path(".")
    if "abstention" in suites:
        result["abstention"] = timed(lambda: eval_abstention(tutor, data, limit, progress))
    if "mrbench" in suites:
        result["mrbench"] = timed(lambda: eval_mrbench(tutor, data / "mrbench-v1.json", limit,
                                                       progress))
    if {"leaks", "ladder", "languages"} & set(suites):
        course = sample_course(tutor)
        exercises = sample_exercises(sample_folder())
        if "leaks" in suites:
            result["sample_leaks"] = timed(lambda: eval_sample_leaks(tutor, course, exercises,
                                                                     progress))
        if "ladder" in suites:
            result["sample_ladder"] = timed(lambda: eval_sample_ladder(tutor, course, exercises,
                                                                       progress))
        if "languages" in suites:
            result["languages"] = timed(lambda: eval_languages(tutor, course, progress))
    if "coursepack" in suites:
        if paths.pack is None or paths.questions is None:
            raise InputError("the coursepack suite needs the pack folder and the question set")
        pack, questions = paths.pack, paths.questions
        result["coursepack"] = timed(lambda: eval_coursepack(
            tutor, questions, pack, limit, progress, paths.sources, paths.courses, paths.split))
        result["coursepack"]["sources"] = paths.sources
    return result


def sample_folder() -> Path:
    from importlib import resources

    return Path(str(resources.files("coursetutor") / "sample_course"))


def sample_course(tutor: Tutor) -> str:
    """Ingest the shipped sample course into the evaluation tenant (unchanged files skip)."""
    from ..ingest import load_manifest

    m = load_manifest(sample_folder() / "course.toml")
    course = m.course_id or "sample"
    tutor.ws.create_course(course, m.title, m.language)
    tutor.ws.ingest(course, m.files)
    warm(tutor.ws, course)
    return course
