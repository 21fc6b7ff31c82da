"""Answering during a class: its progress, the tiers and their labels, over the real sample
course with a class fed through the live pipeline (no model: passages only)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from coursetutor.config import Settings
from coursetutor.errors import NotFoundError
from coursetutor.live.session import LiveClasses
from coursetutor.live.standing import class_progress
from coursetutor.retrieval import EmbeddingModel
from coursetutor.store.classes import LiveClass, TranscriptEvent
from coursetutor.tutor.tiers import (
    CLASS,
    COURSE,
    WIDE_K,
    Bar,
    TierInput,
    tiered_search,
    weights_of,
)
from coursetutor.tutor.turn import Tutor
from coursetutor.workspace import Workspace

from .support import SAMPLE_COURSE, TENANT, Sample, copy_db

SAID = [
    (0.0, 12.0, "Good morning. Today we look at the bisection method for finding roots."),
    (14.0, 30.0, "Bisection halves the bracketing interval at every step, keeping the half "
                 "where the function changes sign."),
    (33.0, 50.0, "So after twenty halvings the interval is about a millionth of its first "
                 "length, whatever the function."),
]


@pytest.fixture
def ws(tmp_path: Path, sample: Sample, embedder: EmbeddingModel) -> Iterator[Workspace]:
    copy_db(sample.db_path, tmp_path / "data" / "coursetutor.db")
    settings = Settings(data_dir=tmp_path / "data", llm_backend="none", ocr="off")
    with Workspace(settings, embedder=embedder) as workspace:
        yield workspace


@pytest.fixture
def live(ws: Workspace) -> Iterator[LiveClass]:
    classes = LiveClasses(ws)
    try:
        started = classes.start(TENANT, SAMPLE_COURSE, "Root finding, live")
        classes.post(TENANT, SAMPLE_COURSE, started.id,
                     [TranscriptEvent(s, e, text) for s, e, text in SAID])
        classes.end(TENANT, SAMPLE_COURSE, started.id)  # flushes the chunker's last words
        yield ws.store.classes.get_class(TENANT, SAMPLE_COURSE, started.id)
    finally:
        classes.close()


def test_progress_of_a_fed_class(ws: Workspace, live: LiveClass) -> None:
    p = class_progress(ws.store, TENANT, SAMPLE_COURSE, live.id)
    assert p.document_id == f"class-{live.id}"
    assert p.now >= 50.0  # at least the end of the last thing said
    assert "halves the bracketing interval" in p.summary
    assert p.started == live.started


def test_progress_of_a_class_is_tenant_and_course_scoped(ws: Workspace, live: LiveClass,
                                                         ) -> None:
    ws.store.ensure_tenant("other")
    with pytest.raises(NotFoundError):
        class_progress(ws.store, "other", SAMPLE_COURSE, live.id)
    with pytest.raises(NotFoundError):
        class_progress(ws.store, TENANT, "another-course", live.id)


def test_a_question_about_what_was_said_stays_in_the_class(ws: Workspace,
                                                           live: LiveClass) -> None:
    p = class_progress(ws.store, TENANT, SAMPLE_COURSE, live.id)
    out = tiered_search(ws, TierInput("how small is the interval after twenty halvings?",
                                      SAMPLE_COURSE, p, k=4), weights_of(ws.settings), Bar())
    assert out.tier == CLASS
    first = out.hits[0]
    assert (first.chunk.document_id, first.tier) == (p.document_id, CLASS)
    clock = time.strftime("%H:%M", time.localtime(live.started + (first.locator.start or 0)))
    assert first.tier_label == f"from today's class, {clock}"
    assert first.scores["progress"] is not None and first.scores["progress"] > 1.0
    rest = [h for h in out.hits if h.chunk.document_id != p.document_id]
    assert all(h.tier == "history" and h.tier_label == f"from {h.chunk.document_title}"
               for h in rest)


def test_an_unreachable_bar_widens_to_the_course(ws: Workspace, live: LiveClass) -> None:
    p = class_progress(ws.store, TENANT, SAMPLE_COURSE, live.id)
    question = "how small is the interval after twenty halvings?"
    plain = ws.search(question, SAMPLE_COURSE, k=WIDE_K)[:4]  # the same search, as fused
    out = tiered_search(ws, TierInput(question, SAMPLE_COURSE, p, k=4),
                        weights_of(ws.settings), Bar(threshold=1.01))
    assert out.tier == COURSE
    assert [h.chunk.id for h in out.hits] == [h.chunk.id for h in plain]


def test_an_answer_during_class_cites_it_with_its_tier(ws: Workspace, live: LiveClass) -> None:
    tutor = Tutor(ws)
    answer = tutor.ask("how small is the interval after twenty halvings?", SAMPLE_COURSE,
                       class_id=live.id)
    assert answer.tier == CLASS
    assert answer.sources[0].document_id == f"class-{live.id}"
    assert answer.sources[0].tier == CLASS
    assert answer.sources[0].tier_label.startswith("from today's class, ")
    assert {"retrieve", "rerank"} <= set(answer.timings)


def test_asking_in_an_unknown_class_fails_before_anything_runs(ws: Workspace) -> None:
    with pytest.raises(NotFoundError):
        Tutor(ws).open("what is bisection?", SAMPLE_COURSE, class_id="no-such-class")
