"""The incremental chunker of live classes: pauses, discourse markers, merge sizes, slides."""

from __future__ import annotations

import pytest

from coursetutor.live.chunker import (
    MARKER_LANGUAGES,
    ChunkerSizes,
    LiveChunker,
    Piece,
    load_markers,
    opens_with_marker,
    split_long,
)

SIZES = ChunkerSizes(pause_seconds=2.0, min_chars=300, max_chars=500, buffer_seconds=180.0)
SENTENCE = "The secant method replaces the derivative by a difference quotient of two iterates."


def feed(chunker: LiveChunker, pieces: list[Piece]) -> list[str]:
    closed = []
    for p in pieces:
        closed += [c.text for c in chunker.add(p)]
    return closed


def sentences(n: int, start: float = 0.0, step: float = 5.0, gap: float = 0.3,
              text: str = SENTENCE, page: int | None = None) -> list[Piece]:
    return [Piece(start + i * step, start + i * step + step - gap, text, page) for i in range(n)]


def test_short_sentences_merge_until_the_chunk_would_pass_max_chars() -> None:
    chunker = LiveChunker(SIZES, load_markers("en"))
    closed = feed(chunker, sentences(12))  # 83 characters each, no pause, no marker
    assert [len(t) for t in closed] == [5 * len(SENTENCE) + 4] * 2
    assert all(SIZES.min_chars <= len(t) <= SIZES.max_chars for t in closed)
    tail = chunker.open_chunk
    assert tail is not None and tail.text == " ".join([SENTENCE] * 2)
    assert [c.text for c in chunker.chunks()] == [*closed, tail.text]


def test_a_pause_cuts_once_the_chunk_holds_min_chars() -> None:
    chunker = LiveChunker(SIZES, ())
    early = [*sentences(2), Piece(13.0, 15.0, SENTENCE)]  # 3 s pause, only 251 characters
    assert feed(chunker, early) == []
    more = [Piece(15.2, 16.0, SENTENCE)]  # 4 sentences: 335 characters
    assert feed(chunker, more) == []
    after_pause = Piece(19.0, 22.0, "After a long pause we go on.")
    closed = chunker.add(after_pause)
    assert [c.text for c in closed] == [" ".join([SENTENCE] * 4)]
    assert (closed[0].start, closed[0].end) == (0.0, 16.0)
    assert [c[2] for c in closed[0].cues] == [i * (len(SENTENCE) + 1) for i in range(4)]
    assert chunker.open_chunk is not None and chunker.open_chunk.start == 19.0


@pytest.mark.parametrize("language, opening", [
    ("en", "Now let's look at the bisection method."),
    ("en", "Secondly, the error halves."),
    ("it", "Passiamo ora al metodo di Newton."),
    ("de", "Als Nächstes schauen wir uns das Newton-Verfahren an."),
    ("zh", "接下来我们看牛顿法。"),
    ("ko", "다음으로 뉴턴 방법을 봅시다."),
])
def test_a_discourse_marker_cuts(language: str, opening: str) -> None:
    chunker = LiveChunker(SIZES, load_markers(language))
    assert feed(chunker, sentences(4)) == []  # 335 characters, no pause
    closed = chunker.add(Piece(20.0, 24.0, opening))
    assert [c.text for c in closed] == [" ".join([SENTENCE] * 4)]
    assert chunker.open_chunk is not None and chunker.open_chunk.text == opening


def test_a_marker_or_pause_before_min_chars_does_not_cut() -> None:
    chunker = LiveChunker(SIZES, load_markers("en"))
    feed(chunker, sentences(2))
    assert chunker.add(Piece(30.0, 32.0, "Next, the secant method.")) == []
    assert chunker.closed == []


@pytest.mark.parametrize("text, expected", [
    ("Next, Newton's method.", True),
    ("  ...now LET'S look at it", True),
    ("Nextly we see", False),  # a marker must be a whole word
    ("The answer comes next", False),  # only at the start of a sentence
    ("In conclusion: done", True),
])
def test_markers_match_whole_words_at_the_start(text: str, expected: bool) -> None:
    assert opens_with_marker(text, load_markers("en")) is expected


def test_every_marker_language_has_markers() -> None:
    for language in MARKER_LANGUAGES:
        assert len(load_markers(language)) >= 15, language
    assert load_markers("fr") == load_markers("en")  # no file: English's


def test_a_slide_change_cuts_and_a_chunk_keeps_its_slide() -> None:
    chunker = LiveChunker(SIZES, ())
    feed(chunker, sentences(4, page=3))
    closed = chunker.add(Piece(21.0, 24.0, "On this slide, the error bound.", page=4))
    assert [c.page for c in closed] == [3]
    assert chunker.open_chunk is not None and chunker.open_chunk.page == 4


def test_no_text_waits_longer_than_the_buffer() -> None:
    chunker = LiveChunker(ChunkerSizes(min_chars=300, max_chars=500, buffer_seconds=180.0), ())
    slow = [Piece(i * 100.0, i * 100.0 + 2, "Hm.") for i in range(3)]
    closed = feed(chunker, slow)
    assert closed == ["Hm. Hm."]  # the third one came 200 s after the first


def test_a_caption_longer_than_a_chunk_is_split_with_its_time_shared() -> None:
    long_text = " ".join([SENTENCE] * 8)  # 671 characters
    parts = split_long(Piece(10.0, 90.0, long_text, 2), 500)
    assert [p.text for p in parts] == [SENTENCE] * 8  # at its sentence ends
    assert [(p.start, p.end) for p in parts] == [
        pytest.approx((10.0 + 10 * i, 20.0 + 10 * i)) for i in range(8)]
    assert {p.page for p in parts} == {2}
    words = split_long(Piece(0.0, 1.0, "word " * 150), 100)  # one sentence of 749 characters
    assert [len(p.text) for p in words] == [99] * 7 + [49]
    chunker = LiveChunker(SIZES, ())
    assert [c.text for c in chunker.add(Piece(10.0, 90.0, long_text))] == [
        " ".join([SENTENCE] * 5)]


def test_chinese_sentences_join_without_spaces_and_flush_closes_the_tail() -> None:
    chunker = LiveChunker(SIZES, load_markers("zh"))
    feed(chunker, [Piece(0, 2, "牛顿法收敛很快。"), Piece(2.5, 4, "但是需要导数。")])
    assert chunker.open_chunk is not None
    assert chunker.open_chunk.text == "牛顿法收敛很快。但是需要导数。"
    assert [c.text for c in chunker.flush()] == ["牛顿法收敛很快。但是需要导数。"]
    assert chunker.open_chunk is None and chunker.flush() == []
