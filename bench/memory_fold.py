"""What the conversation memory costs with the local model: a running summary written by the
model (summary_model = "on") against one extracted from the turns ("off"), side by side.

One scripted conversation over the sample course (concept questions, an exercise climbed
rung by rung, follow-ups) is asked in two sessions, one per configuration, turn by turn in
alternation so that a noisy neighbour slows both alike; one loaded model serves both. Each
session is then ended, which writes its session summary. Reported: per turn, the median total
time and the median time of the turns that folded the oldest turns into the running summary,
how many turns folded, the history tokens the prompt kept, and the time to end the session.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time
from pathlib import Path
from typing import Any

from _common import git_state, log, run_model_bench, thread_setting

from coursetutor.config import load_settings
from coursetutor.ingest import load_manifest
from coursetutor.llm.router import Router
from coursetutor.tutor import Tutor
from coursetutor.tutor.remember import end_session
from coursetutor.workspace import Workspace

SAMPLE = Path(__file__).resolve().parents[1] / "coursetutor" / "sample_course"
COURSE = "numerical-methods-101"
CONVERSATION = (
    "How does the bisection method work?",
    "Why does it always converge?",
    "Just give me the answer to exercise 2",
    "I am still stuck",
    "What is the order of convergence of the secant method?",
    "And Newton's method?",
    "When does Newton's method fail?",
    "Let's go back to exercise 2",
)


def run(args: argparse.Namespace) -> dict[str, Any]:
    base = load_settings(data_dir=Path(args.data_dir))
    ws = Workspace(base)
    manifest = load_manifest(SAMPLE / "course.toml")
    ws.create_course(COURSE, manifest.title, manifest.language)
    ws.ingest(COURSE, manifest.files)
    shared = Router(base).llm("answer")
    variants = {"model summary": dataclasses.replace(base, summary_model="on"),
                "extracted summary": dataclasses.replace(base, summary_model="off")}
    tutors = {name: Tutor(Workspace(s, store=ws.store, embedder=ws.embedder),
                          Router(s, factory=lambda task, model: shared))
              for name, s in variants.items()}
    sessions: dict[str, str | None] = dict.fromkeys(tutors)
    turns: dict[str, list[dict[str, float]]] = {name: [] for name in tutors}
    for i, question in enumerate(CONVERSATION[:args.turns]):
        for name, tutor in list(tutors.items())[:: 1 if i % 2 == 0 else -1]:
            a = tutor.ask(question, COURSE, f"bench-{name[:5]}", sessions[name])
            sessions[name] = a.session_id
            turns[name].append({**a.timings, "prompt_tokens": a.prompt_tokens,
                                "history": _history_tokens(a)})
        log(f"turn {i + 1}/{args.turns}")
    ended = {}
    for name, tutor in tutors.items():
        started = time.perf_counter()
        summary = end_session(tutor.summarizer, ws.store, ws.tenant, COURSE,
                              str(sessions[name]), [])
        ended[name] = {"ms": round((time.perf_counter() - started) * 1000, 1),
                       "words": len(summary.text.split()) if summary else 0,
                       "text": summary.text if summary else ""}
    return {"git": git_state(), "threads": thread_setting(), "turns": args.turns,
            "summary": {name: _summary(rows, ended[name]) for name, rows in turns.items()},
            "session_summaries": {name: e["text"] for name, e in ended.items()}}


def _history_tokens(answer: Any) -> float:
    """The answer call's prompt tokens: what the history adds shows in their growth."""
    calls = [c for c in answer.calls if c["task"] == "answer"]
    return float(calls[0]["prompt_tokens"]) if calls else 0.0


def _summary(rows: list[dict[str, float]], ended: dict[str, Any]) -> dict[str, float]:
    folded = [r["summarize"] for r in rows if "summarize" in r]
    return {
        "total_ms": round(statistics.median(r["total"] for r in rows), 1),
        "fold_ms": round(statistics.median(folded), 1) if folded else 0.0,
        "folds": len(folded),
        "answer_prompt_tokens": round(statistics.median(r["history"] for r in rows), 1),
        "end_session_ms": ended["ms"],
        "session_summary_words": ended["words"],
    }


def report(result: dict[str, Any]) -> str:
    names = list(result["summary"])
    model, extracted = (result["summary"][n] for n in names)
    lines = [f"# Conversation memory with the local model ({result['turns']} turns, medians)",
             "", f"commit {result['git']}; {result['threads']}", "",
             f"| | {names[0]} | {names[1]} | ratio |", "|---|---|---|---|"]
    for key in model:
        ratio = model[key] / extracted[key] if extracted[key] else float("nan")
        lines.append(f"| {key} | {model[key]:,.1f} | {extracted[key]:,.1f} | {ratio:.2f} |")
    for name, text in result["session_summaries"].items():
        lines += ["", f"{name}: {text}"]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=len(CONVERSATION))
    run_model_bench(parser, run, report)


if __name__ == "__main__":
    main()
