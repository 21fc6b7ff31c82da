"""`coursetutor eval memory`: what the tutor learns about a student, measured.

MathDial: from a problem, its worked solution and a student's incorrect solution, the
tutor's diagnosis stage (the same prompt and parser as in a turn) names the misconception;
the configured model, as judge, says whether it names the same mistake as the teacher's own
description (`teacher_described_confusion`). The same judge scores a trivial baseline that
always answers "calculation error" in the same run, so the gain over it is visible.
"""

from __future__ import annotations

import dataclasses
import json
import re
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from ..errors import InputError
from ..llm import GenParams, Message
from ..llm.router import CallRecord, Router
from ..tutor import prompts
from ..tutor.diagnosis import DiagnosePrompt, ask_model

BASELINE = "calculation error"
TOPIC = "solving maths word problems"
ASKED = "Please talk me through your solution."  # MathDial's teachers open like this

Progress = Callable[[int, int], None]


@dataclasses.dataclass(frozen=True)
class MathDialItem:
    """One MathDial dialogue, as far as a diagnosis needs it."""

    qid: str
    problem: str
    solution: str
    student_solution: str
    confusion: str  # the teacher's own description of the student's misconception


def load_mathdial(path: Path, limit: int | None = None) -> list[MathDialItem]:
    """The first `limit` dialogues of a MathDial JSON-lines file."""
    items = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
        for line in lines:
            if not line.strip():
                continue
            row = json.loads(line)
            items.append(MathDialItem(str(row["qid"]), row["question"], row["ground_truth"],
                                      row["student_incorrect_solution"],
                                      row["teacher_described_confusion"]))
            if limit is not None and len(items) >= limit:
                break
    except (OSError, json.JSONDecodeError) as exc:
        raise InputError(f"{path}: cannot read MathDial ({exc})") from exc
    except (KeyError, TypeError) as exc:
        raise InputError(f"{path}: not a MathDial file (missing {exc})") from exc
    return items


def judge_same(router: Router, problem: str, gold: str, predicted: str,
               log: list[CallRecord]) -> bool:
    """The judge's verdict: do `predicted` and the teacher's `gold` name the same mistake?
    An empty prediction (no misconception named) never agrees."""
    if not predicted.strip():
        return False
    prompt = prompts.render("judge_misconception", problem=problem, gold=gold,
                            predicted=predicted)
    raw = router.complete("grade", [Message("user", prompt)],
                          GenParams(temperature=0.0, max_tokens=16, json=True), log)
    return parse_same(raw.text)


def parse_same(raw: str) -> bool:
    """Read {"same": bool}; anything unreadable counts as disagreement."""
    match = re.search(r"\{.*?\}", raw, re.DOTALL)
    try:
        data = json.loads(match.group(0)) if match else None
    except json.JSONDecodeError:
        return False
    return isinstance(data, dict) and data.get("same") is True


def diagnose_item(router: Router, item: MathDialItem, log: list[CallRecord]) -> dict[str, Any]:
    """The diagnosis stage on one dialogue's opening, and both judged verdicts."""
    started = time.perf_counter()
    diagnosis = ask_model(router, DiagnosePrompt(
        material=item.problem, reference=item.solution, previous=ASKED,
        message=item.student_solution, topics=(TOPIC,)), TOPIC, log)
    seconds = time.perf_counter() - started
    predicted = diagnosis.misconception if diagnosis and not diagnosis.correct else ""
    verdict = ("no answer read" if diagnosis is None
               else "correct" if diagnosis.correct else "misconception")
    return {
        "qid": item.qid, "teacher": item.confusion, "predicted": predicted,
        "verdict": verdict, "diagnose_seconds": round(seconds, 2),
        "agrees": judge_same(router, item.problem, item.confusion, predicted, log),
        "baseline_agrees": judge_same(router, item.problem, item.confusion, BASELINE, log),
    }


def run_mathdial(router: Router, items: list[MathDialItem], out: IO[str] | None = None,
                 progress: Progress | None = None) -> dict[str, Any]:
    """Every item diagnosed and judged; the per-item records go to `out` (JSON lines)."""
    log: list[CallRecord] = []
    llm = router.llm("grade")
    records = []
    for n, item in enumerate(items):
        record = diagnose_item(router, item, log)
        records.append(record)
        if out is not None:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
            out.flush()
        if progress:
            progress(n + 1, len(items))
    return {"items": len(records), "judge": {"backend": llm.backend, "model": llm.model},
            **summarize(records)}


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Agreement of the diagnosis and of the baseline with the teachers, and what the
    diagnosis said."""
    n = len(records)

    def share(key: str) -> float | None:
        return round(sum(bool(r[key]) for r in records) / n, 3) if n else None

    verdicts = {v: sum(r["verdict"] == v for r in records)
                for v in ("misconception", "correct", "no answer read")}
    times = [r["diagnose_seconds"] for r in records]
    return {"agreement": share("agrees"), "baseline_agreement": share("baseline_agrees"),
            "baseline": BASELINE, "verdicts": verdicts,
            "median_diagnose_seconds": round(statistics.median(times), 2) if times else None}
