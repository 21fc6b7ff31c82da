"""Statements written under their JSON schema with the bundled model: the grammar matched
against the likeliest tokens first (`coursetutor.llm.lazy_grammar`, the default) against
llama-cpp-python's own sampler chain, which matches it against the whole vocabulary.

Both run in one process on one loaded model, alternating prompt by prompt and starting each
reply cold (no evaluated prompt kept), so a noisy neighbour slows both alike. Reports the
median tokens per second of writing (first token to last) and whether every reply was the
same token for token.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from typing import Any

from _common import git_state, log, repeats_main, thread_setting

from coursetutor.config import load_settings
from coursetutor.llm.base import GenParams, Message
from coursetutor.llm.local import LocalLLM
from coursetutor.tutor import prompts
from coursetutor.tutor.statements import schema

# evidence sentences as the tutor numbers them, and a question each (en, it, zh)
CASES = (
    ("[S1] (p. 3) The bisection method halves the bracket at every step and keeps the half "
     "where the sign of f changes.\n[S2] (p. 4) It converges linearly: the error halves at "
     "each step.", "How does bisection work?", "English"),
    ("[S1] (slide 7) Disadvantage: For \"bad\" starting points: Newton-Raphson may diverge.\n"
     "[S2] (slide 3) Update scheme: x[t+1] = x[t] + d[t] with d[t] = −(∇²f(x[t]))⁻¹∇f(x[t])",
     "Quando può divergere il metodo di Newton-Raphson?", "Italian"),
    ("[S1] (p. 78) Teorema di Rolle: sia f:[a,b]→ℝ continua in [a,b] e derivabile su (a,b), "
     "con f(a)=f(b). Allora ∃ c∈(a,b): f'(c)=0.\n[S2] (p. 79) Dimostrazione. Per il teorema "
     "di Weierstrass f ha massimo e minimo in [a,b].", "罗尔定理是什么？", "Chinese"),
)
SAMPLERS = ("likeliest tokens first", "baseline: whole vocabulary")


def run(args: argparse.Namespace) -> dict[str, Any]:
    settings = load_settings(data_dir=Path(args.data_dir))
    llm = LocalLLM.from_settings(settings, settings.llm_model)
    llama = llm._contexts[0].llama
    samplers = {SAMPLERS[0]: llama._init_sampler,
                SAMPLERS[1]: type(llama)._init_sampler.__get__(llama)}
    speeds: dict[str, list[float]] = {name: [] for name in SAMPLERS}
    same = True
    for r in range(args.repeats):
        for i, (evidence, question, language) in enumerate(CASES):
            messages = [Message("system", prompts.load("statements_system")),
                        Message("user", f"Evidence sentences from the course:\n{evidence}\n"
                                        f"Student's question: {question}\n\nAnswer with 1 to "
                                        f"3 short statements. Write them in {language}.")]
            params = GenParams(temperature=settings.llm_temperature, max_tokens=160,
                               schema=schema(["S1", "S2"], 3))
            texts = []
            for name in SAMPLERS[:: 1 if (r + i) % 2 == 0 else -1]:
                llama._init_sampler = samplers[name]
                llm.forget_prompts()
                text, rate = _write(llm, messages, params)
                speeds[name].append(rate)
                texts.append(text)
            same = same and texts[0] == texts[1]
            log(f"repeat {r + 1}/{args.repeats}, case {i + 1}/{len(CASES)}")
    llama._init_sampler = samplers[SAMPLERS[0]]
    return {"git": git_state(), "threads": thread_setting(), "repeats": args.repeats,
            "cases": len(CASES), "same": same,
            "tokens_per_s": {n: round(statistics.median(v), 1) for n, v in speeds.items()}}


def _write(llm: LocalLLM, messages: list[Message], params: GenParams) -> tuple[str, float]:
    parts: list[str] = []
    first = end = 0.0
    for delta in llm.stream(messages, params):
        if delta.text:
            end = time.perf_counter()
            first = first or end
            parts.append(delta.text)
    return "".join(parts), (len(parts) - 1) / (end - first) if len(parts) > 1 else 0.0


def report(result: dict[str, Any]) -> str:
    rates = result["tokens_per_s"]
    default, baseline = (rates[n] for n in SAMPLERS)
    return "\n".join([
        f"# Statements under their grammar (median of {result['repeats']} x "
        f"{result['cases']} replies, tokens/s of writing)", "",
        f"commit {result['git']}; {result['threads']}", "",
        f"| {SAMPLERS[0]} | {SAMPLERS[1]} | ratio |", "|---|---|---|",
        f"| {default:.1f} | {baseline:.1f} | {default / baseline:.2f} |", "",
        f"every reply the same token for token: {'yes' if result['same'] else 'NO'}"])


def main() -> None:
    repeats_main(__doc__, run, report)


if __name__ == "__main__":
    main()
