"""A live class from events to searchable chunks: the pipeline on the real store and embedder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from coursetutor.config import Settings
from coursetutor.errors import ConflictError, InputError, NotFoundError
from coursetutor.live.session import LiveClasses, default_title
from coursetutor.retrieval import EmbeddingModel
from coursetutor.store import SQLiteStore
from coursetutor.store.classes import TranscriptEvent
from coursetutor.types import Locator
from coursetutor.workspace import Workspace

from .support import SAMPLE_COURSE, TENANT, ListChunks

C = SAMPLE_COURSE
SAID = [
    "Today we talk about fixed point iteration for nonlinear equations.",
    "A fixed point of g is a number p with g of p equal to p.",
    "The iteration converges when the derivative of g stays below one in absolute value.",
    "Now let's look at an example with the cosine function.",
]


@pytest.fixture
def live(sample_store: SQLiteStore, tmp_path: Path,
         embedder: EmbeddingModel) -> Iterator[LiveClasses]:
    ws = Workspace(Settings(data_dir=tmp_path), store=sample_store, embedder=embedder)
    classes = LiveClasses(ws)
    yield classes
    classes.close()


def said(i: int, final: bool = True) -> TranscriptEvent:
    return TranscriptEvent(10.0 * i, 10.0 * i + 8, SAID[i], "teacher", final)


def test_a_sentence_is_searchable_when_its_post_returns(live: LiveClasses,
                                                        list_chunks: ListChunks) -> None:
    lc = live.start(TENANT, C, "Fixed points")
    result = live.post(TENANT, C, lc.id, [said(0), said(1)])
    assert result.seqs == (1, 2)
    hits = live.workspace.search("fixed point of g equal to p", C, k=3)
    assert hits[0].chunk.document_id == f"class-{lc.id}"
    assert hits[0].chunk.doc_type == "transcript"
    assert hits[0].chunk.document_title == "Fixed points"
    assert hits[0].chunk.text == f"{SAID[0]} {SAID[1]}"
    assert hits[0].chunk.locator == Locator(start=0.0, end=18.0)
    live.post(TENANT, C, lc.id, [said(2)])
    chunks = [c for c in list_chunks(live.workspace.store, TENANT, C)
              if c.document_id == lc.document_id]
    assert [c.text for c in chunks] == [" ".join(SAID[:3])]  # the open chunk grew
    assert [cue[0] for cue in chunks[0].cues] == [0.0, 10.0, 20.0]


def test_a_partial_caption_is_stored_but_only_its_final_version_indexed(
        live: LiveClasses, list_chunks: ListChunks) -> None:
    lc = live.start(TENANT, C, "Fixed points")
    live.post(TENANT, C, lc.id, [said(0)])
    partial = TranscriptEvent(10.0, 12.0, "A fixed point of cheese", final=False)
    assert live.post(TENANT, C, lc.id, [partial]).seqs == (2,)
    texts = [c.text for c in list_chunks(live.workspace.store, TENANT, C)
             if c.document_id == lc.document_id]
    assert texts == [SAID[0]]
    assert live.post(TENANT, C, lc.id, [said(1)]).seqs == (2,)
    events = live.workspace.store.classes.list_events(TENANT, C, lc.id)
    assert [(e.seq, e.text, e.final) for e in events] == [(1, SAID[0], True),
                                                           (2, SAID[1], True)]
    texts = [c.text for c in list_chunks(live.workspace.store, TENANT, C)
             if c.document_id == lc.document_id]
    assert texts == [f"{SAID[0]} {SAID[1]}"]


def test_ending_flushes_and_then_refuses_events(live: LiveClasses) -> None:
    lc = live.start(TENANT, C)
    assert lc.title == default_title(lc.started)
    live.post(TENANT, C, lc.id, [said(0)])
    ended = live.end(TENANT, C, lc.id)
    assert not ended.running
    status = live.status(TENANT, C, lc.id)
    assert (status.events, status.chunks) == (1, 1)
    assert status.last is not None and status.last.text == SAID[0]
    with pytest.raises(ConflictError, match="has ended"):
        live.post(TENANT, C, lc.id, [said(1)])
    with pytest.raises(ConflictError):
        live.set_slide(TENANT, C, lc.id, 2)
    assert live.end(TENANT, C, lc.id) == ended


def test_a_teacher_slide_change_marks_what_is_said_after_it(live: LiveClasses,
                                                            list_chunks: ListChunks) -> None:
    lc = live.start(TENANT, C, "Fixed points")
    moved = live.set_slide(TENANT, C, lc.id, 3)
    assert (moved.slide_page, moved.slide_source) == (3, "teacher")
    live.post(TENANT, C, lc.id, [said(0)])
    assert live.workspace.store.classes.list_events(TENANT, C, lc.id)[0].page == 3
    chunk = next(c for c in list_chunks(live.workspace.store, TENANT, C)
                 if c.document_id == lc.document_id)
    assert chunk.locator == Locator(start=0.0, end=8.0, anchor="slide-3")


def test_start_checks_the_course_and_the_slide_deck(live: LiveClasses) -> None:
    with pytest.raises(NotFoundError):
        live.start(TENANT, "no-such-course")
    with pytest.raises(NotFoundError, match="no-such-deck"):
        live.start(TENANT, C, slides="no-such-deck")
    with pytest.raises(InputError, match="no class is running"):
        live.current(TENANT, C)
    lc = live.start(TENANT, C, slides="lecture-02-convergence-pdf")
    assert live.current(TENANT, C) == lc
    assert lc.slides_document_id == "lecture-02-convergence-pdf"


def test_two_processes_feeding_one_class_keep_one_document(
        sample_store: SQLiteStore, tmp_path: Path,
        embedder: EmbeddingModel, list_chunks: ListChunks) -> None:
    settings = Settings(data_dir=tmp_path, live_chunk_min_chars=150)
    one = LiveClasses(Workspace(settings, store=sample_store, embedder=embedder))
    other_store = SQLiteStore(sample_store.path)  # another process's connection
    other = LiveClasses(Workspace(settings, store=other_store, embedder=embedder))
    try:
        lc = one.start(TENANT, C, "Fixed points")
        for i, classes in enumerate([one, other, one, other]):
            classes.post(TENANT, C, lc.id, [said(i)])
        texts = [c.text for c in list_chunks(sample_store, TENANT, C)
                 if c.document_id == lc.document_id]
        assert texts == [" ".join(SAID[:3]), SAID[3]]  # cut at "Now let's look at"
    finally:
        one.close()
        other.close()
        other_store.close()
