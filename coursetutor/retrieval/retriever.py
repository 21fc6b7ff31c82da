"""Hybrid retrieval: BM25 and vector candidates fused with weights from their evidence."""

from __future__ import annotations

import dataclasses
import os
import re
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from ..config import Settings
from ..errors import EmptyQueryError
from ..scoring.fusion import (
    Features,
    keyword_weight,
    list_weights,
    relative_score_fusion,
    rrf,
    spread_fusion,
)
from ..store import Store
from ..store.base import Vector
from ..types import Chunk, Hit, SearchFilters
from .embed import EmbeddingModel
from .glossary import glossary_for, has_chinese
from .language import detect_language, search_language
from .lru import LRU
from .moment import best_moment
from .names import with_spellings
from .tokenize import has_cjk, tokenize

MODES = ("hybrid", "bm25", "vector")
RESULT_CACHE_SIZE = 2048  # searches kept per process (a class asks the same questions)
EMBED_WORKERS = 4  # question embeddings running beside keyword searches, per process
_HAS_WORD = re.compile(r"\w", re.UNICODE)
CJK_LANGUAGES = ("zh", "ja", "ko")


@dataclasses.dataclass
class SearchTrace:
    """Diagnostics of one search: timings (ms) and the keyword evidence used for fusion."""

    timings: dict[str, float] = dataclasses.field(default_factory=dict)
    keyword_evidence: float = 0.0
    keyword_weight: float = 0.0
    language: str = ""
    translated: bool = False  # the keywords are a dictionary translation of the question


class Retriever:
    """Searches one course with BM25, vectors, or both fused."""

    # True: a hybrid search embeds the question on a second thread while the keyword search
    # runs. Measured slower on 2 cores (bench/search_latency.py, 100k chunks, p50 34.0 against
    # 30.3 ms: the two slow each other down more than the overlap saves), so off by default.
    overlap = False

    def __init__(self, store: Store, embedder: EmbeddingModel, settings: Settings,
                 results: ResultCache | None = None) -> None:
        self.store = store
        self.embedder = embedder
        self.settings = settings
        # results per course version, for stores that search on a server (search_state)
        self._results = results

    def search(
        self,
        query: str,
        filters: SearchFilters,
        k: int = 5,
        mode: str = "hybrid",
        trace: SearchTrace | None = None,
        state: tuple[str, int | None] | None = None,
    ) -> list[Hit]:
        """Return the `k` best chunks for `query` inside `filters`' tenant and course;
        `state` is the course's `Store.search_state` when the caller has read it."""
        if mode not in MODES:
            raise ValueError(f"unknown search mode {mode!r}; valid: {', '.join(MODES)}")
        if not query or not _HAS_WORD.search(query):
            raise EmptyQueryError("the question is empty", code="empty_question")
        trace = trace or SearchTrace()
        language, version = state or self.store.search_state(filters.tenant, filters.course)
        # a name as the course writes it too: "柯西收敛准则" is searched with "Cauchy" for
        # notes that write "Cauchy 收敛原理"
        query = with_spellings(query, language)
        if version is None or self._results is None:
            return self._search(query, filters, k, mode, trace, language)
        key = (filters, query, k, mode, version, self.settings)
        cached = self._results.get(key)
        if cached is not None:
            trace.timings["cached"] = 0.0
            (trace.language, trace.keyword_evidence, trace.keyword_weight, trace.translated,
             kept) = cached
            return list(kept)
        hits = self._search(query, filters, k, mode, trace, language)
        self._results.put(key, (trace.language, trace.keyword_evidence, trace.keyword_weight,
                                trace.translated, tuple(hits)))
        return hits

    def _search(self, query: str, filters: SearchFilters, k: int, mode: str,
                trace: SearchTrace, course_language: str) -> list[Hit]:
        n = max(k * self.settings.candidate_factor, self.settings.min_candidates, k)
        top = 2 * k + 10  # a few spare candidates let duplicates of one text drop out
        if mode == "hybrid" and self.settings.fusion != "spread" and self.store.fuses_hybrid:
            result = self._store_fused(query, filters, n, top, trace, course_language)
            if result is not None:
                return _unique(result)[:k]
        lists = self.candidates(query, filters, n, trace, mode, course_language)
        t0 = time.perf_counter()
        if mode == "hybrid":
            weights = fusion_weights(lists, trace, self.settings.fusion, course_language)
            trace.keyword_weight = weights.get("bm25", 0.0)
            if self.settings.fusion == "rrf":
                fused = rrf({name: [cid for cid, _ in scored] for name, scored in lists.items()},
                            k=self.settings.rrf_k, weights=weights)
            elif self.settings.fusion == "relative":
                fused = relative_score_fusion(lists, weights)
            else:
                fused = spread_fusion(lists, weights)
        else:
            fused = [(cid, score) for cid, score in lists[mode]]
        fused = fused[:top]
        ids = [str(cid) for cid, _ in fused]
        chunks = self.store.get_chunks(filters, ids)
        positions = {name: {cid: i + 1 for i, (cid, _) in enumerate(scored)}
                     for name, scored in lists.items()}
        scores = {name: dict(scored) for name, scored in lists.items()}
        ranks = {cid: {name: positions[name].get(cid) for name in lists} for cid in ids}
        by_id = {cid: {name: scores[name].get(cid) for name in lists} for cid in ids}
        hits = _unique(self.as_hits(fused, chunks, ranks, by_id, query, trace.language))[:k]
        trace.timings["fuse"] = (time.perf_counter() - t0) * 1000
        return hits

    def candidates(self, query: str, filters: SearchFilters, n: int, trace: SearchTrace,
                   mode: str = "hybrid", course_language: str | None = None,
                   ) -> dict[str, list[tuple[str, float]]]:
        """The `n` best (chunk id, score) of each retriever `mode` uses, vectors first.

        The keyword evidence, the question's language and whether its keywords were
        translated are left in `trace`.
        """
        if course_language is None:
            course_language = self.store.course_language(filters.tenant, filters.course)
        lists: dict[str, list[tuple[str, float]]] = {}
        vector: Vector | None = None
        if mode == "hybrid" and self.overlap:
            # the question is embedded on another core while the keyword search runs here
            pending = _pool().submit(self._embed, query)
            terms = self._terms(query, trace, course_language, filters)
            keyword = self._keyword(filters, terms, n, trace)
            vector, trace.timings["embed"] = pending.result()
        else:
            keyword = None
            if mode in ("hybrid", "vector"):  # the question is embedded once, whichever path
                vector, trace.timings["embed"] = self._embed(query)
            if mode in ("hybrid", "bm25"):
                terms = self._terms(query, trace, course_language, filters)
                keyword = self._keyword(filters, terms, n, trace)
        if vector is not None:
            t0 = time.perf_counter()
            lists["vector"] = self.store.vector_search(filters, self.embedder.model_id,
                                                       vector, n)
            trace.timings["vector"] = (time.perf_counter() - t0) * 1000
        if keyword is not None:
            lists["bm25"] = keyword
        return lists

    def _store_fused(self, query: str, filters: SearchFilters, n: int, top: int,
                     trace: SearchTrace, course_language: str) -> list[Hit] | None:
        """Both searches fused by the store in one query (PostgreSQL's `relative` and `rrf`);
        None where the keywords are a translation (their evidence is no measure of them)."""
        vector, trace.timings["embed"] = self._embed(query)
        terms = self._terms(query, trace, course_language, filters)
        if trace.translated:
            return None
        t0 = time.perf_counter()
        result = self.store.hybrid_search(
            filters, self.embedder.model_id, vector, terms, n, self.settings.fusion,
            self.settings.rrf_k, top)
        if result is None:
            return None
        trace.timings["hybrid"] = (time.perf_counter() - t0) * 1000
        trace.keyword_evidence = result.evidence
        trace.keyword_weight = keyword_weight(result.evidence)
        return self.as_hits(result.fused, result.chunks, result.ranks, result.scores,
                            query, trace.language)

    def _embed(self, query: str) -> tuple[Vector, float]:
        """The question's vector and the milliseconds it took."""
        t0 = time.perf_counter()
        vector = self.embedder.embed_query(query)
        return vector, (time.perf_counter() - t0) * 1000

    def _keyword(self, filters: SearchFilters, terms: list[str], n: int,
                 trace: SearchTrace) -> list[tuple[str, float]]:
        """The BM25 candidates; their evidence is left in `trace`."""
        t0 = time.perf_counter()
        result = self.store.keyword_search(filters, terms, n)
        trace.timings["bm25"] = (time.perf_counter() - t0) * 1000
        trace.keyword_evidence = result.evidence
        return list(result.hits)

    def _terms(self, query: str, trace: SearchTrace, course_language: str,
               filters: SearchFilters) -> list[str]:
        """The query's keyword terms, tokenized for its language (the course's by default);
        translated into the course's language where a dictionary for the pair exists and the
        course has no documents in the question's language."""
        trace.language = detect_language(query, default=course_language)
        # a question searched as "translation + original" has its Chinese words translated too
        source = ("zh" if trace.language not in ("ja", "ko") and has_chinese(query)
                  else trace.language)
        glossary = (glossary_for(source, course_language)
                    if self.settings.translate_keywords else None)
        if glossary is not None and self._has_language(filters, source):
            glossary = None  # the course has documents in the question's language: search them
        if glossary is None:
            terms = tokenize(query, trace.language)
            if course_language in CJK_LANGUAGES:
                return terms
            # "translation + original" in an alphabetic course: the original's CJK terms can
            # match nothing, and each would weigh as an unknown term in the keyword evidence
            alphabetic = [t for t in terms if not has_cjk(t)]
            return alphabetic or terms
        trace.translated = True
        return glossary.translate(query, lambda text: tokenize(text, course_language))

    def _has_language(self, filters: SearchFilters, language: str) -> bool:
        """Whether the course has chunks in `language` (`search_language`'s rule)."""
        languages = self.store.course_languages(filters.tenant, filters.course)
        return search_language(language, "", languages) == language

    def as_hits(
        self,
        fused: Sequence[tuple[object, float]],
        chunks: dict[str, Chunk],
        ranks: dict[str, dict[str, int | None]],
        scores: dict[str, dict[str, float | None]],
        query: str,
        language: str,
    ) -> list[Hit]:
        """`fused` (chunk id, score) as hits, in order; ids without a chunk are left out."""
        return [
            Hit(
                chunk=chunks[cid],
                score=score,
                ranks=ranks.get(cid, {}),
                scores=scores.get(cid, {}),
                locator=best_moment(chunks[cid], query, language or chunks[cid].language,
                                    self.settings.moment_min_seconds),
            )
            for cid, score in ((str(c), s) for c, s in fused)
            if cid in chunks
        ]


ResultCache = LRU[tuple[object, ...], tuple[str, float, float, bool, tuple[Hit, ...]]]


def result_cache() -> ResultCache:
    """A cache of search results for one process (see `Store.search_state`)."""
    return LRU(RESULT_CACHE_SIZE)


_POOL: tuple[int, ThreadPoolExecutor] | None = None


def _pool() -> ThreadPoolExecutor:
    """This process's threads for question embeddings (a forked worker makes its own)."""
    global _POOL
    if _POOL is None or _POOL[0] != os.getpid():
        _POOL = (os.getpid(), ThreadPoolExecutor(EMBED_WORKERS, "coursetutor-embed"))
    return _POOL[1]


def fusion_weights(lists: dict[str, list[tuple[str, float]]], trace: SearchTrace,
                   fusion: str, course_language: str) -> dict[str, float]:
    """The weight of each list of a hybrid search (`fusion.list_weights`); the keywords are
    CJK terms when both the question and the course are in Chinese, Japanese or Korean."""
    features = Features(
        evidence=trace.keyword_evidence, translated=trace.translated,
        cjk=trace.language in CJK_LANGUAGES and course_language in CJK_LANGUAGES)
    return list_weights(lists, features, adaptive=fusion == "spread")


def _unique(hits: list[Hit]) -> list[Hit]:
    """Drop hits whose text already appeared higher up (the same text in two documents)."""
    seen: set[str] = set()
    out: list[Hit] = []
    for h in hits:
        if h.chunk.content_hash not in seen:
            seen.add(h.chunk.content_hash)
            out.append(h)
    return out
