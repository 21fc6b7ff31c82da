"""Evidence-sentence vectors kept in the store: embedded once, at ingest or on first use."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from coursetutor.config import Settings
from coursetutor.retrieval.embed import EmbeddingModel, Matrix
from coursetutor.retrieval.sentence_store import StoredSentences
from coursetutor.store import SQLiteStore
from coursetutor.tutor.sentences import select
from coursetutor.tutor.warm import warm
from coursetutor.workspace import Workspace

from .support import SAMPLE_COURSE, Sample, copy_db


class Counting(EmbeddingModel):
    """The real model, counting the passages (sentences) it embeds; a cache of its own."""

    def __init__(self, inner: EmbeddingModel) -> None:
        self.inner, self.model_id, self.dim = inner, inner.model_id, inner.dim
        self.passages = 0

    def embed_batch(self, texts: list[str], is_query: bool) -> Matrix:
        self.passages += 0 if is_query else len(texts)
        return self.inner.embed_batch(texts, is_query)


def _workspace(tmp_path: Path, sample: Sample, embedder: EmbeddingModel,
               **settings: object) -> Workspace:
    db = copy_db(sample.db_path, tmp_path / "data" / "coursetutor.db")
    return Workspace(Settings(data_dir=db.parent, **settings),  # type: ignore[arg-type]
                     store=SQLiteStore(db), embedder=embedder)


def test_kept_vectors_are_read_back_by_their_tenant_only(sample_store: SQLiteStore) -> None:
    vector = np.arange(4, dtype=np.float32) / 4
    StoredSentences(sample_store, "a", "m").put({"Bisection halves the bracket.": vector})
    again = StoredSentences(sample_store, "a", "m").get(["Bisection halves the bracket.", "x"])
    assert list(again) == ["Bisection halves the bracket."]
    assert np.allclose(again["Bisection halves the bracket."], vector)
    assert StoredSentences(sample_store, "b", "m").get(["Bisection halves the bracket."]) == {}
    assert StoredSentences(sample_store, "a", "other").get(["Bisection halves the bracket."]) \
        == {}


def test_a_sentence_is_embedded_once_then_read_from_the_store(
        sample_store: SQLiteStore, embedder: EmbeddingModel) -> None:
    stored = StoredSentences(sample_store, "t", embedder.model_id)
    first = Counting(embedder)
    texts = ["Bisection halves the bracket.", "Newton's method uses the derivative."]
    vectors = first.embed_sentences(texts, stored)
    assert first.passages == 2
    later = Counting(embedder)  # another process: nothing in its memory
    assert np.allclose(later.embed_sentences([*texts, "The secant method."], stored)[:2],
                       vectors)
    assert later.passages == 1  # only the new sentence


def test_warm_embeds_the_sentences_a_turn_reads(tmp_path: Path, sample: Sample,
                                                 embedder: EmbeddingModel) -> None:
    ws = _workspace(tmp_path, sample, Counting(embedder))
    assert warm(ws, SAMPLE_COURSE) > 0
    assert warm(ws, SAMPLE_COURSE) == 0  # all kept
    later = Counting(embedder)
    question = "How does the bisection method work?"
    hits = ws.search(question, SAMPLE_COURSE, k=5)
    selection = select(question, "", hits, "en", "concept", later, ws.sentences)
    assert selection.lines and later.passages == 0


def test_warm_is_off_with_the_setting(tmp_path: Path, sample: Sample,
                                      embedder: EmbeddingModel) -> None:
    ws = _workspace(tmp_path, sample, embedder, warm_sentences=False)
    assert warm(ws, SAMPLE_COURSE) == 0
    assert ws.sentences.get(["The bisection method repeatedly halves a bracket."]) == {}
