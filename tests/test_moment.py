"""Transcript moments: which cue of a chunk a citation opens at, exactly and on the sample."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator

import pytest

from coursetutor.config import Settings
from coursetutor.ingest.chunking import ChunkSizes, chunk_timed
from coursetutor.retrieval import EmbeddingModel
from coursetutor.retrieval.moment import best_moment, cue_scores, cue_texts
from coursetutor.retrieval.tokenize import tokenize
from coursetutor.types import Chunk, DocType, Locator, Section
from coursetutor.workspace import Workspace

from .support import SAMPLE_COURSE, Sample

LN4 = math.log(4)  # w(t) of a term found in one cue of three: ln(1 + 3/1)


def chunk_of(
    cues: list[tuple[float, float, str]], language: str = "en", doc_type: DocType = "transcript"
) -> Chunk:
    """One transcript chunk cut by the real chunker from (start, end, text) cues."""
    sections = [Section(text, locator=Locator(start=a, end=b)) for a, b, text in cues]
    drafts = chunk_timed(sections, ChunkSizes(), lambda t: len(t.split()))
    assert len(drafts) == 1
    d = drafts[0]
    return Chunk(
        id="c0", tenant="t", course="c", document_id="video-srt", document_title="Video",
        doc_type=doc_type, topic="", section_path=d.section_path, difficulty=2,
        language=language, locator=d.locator, text=d.text, content_hash="h", ordinal=0,
        cues=d.cues,
    )


FAILURES = chunk_of([
    (10.0, 14.0, "Failure one: a flat tangent."),
    (14.5, 19.0, "The derivative is zero, so the step divides by zero."),
    (19.5, 25.0, "Next we look at cycling."),
])


# -- cue_texts ---------------------------------------------------------------------


def test_cue_texts_cut_the_chunk_text_at_each_cue() -> None:
    assert FAILURES.text == (
        "Failure one: a flat tangent. The derivative is zero, so the step divides by zero. "
        "Next we look at cycling."
    )
    assert FAILURES.cues == ((10.0, 14.0, 0), (14.5, 19.0, 29), (19.5, 25.0, 82))
    assert cue_texts(FAILURES) == [
        "Failure one: a flat tangent. ",
        "The derivative is zero, so the step divides by zero. ",
        "Next we look at cycling.",
    ]
    assert "".join(cue_texts(FAILURES)) == FAILURES.text


def test_cue_texts_of_a_chunk_without_cues() -> None:
    assert cue_texts(dataclasses.replace(FAILURES, cues=())) == []


# -- cue_scores: w(t) = ln(1 + n/df(t)), plus half of the next cue's score --------------


@pytest.mark.parametrize(
    ("query", "cues", "scores"),
    [
        # n=3; df(x)=2, df(y)=1: own = [ln 2.5, ln 2.5 + ln 4, 0]
        ({"x", "y"}, [{"x", "a"}, {"x", "y"}, {"b"}],
         [math.log(2.5) + 0.5 * (math.log(2.5) + LN4), math.log(2.5) + LN4, 0.0]),
        # a term in every cue still weighs ln 2; the last cue has no next cue
        ({"the"}, [{"the"}, {"the", "x"}], [1.5 * math.log(2), math.log(2)]),
        # only the next cue matches: half of its score leads into it
        ({"y"}, [{"a"}, {"y"}, {"b"}, {"c"}], [0.5 * math.log(5), math.log(5), 0.0, 0.0]),
        # terms of the query absent from every cue, and cue terms absent from the query
        ({"q", "r"}, [{"a"}, {"b"}], [0.0, 0.0]),
        (set(), [{"a"}, {"b"}], [0.0, 0.0]),
        ({"x"}, [{"x"}], [math.log(2)]),
        ({"x"}, [], []),
    ],
)
def test_cue_scores(query: set[str], cues: list[set[str]], scores: list[float]) -> None:
    assert cue_scores(query, cues) == pytest.approx(scores, rel=1e-15)


def test_cue_scores_on_real_tokens() -> None:
    query = set(tokenize("flat tangent: why does the derivative divide by zero?", "en"))
    cues = [set(tokenize(t, "en")) for t in cue_texts(FAILURES)]
    shared = [sorted(query & c) for c in cues]
    assert shared == [["flat", "tangent"], ["by", "deriv", "divid", "the", "zero"], []]
    own = [2 * LN4, 5 * LN4, 0.0]  # every shared term is in one cue of three
    assert cue_scores(query, cues) == pytest.approx(
        [own[0] + 0.5 * own[1], own[1], 0.0], rel=1e-15
    )


# -- best_moment ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "start"),
    [
        ("Why does the step divide by zero?", 14.5),
        ("What does cycling look like?", 19.5),
        # two rare terms and half of the next cue's three beat the next cue's three alone
        ("flat tangent derivative zero divides", 10.0),
        # a tie (one rare term each in cues 0 and 2) goes to the earlier cue
        ("failure cycling", 10.0),
    ],
)
def test_best_moment_opens_at_the_best_cue_and_runs_to_the_chunk_end(
    query: str, start: float
) -> None:
    assert FAILURES.locator == Locator(start=10.0, end=25.0)
    assert best_moment(FAILURES, query, "en") == Locator(start=start, end=25.0)


@pytest.mark.parametrize("query", ["eigenvalues of a matrix", "?!", ""])
def test_best_moment_without_a_shared_term_is_the_chunk(query: str) -> None:
    assert best_moment(FAILURES, query, "en") == FAILURES.locator


@pytest.mark.parametrize(
    "locator",
    [Locator(page=3), Locator(anchor="34-when-newtons-method-fails"), Locator()],
)
def test_best_moment_of_a_chunk_without_cues_is_its_locator(locator: Locator) -> None:
    chunk = Chunk(
        id="c1", tenant="t", course="c", document_id="notes-md", document_title="Notes",
        doc_type="lecture", topic="", section_path=(), difficulty=2, language="en",
        locator=locator, text="The derivative is zero, so the step divides by zero.",
        content_hash="h", ordinal=0,
    )
    assert best_moment(chunk, "derivative zero", "en") == locator


def test_best_moment_needs_the_chunk_end() -> None:
    chunk = dataclasses.replace(FAILURES, locator=Locator(start=10.0))
    assert best_moment(chunk, "cycling", "en") == Locator(start=10.0)


@pytest.mark.parametrize(("language", "start"), [("it", 23.0), ("en", 20.0)])
def test_best_moment_stems_the_query_in_its_language(language: str, start: float) -> None:
    chunk = chunk_of([
        (20.0, 22.5, "Oggi parliamo di Newton."),
        (23.0, 27.0, "Il metodo di bisezione dimezza l'intervallo."),
    ], language="it")
    # 'bisezioni' meets 'bisezione' only under the Italian stemmer; otherwise nothing matches
    assert best_moment(chunk, "bisezioni", language) == Locator(start=start, end=27.0)


# -- the sample course's lecture video -----------------------------------------------


@pytest.fixture(scope="module")
def ws(sample: Sample, embedder: EmbeddingModel) -> Iterator[Workspace]:
    """The session's sample store, searched only (never written), citing moments in every window."""
    settings = Settings(data_dir=sample.db_path.parent, moment_min_seconds=0)
    with Workspace(settings, embedder=embedder) as workspace:
        yield workspace


def test_short_windows_are_cited_at_their_start_by_default(
    sample: Sample, embedder: EmbeddingModel
) -> None:
    settings = Settings(data_dir=sample.db_path.parent)
    assert settings.moment_min_seconds == 45.0
    with Workspace(settings, embedder=embedder) as workspace:
        hits = workspace.search("What happens if the tangent is horizontal?", SAMPLE_COURSE, k=5)
    hit = next(h for h in hits if h.chunk.doc_type == "transcript")
    assert hit.chunk.locator == Locator(start=395.148, end=427.425)
    assert hit.locator == hit.chunk.locator


@pytest.mark.parametrize(
    ("question", "words", "cue_start", "window"),
    [
        # 00:06:53,292 --> If f prime of x n is zero, the tangent is horizontal.
        ("What happens if the tangent is horizontal?", "the tangent is horizontal", 413.292,
         (395.148, 427.425)),
        # 00:03:29,486 --> Some of you might recognise that. It's the Babylonian method:
        ("What is the Babylonian method?", "It's the Babylonian method", 209.486,
         (209.486, 237.482)),
        # 00:09:54,118 --> The question is: how do I know when to stop?
        ("How do I know when to stop the iteration?", "how do I know when to stop", 594.118,
         (590.492, 619.718)),
    ],
    ids=["horizontal-tangent", "babylonian", "when-to-stop"],
)
def test_search_cites_the_moment_inside_the_transcript_window(
    ws: Workspace, question: str, words: str, cue_start: float, window: tuple[float, float]
) -> None:
    hits = ws.search(question, SAMPLE_COURSE, k=5)
    hit = next(h for h in hits if h.chunk.doc_type == "transcript")
    start, end = window
    assert hit.chunk.document_id == "lecture-01-video-srt"
    assert hit.chunk.locator == Locator(start=start, end=end)
    assert hit.locator == Locator(start=cue_start, end=end)
    starts = [c[0] for c in hit.chunk.cues]
    assert (starts[0], hit.chunk.cues[-1][1]) == window
    assert words in cue_texts(hit.chunk)[starts.index(cue_start)]
