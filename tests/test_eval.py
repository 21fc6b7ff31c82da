"""Retrieval evaluation: metrics, dataset readers, TutorialVQA timing and `coursetutor eval`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from coursetutor.cli import cli
from coursetutor.errors import InputError
from coursetutor.eval import datasets, tvqa
from coursetutor.eval.datasets import Question, Unit
from coursetutor.eval.metrics import mrr_at, recall_at, summarize
from coursetutor.eval.tvqa import TimedQuestion, is_hit, sentence_times
from coursetutor.types import Locator

DATASETS = Path(__file__).resolve().parents[2] / "shared" / "datasets"
METRICS = ["R@1", "R@5", "R@10", "MRR@10"]
MODES = ["bm25", "vector", "hybrid"]

F, T = False, True


@pytest.fixture(autouse=True)
def _no_config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI reads ./coursetutor.toml when present: run where there is none."""
    monkeypatch.chdir(tmp_path)


def write_json(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


# -- metrics ---------------------------------------------------------------------------

# first relevant result at rank 1, 3, 6, 11 (outside the top 10), never, and no results
FLAGS = [[T, F, F], [F, F, T, T], [F] * 5 + [T], [F] * 10 + [T], [F, F], []]


@pytest.mark.parametrize(
    ("k", "recall", "mrr"),
    [
        (1, 1 / 6, 1 / 6),
        (2, 1 / 6, 1 / 6),
        (3, 2 / 6, (1 + 1 / 3) / 6),
        (5, 2 / 6, (1 + 1 / 3) / 6),
        (6, 3 / 6, (1 + 1 / 3 + 1 / 6) / 6),
        (10, 3 / 6, (1 + 1 / 3 + 1 / 6) / 6),
        (11, 4 / 6, (1 + 1 / 3 + 1 / 6 + 1 / 11) / 6),
    ],
)
def test_recall_and_mrr_at_k(k: int, recall: float, mrr: float) -> None:
    assert recall_at(FLAGS, k) == pytest.approx(recall, rel=1e-15)
    assert mrr_at(FLAGS, k) == pytest.approx(mrr, rel=1e-15)


def test_only_the_first_relevant_result_counts() -> None:
    assert mrr_at([[F, T, T, T]], 10) == 0.5
    assert recall_at([[F, T, T, T]], 10) == 1.0


@pytest.mark.parametrize("k", [1, 10])
def test_metrics_without_questions(k: int) -> None:
    assert (recall_at([], k), mrr_at([], k)) == (0.0, 0.0)


def test_summarize_rounds_to_four_places() -> None:
    assert summarize(FLAGS) == {"R@1": 0.1667, "R@5": 0.3333, "R@10": 0.5, "MRR@10": 0.25}
    assert summarize([[T], [F, T], [F, F, T]]) == {
        "R@1": 0.3333, "R@5": 1.0, "R@10": 1.0, "MRR@10": 0.6111
    }
    assert summarize([]) == dict.fromkeys(METRICS, 0.0)


# -- TutorialVQA: sentence times -----------------------------------------------------


def video(
    sentences: list[str], *segments: tuple[int, int, float | str, float | str]
) -> dict[str, Any]:
    """A TutorialVQA video: segments as (first sentence, last sentence, start s, end s)."""
    return {
        "video_id": "v1",
        "transcript": sentences,
        "segments": [
            {"title": f"segment {n}", "timestamps": {"start": str(a), "end": str(b)},
             "sentence_indexes": {"start": lo, "end": hi}}
            for n, (lo, hi, a, b) in enumerate(segments)
        ],
    }


def chars(n: int) -> str:
    return "x" * n


@pytest.mark.parametrize(
    ("sentences", "segments", "times"),
    [
        # inside a segment: its 12 s shared 4:2:6 by length
        ([chars(4), chars(2), chars(6)], [(0, 2, 10, 22)], [(10, 14), (14, 16), (16, 22)]),
        # timestamps come as strings in the dataset
        ([chars(1), chars(3)], [(0, 1, "1.5", "5.5")], [(1.5, 2.5), (2.5, 5.5)]),
        # after the last segment: 15 characters a second from its end
        ([chars(4), chars(15), chars(30)], [(0, 0, 10, 20)], [(10, 20), (20, 21), (21, 23)]),
        # before the first segment: ending at its start
        ([chars(15), chars(30), chars(2), chars(2)], [(2, 3, 10, 14)],
         [(7, 8), (8, 10), (10, 12), (12, 14)]),
        # before a segment that starts too early to fit them: from 0 to its start
        ([chars(15), chars(30), chars(5)], [(2, 2, 2, 4)], [(0, 2 / 3), (2 / 3, 2), (2, 4)]),
        # between two segments: the gap shared by length, whatever the speaking rate
        ([chars(3), chars(5), chars(10), chars(3)], [(0, 0, 0, 5), (3, 3, 20, 30)],
         [(0, 5), (5, 10), (10, 20), (20, 30)]),
        # between segments out of time order: after the earlier one at the speaking rate
        ([chars(3), chars(15), chars(3)], [(0, 0, 10, 20), (2, 2, 5, 8)],
         [(10, 20), (20, 21), (5, 8)]),
        # no segment at all
        ([chars(15), chars(45)], [], [(0, 1), (1, 4)]),
        # an empty sentence still takes the time of one character
        ([chars(0), chars(3)], [(0, 1, 0, 4)], [(0, 1), (1, 4)]),
        ([], [], []),
    ],
)
def test_sentence_times(
    sentences: list[str], segments: list[tuple[int, int, Any, Any]],
    times: list[tuple[float, float]],
) -> None:
    got = [t for pair in sentence_times(video(sentences, *segments)) for t in pair]
    assert got == pytest.approx([t for pair in times for t in pair], rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("wide_first", [True, False])
def test_overlapping_segments_the_tighter_wins(wide_first: bool) -> None:
    wide, tight = (0, 3, 0, 60), (1, 2, 20, 30)
    segments = [wide, tight] if wide_first else [tight, wide]
    times = sentence_times(video([chars(30), chars(5), chars(5), chars(15)], *segments))
    # the wide segment is dropped: its other sentences are placed around the tight one
    assert times == [(18, 20), (20, 25), (25, 30), (30, 31)]


def test_a_segment_running_past_the_transcript_is_clamped() -> None:
    times = sentence_times(video([chars(15), chars(5), chars(5)], (1, 4, 10, 20)))
    assert times == [(9, 10), (10, 15), (15, 20)]


def test_load_questions_and_write_segments(tmp_path: Path) -> None:
    videos = write_json(tmp_path / "videos.json", [
        {**video([chars(4), chars(2), chars(6), chars(15)], (0, 2, 10, 22)), "video_id": "7",
         "video_title": "Crop a photo"},
        {**video([chars(15)]), "video_id": "8"},
    ])
    questions = write_json(tmp_path / "questions.json", [
        {"video_id": "7", "question": "first two?", "answer_start": 0, "answer_end": 1},
        {"video_id": "99", "question": "unknown video", "answer_start": 0, "answer_end": 0},
        {"video_id": "7", "question": "to the end?", "answer_start": 2, "answer_end": 9},
    ])
    assert tvqa.load_questions(videos, questions) == [
        TimedQuestion("q0", "first two?", "7", 10.0, 16.0),
        TimedQuestion("q2", "to the end?", "7", 16.0, 23.0),  # answer_end clamped
    ]
    files = tvqa.write_segments(videos, tmp_path)
    # without a title the file's stem names the video
    assert files == [(tmp_path / "video-7.json", "Crop a photo"),
                     (tmp_path / "video-8.json", "video-8")]
    out = files[0][0]
    assert json.loads(out.read_text(encoding="utf-8")) == {"segments": [
        {"start": 10.0, "end": 14.0, "text": chars(4)},
        {"start": 14.0, "end": 16.0, "text": chars(2)},
        {"start": 16.0, "end": 22.0, "text": chars(6)},
        {"start": 22.0, "end": 23.0, "text": chars(15)},
    ]}


# -- TutorialVQA: what counts as a hit -------------------------------------------------

GOLD = TimedQuestion("q0", "how?", "v1", 100.0, 110.0)


@pytest.mark.parametrize(
    ("video_id", "where", "hit"),
    [
        ("v1", Locator(start=100.0, end=110.0), True),
        ("v1", Locator(start=105.0, end=300.0), True),  # starts inside
        ("v1", Locator(start=70.0, end=100.5), True),  # exactly 30 s before
        ("v1", Locator(start=69.999, end=120.0), False),  # more than 30 s before
        ("v1", Locator(start=70.0, end=100.0), False),  # 30 s before but ends as gold starts
        ("v1", Locator(start=110.0, end=130.0), False),  # starts as gold ends
        ("v1", Locator(start=111.0, end=130.0), False),
        ("v2", Locator(start=100.0, end=110.0), False),  # another video
        ("v1", Locator(start=100.0), False),
        ("v1", Locator(page=1), False),
        ("v1", Locator(anchor="intro"), False),
    ],
)
def test_is_hit(video_id: str, where: Locator, hit: bool) -> None:
    assert tvqa.MAX_LEAD_SECONDS == 30.0
    assert is_hit(GOLD, video_id, where) is hit


# -- dataset readers ---------------------------------------------------------------------


def xquadr_paragraph(sentences: list[str], qas: list[tuple[str, str, int]]) -> dict[str, Any]:
    """An XQuAD-R paragraph: sentence breaks as in the dataset (inclusive, one apart)."""
    breaks, pos = [], 0
    for s in sentences:
        breaks.append([pos, pos + len(s)])
        pos += len(s) + 1
    return {
        "context": " ".join(sentences),
        "sentences": sentences,
        "sentence_breaks": breaks,
        "qas": [
            {"id": qid, "question": q, "answers": [{"answer_start": start, "text": "x"}]}
            for qid, q, start in qas
        ],
    }


RIVERS = ["The Rhine flows north.", "It ends in the North Sea."]  # breaks [0, 22], [23, 48]
MOONS = ["Titan has lakes of methane."]


def test_load_xquadr(tmp_path: Path) -> None:
    path = write_json(tmp_path / "xquadr-de.json", {"data": [
        {"title": "Rivers", "paragraphs": [
            xquadr_paragraph(RIVERS, [
                ("q1", "Where does the Rhine flow?", 4),
                ("q2", "Where does it end?", 33),
                ("q3", "On the first break's end?", 22),
                ("q4", "Past the last sentence?", 49),  # no gold sentence: left out
            ]),
            xquadr_paragraph(MOONS, [("q5", "What fills Titan's lakes?", 19)]),
        ]},
        {"paragraphs": [xquadr_paragraph(["Untitled."], [])]},
    ]})
    units = datasets.load_xquadr(path, "de")
    assert units.language == "de"
    assert units.units == [
        Unit("a0-p0-s0", "a0-p0", "Rivers", RIVERS[0]),
        Unit("a0-p0-s1", "a0-p0", "Rivers", RIVERS[1]),
        Unit("a0-p1-s0", "a0-p1", "Rivers", MOONS[0]),
        Unit("a1-p0-s0", "a1-p0", "", "Untitled."),
    ]
    assert units.questions == [
        Question("q1", "Where does the Rhine flow?", frozenset({"a0-p0-s0"})),
        Question("q2", "Where does it end?", frozenset({"a0-p0-s1"})),
        Question("q3", "On the first break's end?", frozenset({"a0-p0-s0"})),
        Question("q5", "What fills Titan's lakes?", frozenset({"a0-p1-s0"})),
    ]
    assert datasets.xquadr_questions(path) == {
        "q1": "Where does the Rhine flow?", "q2": "Where does it end?",
        "q3": "On the first break's end?", "q4": "Past the last sentence?",
        "q5": "What fills Titan's lakes?",
    }


def test_load_squad(tmp_path: Path) -> None:
    qa = [{"answer_start": 0, "text": "x"}]
    path = write_json(tmp_path / "squad-it.json", {"data": [
        {"title": "Fiumi", "paragraphs": [
            {"context": "Il Po è il fiume più lungo d'Italia.", "qas": [
                {"id": "s1", "question": "Qual è il fiume più lungo?", "answers": qa},
                {"id": "s2", "question": "Dove scorre il Po?", "answers": qa},
            ]},
            {"context": "Il Tevere attraversa Roma.", "qas": [
                {"id": "s3", "question": "Quale fiume attraversa Roma?", "answers": qa},
            ]},
        ]},
        {"title": "Vuoto", "paragraphs": [{"context": "Nessuna domanda.", "qas": []}]},
    ]})
    units = datasets.load_squad(path)
    assert units.language == "it"
    assert units.units == [
        Unit("a0-p0", "a0-p0", "Fiumi", "Il Po è il fiume più lungo d'Italia."),
        Unit("a0-p1", "a0-p1", "Fiumi", "Il Tevere attraversa Roma."),
        Unit("a1-p0", "a1-p0", "Vuoto", "Nessuna domanda."),
    ]
    assert units.questions == [
        Question("s1", "Qual è il fiume più lungo?", frozenset({"a0-p0"})),
        Question("s2", "Dove scorre il Po?", frozenset({"a0-p0"})),
        Question("s3", "Quale fiume attraversa Roma?", frozenset({"a0-p1"})),
    ]


def test_identical_units_share_gold(tmp_path: Path) -> None:
    qa = [{"answer_start": 0, "text": "x"}]
    path = write_json(tmp_path / "squad-it.json", {"data": [
        {"title": "A", "paragraphs": [
            {"context": "Il Po è lungo.", "qas": [
                {"id": "s1", "question": "Quanto è lungo il Po?", "answers": qa}]},
            {"context": "Il Tevere attraversa Roma.", "qas": []},
        ]},
        {"title": "B", "paragraphs": [
            {"context": " Il Po è lungo.", "qas": [
                {"id": "s2", "question": "Il Po?", "answers": qa}]},
        ]},
    ]})
    units = datasets.load_squad(path)
    # the search shows one of two identical texts: either one is the answer
    assert [q.gold for q in units.questions] == [frozenset({"a0-p0", "a1-p0"})] * 2


@pytest.mark.parametrize(("name", "suffix"), [
    ("korquad-dev-ko.json", "ko"), ("xquadr-DE.json", "de"), ("squadit-dev.json", None),
    ("ko.json", None), ("drcd-dev-zh2.json", None),
])
def test_suffix_language(name: str, suffix: str | None) -> None:
    assert datasets.suffix_language(Path(name)) == suffix


@pytest.mark.parametrize(("suffix", "detected", "disagree"), [
    (None, "ko", False), ("ko", "ko", False), ("it", "ko", True), ("zh", "ko", True),
    ("ko", "en", True), ("de", "en", False), ("zh", "ja", True),
    ("ar", "en", True), ("hi", "en", True), ("ru", "uk", False), ("el", "ru", True),
    ("ar", "unknown", False), ("sw", "en", False),
])
def test_suffix_disagrees(suffix: str | None, detected: str, disagree: bool) -> None:
    assert datasets.suffix_disagrees(suffix, detected) is disagree


KOREAN = [
    ("1989년 2월 15일 여의도 농민 폭력 시위를 주도한 혐의로 지명수배되었다.",
     "여의도 농민 폭력 시위를 주도한 혐의로 지명수배된 날짜는?"),
    ("평양축전에 대표로 파견된 임수경은 판문점을 거쳐 귀환하였다.",
     "평양축전에 대표로 파견된 사람은 누구인가?"),
    ("한국외국어대학교 총학생회장이 전대협 의장으로 선출되었다.",
     "전대협 의장으로 선출된 사람은 어느 대학의 총학생회장이었나?"),
]


def korean_squad(path: Path) -> Path:
    return write_json(path, {"data": [{"title": "임종석", "paragraphs": [
        {"context": context, "qas": [{"id": f"k{i}", "question": question,
                                      "answers": [{"answer_start": 0, "text": "x"}]}]}
        for i, (context, question) in enumerate(KOREAN)
    ]}]})


def test_eval_detects_the_language_of_a_squad_file(tmp_path: Path) -> None:
    path = korean_squad(tmp_path / "korquad-dev.json")
    assert datasets.text_language(path) == "ko"
    result = run_eval(tmp_path / "data", "--dataset", "squad", "--path", str(path), "--json")
    assert result.exit_code == 0, result.stderr
    assert "Warning" not in result.stderr
    report = json.loads(result.stdout)
    assert_metrics(report)
    assert (report["dataset"], report["language"], report["questions"]) == (
        "korquad-dev", "ko", 3)
    # searched as Korean: the Hangul words count, not only the numbers
    assert report["bm25"]["R@1"] == 1.0


def test_eval_warns_when_the_suffix_disagrees(tmp_path: Path) -> None:
    path = korean_squad(tmp_path / "korquad-dev-it.json")
    data_dir = tmp_path / "data"
    result = run_eval(data_dir, "--dataset", "squad", "--path", str(path), "--json")
    assert result.exit_code == 0, result.stderr
    assert result.stderr.splitlines()[0] == (
        "Warning: korquad-dev-it.json: the name says 'it' but the text reads as 'ko'; "
        "evaluating as 'ko' (--language overrides)")
    assert json.loads(result.stdout)["language"] == "ko"
    # --language decides, and then there is nothing to warn about
    result = run_eval(data_dir, "--dataset", "squad", "--path", str(path), "--language", "it",
                      "--json")
    assert result.exit_code == 0, result.stderr
    assert "Warning" not in result.stderr
    assert json.loads(result.stdout)["language"] == "it"


def test_eval_bad_language_and_missing_options(tmp_path: Path) -> None:
    path = korean_squad(tmp_path / "korquad-dev.json")
    result = run_eval(tmp_path / "data", "--dataset", "squad", "--path", str(path),
                      "--language", "korean")
    assert (result.exit_code, result.stderr) == (
        1, "Error: --language must be a two-letter code, got 'korean'\n")
    result = run_eval(tmp_path / "data", "--dataset", "squad")
    assert (result.exit_code, result.stderr) == (
        1, "Error: --dataset and --path are required (or --all FOLDER)\n")


def test_eval_all_sets_of_a_folder(tmp_path: Path) -> None:
    folder = tmp_path / "datasets"
    folder.mkdir()
    tiny_xquadr(folder / "xquadr-en.json")
    result = run_eval(tmp_path / "data", "--all", str(folder), "--json")
    assert result.exit_code == 0, result.stderr
    reports = json.loads(result.stdout)
    assert [r["dataset"] for r in reports] == ["xquadr-en"]
    assert_metrics(reports[0])
    assert "  korquad-ko: skipped (files not in" in result.stderr
    result = run_eval(tmp_path / "data", "--all", str(folder))
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[1].split()[:3] == ["set", "lang", "questions"]
    assert lines[2].split()[:5] == ["xquadr-en", "en", "10", "1.000", "/"]


def clapnq_row(
    qid: str, question: str, passages: list[tuple[str, str]], answer: str
) -> dict[str, Any]:
    return {
        "id": qid, "input": question,
        "passages": [{"title": t, "text": x, "sentences": [x.strip()]} for t, x in passages],
        "output": [{"answer": answer, "selected_sentences": []}],
    }


@pytest.fixture
def clapnq(tmp_path: Path) -> Path:
    """A ClapNQ pair: x-ans.jsonl and its sibling x-unans.jsonl."""
    write_jsonl(tmp_path / "x-unans.jsonl", [
        clapnq_row("u1", "What is gamma?", [("Greek", "Gamma is a letter.")], ""),
        clapnq_row("u2", "Alpha again?", [("Greek", "Alpha is a letter.")], ""),
        # an answer in the unanswerable file still makes no question
        clapnq_row("u3", "Delta?", [("Greek", "Delta is a letter.")], "a letter"),
    ])
    return write_jsonl(tmp_path / "x-ans.jsonl", [
        clapnq_row("a1", "What is alpha?", [("Greek", "Alpha is a letter.")], "a letter"),
        clapnq_row("a2", "What is beta?", [("Greek", "  Beta is a letter. ")], ""),
        clapnq_row("a3", "Alpha, once more?", [("Greek", " Alpha is a letter.\n")], "yes"),
    ])


def test_load_clapnq_pools_both_files(clapnq: Path) -> None:
    units = datasets.load_clapnq(clapnq)
    assert units.language == "en"
    assert units.units == [
        Unit("u0", "u0", "Greek", "Alpha is a letter."),
        Unit("u1", "u1", "Greek", "Beta is a letter."),
        Unit("u2", "u2", "Greek", "Gamma is a letter."),
        Unit("u3", "u3", "Greek", "Delta is a letter."),
    ]
    assert units.questions == [
        Question("a1", "What is alpha?", frozenset({"u0"})),
        Question("a3", "Alpha, once more?", frozenset({"u0"})),
    ]


def test_load_clapnq_alone(clapnq: Path) -> None:
    (clapnq.parent / "x-unans.jsonl").unlink()
    units = datasets.load_clapnq(clapnq)
    assert [u.text for u in units.units] == ["Alpha is a letter.", "Beta is a letter."]
    assert [q.id for q in units.questions] == ["a1", "a3"]


@pytest.mark.parametrize(
    ("loader", "content", "reason"),
    [
        (datasets.load_squad, "", "Expecting value: line 1 column 1 (char 0)"),
        (datasets.load_squad, '{"data": [}', "Expecting value: line 1 column 11 (char 10)"),
        (datasets.load_clapnq, '{"id": 1}\n{', "Expecting property name enclosed in double "
                                               "quotes: line 1 column 2 (char 1)"),
    ],
)
def test_unreadable_dataset(tmp_path: Path, loader: Any, content: str, reason: str) -> None:
    path = tmp_path / "bad-ans.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError) as exc:
        loader(path)
    assert str(exc.value) == f"{path}: cannot read dataset ({reason})"


# -- coursetutor eval retrieval --------------------------------------------------------

TINY = [
    ("Volcanoes", [
        ["Mount Etna is the tallest active volcano in Europe.",
         "Its lava flows reach the town of Catania.",
         "Vesuvius buried Pompeii under ash in 79 AD."],
    ]),
    ("Birds", [
        ["Penguins cannot fly but swim with their flippers.",
         "The albatross has the longest wingspan of any bird.",
         "Hummingbirds beat their wings eighty times per second."],
        ["Owls hunt at night and turn their heads almost fully around.",
         "Parrots imitate human speech.",
         "Flamingos are pink because of the shrimp they eat."],
    ]),
]
TINY_QUESTIONS = [
    (0, 0, 0, "Which is the tallest active volcano in Europe?"),
    (0, 0, 1, "Which town do the lava flows of Etna reach?"),
    (0, 0, 2, "Which city did Vesuvius bury under ash?"),
    (1, 0, 0, "How do penguins swim?"),
    (1, 0, 1, "Which bird has the longest wingspan?"),
    (1, 0, 2, "How many times per second do hummingbirds beat their wings?"),
    (1, 1, 0, "When do owls hunt?"),
    (1, 1, 1, "Which birds imitate human speech?"),
    (1, 1, 2, "Why are flamingos pink?"),
    (1, 1, 1, "Can parrots imitate speech?"),
]


def tiny_xquadr(path: Path, questions: list[tuple[int, int, int, str]] = TINY_QUESTIONS) -> Path:
    """Nine sentences in three paragraphs, ten questions whose answers open a sentence."""
    data: dict[str, Any] = {"data": []}
    for title, paragraphs in TINY:
        data["data"].append({"title": title, "paragraphs": [
            xquadr_paragraph(sentences, []) for sentences in paragraphs
        ]})
    for n, (a, p, s, question) in enumerate(questions):
        par = data["data"][a]["paragraphs"][p]
        par["qas"].append({"id": f"q{n}", "question": question, "answers": [
            {"answer_start": par["sentence_breaks"][s][0], "text": par["sentences"][s]}
        ]})
    return write_json(path, data)


def run_eval(data_dir: Path, *args: str) -> Result:
    return CliRunner().invoke(
        cli, ["--data-dir", str(data_dir), "eval", "retrieval", *args], catch_exceptions=False
    )


def assert_metrics(result: dict[str, Any]) -> None:
    assert set(result) == {"dataset", "language", "questions", "units", "seconds", *MODES}
    for mode in MODES:
        m = result[mode]
        assert list(m) == METRICS
        assert all(0.0 <= m[k] <= 1.0 for k in METRICS)
        assert m["R@1"] <= m["MRR@10"] <= m["R@10"]
        assert m["R@1"] <= m["R@5"] <= m["R@10"]


def test_eval_retrieval_json(tmp_path: Path) -> None:
    path = tiny_xquadr(tmp_path / "xquadr-en.json")
    result = run_eval(tmp_path / "data", "--dataset", "xquadr", "--path", str(path), "--json")
    assert result.exit_code == 0, result.stderr
    assert result.stderr == "  10/10 questions\n"  # progress goes to stderr, JSON to stdout
    report = json.loads(result.stdout)
    assert_metrics(report)
    assert (report["dataset"], report["questions"], report["units"]) == ("xquadr-en", 10, 9)
    assert report["language"] == "en"
    # every question shares rare words with its own sentence only
    assert report["bm25"] == dict.fromkeys(METRICS, 1.0)
    # nine units: the vector list, and so the fused one, always holds the gold unit
    assert report["vector"]["R@10"] == report["hybrid"]["R@10"] == 1.0


def test_eval_retrieval_limit_and_cross_lingual_questions(tmp_path: Path) -> None:
    path = tiny_xquadr(tmp_path / "xquadr-en.json")
    german = tiny_xquadr(tmp_path / "xquadr-de.json", [
        (0, 0, 0, "Welcher ist der höchste aktive Vulkan Europas?"),
        (1, 0, 1, "Welcher Vogel hat die größte Flügelspannweite?"),
    ])
    data_dir = tmp_path / "data"
    result = run_eval(data_dir, "--dataset", "xquadr", "--path", str(path), "--limit", "4",
                      "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["questions"] == 4
    # the German file's ids q0, q1 name the English questions q0, q1
    result = run_eval(data_dir, "--dataset", "xquadr", "--path", str(path), "--query-lang",
                      str(german), "--json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert_metrics(report)
    assert (report["dataset"], report["questions"], report["units"]) == ("xquadr-de-en", 2, 9)


def test_eval_retrieval_table(tmp_path: Path) -> None:
    path = tiny_xquadr(tmp_path / "xquadr-en.json")
    result = run_eval(tmp_path / "data", "--dataset", "xquadr", "--path", str(path))
    assert result.exit_code == 0, result.stderr
    assert result.stderr == "  10/10 questions\n"
    lines = result.stdout.splitlines()
    assert lines[0] == ""
    assert lines[1].startswith("xquadr-en (en): 10 questions, 9 units, ")
    assert lines[2] == f"{'':8}{'R@1':>8}{'R@5':>8}{'R@10':>8}{'MRR@10':>8}"
    assert lines[3] == "bm25" + " " * 4 + "   1.000" * 4
    assert [ln.split()[0] for ln in lines[3:]] == MODES


def test_eval_retrieval_tvqa(tmp_path: Path) -> None:
    videos = write_json(tmp_path / "tvqa-videos.json", [
        {**video(["Open the layers panel from the window menu.",
                  "Drag the new layer above the background.",
                  "Lower the opacity slider to fifty percent."], (0, 2, 0, 30)),
         "video_id": "101"},
        {**video(["Choose the crop tool from the toolbar.",
                  "Drag the handles to frame the subject.",
                  "Press enter to apply the crop."], (0, 2, 0, 24)),
         "video_id": "202"},
    ])
    questions = write_json(tmp_path / "tvqa-dev.json", [
        {"video_id": "101", "question": "how to change the opacity of a layer?",
         "answer_start": 2, "answer_end": 2},
        {"video_id": "202", "question": "how to crop a photo?",
         "answer_start": 0, "answer_end": 2},
    ])
    result = run_eval(tmp_path / "data", "--dataset", "tvqa", "--path", str(questions),
                      "--videos", str(videos), "--json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert_metrics(report)
    assert (report["dataset"], report["questions"], report["units"]) == ("tvqa", 2, 2)
    assert report["hybrid"]["R@1"] == 1.0


def test_eval_tvqa_needs_videos(tmp_path: Path) -> None:
    questions = write_json(tmp_path / "tvqa-dev.json", [])
    result = run_eval(tmp_path / "data", "--dataset", "tvqa", "--path", str(questions))
    assert result.exit_code == 1
    assert result.stderr == "Error: --videos FILE (tvqa-videos.json) is required for tvqa\n"
    assert result.stdout == ""


def test_eval_unreadable_dataset(tmp_path: Path) -> None:
    path = tmp_path / "xquadr-en.json"
    path.write_text("not json", encoding="utf-8")
    result = run_eval(tmp_path / "data", "--dataset", "xquadr", "--path", str(path))
    assert result.exit_code == 1
    assert result.stderr == (
        f"Error: {path}: cannot read dataset (Expecting value: line 1 column 1 (char 0))\n"
    )


def test_eval_dataset_of_the_wrong_shape(tmp_path: Path) -> None:
    squad = write_json(tmp_path / "squad-it.json", {"data": [
        {"title": "Fiumi", "paragraphs": [{"context": "Il Po.", "qas": []}]},
    ]})
    result = CliRunner().invoke(cli, ["--data-dir", str(tmp_path / "data"), "eval", "retrieval",
                                      "--dataset", "xquadr", "--path", str(squad)])
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: {squad}: ")
    assert result.stderr.count("\n") == 1


@pytest.mark.datasets
def test_xquadr_en_hybrid_recall(tmp_path: Path) -> None:
    source = DATASETS / "xquadr-en.json"
    if not source.is_file():
        pytest.skip(f"../shared/datasets not found: {source} is absent")
    # the first three articles: the full file's 1,180 sentences take minutes to embed
    data = json.loads(source.read_text(encoding="utf-8"))
    data["data"] = data["data"][:3]
    path = write_json(tmp_path / "xquadr-en.json", data)
    sentences = sum(len(p["sentences"]) for a in data["data"] for p in a["paragraphs"])
    result = run_eval(tmp_path / "data", "--dataset", "xquadr", "--path", str(path),
                      "--limit", "50", "--json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert_metrics(report)
    assert (report["questions"], report["units"]) == (50, sentences)
    assert report["hybrid"]["R@5"] >= 0.9
