"""llama.cpp's prompt-state cache, with every byte of a saved state counted."""

from __future__ import annotations

import ctypes
import threading
from typing import Any

import numpy as np


def prompt_cache(capacity_bytes: int) -> Any:
    """A RAM cache of evaluated prompt states holding at most `capacity_bytes`.

    llama-cpp-python's `LlamaRAMCache` counts only the KV state of each entry, but every saved
    state also carries a copy of the logits (n_batch x vocabulary floats: 311 MB for Qwen2.5's
    151,936 tokens), so its 1 GiB cap let a server with 8 students grow to 10.5 GB. This one
    counts them, and evicts the least recently used states accordingly. One cache may serve
    several contexts of one model: a state saved by one loads into another.
    """
    from llama_cpp.llama_cache import LlamaRAMCache

    class CountingRAMCache(LlamaRAMCache):  # type: ignore[misc]
        """Shared by the model's contexts, each generating in its own thread: one lock."""

        def __init__(self, capacity_bytes: int) -> None:
            super().__init__(capacity_bytes=capacity_bytes)
            self._lock = threading.RLock()

        @property
        def cache_size(self) -> int:
            return sum(int(s.llama_state_size) + int(s.scores.nbytes) + int(s.input_ids.nbytes)
                       for s in self.cache_state.values())

        def __getitem__(self, key: Any) -> Any:
            with self._lock:
                return super().__getitem__(key)

        def __contains__(self, key: Any) -> bool:
            with self._lock:
                return bool(super().__contains__(key))

        def __setitem__(self, key: Any, value: Any) -> None:
            with self._lock:
                super().__setitem__(key, value)

    return CountingRAMCache(capacity_bytes=capacity_bytes)


def lean_states(llama: Any) -> None:
    """Save and load `llama`'s prompt states without its logits table.

    llama-cpp-python saves a copy of `scores` (up to n_batch x vocabulary floats: 311 MB for
    Qwen2.5) with every state it caches, after every completion, and writes it back on a
    cache hit; without `logits_all` nothing reads that table (llama.cpp samples from its own
    logits), and copying it took 0.3 s of a yes/no judgement's call on 2 cores, more for a
    longer reply (`bench/prompt_states.py`). The states keep the tokens and llama.cpp's own
    state.
    """
    import llama_cpp

    if llama._logits_all:
        return  # the scores are the logits of every position: they must travel
    empty = np.empty((0, llama.n_vocab()), dtype=np.single)

    def save_state() -> Any:
        ctx = llama._ctx.ctx
        size = llama_cpp.llama_state_get_size(ctx)
        buffer = (ctypes.c_uint8 * int(size))()
        written = int(llama_cpp.llama_state_get_data(ctx, buffer, size))
        if written > int(size):
            raise RuntimeError("failed to copy the llama.cpp state")
        return llama_cpp.LlamaState(input_ids=llama.input_ids.copy(), scores=empty,
                                    n_tokens=llama.n_tokens,
                                    llama_state=bytes(buffer)[:written],
                                    llama_state_size=written, seed=llama._seed)

    def load_state(state: Any) -> None:
        llama.input_ids = state.input_ids.copy()
        llama.n_tokens = state.n_tokens
        llama._requires_eval = True
        llama._seed = state.seed
        data = (ctypes.c_uint8 * state.llama_state_size).from_buffer_copy(state.llama_state)
        if llama_cpp.llama_state_set_data(llama._ctx.ctx, data,
                                          state.llama_state_size) != state.llama_state_size:
            raise RuntimeError("failed to set the llama.cpp state")

    llama.save_state = save_state
    llama.load_state = load_state
