"""Retrieval: hybrid search over the ingested sample course, and the pure math under it."""

from __future__ import annotations

import dataclasses
import math
import random
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from coursetutor.config import Settings
from coursetutor.errors import EmptyQueryError, NotFoundError
from coursetutor.ingest.pipeline import index_text, text_hash, vector_key
from coursetutor.retrieval import EmbeddingModel, Retriever, SearchTrace
from coursetutor.retrieval.language import detect_language, script_language
from coursetutor.retrieval.tokenize import cjk_terms, normalize, tokenize
from coursetutor.scoring.bm25 import K1, B, BM25Index, idf, keyword_evidence, term_weight
from coursetutor.scoring.fusion import (
    CJK_EVIDENCE_GAIN,
    EVIDENCE_GAIN,
    EVIDENCE_POWER,
    Features,
    adaptive_keyword_weight,
    fuse,
    keyword_weight,
    list_weights,
    relative_score_fusion,
    rrf,
    spread_fusion,
    spread_scaled,
)
from coursetutor.store import SQLiteStore
from coursetutor.types import FileMeta, SearchFilters
from coursetutor.workspace import Workspace

from .support import SAMPLE_COURSE, TENANT, ListChunks, Sample

SECANT = "What is the order of convergence of the secant method?"
BISECTION_IT = "Come funziona il metodo di bisezione?"
MODES = ["hybrid", "bm25", "vector"]


@pytest.fixture(scope="module")
def ws(sample: Sample, embedder: EmbeddingModel) -> Iterator[Workspace]:
    """The session's sample store, searched only (never written) by this module."""
    with Workspace(Settings(data_dir=sample.db_path.parent), embedder=embedder) as workspace:
        yield workspace


# -- searching the sample course -------------------------------------------------


def test_secant_question_finds_the_lecture_section(ws: Workspace) -> None:
    hits = ws.search(SECANT, SAMPLE_COURSE, k=3)
    assert any(
        h.chunk.document_id == "lecture-01-root-finding-md"
        and "4.3 Order of convergence of the secant method" in h.chunk.section_path
        for h in hits
    )


def test_italian_question_finds_the_italian_summary(ws: Workspace) -> None:
    trace = SearchTrace()
    top = ws.search(BISECTION_IT, SAMPLE_COURSE, k=1, trace=trace)[0].chunk
    assert (top.document_id, top.doc_type, top.language, top.section_path[-1]) == (
        "lecture-01-riassunto-it-md", "summary", "it", "Il metodo di bisezione"
    )
    assert trace.language == "it"


@pytest.mark.parametrize("mode", MODES)
def test_doc_type_filter(ws: Workspace, mode: str) -> None:
    hits = ws.search("secant method", SAMPLE_COURSE, k=5, mode=mode, doc_types=("exercise",))
    assert hits
    assert {h.chunk.doc_type for h in hits} == {"exercise"}


@pytest.mark.parametrize("mode", MODES)
def test_max_difficulty_filter(ws: Workspace, mode: str) -> None:
    # only the Italian summary has difficulty 1
    hits = ws.search("Newton's method", SAMPLE_COURSE, k=4, mode=mode, max_difficulty=1)
    assert hits
    assert {(h.chunk.document_id, h.chunk.difficulty) for h in hits} == {
        ("lecture-01-riassunto-it-md", 1)
    }


@pytest.mark.parametrize("query", ["", "  ?! ", "\n\t", "¿?"])
def test_empty_question(ws: Workspace, query: str) -> None:
    with pytest.raises(EmptyQueryError) as exc:
        ws.search(query, SAMPLE_COURSE)
    assert str(exc.value) == "the question is empty"


def test_unknown_mode(ws: Workspace) -> None:
    with pytest.raises(ValueError) as exc:
        ws.search(SECANT, SAMPLE_COURSE, mode="fuzzy")
    assert str(exc.value) == "unknown search mode 'fuzzy'; valid: hybrid, bm25, vector"


@pytest.mark.parametrize(
    ("mode", "lists"), [("hybrid", {"bm25", "vector"}), ("bm25", {"bm25"}), ("vector", {"vector"})]
)
def test_each_hit_has_a_rank_per_list(ws: Workspace, mode: str, lists: set[str]) -> None:
    hits = ws.search(SECANT, SAMPLE_COURSE, k=5, mode=mode)
    assert len(hits) == 5
    assert all(set(h.ranks) == lists and set(h.scores) == lists for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert len({h.chunk.id for h in hits}) == 5


@pytest.mark.parametrize(
    "query",
    [SECANT, BISECTION_IT, "When does Newton's method fail?"],
)
def test_hybrid_is_evidence_weighted_spread_fusion(ws: Workspace, query: str) -> None:
    trace = SearchTrace()
    hits = ws.search(query, SAMPLE_COURSE, k=5, trace=trace)
    assert trace.keyword_weight == adaptive_keyword_weight(trace.keyword_evidence)
    assert 0.0 <= trace.keyword_evidence <= 1.0
    assert set(trace.timings) == {"embed", "vector", "bm25", "fuse"}
    filters = SearchFilters(ws.tenant, SAMPLE_COURSE)
    vectors = ws.store.vector_search(
        filters, ws.embedder.model_id, ws.embedder.embed_query(query), 20
    )
    keywords = ws.store.keyword_search(filters, tokenize(query, trace.language), 20).hits
    expected = spread_fusion(
        {"vector": vectors, "bm25": keywords}, {"vector": 1.0, "bm25": trace.keyword_weight}
    )[:5]
    assert [(h.chunk.id, h.score) for h in hits] == [
        (cid, pytest.approx(score, rel=1e-9)) for cid, score in expected
    ]


@pytest.mark.parametrize("query", [SECANT, BISECTION_IT])
def test_relative_fusion_setting(sample: Sample, embedder: EmbeddingModel, query: str) -> None:
    settings = Settings(data_dir=sample.db_path.parent, fusion="relative")
    with Workspace(settings, embedder=embedder) as ws:
        trace = SearchTrace()
        hits = ws.search(query, SAMPLE_COURSE, k=5, trace=trace)
        filters = SearchFilters(ws.tenant, SAMPLE_COURSE)
        vectors = ws.store.vector_search(
            filters, ws.embedder.model_id, ws.embedder.embed_query(query), 20)
        keywords = ws.store.keyword_search(filters, tokenize(query, trace.language), 20).hits
    assert trace.keyword_weight == trace.keyword_evidence
    expected = relative_score_fusion(
        {"vector": vectors, "bm25": keywords}, {"vector": 1.0, "bm25": trace.keyword_weight}
    )[:5]
    assert [(h.chunk.id, h.score) for h in hits] == [
        (cid, pytest.approx(score, rel=1e-9)) for cid, score in expected
    ]


def test_rrf_fusion_setting(sample: Sample, embedder: EmbeddingModel) -> None:
    settings = Settings(data_dir=sample.db_path.parent, fusion="rrf")
    with Workspace(settings, embedder=embedder) as ws:
        trace = SearchTrace()
        hits = ws.search(SECANT, SAMPLE_COURSE, k=5, trace=trace)
    for h in hits:
        v, b = h.ranks["vector"], h.ranks["bm25"]
        expected = (1 / (60 + v) if v else 0.0) + (trace.keyword_weight / (60 + b) if b else 0.0)
        assert h.score == pytest.approx(expected, rel=1e-12)


def test_vector_mode_scores_are_cosines(ws: Workspace, embedder: EmbeddingModel) -> None:
    hits = ws.search(SECANT, SAMPLE_COURSE, k=3, mode="vector")
    query = embedder.embed_query(SECANT)
    assert float(np.linalg.norm(query)) == pytest.approx(1.0, abs=1e-3)
    # the cached passage vector is keyed by the tenant and the hash of the contextual text
    keys = [vector_key(ws.tenant, index_text(h.chunk.document_title, h.chunk.section_path,
                                             h.chunk.text)) for h in hits]
    stored = ws.store.get_vectors(embedder.model_id, keys)
    cosines = [float(stored[k] @ query) for k in keys]
    assert [h.scores["vector"] for h in hits] == pytest.approx(cosines, rel=1e-5)
    assert cosines == sorted(cosines, reverse=True)


@pytest.mark.parametrize("query", ["How does the bisection method work?", SECANT])
def test_top_hit_does_not_depend_on_k(ws: Workspace, query: str) -> None:
    assert ws.search(query, SAMPLE_COURSE, k=1) == ws.search(query, SAMPLE_COURSE, k=5)[:1]


def test_unknown_course(ws: Workspace) -> None:
    with pytest.raises(NotFoundError) as exc:
        ws.search(SECANT, "no-such-course")
    assert str(exc.value) == "course 'no-such-course' does not exist"


def test_other_tenant_cannot_search_the_course(
    sample: Sample, embedder: EmbeddingModel
) -> None:
    settings = Settings(data_dir=sample.db_path.parent, tenant="other-school")
    with Workspace(settings, embedder=embedder) as other, pytest.raises(NotFoundError):
        other.search(SECANT, SAMPLE_COURSE)


# -- reciprocal rank fusion --------------------------------------------------------


def test_rrf_sums_reciprocal_ranks_and_breaks_ties_by_list_then_rank() -> None:
    fused = rrf({"bm25": ["a", "b", "c"], "vector": ["b", "a", "d"]}, k=60)
    assert [item for item, _ in fused] == ["a", "b", "c", "d"]
    assert [score for _, score in fused] == pytest.approx(
        [1 / 61 + 1 / 62, 1 / 62 + 1 / 61, 1 / 63, 1 / 63], rel=1e-15
    )


def test_rrf_weights() -> None:
    fused = rrf({"bm25": ["a", "b"], "vector": ["b", "a"]}, k=1, weights={"bm25": 0.5})
    assert fused == [("b", 0.5 / 3 + 1 / 2), ("a", 0.5 / 2 + 1 / 3)]


def test_rrf_small_k_exact() -> None:
    assert rrf({"x": ["p", "q", "r"]}, k=1) == [("p", 1 / 2), ("q", 1 / 3), ("r", 1 / 4)]


def test_rrf_zero_weight_list_only_appends() -> None:
    assert rrf({"bm25": ["z"], "vector": ["a"]}, k=60, weights={"bm25": 0.0}) == [
        ("a", 1 / 61), ("z", 0.0)
    ]


# -- spread fusion: scores over their standard deviation ----------------------------


def test_spread_scaled_is_shift_to_zero_over_standard_deviation() -> None:
    # mean 2, sd sqrt(2/3): (3 - 1) / sd = sqrt(6), (2 - 1) / sd = sqrt(3/2)
    scaled = spread_scaled([("a", 3.0), ("b", 1.0), ("c", 2.0)])
    assert scaled == {"a": pytest.approx(math.sqrt(6), rel=1e-12), "b": 0.0,
                      "c": pytest.approx(math.sqrt(1.5), rel=1e-12)}
    assert spread_scaled([]) == {}
    assert spread_scaled([("a", 0.8), ("b", 0.8)]) == {"a": 1.0, "b": 1.0}
    assert spread_scaled([("a", 5.0)]) == {"a": 1.0}


def test_spread_scaling_rewards_a_clear_margin() -> None:
    # min-max gives both leaders 1; over the spread, a leader far above the rest gets more
    # (mean 3.25, variance 243/16: 9 / sqrt(243/16) = sqrt(16/3))
    clear = spread_scaled([("a", 10.0), ("b", 1.0), ("c", 1.0), ("d", 1.0)])
    close = spread_scaled([("a", 10.0), ("b", 9.9), ("c", 1.0), ("d", 1.0)])
    assert clear["a"] == pytest.approx(math.sqrt(16 / 3), rel=1e-12)
    assert close["a"] - close["b"] < clear["a"] - clear["b"]
    assert close["a"] < clear["a"]


def test_spread_fusion_sums_weighted_scaled_scores() -> None:
    vector = [("a", 3.0), ("b", 1.0), ("c", 2.0)]
    bm25 = [("c", 4.0), ("d", 0.0)]  # mean 2, sd 2: c 2.0, d 0.0
    fused = spread_fusion({"vector": vector, "bm25": bm25}, {"vector": 1.0, "bm25": 0.5})
    assert fused == [
        ("a", pytest.approx(math.sqrt(6), rel=1e-12)),
        ("c", pytest.approx(math.sqrt(1.5) + 0.5 * 2.0, rel=1e-12)),
        ("b", 0.0),  # ties: the list named first, then its rank
        ("d", 0.0),
    ]
    assert spread_fusion({}) == []


@pytest.mark.parametrize(("evidence", "words", "cjk"), [
    (0.0, 0.0, 0.0), (0.2, 0.2 ** 0.7, 2.0 * 0.2 ** 0.7), (0.5, 0.5 ** 0.7, 2.0 * 0.5 ** 0.7),
    (0.9, 0.9 ** 0.7, 2.0 * 0.9 ** 0.7), (1.0, 1.0, 2.0), (-0.1, 0.0, 0.0),
])
def test_adaptive_keyword_weight(evidence: float, words: float, cjk: float) -> None:
    assert (EVIDENCE_GAIN, CJK_EVIDENCE_GAIN, EVIDENCE_POWER) == (1.0, 2.0, 0.7)
    assert adaptive_keyword_weight(evidence) == pytest.approx(words, rel=1e-12)
    assert adaptive_keyword_weight(evidence, cjk=True) == pytest.approx(cjk, rel=1e-12)


def test_list_weights() -> None:
    lists = {"vector": [("a", 1.0)], "bm25": [("a", 2.0)]}
    assert list_weights(lists, Features(0.4)) == {
        "vector": 1.0, "bm25": pytest.approx(0.4 ** 0.7, rel=1e-12)}
    # one keyword candidate: it stands out by nothing (standout 0)
    assert list_weights(lists, Features(0.4, cjk=True)) == {
        "vector": 1.0, "bm25": pytest.approx(2.0 * 0.4 ** 0.7, rel=1e-12)}
    assert list_weights(lists, Features(0.4, cjk=True), adaptive=False) == {
        "vector": 1.0, "bm25": 0.4}
    # dictionary-translated keywords miss the question's own words by design
    assert list_weights(lists, Features(0.1, translated=True)) == {"vector": 1.0, "bm25": 1.0}
    assert fuse(lists, Features(0.4, cjk=True)) == spread_fusion(
        lists, {"vector": 1.0, "bm25": 2.0 * 0.4 ** 0.7})


def test_rrf_empty() -> None:
    assert rrf({}) == []
    assert rrf({"bm25": [], "vector": []}) == []


@pytest.mark.parametrize(
    ("matched", "total", "evidence"),
    [(2.0, 4.0, 0.5), (0.0, 4.0, 0.0), (5.0, 4.0, 1.0), (-1.0, 4.0, 0.0), (1.0, 0.0, 0.0)],
)
def test_keyword_evidence(matched: float, total: float, evidence: float) -> None:
    assert keyword_evidence(matched, total) == evidence
    assert keyword_weight(evidence) == evidence


# -- BM25 ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n_docs", "df", "value"),
    [
        (10, 2, math.log(1 + 8.5 / 2.5)),
        (10, 10, math.log(1 + 0.5 / 10.5)),
        (1, 1, math.log(1 + 0.5 / 1.5)),
        (1000, 0, math.log(1 + 1000.5 / 0.5)),
    ],
)
def test_idf(n_docs: int, df: int, value: float) -> None:
    assert idf(n_docs, df) == pytest.approx(value, rel=1e-15)
    assert idf(n_docs, df) >= 0


@pytest.mark.parametrize(
    ("tf", "doc_len", "avgdl", "value"),
    [
        (1, 10, 10, 1.9 / (1 + 0.9)),  # an average-length document
        (2, 10, 5, 2 * 1.9 / (2 + 0.9 * (0.6 + 0.4 * 2))),
        (3, 2, 8, 3 * 1.9 / (3 + 0.9 * (0.6 + 0.4 * 0.25))),
    ],
)
def test_term_weight(tf: float, doc_len: float, avgdl: float, value: float) -> None:
    assert (K1, B) == (0.9, 0.4)
    assert term_weight(tf, doc_len, avgdl) == pytest.approx(value, rel=1e-15)


def test_term_weight_saturates_at_k1_plus_one() -> None:
    assert term_weight(1e9, 10, 10) == pytest.approx(K1 + 1, rel=1e-6)
    assert term_weight(1, 10, 10, k1=1.2, b=0.0) == pytest.approx(2.2 / 2.2)


def random_corpus(seed: int) -> list[list[int]]:
    rng = random.Random(seed)
    vocab = [rng.randrange(1, 10_000) for _ in range(40)]
    return [[rng.choice(vocab[: rng.randint(3, 40)]) for _ in range(rng.randint(1, 30))]
            for _ in range(rng.randint(5, 60))]


def build_index(docs: list[list[int]]) -> BM25Index:
    """Postings as ScopeIndex.build lays them out: per document, its distinct terms."""
    rows, terms, tfs = [], [], []
    for d, doc in enumerate(docs):
        for term, tf in Counter(doc).items():
            rows.append(d)
            terms.append(term)
            tfs.append(tf)
    return BM25Index(np.array(rows, np.int64), np.array(terms, np.int64),
                     np.array(tfs, np.float32), np.array([len(d) for d in docs], np.float32))


def reference_scores(docs: list[list[int]], query: list[int]) -> list[float]:
    """Brute-force BM25: every (query term, document) pair, straight from the formula."""
    n = len(docs)
    avgdl = sum(len(d) for d in docs) / n
    out = []
    for doc in docs:
        score = 0.0
        for t in query:
            df = sum(t in d for d in docs)
            tf = doc.count(t)
            if tf:
                score += idf(n, df) * term_weight(tf, len(doc), avgdl)
        out.append(score)
    return out


@pytest.mark.parametrize("seed", range(8))
def test_bm25_index_matches_the_reference(seed: int) -> None:
    docs = random_corpus(seed)
    index = build_index(docs)
    rng = random.Random(seed + 100)
    known = sorted({t for d in docs for t in d})
    query = [rng.choice(known) for _ in range(4)] + [rng.choice(known)] * 2 + [999_999]
    columns = index.columns(query)
    assert len(columns) == len(query) - 1  # the unknown term is dropped, repeats are kept
    np.testing.assert_allclose(index.scores(columns), reference_scores(docs, query), rtol=2e-6)


def test_bm25_index_idf_per_term() -> None:
    docs = random_corpus(3)
    index = build_index(docs)
    for col, term in enumerate(index.vocab.tolist()):
        df = sum(term in d for d in docs)
        assert float(index.idf[col]) == pytest.approx(idf(len(docs), df), rel=1e-6)


def test_bm25_index_empty_query() -> None:
    index = build_index([[1, 2], [2, 3]])
    assert index.columns([]) == []
    assert index.scores([]).tolist() == [0.0, 0.0]


def test_bm25_index_without_documents() -> None:
    empty = np.zeros(0, np.int64)
    index = BM25Index(empty, empty, np.zeros(0, np.float32), np.zeros(0, np.float32))
    assert index.columns([7]) == []


# -- tokenization and language -------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "language", "terms"),
    [
        ("Die Häuser und die Straße", "de", ["die", "haus", "und", "die", "strass"]),
        ("Konvergenz der Iterationen", "de", ["konvergenz", "der", "iteration"]),
        ("The methods converged quickly", "en", ["the", "method", "converg", "quick"]),
        ("Il metodo di bisezione", "it", ["il", "metod", "di", "bisezion"]),
        ("牛顿法收敛", "zh", ["牛", "顿", "法", "收", "敛", "牛顿", "顿法", "法收", "收敛"]),
        ("法", "zh", ["法"]),
        ("Newton 法 und 牛顿", "de", ["newton", "und", "法", "牛", "顿", "牛顿"]),
        ("ＢＩＳＥＣＴＩＯＮ ﬁnding", "en", ["bisect", "find"]),
        ("x_n and f(x) = 0", "en", ["x_n", "and", "f", "x", "0"]),
        ("Häuser", "xx", ["häuser"]),
        ("", "en", []),
        ("?! __ ...", "en", []),
    ],
)
def test_tokenize(text: str, language: str, terms: list[str]) -> None:
    assert tokenize(text, language) == terms


def test_tokenize_without_stemming() -> None:
    assert tokenize("Running runs", "en", stem=False) == ["running", "runs"]


@pytest.mark.parametrize(
    ("run", "terms"),
    [
        ("牛顿法", ["牛", "顿", "法", "牛顿", "顿法"]),
        ("法", ["法"]),
        ("ニュート", ["ニ", "ュ", "ー", "ト", "ニュ", "ュー", "ート"]),
    ],
)
def test_cjk_terms(run: str, terms: list[str]) -> None:
    assert cjk_terms(run) == terms


def test_normalize() -> None:
    assert normalize("ＮＥＷＴＯＮ Straße ﬁ") == "newton strasse fi"


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("What is the order of convergence of the secant method?", "en"),
        ("Come funziona il metodo di bisezione?", "it"),
        ("Wie funktioniert das Newton-Verfahren und warum ist es schnell?", "de"),
        ("Comment fonctionne la méthode de Newton et pourquoi est-elle rapide?", "fr"),
        ("¿Cómo funciona el método de bisección y por qué es lento?", "es"),
        ("牛顿法为什么收敛得这么快？", "zh"),
        ("ニュートン法はなぜ速いのですか", "ja"),
        ("뉴턴 방법은 왜 빠른가요", "ko"),
        ("x_n = 3.5", "unknown"),
    ],
)
def test_detect_language(text: str, language: str) -> None:
    assert detect_language(text) == language


def test_detect_language_falls_back_to_default() -> None:
    assert detect_language("Newton Raphson", default="it") == "it"
    assert script_language("12345 ...") is None


# -- the same text in two documents ----------------------------------------------------

SHARED = ("Regula falsi keeps a bracket like bisection but cuts it where the secant line "
          "crosses zero.")
SHARED_QUERY = "regula falsi secant line crosses zero"


def course_with_copies(
    tmp_path: Path, store: SQLiteStore, embedder: EmbeddingModel, notes: dict[str, str]
) -> Workspace:
    """A course 'dupes' of Markdown notes: each a section of its own, then SHARED."""
    items = []
    for name, head in notes.items():
        path = tmp_path / name
        path.write_text(f"{head}\n\n## Regula falsi\n\n{SHARED}\n", encoding="utf-8")
        items.append((path, FileMeta(doc_type="lecture", language="en")))
    ws = Workspace(Settings(), store=store, embedder=embedder)
    ws.create_course("dupes", "Duplicates", "en")
    assert {f.status for f in ws.ingest("dupes", items).files} == {"added"}
    return ws


@pytest.mark.parametrize("mode", MODES)
def test_the_same_text_in_two_documents_comes_back_once(
    tmp_path: Path, sample_store: SQLiteStore, embedder: EmbeddingModel,
    list_chunks: ListChunks, mode: str,
) -> None:
    ws = course_with_copies(tmp_path, sample_store, embedder, {
        "week-3.md": "# Week 3 notes\n\n## Intro\n\nWe revisit bracketing methods this week.",
        "exam-review.md": "# Exam review\n\n## Summary\n\nThe exam covers every method so far.",
    })
    stored = [c for c in list_chunks(sample_store, TENANT, "dupes") if c.text == SHARED]
    assert [c.document_id for c in stored] == ["exam-review-md", "week-3-md"]
    assert stored[0].content_hash == stored[1].content_hash == text_hash(SHARED)

    hits = ws.search(SHARED_QUERY, "dupes", k=5, mode=mode)
    shared = [h for h in hits if h.chunk.text == SHARED]
    assert len(shared) == 1
    assert shared[0].chunk.document_id in {"exam-review-md", "week-3-md"}
    assert len({h.chunk.content_hash for h in hits}) == len(hits)
    if mode != "bm25":  # every chunk is a vector candidate: four chunks, three texts
        assert len(hits) == 3


@pytest.mark.parametrize("mode", ["hybrid", "vector"])
def test_repeated_text_does_not_cost_hits(
    tmp_path: Path, sample_store: SQLiteStore, embedder: EmbeddingModel, mode: str
) -> None:
    titles = ["Week 3 notes", "Exam review", "Cheat sheet", "Lab handout", "Study guide"]
    ws = course_with_copies(tmp_path, sample_store, embedder, {
        f"note-{i}.md": f"# {t}\n\n## Other\n\nUnrelated words about topic {i}."
        for i, t in enumerate(titles)
    })
    # ten chunks, six distinct texts: two hits are there to give
    hits = ws.search(SHARED_QUERY, "dupes", k=2, mode=mode)
    assert [h.chunk.text for h in hits][:1] == [SHARED]
    assert len(hits) == 2


def test_keyword_evidence_ignores_terms_known_only_to_other_courses(tmp_path: Path) -> None:
    """A term in the shared term table but not in this course weighs as an unknown term."""
    from coursetutor.store import ChunkRow, SQLiteStore
    from coursetutor.types import Document, Locator

    store = SQLiteStore(tmp_path / "t.db")

    def add(course: str, cid: str, terms: str) -> None:
        store.ensure_course("t", course)
        document = Document("t", course, "d", "D", "lecture", "", 2, "en", "d.md", "h", 0, 1)
        row = ChunkRow(cid, terms, (), Locator(anchor=cid), 0, 2, tuple(terms.split()), cid, cid)
        store.put_vectors("m", {cid: np.ones(4, dtype=np.float32) / 2})
        store.replace_document(document, [row])

    add("other", "o", "zebra")  # 'zebra' now has a term id, but only in course "other"
    add("mine", "a", "newton tangent")
    filters = SearchFilters("t", "mine")
    # a repeated term after one known elsewhere once paired 'zebra' with newton's column
    both = store.keyword_search(filters, ["zebra", "newton", "newton"], 5).evidence
    alone = store.keyword_search(filters, ["nothere", "newton"], 5).evidence
    assert both == pytest.approx(alone)
    assert 0.0 < both < 1.0
    assert store.keyword_search(filters, ["newton"], 5).evidence == pytest.approx(1.0)
    store.close()


@pytest.mark.parametrize("mode", ["hybrid", "vector", "bm25"])
def test_a_search_embeds_the_question_at_most_once(
        ws: Workspace, mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    embed = ws.embedder.embed_query
    monkeypatch.setattr(ws.embedder, "embed_query", lambda text: calls.append(text) or embed(text))
    ws.search("How does the secant method work?", SAMPLE_COURSE, mode=mode)
    assert len(calls) == (0 if mode == "bm25" else 1)


@pytest.mark.parametrize("fusion", ["relative", "rrf"])
@pytest.mark.parametrize("query", [SECANT, BISECTION_IT, "Newton iteration fails",
                                   "割线法的收敛阶是多少？"])
def test_overlapped_embedding_changes_no_result(ws: Workspace, query: str, fusion: str) -> None:
    """The question embedded beside the keyword search gives the sequential search's hits,
    ties included (they go to the vector list either way)."""
    filters = SearchFilters(TENANT, SAMPLE_COURSE, ("lecture", "summary"))
    settings = dataclasses.replace(ws.settings, fusion=fusion)
    found = {}
    for overlap in (True, False):
        retriever = Retriever(ws.store, ws.embedder, settings)
        retriever.overlap = overlap
        found[overlap] = [(h.chunk.id, round(h.score, 9), list(h.ranks.items()))
                          for h in retriever.search(query, filters, k=8)]
    assert found[True] == found[False]


def test_hybrid_search_embeds_beside_the_keyword_search(
        ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    threads: dict[str, str] = {}
    embed, keyword = ws.embedder.embed_query, ws.store.keyword_search

    def spy_embed(text: str) -> object:
        threads["embed"] = threading.current_thread().name
        return embed(text)

    def spy_keyword(*args: object) -> object:
        threads["bm25"] = threading.current_thread().name
        return keyword(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(ws.embedder, "embed_query", spy_embed)
    monkeypatch.setattr(ws.store, "keyword_search", spy_keyword)
    trace = SearchTrace()
    retriever = Retriever(ws.store, ws.embedder, ws.settings)
    retriever.overlap = True
    retriever.search(
        "How does the bisection method work?", SearchFilters(TENANT, SAMPLE_COURSE), trace=trace)
    assert threads["bm25"] == threading.current_thread().name
    assert threads["embed"].startswith("coursetutor-embed")
    assert {"embed", "bm25", "vector", "fuse"} <= set(trace.timings)


@pytest.mark.parametrize(("query", "course_language", "cjk_kept"), [
    ("What is the order of the secant method? 할선법의 수렴 차수는 얼마인가요?", "en", False),
    ("할선법의 수렴 차수는 얼마인가요?", "en", True),  # nothing else to search with
    ("割线法 secant 할선법", "zh", True),
    ("Newton 뉴턴 방법", "ko", True),
])
def test_cjk_terms_of_a_translated_question_are_dropped_in_an_alphabetic_course(
        ws: Workspace, query: str, course_language: str, cjk_kept: bool) -> None:
    """The tutor searches "translation + original": in an English course the original's
    Korean bigrams match nothing and would sink the keyword evidence as unknown terms."""
    retriever = Retriever(ws.store, ws.embedder, dataclasses.replace(
        ws.settings, translate_keywords=False))
    terms = retriever._terms(query, SearchTrace(), course_language,
                             SearchFilters(ws.tenant, SAMPLE_COURSE))
    has_cjk = any("\uac00" <= c <= "\ud7af" or "\u4e00" <= c <= "\u9fff"
                  for t in terms for c in t)
    assert has_cjk == cjk_kept
    assert terms


def test_a_translated_korean_question_keeps_its_keyword_evidence(ws: Workspace) -> None:
    english = "What is the order of convergence of the secant method?"
    evidence = {}
    for query in (english, f"{english} 할선법의 수렴 차수는 얼마인가요?"):
        trace = SearchTrace()
        ws.search(query, SAMPLE_COURSE, trace=trace)
        evidence[query] = trace.keyword_evidence
    assert len(set(evidence.values())) == 1


def test_passage_sentences_are_embedded_once_while_recent() -> None:
    from coursetutor.retrieval.embed import EmbeddingModel

    class Counting(EmbeddingModel):
        model_id, dim = "counting", 2

        def __init__(self) -> None:
            self.embedded: list[str] = []

        def embed_batch(self, texts: list[str], is_query: bool) -> np.ndarray:
            self.embedded += texts
            return np.array([[len(t), 1.0] for t in texts], dtype=np.float32)

    model = Counting()
    first = model.embed_sentences(["ab", "abc", "ab"])
    assert model.embedded == ["ab", "abc"]  # a sentence said twice is embedded once
    again = model.embed_sentences(["abc", "abcd"])
    assert model.embedded == ["ab", "abc", "abcd"]  # only the new one
    assert first[:, 0].tolist() == [2, 3, 2] and again[:, 0].tolist() == [3, 4]
    model.sentence_cache_size = 0  # no cache: every call embeds
    model.embed_sentences(["abc"])
    assert model.embedded[-1] == "abc" and model.embed_sentences([]).shape == (0, 2)


# -- names across scripts ---------------------------------------------------------------

NOTES_ZH = {
    "cauchy.md": ("# 第二章 数列极限\n\n## 2.4 实数连续性的基本定理\n\n"
                  "**定理 2.4.1 (Cauchy 收敛原理)** 实数序列收敛当且仅当对任意 ε>0 存在 N, "
                  "使得 n,m≥N 时 |a_m−a_n|<ε.\n"),
    "monotone.md": ("# 第二章 数列极限\n\n## 2.3 单调收敛原理\n\n**定理 2.3.1** "
                    "若单调上升的数列有上界, 则其收敛, 且极限等于其上确界. "
                    "单调收敛原理是实数完备性的一种表述.\n"),
    "series.md": ("# 第三章 级数\n\n## 3.1 收敛准则\n\n级数收敛的比较准则: "
                  "若 0≤a_n≤b_n 且 Σb_n 收敛, 则 Σa_n 收敛. "
                  "比值准则与根值准则也是常用的收敛准则.\n"),
}


def test_a_name_written_in_another_script_finds_its_theorem(
    tmp_path: Path, sample_store: SQLiteStore, embedder: EmbeddingModel,
) -> None:
    # the notes write "Cauchy 收敛原理"; the student asks about 柯西收敛准则
    items = []
    for name, text in NOTES_ZH.items():
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        items.append((path, FileMeta(doc_type="lecture", language="zh")))
    ws = Workspace(Settings(), store=sample_store, embedder=embedder)
    ws.create_course("fenxi", "数学分析", "zh")
    ws.ingest("fenxi", items)
    top = ws.search("柯西收敛准则是什么？", "fenxi", k=1)[0].chunk
    assert top.document_id == "cauchy-md"
