"""Latency of one tutor turn per stage with the local model, against a wider-context baseline.

Both runs share one loaded model in one process and alternate question by question (each turn
starts with llama.cpp's prompt cache emptied; with --warm, each measured question follows
another student's question of the same kind), so a noisy neighbour slows both alike. The
default run uses the local budget (1,500 tokens, sentence-trimmed sources); the baseline gives
the same model the server budget (2,600 tokens). With --baseline refine, the default run reads
the refined evidence (refine_context_tokens) and the baseline whole passages; with --baseline
style, the default run answers in checked statements and the baseline in prose.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
from pathlib import Path
from typing import Any

from _common import git_state, log, run_model_bench, thread_setting

from coursetutor.config import Settings, load_settings
from coursetutor.ingest import load_manifest
from coursetutor.llm.local import LocalLLM
from coursetutor.llm.router import Router
from coursetutor.tutor import Tutor
from coursetutor.tutor.warm import warm
from coursetutor.workspace import Workspace

SAMPLE = Path(__file__).resolve().parents[1] / "coursetutor" / "sample_course"
COURSE = "numerical-methods-101"
QUESTIONS = (
    "How does the bisection method work?",
    "What is the order of convergence of the secant method?",
    "When does Newton's method fail?",
    "Come funziona il metodo di bisezione?",
    "이분법은 어떻게 작동하나요?",  # statements written in the course's language, translated
    "Can you help me with exercise 3?",
)
# --warm: the question another student asked just before each measured one, of the same kind
# (so the same task instructions): a server that has answered before
WARM_UP = {
    QUESTIONS[0]: "What is the secant method?",
    QUESTIONS[1]: "How does the bisection method work?",
    QUESTIONS[2]: "What does the secant method need to start?",
    QUESTIONS[3]: "Che cos'è il metodo della secante?",
    QUESTIONS[4]: "할선법이란 무엇인가요?",
    QUESTIONS[5]: "Can you help me with exercise 1?",
}
# prompt_evaluated and first_written (statements): the model's first token, its first
# statement closed; the first token is that statement once checked
STAGES = ("categorize", "translate", "retrieve_grade", "select", "prompt_evaluated",
          "first_written", "compose", "first_token", "generate", "check", "total")


def run(args: argparse.Namespace) -> dict[str, Any]:
    base = load_settings(data_dir=Path(args.data_dir))
    ws = Workspace(base)
    manifest = load_manifest(SAMPLE / "course.toml")
    ws.create_course(COURSE, manifest.title, manifest.language)
    ws.ingest(COURSE, manifest.files)
    warm(ws, COURSE)  # the evidence sentences' vectors, as the product's ingest embeds them
    router = Router(base)
    shared = router.llm("answer")  # one loaded model for both configurations
    variants = {
        "local budget (1,500)": base,
        "baseline: server budget (2,600)": dataclasses.replace(base, context_budget_tokens=2600),
    } if args.baseline == "budget" else {
        f"refined evidence ({base.refine_context_tokens})": base,
        "baseline: whole passages": dataclasses.replace(base, refine_context_tokens=0),
    } if args.baseline == "refine" else {
        "statements": dataclasses.replace(base, answer_style="statements"),
        "baseline: prose": dataclasses.replace(base, answer_style="prose"),
    }
    tutors = {
        name: Tutor(_workspace(ws, s), Router(s, factory=lambda task, model: shared))
        for name, s in variants.items()
    }
    tutors[next(iter(tutors))].ask(QUESTIONS[0], COURSE, "warm-up")  # load and cache the prompt
    samples: dict[str, list[dict[str, float]]] = {name: [] for name in tutors}
    for r in range(args.repeats):
        for i, q in enumerate(QUESTIONS):
            # alternate who goes first, and start each turn cold: otherwise the second run of
            # a question finds its sources already evaluated in llama.cpp's prompt cache
            order = list(enumerate(tutors.items()))[:: 1 if (r + i) % 2 == 0 else -1]
            for k, (name, tutor) in order:
                # a student of each configuration's own: the two share one store, and a
                # second request for help with the same exercise climbs the hint ladder
                student = f"bench-{r}-{i}-{k}"
                if isinstance(shared, LocalLLM):
                    shared.forget_prompts()
                if args.warm:  # another student's question just before: its prompt is cached
                    tutor.ask(WARM_UP[q], COURSE, student=f"{student}-before")
                a = tutor.ask(q, COURSE, student=student)
                samples[name].append({**a.timings, "prompt_tokens": a.prompt_tokens,
                                      "completion_tokens": a.completion_tokens})
            log(f"repeat {r + 1}/{args.repeats}, question {i + 1}/{len(QUESTIONS)}")
    return {"git": git_state(), "threads": thread_setting(), "repeats": args.repeats,
            "warm": args.warm,
            "questions": len(QUESTIONS), "medians": {n: _medians(s) for n, s in samples.items()},
            # each turn's figures, question by question (repeat after repeat)
            "turns": {n: [{"question": QUESTIONS[i % len(QUESTIONS)], **row}
                          for i, row in enumerate(s)] for n, s in samples.items()}}


def _workspace(ws: Workspace, settings: Settings) -> Workspace:
    return Workspace(settings, store=ws.store, embedder=ws.embedder)


# laps only the turns answered in statements have: their median is over those turns
WRITTEN = ("prompt_evaluated", "first_written")


def _medians(rows: list[dict[str, float]]) -> dict[str, float]:
    keys = [*STAGES, "prompt_tokens", "completion_tokens"]
    return {k: round(statistics.median([r[k] for r in rows if k in r]
                                       if k in WRITTEN and any(k in r for r in rows)
                                       else [r.get(k, 0.0) for r in rows]), 1) for k in keys}


def report(result: dict[str, Any]) -> str:
    names = list(result["medians"])
    default, baseline = (result["medians"][n] for n in names)
    warm = ", each after another question" if result.get("warm") else ""
    lines = [f"# Tutor turn latency (median of {result['repeats']} x {result['questions']} "
             f"questions, ms{warm})", "", f"commit {result['git']}; {result['threads']}", "",
             f"| stage | {names[0]} | {names[1]} | ratio |", "|---|---|---|---|"]
    for key in [*STAGES, "prompt_tokens", "completion_tokens"]:
        ratio = baseline[key] / default[key] if default[key] else float("nan")
        lines.append(f"| {key} | {default[key]:,.1f} | {baseline[key]:,.1f} | {ratio:.2f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--baseline", choices=("budget", "refine", "style"), default="budget",
                        help="budget: the server's context budget; refine: whole passages "
                             "instead of the refined evidence; style: statements against "
                             "prose answers")
    parser.add_argument("--warm", action="store_true",
                        help="ask each question after another student's question of the "
                             "same kind: the system prompt and the task are in llama.cpp's "
                             "cache, as on a server that has answered before")
    run_model_bench(parser, run, report)


if __name__ == "__main__":
    main()
