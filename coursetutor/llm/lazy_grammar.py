"""Grammar-constrained sampling for llama.cpp that checks the likeliest tokens first.

llama-cpp-python puts the grammar in its sampler chain ahead of everything else, so at every
step the grammar is matched against the whole vocabulary (151,936 tokens with the bundled
model): a third of the time a statement takes to write. This sampler matches it against the
256 likeliest tokens, then the 4,096 likeliest, and samples among those it allows, with the
same samplers, order and seed; it goes on to the whole vocabulary only where the answer
could differ:

- greedy decoding (temperature 0) needs one allowed token in the shortlist: the likeliest
  allowed token overall is the likeliest allowed in it;
- sampling (top-k, then top-p, min-p, temperature; k = 40 by default) needs the k likeliest
  allowed tokens, which are the k likeliest allowed in the shortlist when that many are
  allowed; with fewer, top-k would add tokens from outside it, each less likely than any in
  it, and the shortlist decides when top-p cuts at the same token with them as without
  them (the weight they could add is bounded by the shortlist's lowest logit): then every
  token after the cut, those too, is dropped before the sample is drawn.

`install(llama)` makes a Llama use it for every grammar-constrained call whose other
settings are the ones the tutor uses (no repetition penalties, no mirostat, no logits
processor); any other call keeps llama-cpp-python's own chain.
"""

from __future__ import annotations

import ctypes
import math
from typing import Any

import numpy as np

SHORTLISTS = (256, 4096)  # the likeliest tokens the grammar is matched against, in turn
MARGIN = 1e-4  # of top-p's cumulative sum: room for llama.cpp's float32 arithmetic

_TOKEN = np.dtype([("id", np.int32), ("logit", np.float32), ("p", np.float32)], align=True)


class LazyGrammarSampler:
    """One generation's sampler: the grammar, then the rest of llama-cpp-python's chain."""

    def __init__(self, llama: Any, grammar: Any, *, temp: float, top_k: int, top_p: float,
                 min_p: float, typical_p: float, seed: int) -> None:
        import llama_cpp
        from llama_cpp import _internals

        self._cpp = llama_cpp
        self._vocab = int(llama._n_vocab)
        self._grammar = llama_cpp.llama_sampler_init_grammar(
            llama._model.vocab, grammar._grammar.encode("utf-8"), grammar._root.encode("utf-8"))
        chain: Any = _internals.LlamaSampler
        self._rest: Any = chain()
        self._greedy = temp == 0.0
        self._top_k = top_k if top_k > 0 else self._vocab
        self._top_p = top_p
        if self._greedy:
            self._rest.add_greedy()
        else:  # the order of llama-cpp-python's chain after its grammar
            self._rest.add_top_k(top_k)
            self._rest.add_typical(typical_p, 1)
            self._rest.add_top_p(top_p, 1)
            self._rest.add_min_p(min_p, 1)
            self._rest.add_temp(temp)
            self._rest.add_dist(seed)
        self.shortlisted = 0  # steps decided from the shortlist (for tests and benchmarks)
        self.steps = 0

    def sample(self, ctx: Any, idx: int) -> int:
        cpp = self._cpp
        logits = np.ctypeslib.as_array(cpp.llama_get_logits_ith(ctx.ctx, idx),
                                       shape=(self._vocab,))
        self.steps += 1
        for size in (n for n in SHORTLISTS if n < self._vocab):  # a small vocabulary: all
            ids = np.argpartition(logits, -size)[-size:].astype(np.int32)
            data, array = self._allowed(ids, logits)
            if self._enough(data["logit"], float(logits[ids].min())):
                self.shortlisted += 1
                break
        else:
            data, array = self._allowed(np.arange(self._vocab, dtype=np.int32), logits)
        cpp.llama_sampler_apply(self._rest.sampler, ctypes.byref(array))
        token = int(data["id"][array.selected])
        cpp.llama_sampler_accept(self._grammar, token)
        cpp.llama_sampler_accept(self._rest.sampler, token)
        return token

    def _allowed(self, ids: np.ndarray, logits: np.ndarray) -> tuple[np.ndarray, Any]:
        """The tokens `ids` with their logits, those the grammar forbids set to -inf."""
        cpp = self._cpp
        data = np.empty(len(ids), _TOKEN)
        data["id"], data["logit"], data["p"] = ids, logits[ids], 0.0
        array = cpp.llama_token_data_array(data.ctypes.data_as(cpp.llama_token_data_p),
                                           len(ids), -1, False)
        cpp.llama_sampler_apply(self._grammar, ctypes.byref(array))
        return data, array

    def _enough(self, shortlisted: np.ndarray, floor: float) -> bool:
        """Do the shortlist's allowed tokens decide this step as the whole vocabulary would?
        `floor`: the lowest logit in the shortlist, above every token left out."""
        allowed = np.sort(shortlisted[np.isfinite(shortlisted)])[::-1].astype(np.float64)
        if not len(allowed):
            return False
        if self._greedy or len(allowed) >= self._top_k:
            return True
        if self._top_p >= 1.0:
            return False
        # top-k would add up to k - m tokens from outside, each at most this heavy (the best
        # allowed weighs 1); top-p must cut at the same token with or without them, and
        # everything after the cut (those tokens too) is dropped before sampling
        outside = (self._top_k - len(allowed)) * math.exp(floor - allowed[0])
        weights = np.exp(allowed - allowed[0])
        total = float(weights.sum())
        reached = np.cumsum(weights)
        cut = int(np.searchsorted(reached / total, self._top_p))  # the first to reach top-p
        before = float(reached[cut - 1]) / total if cut else 0.0
        return (float(reached[min(cut, len(reached) - 1)]) / (total + outside)
                >= self._top_p + MARGIN and before < self._top_p - MARGIN)

    def close(self) -> None:
        if self._grammar is not None:
            self._cpp.llama_sampler_free(self._grammar)
            self._grammar = None
        self._rest.close()

    def __del__(self) -> None:
        self.close()


def install(llama: Any) -> None:
    """Make `llama` sample under a grammar with LazyGrammarSampler where it can."""
    stock = llama._init_sampler

    def init_sampler(**kw: Any) -> Any:
        plain = (kw.get("logits_processor") is None and not kw.get("mirostat_mode")
                 and kw.get("repeat_penalty", 1.0) == 1.0
                 and not kw.get("frequency_penalty") and not kw.get("presence_penalty")
                 and kw.get("temp", 0.8) >= 0.0)
        if kw.get("grammar") is None or not plain:
            return stock(**kw)
        return LazyGrammarSampler(
            llama, kw["grammar"], temp=kw.get("temp", 0.8), top_k=kw.get("top_k", 40),
            top_p=kw.get("top_p", 0.95), min_p=kw.get("min_p", 0.05),
            typical_p=kw.get("typical_p", 1.0), seed=llama._seed)

    llama._init_sampler = init_sampler
