"""Would guessing the next tokens from the prompt (prompt-lookup decoding) write statements
faster with the bundled model on this machine?

A statement restates its evidence sentence, often word for word, so the tokens after the last
few written can be guessed from where those occur earlier in the prompt or the reply; the
model then evaluates the token it wrote and k guesses in one batch and keeps the guesses up to
the first it would not have written. That pays where a batch of 1 + k tokens costs little more
than one token (a GPU, or a CPU whose cores wait on memory), not where it costs k + 1 times as
much.

Two measurements in one process on one loaded model:
- the cost of evaluating a batch of 1 + k tokens, with the logits of every position (each is
  sampled), against one token, after a 300-token prompt (median of `--repeats`);
- on statements the model writes greedily from real evidence prompts (the three of
  `grammar_sampling.py`), how many tokens each step would keep with k guesses from the
  latest earlier occurrence of the last 3, then 2 tokens; with the batch costs above, the
  time writing would take against writing token by token (below 1: faster).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from _common import git_state, log, repeats_main, thread_setting
from grammar_sampling import CASES

from coursetutor.config import load_settings
from coursetutor.llm.base import GenParams, Message
from coursetutor.llm.local import LocalLLM
from coursetutor.tutor import prompts
from coursetutor.tutor.statements import schema

GUESSES = (2, 4, 8, 16)  # k, the tokens guessed at a time
NGRAMS = (3, 2)  # the last tokens looked up, longest first
PROMPT_TOKENS = 300


def run(args: argparse.Namespace) -> dict[str, Any]:
    settings = load_settings(data_dir=Path(args.data_dir))
    llm = LocalLLM.from_settings(settings, settings.llm_model)
    llama = llm._contexts[0].llama
    costs = _batch_costs(llama, args.repeats)
    kept: dict[int, list[float]] = {k: [] for k in GUESSES}
    ratios: dict[int, list[float]] = {k: [] for k in GUESSES}
    written = 0
    for i, (evidence, question, language) in enumerate(CASES):
        messages = [Message("system", prompts.load("statements_system")),
                    Message("user", f"Evidence sentences from the course:\n{evidence}\n"
                                    f"Student's question: {question}\n\nAnswer with 1 to 3 "
                                    f"short statements. Write them in {language}.")]
        llm.forget_prompts()
        pieces = sum(1 for d in llm.stream(messages, GenParams(
            temperature=0.0, max_tokens=160, schema=schema(["S1", "S2"], 3))) if d.text)
        ids = np.array(llama.input_ids[:llama.n_tokens], dtype=np.intc)
        start = len(ids) - pieces  # the reply's first token
        written += pieces
        for k in GUESSES:
            steps = _steps(ids, start, k)
            kept[k].append((len(ids) - start) / len(steps))
            ratios[k].append(sum(costs[1 + g] if g else costs[1] for g in steps)
                             / ((len(ids) - start) * costs[1]))
        log(f"case {i + 1}/{len(CASES)}")
    return {"git": git_state(), "threads": thread_setting(), "repeats": args.repeats,
            "batch_ms": {str(n): round(c * 1000, 1) for n, c in costs.items()},
            "cases": len(CASES), "tokens_written": written,
            "tokens_per_step": {str(k): round(statistics.mean(v), 2) for k, v in kept.items()},
            "time_ratio": {str(k): round(statistics.mean(v), 2) for k, v in ratios.items()}}


def _batch_costs(llama: Any, repeats: int) -> dict[int, float]:
    """Median seconds to evaluate a batch of n tokens after the prompt, every position's
    logits asked for, n = 1 to 1 + the most guesses."""
    text = " ".join(s for evidence, _, _ in CASES for s in evidence.split()) * 4
    tokens = llama.tokenize(text.encode("utf-8"), add_bos=False)
    prompt, more = tokens[:PROMPT_TOKENS], tokens[PROMPT_TOKENS:]
    llama.reset()
    llama.eval(prompt)
    costs: dict[int, float] = {}
    for n in range(1, 2 + max(GUESSES)):  # a step may guess fewer than k
        spent = []
        for _ in range(repeats):
            llama._ctx.kv_cache_seq_rm(-1, PROMPT_TOKENS, -1)
            llama._batch.set_batch(batch=more[:n], n_past=PROMPT_TOKENS, logits_all=True)
            started = time.perf_counter()
            llama._ctx.decode(llama._batch)
            spent.append(time.perf_counter() - started)
        costs[n] = statistics.median(spent)
    llama.reset()
    return costs


def _steps(ids: np.ndarray, start: int, k: int) -> list[int]:
    """For each step writing ids[start:], the number of guesses evaluated with its token."""
    steps: list[int] = []
    at = start  # the next token to write
    while at < len(ids):
        guesses = _guess(ids[:at + 1], k)  # the model's token is written: it is looked up
        steps.append(len(guesses))
        # the step writes the model's token, then keeps the guesses that it would write next
        right = 0
        while (right < len(guesses) and at + 1 + right < len(ids)
               and guesses[right] == ids[at + 1 + right]):
            right += 1
        at += 1 + right
    return steps


def _guess(ids: np.ndarray, k: int) -> Sequence[int]:
    """The k tokens after the latest earlier occurrence of the last 3 (else 2) tokens."""
    for size in NGRAMS:
        if len(ids) <= size:
            continue
        windows = np.lib.stride_tricks.sliding_window_view(ids[:-1], size)
        hits = np.nonzero((windows == ids[-size:]).all(axis=1))[0]
        if len(hits):
            after = int(hits[-1]) + size
            return [int(t) for t in ids[after:after + k]]
    return []


def report(result: dict[str, Any]) -> str:
    costs = result["batch_ms"]
    one = costs["1"]
    rows = [f"| {k} | {costs[str(1 + k)]:,.1f} | {costs[str(1 + k)] / one:.1f} | "
            f"{result['tokens_per_step'][str(k)]:.2f} | {result['time_ratio'][str(k)]:.2f} |"
            for k in GUESSES]
    return "\n".join([
        f"# Guessing tokens from the prompt (batches: median of {result['repeats']}; "
        f"{result['tokens_written']} tokens of {result['cases']} replies)", "",
        f"commit {result['git']}; {result['threads']}", "",
        f"one token: {one:,.1f} ms", "",
        "| k guesses | batch of 1 + k, ms | against one token | tokens kept per step | "
        "time of writing against token by token |", "|---|---|---|---|---|", *rows])


def main() -> None:
    repeats_main(__doc__, run, report)


if __name__ == "__main__":
    main()
