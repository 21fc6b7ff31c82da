"""Adaptive retrieval: the profile rerank (retrieval/adaptive.py) as exact arithmetic, and
over the real sample course with a student's stored profile (memory/adaptive.py)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from coursetutor.config import Settings
from coursetutor.llm.router import Router
from coursetutor.memory.adaptive import read_view, reranker
from coursetutor.retrieval import EmbeddingModel
from coursetutor.retrieval.adaptive import (
    AdaptiveWeights,
    ProfileView,
    profile_factor,
    profile_rerank,
)
from coursetutor.store import SQLiteStore
from coursetutor.tutor.evidence import EvidenceFinder
from coursetutor.types import DOC_TYPES, Chunk, Hit, Locator
from coursetutor.workspace import Workspace

from .support import SAMPLE_COURSE, TENANT

W = AdaptiveWeights()
QUESTIONS = ("How does the bisection method work?", "When does Newton's method fail?",
             "What is the order of convergence of the secant method?",
             "Come funziona il metodo di bisezione?", "What is a stopping criterion?")


def hit(name: str, score: float, topic: str) -> Hit:
    chunk = Chunk(name, TENANT, "c", "d", "Doc", "lecture", topic, (), 2, "en", Locator(),
                  name, name, 0)
    return Hit(chunk, score, {"bm25": 1}, {"bm25": score}, Locator())


def by_topic(chunk: Chunk) -> Sequence[str]:
    return (chunk.topic,)


@pytest.mark.parametrize(("topics", "view", "factor"), [
    (("a",), ProfileView(current=frozenset({"a"})), 1.3),
    (("a",), ProfileView(weak=frozenset({"a"})), 1.5),
    (("a",), ProfileView(mastered=frozenset({"a"})), 0.7),
    (("a", "b"), ProfileView(frozenset({"a"}), frozenset({"b"})), 1.3 * 1.5),
    (("a",), ProfileView(frozenset({"a"}), frozenset({"a"}), frozenset({"a"})),
     1.3 * 1.5 * 0.7),
    (("z",), ProfileView(frozenset({"a"}), frozenset({"b"}), frozenset({"c"})), 1.0),
    ((), ProfileView(current=frozenset({"a"})), 1.0),
])
def test_profile_factor(topics: tuple[str, ...], view: ProfileView, factor: float) -> None:
    got, why = profile_factor(topics, view, W)
    assert got == pytest.approx(factor)
    assert len(why) == sum(1 for names in (view.current, view.weak, view.mastered)
                           if set(topics) & names)


def test_rerank_multiplies_sorts_and_explains() -> None:
    hits = [hit("x", 1.0, "mastered one"), hit("y", 0.9, "other"), hit("z", 0.8, "weak one")]
    view = ProfileView(weak=frozenset({"weak one"}), mastered=frozenset({"mastered one"}))
    out = profile_rerank(hits, view, W, by_topic)
    assert [(h.chunk.id, round(h.score, 6)) for h in out] == [("z", 1.2), ("y", 0.9),
                                                              ("x", 0.7)]
    assert out[0].explain == ("weak area weak one: x1.5",)
    assert out[0].scores["profile"] == 1.5 and out[0].scores["fused_before_profile"] == 0.8
    assert out[1] is hits[1]  # untouched hits are the same objects
    assert out[2].explain == ("mastered mastered one: x0.7",)


def test_equal_scores_keep_their_order() -> None:
    hits = [hit("a", 1.0, "t"), hit("b", 1.0, "t"), hit("c", 1.0, "u")]
    view = ProfileView(current=frozenset({"t"}))
    assert [h.chunk.id for h in profile_rerank(hits, view, W, by_topic)] == ["a", "b", "c"]


def test_weights_of_one_change_nothing() -> None:
    hits = [hit("a", 1.0, "t"), hit("b", 0.5, "u")]
    view = ProfileView(frozenset({"u"}), frozenset({"u"}), frozenset({"t"}))
    assert profile_rerank(hits, view, AdaptiveWeights(1.0, 1.0, 1.0), by_topic) == hits


# -- over the sample course ----------------------------------------------------------------


@pytest.fixture
def ws(tmp_path: Path, sample_store: SQLiteStore, embedder: EmbeddingModel) -> Workspace:
    return Workspace(Settings(data_dir=tmp_path / "data"), store=sample_store,
                     embedder=embedder)


def test_empty_profile_leaves_every_ranking_as_it_was(ws: Workspace) -> None:
    rerank = reranker(ws.store, ws.settings, TENANT, SAMPLE_COURSE, "newcomer")
    assert read_view(ws.store, TENANT, SAMPLE_COURSE, "newcomer").empty
    for question in QUESTIONS:
        hits = ws.search(question, SAMPLE_COURSE, k=10)
        assert rerank(hits) == hits
        assert profile_rerank(hits, ProfileView(), W, by_topic) == hits


def test_profile_view_from_the_store(ws: Workspace) -> None:
    store = ws.store
    store.profiles.record_topics(TENANT, SAMPLE_COURSE, "ada", ["root finding"], "s1:1", 10.0)
    store.profiles.record_topics(TENANT, SAMPLE_COURSE, "ada",
                                 ["newton's method", "root finding"], "s1:2", 20.0)
    store.mastery.add_weak_area(TENANT, SAMPLE_COURSE, "ada", "newton's method",
                                "Starts Newton's iteration where f'(x) is zero.", "s1:2")
    store.mastery.observe(TENANT, SAMPLE_COURSE, "ada", "convergence of iterative methods",
                          True, "s1:3", lambda known: 0.97)
    store.mastery.observe(TENANT, SAMPLE_COURSE, "ada", "root finding", True, "s1:4",
                          lambda known: 0.6)
    assert read_view(store, TENANT, SAMPLE_COURSE, "ada") == ProfileView(
        current=frozenset({"newton's method", "root finding"}),
        weak=frozenset({"newton's method"}),
        mastered=frozenset({"convergence of iterative methods"}))


def test_weak_area_lifts_its_passages_in_the_tutors_search(ws: Workspace) -> None:
    question = "How does the bisection method work?"
    plain = EvidenceFinder(ws, Router(ws.settings), []).find(question, SAMPLE_COURSE,
                                                               DOC_TYPES, "concept")
    ws.store.mastery.add_weak_area(TENANT, SAMPLE_COURSE, "ada", "newton's method",
                                   "Starts Newton's iteration where f'(x) is zero.", "s1:2")
    rerank = reranker(ws.store, ws.settings, TENANT, SAMPLE_COURSE, "ada")
    adapted = EvidenceFinder(ws, Router(ws.settings), [], rerank).find(
        question, SAMPLE_COURSE, DOC_TYPES, "concept")
    assert (adapted.score, adapted.grade) == (plain.score, plain.grade)  # coverage unchanged
    assert {h.chunk.id for h in adapted.hits} == {h.chunk.id for h in plain.hits}
    lifted = [h for h in adapted.hits if h.explain]
    assert lifted and all(h.chunk.topic == "newton's method" for h in lifted)
    assert all(h.explain == ("weak area newton's method: x1.5",) for h in lifted)
    before = [h.chunk.id for h in plain.hits]
    for h in lifted:  # each lifted passage ranks no lower than it did
        assert [x.chunk.id for x in adapted.hits].index(h.chunk.id) <= before.index(h.chunk.id)


def test_a_question_and_its_translation_take_turns(ws: Workspace) -> None:
    # a question searched as asked and as translated: the two searches' passages alternate,
    # the better graded search's first, each passage once; the grade is the better one's
    finder = EvidenceFinder(ws, Router(ws.settings), [])
    asked, query = "Come funziona il metodo di bisezione?", "How does the bisection method work?"
    own, own_score = finder._search(query, SAMPLE_COURSE, DOC_TYPES, 6, "concept")
    other, other_score = finder._search(asked, SAMPLE_COURSE, DOC_TYPES, 6, "concept")
    found = finder.find(query, SAMPLE_COURSE, DOC_TYPES, "concept", asked=asked)
    first, second = (other, own) if other_score > own_score else (own, other)
    ids = [h.chunk.id for h in found.hits]
    assert ids[0] == first[0].chunk.id
    assert second[0].chunk.id in ids[:2]
    assert len(ids) == len(set(ids)) <= 6
    assert found.score == max(own_score, other_score)
