"""In-memory search structures for one (tenant, course), loaded from persisted rows."""

from __future__ import annotations

import dataclasses

import numpy as np
import numpy.typing as npt

from ..scoring.bm25 import BM25Index
from ..scoring.vectors import VectorIndex
from ..types import SearchFilters


@dataclasses.dataclass
class ScopeIndex:
    """Vectors, BM25 postings and filter columns of one course, row-aligned."""

    generation: int
    chunk_ids: list[str]
    doc_types: npt.NDArray[np.str_]
    difficulty: npt.NDArray[np.int16]
    bm25: BM25Index
    vectors: dict[str, VectorIndex]
    _masks: dict[tuple[object, ...], npt.NDArray[np.bool_] | None] = dataclasses.field(
        default_factory=dict)

    @classmethod
    def build(
        cls,
        generation: int,
        rows: list[tuple[str, str, int, int, bytes, bytes]],
    ) -> ScopeIndex:
        """Build from (chunk id, doc type, difficulty, n_terms, term id blob, tf blob) rows."""
        n = len(rows)
        term_parts = [np.frombuffer(r[4], dtype=np.int32) for r in rows]
        tf_parts = [np.frombuffer(r[5], dtype=np.float32) for r in rows]
        lens = np.array([r[3] for r in rows], dtype=np.float32)
        counts = np.array([p.shape[0] for p in term_parts], dtype=np.int64)
        doc_rows = np.repeat(np.arange(n, dtype=np.int64), counts)
        terms = np.concatenate(term_parts).astype(np.int64) if n else np.zeros(0, np.int64)
        tfs = np.concatenate(tf_parts) if n else np.zeros(0, np.float32)
        return cls(
            generation=generation,
            chunk_ids=[r[0] for r in rows],
            doc_types=np.array([r[1] for r in rows], dtype=np.str_),
            difficulty=np.array([r[2] for r in rows], dtype=np.int16),
            bm25=BM25Index(doc_rows, terms, tfs, lens),
            vectors={},  # filled per embedding model on first use
        )

    def mask(self, filters: SearchFilters) -> npt.NDArray[np.bool_] | None:
        """Rows allowed by the document-type and difficulty filters (None: all); computed
        once per filter for this version of the course."""
        key = (filters.doc_types, filters.max_difficulty)
        if key not in self._masks:
            self._masks[key] = self._mask(filters)
        return self._masks[key]

    def _mask(self, filters: SearchFilters) -> npt.NDArray[np.bool_] | None:
        allowed: npt.NDArray[np.bool_] | None = None
        if filters.doc_types is not None:
            allowed = np.isin(self.doc_types, np.array(filters.doc_types, dtype=np.str_))
        if filters.max_difficulty is not None:
            by_level = self.difficulty <= filters.max_difficulty
            allowed = by_level if allowed is None else allowed & by_level
        return allowed


def top_k(
    scores: npt.NDArray[np.float32], limit: int, mask: npt.NDArray[np.bool_] | None,
    positive_only: bool = False,
) -> list[tuple[int, float]]:
    """Indices and scores of the `limit` best rows, best first, honouring `mask`."""
    if scores.shape[0] == 0 or limit <= 0:
        return []
    s = scores.astype(np.float32, copy=mask is not None)
    if mask is not None:
        s[~mask] = -np.inf
    if positive_only:
        s = np.where(s > 0, s, -np.inf).astype(np.float32)
    limit = min(limit, s.shape[0])
    idx = np.argpartition(-s, limit - 1)[:limit]
    idx = idx[np.lexsort((idx, -s[idx]))]
    return [(int(i), float(s[i])) for i in idx if np.isfinite(s[i])]
