"""A course's topic list, the topics of a chunk, and the turn stage that records them."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from coursetutor.config import Settings
from coursetutor.llm.router import Router
from coursetutor.memory import chunk_topics, course_topics, material_topics
from coursetutor.memory.profile import record_turn_topics, turn_topics
from coursetutor.memory.topics import title_topic
from coursetutor.retrieval import EmbeddingModel
from coursetutor.store import SQLiteStore
from coursetutor.store.profiles import TopicSource
from coursetutor.tutor.turn import Tutor
from coursetutor.types import Chunk, Citation, DoneEvent, Locator, Turn
from coursetutor.workspace import Workspace

from .support import SAMPLE_COURSE, TENANT, ListChunks

SAMPLE_TOPICS = ["root finding", "newton's method", "convergence of iterative methods"]


@pytest.mark.parametrize(("heading", "topic"), [
    ("2.1 Newton's method", "Newton's method"),
    ("3 The secant method", "The secant method"),
    ("Chapter 4: Series", "Series"),
    ("§ 2 Limits.", "Limits"),
    ("第二章 序列的极限", "序列的极限"),
    ("Summary", "Summary"),
    ("1989 in review", "1989 in review"),
])
def test_title_topic_takes_numbering_off(heading: str, topic: str) -> None:
    assert title_topic(heading) == topic


def test_material_topics_ingest_topics_first_then_titles_of_untopiced_teaching_documents(
) -> None:
    sources = [
        TopicSource("book", "textbook", "", (
            ("Calculus", "1 Limits"), ("Calculus", "1 Limits", "1.1 Definition"),
            ("Calculus", "1 Limits", "1.1 Definition", "Example 1.1.1"), ("Calculus",),
            ("Calculus", "2 Series"))),
        TopicSource("lec", "lecture", "Derivatives", (("Intro",),)),
        TopicSource("ex", "exercise", "", (("Exercise 1: How many steps?",),)),
        TopicSource("slides", "slides", " ", (("Integrals",), ("limits",))),
        TopicSource("sheet", "exercise", "derivatives", ()),
    ]
    # "Calculus" heads every chunk of the book: its title, not a topic; level 3 is too deep
    assert material_topics(sources) == [
        "Derivatives", "Limits", "Definition", "Series", "Integrals"]


def test_course_topics_follow_the_material_until_a_teacher_corrects_them(
        sample_store: SQLiteStore) -> None:
    assert course_topics(sample_store, TENANT, SAMPLE_COURSE) == SAMPLE_TOPICS
    sample_store.profiles.set_topic_list(TENANT, SAMPLE_COURSE, ["Bisection", "Newton's method"])
    assert course_topics(sample_store, TENANT, SAMPLE_COURSE) == ["Bisection", "Newton's method"]
    sample_store.profiles.set_topic_list(TENANT, SAMPLE_COURSE, None)
    assert course_topics(sample_store, TENANT, SAMPLE_COURSE) == SAMPLE_TOPICS


def _chunk(topic: str, *path: str) -> Chunk:
    return Chunk("c1", TENANT, SAMPLE_COURSE, "doc", "Doc", "lecture", topic, path, 2, "en",
                 Locator(page=1), "text", "h", 0)


@pytest.mark.parametrize(("chunk", "topics", "expected"), [
    (_chunk("Root finding", "3 Newton's method"), SAMPLE_TOPICS, ("root finding",)),
    (_chunk("", "Lecture 1", "3 Newton's method", "3.1 Derivation"), ["Newton's method"],
     ("Newton's method",)),
    (_chunk("root finding", "3 Newton's method"), ["NEWTON'S METHOD", "Derivation"],
     ("NEWTON'S METHOD",)),
    (_chunk("", "2 Series", "2.1 Limits"), ["limits", "series"], ("series", "limits")),
    (_chunk("", "Appendix"), SAMPLE_TOPICS, ()),
])
def test_chunk_topics(chunk: Chunk, topics: list[str], expected: tuple[str, ...]) -> None:
    assert chunk_topics(chunk, topics) == expected


def _cite(number: int, chunk_id: str) -> Citation:
    return Citation(number, chunk_id, "doc", "Doc", "lecture", Locator(page=1), "")


def test_turn_topics_follow_the_citations_and_skip_unknown_chunks() -> None:
    a = dataclasses.replace(_chunk("", "2 Series"), id="a")
    b = dataclasses.replace(_chunk("", "1 Limits"), id="b")
    turn = Turn("s", 1, TENANT, SAMPLE_COURSE, "alice", "q", "a", "lecture", "concept", "",
                sources=(_cite(1, "b"), _cite(2, "zzz"), _cite(3, "a"), _cite(4, "b")))
    assert turn_topics(turn, [a, b], ["Series", "Limits"]) == ("Limits", "Series")


def test_record_turn_topics_reads_chunks_the_hits_lack(sample_store: SQLiteStore,
                                                       list_chunks: ListChunks) -> None:
    session = sample_store.start_session(TENANT, SAMPLE_COURSE, "alice")
    chunk = next(c for c in list_chunks(sample_store, TENANT, SAMPLE_COURSE)
                 if c.document_id == "lecture-01-video-srt")
    turn = sample_store.add_turn(Turn(session.id, 0, TENANT, SAMPLE_COURSE, "alice", "q",
                                      "a [1]", "lecture", "concept", "correct",
                                      sources=(_cite(1, chunk.id),)))
    assert record_turn_topics(sample_store, turn) == ("newton's method",)
    (studied,) = sample_store.profiles.get(TENANT, SAMPLE_COURSE, "alice").topics
    assert (studied.topic, studied.turns, studied.turn_ids) == (
        "newton's method", 1, (f"{session.id}:1",))


def test_a_turn_records_its_topics_in_the_profile(tmp_path: Path, sample_store: SQLiteStore,
                                                  embedder: EmbeddingModel) -> None:
    ws = Workspace(Settings(data_dir=tmp_path, llm_backend="none"), store=sample_store,
                   embedder=embedder)
    tutor = Tutor(ws, Router(ws.settings))
    events = list(tutor.stream("How does the bisection method work?", SAMPLE_COURSE, "alice"))
    done = events[-1]
    assert isinstance(done, DoneEvent) and done.answer.sources
    profile = sample_store.profiles.get(TENANT, SAMPLE_COURSE, "alice")
    assert "root finding" in [t.topic for t in profile.topics]
    assert all(t.turn_ids == (f"{done.answer.session_id}:1",) for t in profile.topics)
    assert sample_store.profiles.get(TENANT, SAMPLE_COURSE, "bob").topics == ()
