"""Okapi BM25 over an in-memory inverted index built from persisted postings.

Formulas (Robertson & Zaragoza 2009, Lucene variant of the IDF):
    idf(t)      = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))
    w(t, d)     = idf(t) * tf(t,d) * (k1 + 1) / (tf(t,d) + k1 * (1 - b + b * |d| / avgdl))
    score(q, d) = sum over t in q of w(t, d)
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

K1 = 0.9
B = 0.4

FloatArray = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.int64]



def keyword_evidence(matched_idf: float, query_idf: float) -> float:
    """Share of the query's IDF mass that the best keyword hit matches (0..1).

    A question whose informative terms do not occur in the course (another language,
    paraphrase) gets a weak keyword list, and fusion should lean on vectors.
    """
    if query_idf <= 0:
        return 0.0
    return max(0.0, min(1.0, matched_idf / query_idf))

def idf(n_docs: int, df: int) -> float:
    """Lucene's non-negative BM25 IDF."""
    return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))


def term_weight(tf: float, doc_len: float, avgdl: float, k1: float = K1, b: float = B) -> float:
    """The BM25 saturation term for one (term, document) pair, without the IDF."""
    return tf * (k1 + 1.0) / (tf + k1 * (1.0 - b + b * doc_len / avgdl))


class BM25Index:
    """Precomputed BM25 weights in term-major (CSC-like) layout for one search scope."""

    def __init__(
        self,
        rows: IntArray,
        term_ids: IntArray,
        tfs: npt.NDArray[np.float32],
        doc_lens: npt.NDArray[np.float32],
        k1: float = K1,
        b: float = B,
    ) -> None:
        self.n_docs = int(doc_lens.shape[0])
        avgdl = float(doc_lens.mean()) if self.n_docs else 1.0
        order = np.argsort(term_ids.astype(np.int32, copy=False))
        term_sorted = term_ids[order]
        self.rows = rows[order].astype(np.int32)
        # one sort serves both the postings order and the vocabulary (np.unique would sort again)
        starts = np.flatnonzero(np.diff(term_sorted, prepend=-1)) if term_sorted.size else order
        self.vocab = term_sorted[starts]
        self.indptr = np.append(starts, term_sorted.shape[0]).astype(np.int64)
        dfs = np.diff(self.indptr)
        n = max(self.n_docs, 1)
        idfs = np.log1p((n - dfs + 0.5) / (dfs + 0.5)).astype(np.float32)
        self.idf = idfs
        tf = tfs[order]
        dl = doc_lens[self.rows] if self.n_docs else tf
        sat = tf * (k1 + 1.0) / (tf + k1 * (1.0 - b + b * dl / max(avgdl, 1e-9)))
        self.weights = (sat * np.repeat(idfs, dfs)).astype(np.float32)
        self.max_idf = float(math.log1p((n + 0.5) / 0.5))

    def columns(self, term_ids: list[int]) -> list[int]:
        """Positions in the vocabulary of the given global term ids (unknown ids dropped)."""
        if self.vocab.shape[0] == 0 or not term_ids:
            return []
        arr = np.asarray(term_ids, dtype=np.int64)
        pos = np.searchsorted(self.vocab, arr)
        ok = (pos < self.vocab.shape[0]) & (self.vocab[np.minimum(pos, len(self.vocab) - 1)] == arr)
        return [int(p) for p in pos[ok]]

    def evidence(self, columns: list[int], unknown: int, top: int | None) -> float:
        """Share of a query's IDF mass that document row `top` matches.

        `columns` are the distinct query terms found in this index, `unknown` how many distinct
        query terms it lacks (each weighs the largest possible IDF, that of a term in no document).
        """
        total = unknown * self.max_idf
        matched = 0.0
        for col in columns:
            weight = float(self.idf[col])
            total += weight
            postings = self.rows[self.indptr[col] : self.indptr[col + 1]]
            if top is not None and np.any(postings == top):
                matched += weight
        return keyword_evidence(matched, total)

    def scores(self, columns: list[int]) -> FloatArray:
        """BM25 score of every document for a query given as vocabulary columns (with repeats)."""
        out = np.zeros(self.n_docs, dtype=np.float32)
        if not columns:
            return out
        parts_r = [self.rows[self.indptr[c] : self.indptr[c + 1]] for c in columns]
        parts_w = [self.weights[self.indptr[c] : self.indptr[c + 1]] for c in columns]
        rows = np.concatenate(parts_r)
        weights = np.concatenate(parts_w)
        return np.bincount(rows, weights=weights, minlength=self.n_docs).astype(np.float32)
