"""Hybrid retrieval: BM25 and vector candidates fused with evidence-weighted RRF."""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Sequence

from ..config import Settings
from ..errors import EmptyQueryError
from ..store import Store
from ..types import Chunk, Hit, SearchFilters
from .embed import EmbeddingModel
from .fusion import keyword_weight, relative_score_fusion, rrf
from .language import detect_language
from .moment import best_moment
from .tokenize import tokenize

MODES = ("hybrid", "bm25", "vector")
_HAS_WORD = re.compile(r"\w", re.UNICODE)


@dataclasses.dataclass
class SearchTrace:
    """Diagnostics of one search: timings (ms) and the keyword evidence used for fusion."""

    timings: dict[str, float] = dataclasses.field(default_factory=dict)
    keyword_evidence: float = 0.0
    keyword_weight: float = 0.0
    language: str = ""


class Retriever:
    """Searches one course with BM25, vectors, or both fused."""

    def __init__(self, store: Store, embedder: EmbeddingModel, settings: Settings) -> None:
        self.store = store
        self.embedder = embedder
        self.settings = settings

    def search(
        self,
        query: str,
        filters: SearchFilters,
        k: int = 5,
        mode: str = "hybrid",
        trace: SearchTrace | None = None,
    ) -> list[Hit]:
        """Return the `k` best chunks for `query` inside `filters`' tenant and course."""
        if mode not in MODES:
            raise ValueError(f"unknown search mode {mode!r}; valid: {', '.join(MODES)}")
        if not query or not _HAS_WORD.search(query):
            raise EmptyQueryError("the question is empty")
        trace = trace or SearchTrace()
        n = max(k * self.settings.candidate_factor, self.settings.min_candidates, k)
        if mode == "hybrid":
            fused_in_store = self._search_in_store(query, filters, k, n, trace)
            if fused_in_store is not None:
                return fused_in_store
        rankings: dict[str, list[str]] = {}
        scores: dict[str, dict[str, float]] = {}
        if mode in ("hybrid", "vector"):
            t0 = time.perf_counter()
            vector = self.embedder.embed_query(query)
            t1 = time.perf_counter()
            found = self.store.vector_search(filters, self.embedder.model_id, vector, n)
            trace.timings["embed"] = (t1 - t0) * 1000
            trace.timings["vector"] = (time.perf_counter() - t1) * 1000
            rankings["vector"] = [cid for cid, _ in found]
            scores["vector"] = dict(found)
        if mode in ("hybrid", "bm25"):
            t0 = time.perf_counter()
            terms = self._terms(query, filters, trace)
            result = self.store.keyword_search(filters, terms, n)
            trace.timings["bm25"] = (time.perf_counter() - t0) * 1000
            trace.keyword_evidence = result.evidence
            rankings["bm25"] = [cid for cid, _ in result.hits]
            scores["bm25"] = dict(result.hits)
        t0 = time.perf_counter()
        weights = {"vector": 1.0}
        if mode == "hybrid":
            trace.keyword_weight = keyword_weight(trace.keyword_evidence)
            weights["bm25"] = trace.keyword_weight
        if self.settings.fusion == "rrf":
            fused = rrf(rankings, k=self.settings.rrf_k, weights=weights)
        else:
            fused = relative_score_fusion(
                {name: list(scores[name].items()) for name in rankings}, weights
            )
        # a few spare candidates let duplicates of one text drop out without costing hits
        fused = fused[: 2 * k + 10]
        ids = [str(cid) for cid, _ in fused]
        chunks = self.store.get_chunks(filters, ids)
        positions = {name: {cid: i + 1 for i, cid in enumerate(r)} for name, r in rankings.items()}
        ranks = {cid: {name: positions[name].get(cid) for name in rankings} for cid in ids}
        by_id = {cid: {name: scores[name].get(cid) for name in rankings} for cid in ids}
        hits = _unique(self._hits(fused, chunks, ranks, by_id, query, trace.language))[:k]
        trace.timings["fuse"] = (time.perf_counter() - t0) * 1000
        return hits

    def _terms(self, query: str, filters: SearchFilters, trace: SearchTrace) -> list[str]:
        """The query's keyword terms, tokenized for its language (the course's by default)."""
        course_lang = self.store.course_language(filters.tenant, filters.course)
        trace.language = detect_language(query, default=course_lang)
        return tokenize(query, trace.language)

    def _search_in_store(
        self, query: str, filters: SearchFilters, k: int, n: int, trace: SearchTrace
    ) -> list[Hit] | None:
        """Hybrid search fused by the store in one query (None: the store leaves it to us)."""
        t0 = time.perf_counter()
        vector = self.embedder.embed_query(query)
        t1 = time.perf_counter()
        terms = self._terms(query, filters, trace)
        result = self.store.hybrid_search(
            filters, self.embedder.model_id, vector, terms, n, self.settings.fusion,
            self.settings.rrf_k, 2 * k + 10)
        if result is None:
            return None
        trace.timings["embed"] = (t1 - t0) * 1000
        trace.timings["hybrid"] = (time.perf_counter() - t1) * 1000
        trace.keyword_evidence = result.evidence
        trace.keyword_weight = keyword_weight(result.evidence)
        hits = self._hits(result.fused, result.chunks, result.ranks, result.scores, query,
                          trace.language)
        return _unique(hits)[:k]

    def _hits(
        self,
        fused: Sequence[tuple[object, float]],
        chunks: dict[str, Chunk],
        ranks: dict[str, dict[str, int | None]],
        scores: dict[str, dict[str, float | None]],
        query: str,
        language: str,
    ) -> list[Hit]:
        return [
            Hit(
                chunk=chunks[cid],
                score=score,
                ranks=ranks[cid],
                scores=scores[cid],
                locator=best_moment(chunks[cid], query, language or chunks[cid].language,
                                    self.settings.moment_min_seconds),
            )
            for cid, score in ((str(c), s) for c, s in fused)
            if cid in chunks
        ]


def _unique(hits: list[Hit]) -> list[Hit]:
    """Drop hits whose text already appeared higher up (the same text in two documents)."""
    seen: set[str] = set()
    out: list[Hit] = []
    for h in hits:
        if h.chunk.content_hash not in seen:
            seen.add(h.chunk.content_hash)
            out.append(h)
    return out
