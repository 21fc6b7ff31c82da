"""Sentence vectors kept in the store: each evidence sentence is embedded once.

The evidence stage (tutor/sentences.py) scores every sentence of the first passages against
the question with e5: embedded in the turn, they held up the first question on a topic. Kept
in the store's vector table, under a key of the tenant and the text, the vectors outlive the
process and are shared by every worker; ingest fills them for a course's documents
(`tutor/warm.py`), and a sentence met first in a turn is kept once embedded.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from ..store import Store

BATCH = 200  # keys per read


class StoredSentences:
    """One tenant's sentence vectors of one embedding model, in `store`."""

    def __init__(self, store: Store, tenant: str, model: str) -> None:
        self.store, self.tenant, self.model = store, tenant, model

    def key(self, text: str) -> str:
        """The vector's key: the tenant's own, never a passage's (those hash the tenant and
        the passage's indexed text, not this prefix)."""
        return hashlib.sha256(f"sentence\0{self.tenant}\0{text}".encode()).hexdigest()

    def get(self, texts: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
        """The vectors kept for `texts` (those it has)."""
        keys = {self.key(text): text for text in dict.fromkeys(texts)}
        listed = list(keys)
        out: dict[str, npt.NDArray[np.float32]] = {}
        for i in range(0, len(listed), BATCH):
            for key, vector in self.store.get_vectors(self.model, listed[i:i + BATCH]).items():
                out[keys[key]] = np.asarray(vector, dtype=np.float32)
        return out

    def put(self, vectors: Mapping[str, npt.NDArray[np.float32]]) -> None:
        """Keep `vectors` (text -> vector)."""
        if vectors:
            self.store.put_vectors(self.model, {self.key(text): vector
                                                for text, vector in vectors.items()})
