"""Chunking: sentence splitting, packing with overlap, slides and timed transcripts.

Token counts are whitespace-separated words, so every expected size can be checked by hand.
"""

from __future__ import annotations

import itertools
import random

import pytest

from coursetutor.config import Settings
from coursetutor.ingest.chunking import (
    ChunkSizes,
    chunk_prose,
    chunk_slides,
    chunk_timed,
    pack,
    split_sentences,
)
from coursetutor.types import ChunkDraft, Locator, Section


def words(text: str) -> int:
    return len(text.split())


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        (
            "Bisection halves the bracket. Newton uses the tangent! Does it converge? "
            "Yes: quadratically.",
            ["Bisection halves the bracket.", "Newton uses the tangent!", "Does it converge?",
             "Yes: quadratically."],
        ),
        ("See e.g. the notes. Set x = 3.5 now.", ["See e.g. the notes.", "Set x = 3.5 now."]),
        ("It took 7 steps. 3 more were needed.", ["It took 7 steps.", "3 more were needed."]),
        ("Recall: Newton needs f'.", ["Recall:", "Newton needs f'."]),
        ("One line\nwrapped. Next one.", ["One line wrapped.", "Next one."]),
        ("Il metodo converge. È lento.", ["Il metodo converge.", "È lento."]),
        ('Stop here. "Quoted start". (Bracketed.)',
         ["Stop here.", '"Quoted start".', "(Bracketed.)"]),
        ("牛顿法很快。二分法很慢！对吗？", ["牛顿法很快。", "二分法很慢！", "对吗？"]),
        ("no final stop", ["no final stop"]),
        ("  \n ", []),
    ],
)
def test_split_sentences(text: str, sentences: list[str]) -> None:
    assert split_sentences(text) == sentences


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        ('It is called "regula falsi." It converges.',
         ['It is called "regula falsi."', "It converges."]),
        ("(See the notes.) Then stop.", ["(See the notes.)", "Then stop."]),
    ],
)
def test_split_sentences_after_closing_quote_or_bracket(text: str, sentences: list[str]) -> None:
    assert split_sentences(text) == sentences


P1 = "One two three four. Five six."
P2 = "Seven eight nine ten. Eleven twelve."
P3 = "Thirteen fourteen fifteen sixteen. Seventeen eighteen."


def test_pack_carries_trailing_sentences_as_overlap() -> None:
    # target 10, maximum 15, overlap 0.2 * 10 = 2 words: the last 2-word sentence is carried
    sizes = ChunkSizes(target=10, maximum=15, overlap=0.2)
    assert pack([(P1, 6), (P2, 6), (P3, 6)], sizes, words) == [
        (P1, 6),
        ("Five six.\n\n" + P2, 8),
        ("Eleven twelve.\n\n" + P3, 8),
    ]


def test_pack_without_overlap() -> None:
    sizes = ChunkSizes(target=10, maximum=15, overlap=0.0)
    assert pack([(P1, 6), (P2, 6), (P3, 6)], sizes, words) == [(P1, 6), (P2, 6), (P3, 6)]


def test_pack_overlap_never_cuts_a_sentence() -> None:
    # a budget of 3 words cannot hold the 4-word last sentence, so nothing is carried
    unit = "Alpha beta. Gamma delta epsilon zeta."
    sizes = ChunkSizes(target=10, maximum=15, overlap=0.3)
    assert pack([(unit, 6), (P2, 6)], sizes, words) == [(unit, 6), (P2, 6)]


ELEVEN = " ".join(["Word"] * 11) + "."


@pytest.mark.parametrize(
    ("maximum", "packed"),
    [
        (15, [(ELEVEN + "\n\nTwo words.", 13)]),  # short remainder folded into the chunk before
        (12, [(ELEVEN, 11), ("Two words.", 2)]),  # folding would pass the maximum
    ],
)
def test_pack_folds_a_short_remainder(maximum: int, packed: list[tuple[str, int]]) -> None:
    sizes = ChunkSizes(target=12, maximum=maximum, overlap=0.0)
    assert pack([(ELEVEN, 11), ("Two words.", 2)], sizes, words) == packed


def test_pack_nothing() -> None:
    assert pack([], ChunkSizes(), words) == []


def make_text(rng: random.Random, paragraphs: int, longest: int) -> tuple[str, list[str]]:
    """Paragraphs of unique capitalised sentences, each at most `longest` words."""
    sentences: list[str] = []
    paras: list[str] = []
    for _ in range(paragraphs):
        para = []
        for _ in range(rng.randint(1, 9)):
            n = rng.randint(2, longest)
            sentence = f"Sentence{len(sentences)} " + " ".join(
                rng.choice(["root", "bracket", "tangent", "error", "step", "x_n"])
                for _ in range(n - 1)
            ) + rng.choice([".", "!", "?"])
            sentences.append(sentence)
            para.append(sentence)
        paras.append(" ".join(para))
    return "\n\n".join(paras), sentences


@pytest.mark.parametrize(
    ("target", "maximum", "overlap"),
    [(40, 50, 0.12), (40, 50, 0.0), (60, 100, 0.3), (20, 25, 0.2), (100, 120, 0.49)],
)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_chunks_respect_maximum_and_sentence_ends(
    target: int, maximum: int, overlap: float, seed: int
) -> None:
    text, sentences = make_text(random.Random(seed), paragraphs=12, longest=min(maximum, 30))
    sizes = ChunkSizes(target=target, maximum=maximum, overlap=overlap)
    drafts = chunk_prose([Section(text, ("Chapter",), Locator(page=2))], sizes, words)
    known = set(sentences)
    seen: list[str] = []
    for ordinal, draft in enumerate(drafts):
        parts = split_sentences(draft.text)
        assert draft.n_tokens == words(draft.text) <= maximum
        assert draft.text.endswith((".", "!", "?"))
        assert set(parts) <= known, "a chunk holds a cut sentence"
        assert (draft.ordinal, draft.section_path, draft.locator) == (
            ordinal, ("Chapter",), Locator(page=2)
        )
        seen.extend(p for p in parts if p not in seen)
    assert seen == sentences, "every sentence is kept, in order"


def test_overlong_paragraph_is_split_at_sentences() -> None:
    sentences = [f"Sentence {i} has exactly six words." for i in range(10)]
    drafts = chunk_prose([Section(" ".join(sentences))], ChunkSizes(20, 25, 0.0), words)
    # 6-word units against a target of 20: three per chunk; the last one (6 words) is not
    # under a quarter of the target, so it is not folded back
    assert [d.text.split("\n\n") for d in drafts] == [
        sentences[0:3], sentences[3:6], sentences[6:9], sentences[9:10]
    ]


def test_overlong_sentence_is_cut_by_words() -> None:
    sentence = " ".join(f"w{i}" for i in range(25)) + "."
    drafts = chunk_prose([Section(sentence)], ChunkSizes(8, 10, 0.0), words)
    assert [d.n_tokens for d in drafts] == [10, 10, 5]
    assert " ".join(d.text for d in drafts) == sentence


def test_chunks_never_cross_sections_or_pages() -> None:
    sections = [
        Section("Intro text.", ("Lecture",), Locator(anchor="lecture")),
        Section("More intro.", ("Lecture",), Locator(anchor="lecture")),
        Section("Bisection text.", ("Lecture", "1 Bisection"), Locator(anchor="1-bisection")),
        Section("Page one.", ("Notes",), Locator(page=1)),
        Section("Page two.", ("Notes",), Locator(page=2)),
    ]
    assert chunk_prose(sections, ChunkSizes(400, 500, 0.12), words) == [
        ChunkDraft("Intro text.\n\nMore intro.", ("Lecture",), Locator(anchor="lecture"), 0, 4),
        ChunkDraft("Bisection text.", ("Lecture", "1 Bisection"),
                   Locator(anchor="1-bisection"), 1, 2),
        ChunkDraft("Page one.", ("Notes",), Locator(page=1), 2, 2),
        ChunkDraft("Page two.", ("Notes",), Locator(page=2), 3, 2),
    ]


def test_code_blocks_keep_their_layout() -> None:
    code = "```\nx = 1\n\ny = 2\n```"
    drafts = chunk_prose([Section("Before   the\ncode.\n\n" + code)], ChunkSizes(), words)
    assert [d.text for d in drafts] == ["Before the code.\n\n```\nx = 1\n\ny = 2\n```"]


def test_slides_one_chunk_per_page() -> None:
    slides = [Section(f"Slide {n} text.", ("Deck",), Locator(page=n)) for n in (1, 2, 3)]
    assert chunk_slides(slides, ChunkSizes(), words) == [
        ChunkDraft(f"Slide {n} text.", ("Deck",), Locator(page=n), n - 1, 3) for n in (1, 2, 3)
    ]


def test_overlong_slide_is_split_but_keeps_its_page() -> None:
    long_slide = Section("\n\n".join(f"Point {i} of the slide." for i in range(6)),
                         ("Deck",), Locator(page=4))
    drafts = chunk_slides([Section("Title.", (), Locator(page=3)), long_slide],
                          ChunkSizes(target=10, maximum=12, overlap=0.0), words)
    assert [(d.text, d.locator.page, d.ordinal) for d in drafts] == [
        ("Title.", 3, 0),
        ("Point 0 of the slide.\n\nPoint 1 of the slide.", 4, 1),
        ("Point 2 of the slide.\n\nPoint 3 of the slide.", 4, 2),
        ("Point 4 of the slide.\n\nPoint 5 of the slide.", 4, 3),
    ]


def cues(starts: list[float], text: str = "word word") -> list[Section]:
    """Cues lasting 9 seconds each; `text` may contain {i}."""
    return [Section(text.format(i=i), locator=Locator(start=s, end=s + 9.0))
            for i, s in enumerate(starts)]


TEN = [10.0 * i for i in range(10)]


@pytest.mark.parametrize(
    ("cue_list", "sizes", "spans"),
    [
        # a sentence end after the window (30 s) closes the chunk
        (cues(TEN, "Sentence {i}."), ChunkSizes(window_seconds=30, max_seconds=45),
         [(0.0, 39.0), (40.0, 79.0), (80.0, 99.0)]),
        # no sentence end, no pause: only the hard limit (60 s) cuts
        (cues(TEN), ChunkSizes(window_seconds=30, max_seconds=60), [(0.0, 59.0), (60.0, 99.0)]),
        # a pause of 6 s after the window closes the chunk
        (cues([0, 10, 20, 30, 45, 55, 65, 75]), ChunkSizes(window_seconds=30, max_seconds=120),
         [(0.0, 39.0), (45.0, 84.0)]),
        # a gap of 1 s is no pause
        (cues([0, 10, 20, 30, 40, 50, 60, 70]), ChunkSizes(window_seconds=30, max_seconds=120),
         [(0.0, 79.0)]),
        # the token maximum (5 words) cuts before the window does
        (cues(TEN, "Sentence {i}."), ChunkSizes(maximum=5, window_seconds=1000, max_seconds=2000),
         [(0.0, 19.0), (20.0, 39.0), (40.0, 59.0), (60.0, 79.0), (80.0, 99.0)]),
    ],
)
def test_timed_windows(
    cue_list: list[Section], sizes: ChunkSizes, spans: list[tuple[float, float]]
) -> None:
    drafts = chunk_timed(cue_list, sizes, words)
    assert [(d.locator.start, d.locator.end) for d in drafts] == spans
    assert [d.ordinal for d in drafts] == list(range(len(spans)))
    assert " ".join(d.text for d in drafts) == " ".join(c.text for c in cue_list)
    assert all(d.n_tokens == words(d.text) for d in drafts)
    by_start = {c.locator.start: c for c in cue_list}
    for d in drafts:  # every cue of a chunk is listed with its span and its place in the text
        assert [(s, e) for s, e, _ in d.cues] == [
            (by_start[s].locator.start, by_start[s].locator.end) for s, _, _ in d.cues
        ]
        assert all(d.text[o:].startswith(by_start[s].text) for s, _, o in d.cues)
        assert " ".join(by_start[s].text for s, _, _ in d.cues) == d.text


def test_first_timed_chunk_exactly() -> None:
    drafts = chunk_timed(cues(TEN, "Sentence {i}."), ChunkSizes(window_seconds=30), words)
    # each cue is "Sentence i." (11 characters) plus the joining space
    assert drafts[0] == ChunkDraft(
        "Sentence 0. Sentence 1. Sentence 2. Sentence 3.", (), Locator(start=0.0, end=39.0), 0, 8,
        ((0.0, 9.0, 0), (10.0, 19.0, 12), (20.0, 29.0, 24), (30.0, 39.0, 36)),
    )


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_timed_chunks_never_pass_max_seconds(seed: int) -> None:
    rng = random.Random(seed)
    t, cue_list = 0.0, []
    for i in range(300):
        start = t + rng.choice([0.1, 0.3, 2.0, 5.0])
        end = start + rng.uniform(1.0, 8.0)
        text = f"Cue {i} " + ("ends here." if rng.random() < 0.2 else "goes on")
        cue_list.append(Section(text, locator=Locator(start=start, end=end)))
        t = end
    sizes = ChunkSizes(maximum=200, window_seconds=90, max_seconds=120)
    drafts = chunk_timed(cue_list, sizes, words)
    assert all(d.locator.end - d.locator.start <= 120 for d in drafts)  # type: ignore[operator]
    assert all(d.n_tokens <= 200 for d in drafts)
    assert drafts[0].locator.start == cue_list[0].locator.start
    assert drafts[-1].locator.end == cue_list[-1].locator.end
    assert all(a.locator.end <= b.locator.start for a, b in itertools.pairwise(drafts))  # type: ignore[operator]


def test_chunk_sizes_match_settings_defaults() -> None:
    s = Settings()
    assert (ChunkSizes().target, ChunkSizes().maximum, ChunkSizes().overlap,
            ChunkSizes().window_seconds, ChunkSizes().max_seconds) == (
        s.chunk_target_tokens, s.chunk_max_tokens, s.chunk_overlap,
        s.transcript_window_seconds, s.transcript_max_seconds,
    )
