"""llama.cpp's prompt-state cache, with every byte of a saved state counted."""

from __future__ import annotations

from typing import Any


def prompt_cache(capacity_bytes: int) -> Any:
    """A RAM cache of evaluated prompt states holding at most `capacity_bytes`.

    llama-cpp-python's `LlamaRAMCache` counts only the KV state of each entry, but every saved
    state also carries a copy of the logits (n_batch x vocabulary floats: 311 MB for Qwen2.5's
    151,936 tokens), so its 1 GiB cap let a server with 8 students grow to 10.5 GB. This one
    counts them, and evicts the least recently used states accordingly.
    """
    from llama_cpp.llama_cache import LlamaRAMCache

    class CountingRAMCache(LlamaRAMCache):  # type: ignore[misc]
        @property
        def cache_size(self) -> int:
            return sum(int(s.llama_state_size) + int(s.scores.nbytes) + int(s.input_ids.nbytes)
                       for s in self.cache_state.values())

    return CountingRAMCache(capacity_bytes=capacity_bytes)
