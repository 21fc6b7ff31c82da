"""A short task's whole call with the bundled model, with llama.cpp's prompt states saved
lean (`coursetutor.llm.prompt_cache.lean_states`, the default: no copy of the logits table)
against llama-cpp-python's own `save_state`/`load_state`, which copy the n_batch x vocabulary
table of floats with every state.

Both run in one process on one loaded model, alternating call by call: each a yes/no
judgement of a statement against its sentence, after a translation on the same context (the
answer check's calls while the model writes); llama-cpp-python saves the state of every
completion into its prompt cache. Reports the median seconds of the judgement's call and of
the states saved and loaded in it, and whether every reply was the same.
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

PAIRS = (
    ("The bisection method halves the bracket at every step.",
     "The bisection method halves the bracket at every step and keeps the half where the sign "
     "of f changes."),
    ("Newton-Raphson may diverge when the starting point is badly chosen.",
     "Disadvantage: For \"bad\" starting points: Newton-Raphson may diverge."),
    ("La serie armonica diverge.", "Cauchy non è rispettato quindi e la serie diverge."),
)
WAYS = ("lean states", "baseline: the library's states")


def run(args: argparse.Namespace) -> dict[str, Any]:
    settings = load_settings(data_dir=Path(args.data_dir))
    llm = LocalLLM.from_settings(settings, settings.llm_model)
    llama = llm._contexts[0].llama
    library = type(llama)
    ways = {WAYS[0]: (llama.save_state, llama.load_state),
            WAYS[1]: (library.save_state.__get__(llama), library.load_state.__get__(llama))}
    calls: dict[str, list[float]] = {w: [] for w in WAYS}
    states: dict[str, list[float]] = {w: [] for w in WAYS}
    replies: dict[str, list[str]] = {w: [] for w in WAYS}
    params = GenParams(temperature=0.0, max_tokens=3)
    for r in range(args.repeats):
        for i, (statement, sentence) in enumerate(PAIRS):
            for way in WAYS[:: 1 if (r + i) % 2 == 0 else -1]:
                save, load = ways[way]
                spent: list[float] = []
                llama.save_state = _timed(save, spent)
                llama.load_state = _timed(load, spent)
                llm.forget_prompts()
                llm.complete([Message("system", "Translate the user's text into Italian."),
                              Message("user", statement)], params)  # another prompt first
                started = time.perf_counter()
                judge = prompts.render("check_claim", evidence=sentence, claim=statement)
                reply = llm.complete([Message("system", "You check a tutor's claims."),
                                      Message("user", judge)], params).text
                calls[way].append(time.perf_counter() - started)
                states[way].append(sum(spent))
                replies[way].append(reply)
            log(f"repeat {r + 1}/{args.repeats}, pair {i + 1}/{len(PAIRS)}")
    llama.save_state, llama.load_state = ways[WAYS[0]]
    return {"git": git_state(), "threads": thread_setting(), "repeats": args.repeats,
            "pairs": len(PAIRS), "same": replies[WAYS[0]] == replies[WAYS[1]],
            "call_s": {w: round(statistics.median(v), 3) for w, v in calls.items()},
            "states_s": {w: round(statistics.median(v), 3) for w, v in states.items()}}


def _timed(method: Any, spent: list[float]) -> Any:
    def call(*args: Any) -> Any:
        started = time.perf_counter()
        try:
            return method(*args)
        finally:
            spent.append(time.perf_counter() - started)
    return call


def report(result: dict[str, Any]) -> str:
    lines = [f"# A judgement's call, prompt states lean or the library's (median of "
             f"{result['repeats']} x {result['pairs']} calls, s)", "",
             f"commit {result['git']}; {result['threads']}", "",
             f"| | {WAYS[0]} | {WAYS[1]} | ratio |", "|---|---|---|---|"]
    for key, name in (("call_s", "whole call"), ("states_s", "saving and loading states")):
        lean, library = (result[key][w] for w in WAYS)
        ratio = lean / library if library else float("nan")
        lines.append(f"| {name} | {lean:.3f} | {library:.3f} | {ratio:.2f} |")
    lines += ["", f"every reply the same: {'yes' if result['same'] else 'NO'}"]
    return "\n".join(lines)


def main() -> None:
    repeats_main(__doc__, run, report)


if __name__ == "__main__":
    main()
