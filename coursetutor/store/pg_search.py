"""The PostgreSQL store's search statements: BM25, HNSW vectors, and both fused in one.

Every statement is parameterised (`%(name)s`); only the vector dimension is written into
the text, as an integer, because the HNSW index is a partial expression index per dimension
(`embedding::vector(N) ... WHERE dim = N`) and the planner matches it only on literals.

BM25 is the formula of `retrieval/bm25.py` (Lucene's IDF, k1 = 0.9, b = 0.4) over the whole
course; document-type and difficulty filters only decide which chunks may be returned, as in
the SQLite store. Common terms are handled as Lucene's CommonTermsQuery does: a term in more
than `common` (a share) of the course's chunks, and in more than `COMMON_MIN_DF` of them,
does not make candidates; the rarer terms do,
and the common terms then add their exact BM25 weight to the best `RESCORED` x `n` of those
(when every term of a question is common, they all count everywhere). A chunk holding nothing
but common words ("what", "the", "was") is no candidate, and the long posting lists of those
words are read only for the few documents of the candidates: the cost of a query follows its
informative terms, not its stop words.

The keyword evidence (the share of the question's IDF mass that the best
keyword hit matches, unknown terms weighing the largest IDF) weights the keyword list in the
fusion, also as in the SQLite store.
"""

from __future__ import annotations

import functools

from ..scoring.bm25 import K1, B
from .records import CHUNK_COLUMNS

HNSW_DIMS = (384,)  # dimensions whose HNSW index the migrations create
RESCORED = 4  # candidates per result that common terms rescore
COMMON_MIN_DF = 1000  # a term in fewer chunks is never common: its list is cheap to read

_SCOPE = """
scope AS (
    SELECT pk, GREATEST(n_chunks, 1)::float8 AS n,
           GREATEST(sum_terms::float8 / GREATEST(n_chunks, 1), 1e-9) AS avgdl
    FROM courses WHERE tenant = %(tenant)s AND id = %(course)s)"""

_FILTERS = """
    (%(types)s::text[] IS NULL OR {t}.doc_type = ANY(%(types)s::text[]))
    AND (%(max_difficulty)s::int IS NULL OR {t}.difficulty <= %(max_difficulty)s::int)"""

_SATURATION = f"u.tf * {K1 + 1.0!r} / (u.tf + {K1!r} * ({1.0 - B!r} + {B!r} * u.len / s.avgdl))"

_KEYWORDS = f"""
q AS (
    SELECT t.id AS term_id, COUNT(*) AS qtf
    FROM unnest(%(terms)s::text[]) AS u(term) JOIN terms t ON t.term = u.term
    GROUP BY t.id),
idf AS (
    SELECT q.term_id, q.qtf, ln(1.0 + (s.n - ct.df + 0.5) / (ct.df + 0.5)) AS idf,
           ct.df > GREATEST(%(common)s * s.n, {COMMON_MIN_DF}) AS common
    FROM q CROSS JOIN scope s
    CROSS JOIN LATERAL (SELECT df FROM course_terms
                        WHERE course_pk = s.pk AND term_id = q.term_id AND df > 0) ct),
sel AS (
    SELECT term_id, qtf, idf FROM idf
    WHERE NOT common OR NOT EXISTS (SELECT 1 FROM idf WHERE NOT common)),
ps AS MATERIALIZED (
    SELECT p.term_id, p.document_pk, p.chunk_pks, p.tfs, p.lens
    FROM sel CROSS JOIN scope s
    JOIN postings p ON p.course_pk = s.pk AND p.term_id = sel.term_id
    WHERE {_FILTERS.format(t="p")}),
ks AS MATERIALIZED (
    SELECT u.pk AS chunk_pk, MIN(u.document_pk) AS document_pk,
           SUM(sel.qtf * sel.idf * {_SATURATION}) AS score
    FROM (SELECT term_id, document_pk, unnest(chunk_pks) AS pk, unnest(tfs) AS tf,
                 unnest(lens) AS len FROM ps) u
    JOIN sel USING (term_id) CROSS JOIN scope s
    GROUP BY u.pk ORDER BY score DESC, u.pk LIMIT %(n)s * {RESCORED}),
pc AS MATERIALIZED (
    SELECT p.term_id, p.chunk_pks, p.tfs, p.lens
    FROM idf CROSS JOIN scope s
    JOIN postings p ON p.course_pk = s.pk AND p.term_id = idf.term_id
    WHERE idf.term_id NOT IN (SELECT term_id FROM sel)
      AND p.document_pk IN (SELECT document_pk FROM ks)),
kc AS (
    SELECT u.pk AS chunk_pk, SUM(i.qtf * i.idf * {_SATURATION}) AS score
    FROM (SELECT term_id, unnest(chunk_pks) AS pk, unnest(tfs) AS tf, unnest(lens) AS len
          FROM pc) u
    JOIN idf i USING (term_id) CROSS JOIN scope s
    WHERE u.pk = ANY((SELECT array_agg(chunk_pk) FROM ks)::bigint[])
    GROUP BY u.pk),
kw AS (
    SELECT ks.chunk_pk, ks.score + COALESCE(kc.score, 0.0) AS score
    FROM ks LEFT JOIN kc USING (chunk_pk)
    ORDER BY score DESC, chunk_pk LIMIT %(n)s),
top AS (SELECT chunk_pk FROM kw ORDER BY score DESC, chunk_pk LIMIT 1),
evidence AS (
    SELECT CASE WHEN x.total > 0 THEN LEAST(1.0, GREATEST(0.0, x.matched / x.total))
                ELSE 0.0 END AS e
    FROM (SELECT
        (%(n_distinct)s - (SELECT COUNT(*) FROM idf))
            * (SELECT ln(1.0 + (n + 0.5) / 0.5) FROM scope)
        + COALESCE((SELECT SUM(idf) FROM idf), 0) AS total,
        COALESCE((SELECT SUM(i.idf) FROM idf i WHERE EXISTS (
            SELECT 1 FROM (SELECT term_id, chunk_pks FROM ps
                           UNION ALL SELECT term_id, chunk_pks FROM pc) p
            JOIN top ON top.chunk_pk = ANY(p.chunk_pks)
            WHERE p.term_id = i.term_id)), 0) AS matched) x)"""


def _vectors(dim: int) -> str:
    distance = f"e.embedding::vector({dim}) <=> %(vector)s::vector({dim})"
    return f"""
vec AS (
    SELECT e.chunk_pk, 1.0 - ({distance}) AS score
    FROM embeddings e
    WHERE e.course_pk = (SELECT pk FROM scope) AND e.model = %(model)s AND e.dim = {dim}
      AND {_FILTERS.format(t="e")}
    ORDER BY {distance} LIMIT %(n)s)"""


@functools.lru_cache(maxsize=8)
def keyword_sql() -> str:
    """Rows (chunk id, BM25 score, evidence), best first."""
    return f"""WITH {_SCOPE}, {_KEYWORDS}
SELECT k.id, kw.score, (SELECT e FROM evidence)
FROM kw JOIN chunks k ON k.pk = kw.chunk_pk
ORDER BY kw.score DESC, kw.chunk_pk"""


@functools.lru_cache(maxsize=8)
def vector_sql(dim: int) -> str:
    """Rows (chunk id, cosine similarity), best first."""
    return f"""WITH {_SCOPE}, {_vectors(int(dim))}
SELECT k.id, vec.score FROM vec JOIN chunks k ON k.pk = vec.chunk_pk
ORDER BY vec.score DESC, vec.chunk_pk"""


@functools.lru_cache(maxsize=8)
def hybrid_sql(dim: int) -> str:
    """Both lists fused, best first: rows (fused score, vector rank, vector score, keyword
    rank, keyword score, keyword evidence, then the chunk's `CHUNK_COLUMNS`).

    `fusion` is `rrf` (sum of w / (rrf_k + rank)) or `relative` (sum of w times the min-max
    normalised score); the vector list weighs 1, the keyword list its evidence. Ties go to
    the vector list, then to the better rank, as in `retrieval/fusion.py`.
    """
    return f"""WITH {_SCOPE}, {_KEYWORDS}, {_vectors(int(dim))},
kr AS (SELECT chunk_pk, score, row_number() OVER (ORDER BY score DESC, chunk_pk) AS r FROM kw),
vr AS (SELECT chunk_pk, score, row_number() OVER (ORDER BY score DESC, chunk_pk) AS r FROM vec),
w AS (SELECT e, LEAST(1.0, GREATEST(0.0, e)) AS w FROM evidence),
vb AS (SELECT MIN(score) AS lo, MAX(score) AS hi FROM vr),
kb AS (SELECT MIN(score) AS lo, MAX(score) AS hi FROM kr),
f AS (
    SELECT COALESCE(v.chunk_pk, k.chunk_pk) AS chunk_pk, v.r AS vrank, v.score AS vscore,
           k.r AS krank, k.score AS kscore
    FROM vr v FULL JOIN kr k ON k.chunk_pk = v.chunk_pk),
fused AS (
    SELECT f.*, CASE WHEN %(fusion)s = 'rrf' THEN
        COALESCE(1.0 / (%(rrf_k)s + f.vrank), 0.0) + COALESCE(w.w / (%(rrf_k)s + f.krank), 0.0)
    ELSE
        (CASE WHEN f.vscore IS NULL THEN 0.0 WHEN vb.hi > vb.lo
              THEN (f.vscore - vb.lo) / (vb.hi - vb.lo) ELSE 1.0 END)
        + w.w * (CASE WHEN f.kscore IS NULL THEN 0.0 WHEN kb.hi > kb.lo
                      THEN (f.kscore - kb.lo) / (kb.hi - kb.lo) ELSE 1.0 END)
    END AS score
    FROM f CROSS JOIN w CROSS JOIN vb CROSS JOIN kb)
SELECT fused.score, fused.vrank, fused.vscore, fused.krank, fused.kscore, w.e, {CHUNK_COLUMNS}
FROM fused CROSS JOIN w JOIN chunks k ON k.pk = fused.chunk_pk
JOIN documents d ON d.tenant = k.tenant AND d.course = k.course AND d.id = k.document_id
ORDER BY fused.score DESC, (fused.vrank IS NULL), COALESCE(fused.vrank, fused.krank)
LIMIT %(top)s"""
