"""The naive baseline: what many RAG tutorials do on every request.

Per query it rebuilds a pure-Python Okapi BM25 (in the style of rank_bm25's BM25Okapi: one
Counter per document, document frequencies, then a Python loop per query term) over the
corpus tokens it keeps in memory, computes cosine similarity in a Python loop over the
stored vectors (one numpy dot and two norms per vector), fuses the two top-n lists with
plain RRF and returns the chunk texts. Same tokenizer, vectors, query embedding, k and n
as coursetutor's search.
"""

from __future__ import annotations

import heapq
import math
import time
from collections import Counter

import numpy as np

from coursetutor.retrieval.embed import EmbeddingModel
from coursetutor.retrieval.tokenize import tokenize

K1 = 0.9
B = 0.4


def bm25_scores(corpus: list[tuple[str, ...]], query: list[str]) -> list[float]:
    """Okapi BM25 of every document, building the whole index from the tokens first."""
    doc_freqs = [Counter(doc) for doc in corpus]
    df: Counter[str] = Counter()
    for freqs in doc_freqs:
        df.update(freqs.keys())
    n = len(corpus)
    lens = [len(doc) for doc in corpus]
    avgdl = sum(lens) / max(n, 1)
    scores = [0.0] * n
    for term in query:
        idf = math.log(1.0 + (n - df[term] + 0.5) / (df[term] + 0.5))
        for i, freqs in enumerate(doc_freqs):
            tf = freqs.get(term)
            if tf:
                scores[i] += idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * lens[i] / avgdl))
    return scores


def top(scores: list[float], n: int, positive_only: bool = False) -> list[int]:
    """Indices of the n best scores, best first."""
    idx = heapq.nlargest(n, range(len(scores)), key=scores.__getitem__)
    return [i for i in idx if scores[i] > 0] if positive_only else idx


class NaiveHybrid:
    """Hybrid search with nothing precomputed but the tokens and the vectors."""

    def __init__(
        self, embedder: EmbeddingModel, ids: list[str], texts: list[str],
        terms: list[tuple[str, ...]], vectors: np.ndarray, k: int = 5, n: int = 10,
    ) -> None:
        self.embedder = embedder
        self.k, self.n = k, n
        self.ids = ids
        self.texts = dict(zip(ids, texts, strict=True))
        self.terms = terms
        self.vectors = list(vectors)  # one array per chunk, as such apps keep them
        self.embed_ms = 0.0

    def search(self, query: str) -> list[tuple[str, str]]:
        k, n = self.k, self.n
        t0 = time.perf_counter()
        q = self.embedder.embed_query(query)
        self.embed_ms = (time.perf_counter() - t0) * 1000
        qnorm = float(np.linalg.norm(q))
        cosine = [float(np.dot(q, v)) / (qnorm * float(np.linalg.norm(v))) for v in self.vectors]
        keyword = bm25_scores(self.terms, tokenize(query, "en"))
        fused: dict[str, float] = {}
        for ranking in (top(cosine, n), top(keyword, n, positive_only=True)):
            for rank, i in enumerate(ranking, start=1):
                fused[self.ids[i]] = fused.get(self.ids[i], 0.0) + 1.0 / (60 + rank)
        best = sorted(fused.items(), key=lambda kv: -kv[1])[:k]
        return [(cid, self.texts[cid]) for cid, _ in best]
