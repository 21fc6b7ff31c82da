"""The slide tracker (live, causal) and the recorded-lecture alignment, with the real embedder;
a recorded transcript ingested with its slides; MaViLS when the datasets are there."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from fpdf import FPDF

from coursetutor.cli import cli
from coursetutor.config import Settings
from coursetutor.errors import InputError
from coursetutor.eval import slides as slides_eval
from coursetutor.ingest.ocr import available as ocr_available
from coursetutor.ingest.ocr import make_ocr
from coursetutor.ingest.pipeline import DraftDocument, Ingestor
from coursetutor.ingest.slide_align import Motion, PageIndex, deck_pages, read_deck, slide_cues
from coursetutor.live.pipeline import slide_following, slide_pages
from coursetutor.live.session import LiveClasses
from coursetutor.live.slides import (
    Background,
    HeardFrequencies,
    LiveScoring,
    SlideTracker,
    align_offline,
)
from coursetutor.retrieval import EmbeddingModel
from coursetutor.store import SQLiteStore
from coursetutor.store.classes import TranscriptEvent
from coursetutor.types import ChunkDraft, FileMeta, Locator, Section
from coursetutor.workspace import Workspace

MAVILS = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "mavils-dev"

DECK = [
    "Photosynthesis\nPlants turn sunlight, water and carbon dioxide into glucose and oxygen "
    "inside chloroplasts.",
    "The French Revolution\nIn 1789 the Estates-General met, the Bastille fell and the monarchy "
    "was overthrown.",
    "Sorting algorithms\nQuicksort picks a pivot and partitions the array; merge sort splits "
    "and merges halves.",
    "Plate tectonics\nContinental plates drift on the mantle; earthquakes and volcanoes mark "
    "their boundaries.",
]
SPOKEN = [
    ("Today we start with how plants make their food from light.", 1),
    ("The chloroplast captures sunlight and builds glucose from carbon dioxide.", 1),
    ("Oxygen is what the plant releases as a by-product.", 1),
    ("Now let's move to history: France in 1789.", 2),
    ("The storming of the Bastille became the symbol of the revolution.", 2),
    ("The king lost his throne and the monarchy ended.", 2),
    ("Next, computer science: how do we sort an array quickly?", 3),
    ("Quicksort chooses a pivot element and partitions around it.", 3),
    ("Merge sort splits the list into halves and merges them back.", 3),
    ("Finally, geology: the tectonic plates of the crust move.", 4),
    ("The continents drift slowly on the hot mantle below.", 4),
    ("Where plates meet we find earthquakes and volcanoes.", 4),
]


def _timed() -> list[tuple[float, float]]:
    return [(30.0 * i, 30.0 * i + 25.0) for i in range(len(SPOKEN))]


def test_motion_leaves_a_page_mostly_for_the_next_one() -> None:
    motion = Motion()
    leave = motion.leave_matrix(5)
    assert np.allclose(leave.sum(axis=1), 1.0)
    assert np.allclose(np.diag(leave), 0.0)
    assert int(np.argmax(leave[1])) == 2 and leave[1, 2] > 0.75
    assert motion.stay(0.0) > motion.stay(60.0) > motion.stay(600.0)
    assert motion.stay(120.0) == pytest.approx(np.exp(-1.0))


def test_tracker_follows_the_lecture_sentence_by_sentence(embedder: EmbeddingModel) -> None:
    tracker = SlideTracker(DECK, embedder)
    pages = [tracker.update(text, a, b) for (text, _), (a, b) in zip(SPOKEN, _timed(),
                                                                      strict=True)]
    gold = [page for _, page in SPOKEN]
    # one sentence at a time, early on with little record of each page: a sentence may be
    # placed a slide off, but each slide's last sentence is on it and most are right
    assert pages[0] == 1 and [pages[i] for i in (5, 8, 11)] == [2, 3, 4]
    assert sum(p == g for p, g in zip(pages, gold, strict=True)) >= 10
    assert all(abs(p - g) <= 1 for p, g in zip(pages, gold, strict=True))
    assert tracker.page == 4
    assert int(np.argmax(tracker.belief)) + 1 == 4 and abs(tracker.belief.sum() - 1) < 1e-9


def test_teacher_override_moves_the_tracker(embedder: EmbeddingModel) -> None:
    tracker = SlideTracker(DECK, embedder)
    assert tracker.update(SPOKEN[0][0], 0.0, 5.0) == 1
    tracker.set_page(3)
    assert tracker.page == 3
    # a sentence that fits page 3 keeps it there; the tracker does not fall back to page 1
    assert tracker.update("Quicksort partitions the array around a pivot.", 6.0, 9.0) == 3
    with pytest.raises(InputError, match="not in the deck"):
        tracker.set_page(5)


def test_teacher_override_keeps_the_pace() -> None:
    tracker = SlideTracker(DECK, None)
    for i, (text, _) in enumerate(SPOKEN[:4]):
        tracker.update(text, 6.0 * i, 6.0 * i + 5.0)
    before = tracker.paces
    tracker.set_page(4)
    assert tracker.paces == pytest.approx(before)


@pytest.mark.parametrize(("seconds", "pace"), [(6.0, 40.0), (30.0, 120.0), (120.0, 360.0)])
def test_tracker_learns_the_lecturer_s_pace(seconds: float, pace: float) -> None:
    tracker = SlideTracker(DECK, None)
    pages = [tracker.update(text, seconds * i, seconds * i + 5.0)
             for i, (text, _) in enumerate(SPOKEN)]
    assert pages == [page for _, page in SPOKEN]
    assert list(tracker.paces) == [40.0, 120.0, 360.0]
    assert max(tracker.paces, key=tracker.paces.__getitem__) == pace
    assert sum(tracker.paces.values()) == pytest.approx(1.0)


def test_sentence_without_deck_words_leaves_the_page() -> None:
    tracker = SlideTracker(DECK, None)
    assert [tracker.update(text, a, b) for (text, _), (a, b) in zip(SPOKEN[:6], _timed()[:6],
                                                                     strict=True)][-1] == 2
    said = ["Any questions so far?", "Okay, let me check the time.",
            "Can everyone in the back hear me?", "Good, good."]
    assert [tracker.update(text, 155.0 + 5 * i, 158.0 + 5 * i)
            for i, text in enumerate(said)] == [2, 2, 2, 2]


def test_words_the_lecturer_keeps_saying_weigh_less() -> None:
    index = PageIndex(["alpha beta", "gamma delta"], None)
    heard = HeardFrequencies(index)
    said = index.term_counts(["alpha", "gamma", "gamma"])
    assert list(said) == pytest.approx([1.0, 0.0, 1.0 + np.log(2.0), 0.0])
    # IDF over the two pages alone: ln(3/2) + 1 for every term
    assert list(heard.similarities(said)) == pytest.approx([0.35959, 0.60885], abs=1e-5)
    heard.hear(said)
    heard.hear(index.term_counts(["alpha"]))
    # 'alpha' now in 3 of 4 documents (ln(5/4) + 1), 'gamma' in 2 (ln(5/3) + 1)
    assert heard.documents == 4 and list(heard.df) == [3.0, 1.0, 2.0, 1.0]
    assert list(heard.similarities(said)) == pytest.approx([0.23209, 0.55856], abs=1e-5)


def test_background_is_what_a_page_scores_while_away() -> None:
    background = Background(2)
    row = np.array([0.5, 0.2])
    # page 1 was surely away: its background is (0.5 + the row's mean 0.35) / 2; page 2 was
    # surely on screen: its background stays at the row's mean
    out = background.above(row, np.array([1.0, 0.0]), 0.75)
    assert list(out) == pytest.approx([0.5 - 0.75 * 0.425, 0.2 - 0.75 * 0.35])
    assert list(background.weight) == [1.0, 0.0]


def test_tracker_without_embedder_uses_words_alone() -> None:
    tracker = SlideTracker(DECK, None)
    pages = [tracker.update(text, a, b) for (text, _), (a, b) in zip(SPOKEN, _timed(),
                                                                      strict=True)]
    assert pages[0] == 1 and pages[-1] == 4 and pages[7] == 3


def test_offline_alignment_of_a_recorded_lecture(embedder: EmbeddingModel) -> None:
    sentences = [text for text, _ in SPOKEN]
    assert align_offline(DECK, sentences, embedder, times=_timed()) == [p for _, p in SPOKEN]
    assert align_offline(DECK, [], embedder) == []


def test_image_only_pages_are_crossed_by_the_motion_model(embedder: EmbeddingModel) -> None:
    deck = [DECK[0], "", DECK[2]]  # page 2 has no text
    spoken = [SPOKEN[1][0]] * 3 + ["(pointing at a picture)"] * 3 + [SPOKEN[7][0]] * 3
    times = [(100.0 * i, 100.0 * i + 20.0) for i in range(len(spoken))]
    path = align_offline(deck, spoken, embedder, times=times)
    assert path[:3] == [1, 1, 1] and path[-3:] == [3, 3, 3]
    assert 2 in path[3:6]


def _deck_pdf(path: Path) -> Path:
    pdf = FPDF()
    pdf.set_font("Helvetica", size=12)
    for text in DECK:
        pdf.add_page()
        for i, line in enumerate(text.split("\n")):
            pdf.set_xy(10, 20 + 10 * i)
            pdf.multi_cell(0, 8, line)
    pdf.output(str(path))
    return path


def _srt(path: Path) -> Path:
    def clock(s: float) -> str:
        return f"00:{int(s) // 60:02d}:{int(s) % 60:02d},000"

    cues = [f"{i + 1}\n{clock(a)} --> {clock(b)}\n{text}\n"
            for i, ((text, _), (a, b)) in enumerate(zip(SPOKEN, _timed(), strict=True))]
    path.write_text("\n".join(cues), encoding="utf-8")
    return path


def test_deck_pages_reads_every_page(tmp_path: Path) -> None:
    pages = deck_pages(_deck_pdf(tmp_path / "deck.pdf"))
    assert len(pages) == 4
    assert pages[1].startswith("The French Revolution") and "Bastille" in pages[1]


def test_cues_get_their_slide(tmp_path: Path, embedder: EmbeddingModel) -> None:
    cues = [Section(text, (), Locator(start=a, end=b))
            for (text, _), (a, b) in zip(SPOKEN, _timed(), strict=True)]
    anchored = slide_cues(cues, _deck_pdf(tmp_path / "deck.pdf"), embedder)
    assert [c.locator.anchor for c in anchored] == [f"slide-{p}" for _, p in SPOKEN]


def test_recorded_lecture_ingested_with_its_slides(tmp_path: Path,
                                                   embedder: EmbeddingModel) -> None:
    deck = _deck_pdf(tmp_path / "deck.pdf")
    srt = _srt(tmp_path / "lecture.srt")
    with Workspace(Settings(data_dir=tmp_path / "data"), embedder=embedder) as ws:
        ws.create_course("c1")
        report = ws.ingest("c1", [(srt, FileMeta(doc_type="transcript", slides=str(deck),
                                                 source_name="lecture.srt"))])
        assert [f.status for f in report.files] == ["added"]
        store = ws.store
        assert isinstance(store, SQLiteStore)
        rows = store.export_chunks(ws.tenant, "c1", "lecture-srt")
    anchors = [r.locator.anchor for r in sorted(rows, key=lambda r: r.ordinal)]
    assert anchors and all(a and a.startswith("slide-") for a in anchors)
    assert anchors[0] == "slide-1" and anchors[-1] == "slide-4"
    assert [int(a[6:]) for a in anchors] == sorted(int(a[6:]) for a in anchors)
    first = sorted(rows, key=lambda r: r.ordinal)[0].locator
    assert first.label().endswith(", slide 1")


def test_transcript_label_names_its_slide() -> None:
    assert Locator(start=62.0, end=150.0, anchor="slide-12").label() == "01:02-02:30, slide 12"
    assert Locator(start=62.0, end=150.0).label() == "01:02-02:30"
    assert Locator(start=1.0, end=2.0, anchor="intro").slide() is None


def test_misses_say_where_the_wrong_pages_were() -> None:
    gold = [1, 1, 2, 2, 3, -1, 5, 5]
    shown = [1, 2, 1, 2, 1, 4, 5, 9]  # early, late, right, two behind, (unannotated), far ahead
    assert slides_eval.misses(shown, gold) == {"late": round(1 / 7, 3), "early": round(1 / 7, 3),
                                               "behind": round(1 / 7, 3),
                                               "ahead": round(1 / 7, 3)}
    assert slides_eval.accuracy(shown, gold) == 3 / 7


@pytest.mark.skipif(not MAVILS.is_dir(), reason="../shared/datasets/mavils-dev is absent")
def test_mavils_lecture_beats_the_tfidf_baseline(embedder: EmbeddingModel) -> None:
    lecture = slides_eval.load_lecture(MAVILS / "computer-vision", None)
    row = slides_eval.evaluate_lecture(lecture, embedder, "both")
    assert row["annotated"] == sum(g != -1 for g in lecture.gold) > 0
    assert row["causal"] > row["tfidf"] and row["offline"] > row["tfidf"]
    gold = json.loads((MAVILS / "computer-vision" / "transcript.json").read_text())
    assert len(lecture.sentences) == len([s for s in gold["segments"] if s["text"].strip()])


def test_cli_ingest_with_slides_and_eval_errors(tmp_path: Path, embedder: EmbeddingModel,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no coursetutor.toml of the developer's
    deck, srt = _deck_pdf(tmp_path / "deck.pdf"), _srt(tmp_path / "lecture.srt")
    data = tmp_path / "data"
    runner = CliRunner()
    result = runner.invoke(cli, ["--data-dir", str(data), "ingest", "--course", "c1", "--type",
                                 "transcript", "--slides", str(deck), "--json", str(srt)])
    assert result.exit_code == 0, result.output
    store = SQLiteStore(data / "coursetutor.db")
    try:
        (document,) = store.list_documents("default", "c1")
        rows = store.export_chunks("default", "c1", document.id)
    finally:
        store.close()
    assert rows and all((r.locator.anchor or "").startswith("slide-") for r in rows)
    result = runner.invoke(cli, ["--data-dir", str(data), "eval", "slides", "--path",
                                 str(tmp_path / "nowhere")])
    assert result.exit_code != 0 and "Error: " in result.output
    (tmp_path / "empty").mkdir()
    result = runner.invoke(cli, ["--data-dir", str(data), "eval", "lexicon", "--path",
                                 str(tmp_path / "empty"), "--lecture", "x"])
    assert result.exit_code != 0 and "unknown lecture 'x'" in result.output


def _mixed_deck(folder: Path) -> Path:
    """Three pages: text, a picture of a sentence (no text layer), text."""
    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("L", (1400, 300), color=255)
    draw = ImageDraw.Draw(image)
    font = ImageFont.load_default(size=56)
    draw.text((40, 60), "Newton method converges", fill=0, font=font)
    draw.text((40, 160), "quadratically near a simple root", fill=0, font=font)
    picture = folder / "page.png"
    image.save(picture)
    pdf = FPDF()
    pdf.set_font("Helvetica", size=12)
    for page in (DECK[0], None, DECK[2]):
        pdf.add_page()
        if page is None:
            pdf.image(str(picture), x=10, y=20, w=190)
        else:
            pdf.multi_cell(0, 8, page)
    path = folder / "mixed.pdf"
    pdf.output(str(path))
    return path


def test_read_deck_says_which_pages_have_no_text_layer(tmp_path: Path) -> None:
    deck = read_deck(_mixed_deck(tmp_path))
    assert (deck.image_pages, deck.ocr_pages, deck.pages[1]) == ([2], [], "")
    assert deck.readable and deck.pages[0].startswith("Photosynthesis")
    blank = FPDF()
    for _ in range(3):
        blank.add_page()
    blank.output(str(tmp_path / "blank.pdf"))
    empty = read_deck(tmp_path / "blank.pdf")
    assert (empty.pages, empty.image_pages, empty.readable) == (["", "", ""], [1, 2, 3], False)


@pytest.mark.skipif(not ocr_available(), reason="the ocr extra is not installed")
def test_read_deck_reads_pages_without_text_layer_with_ocr(tmp_path: Path) -> None:
    deck = read_deck(_mixed_deck(tmp_path), make_ocr("on"))
    assert (deck.image_pages, deck.ocr_pages) == ([2], [2])
    assert "simpleroot" in deck.pages[1].lower().replace(" ", "")


@pytest.mark.parametrize(("pages", "tracker", "following"), [
    (["Photosynthesis: plants turn sunlight into glucose", ""], True, "speech"),
    (["", "Fig. 2", ""], True, "time"),  # pages, none with text to compare speech with
    ([], True, "teacher"),  # no deck, or a deck without pages
    (["Photosynthesis: plants turn sunlight into glucose"], False, "teacher"),  # no tracker
])
def test_slide_following(pages: list[str], tracker: bool, following: str) -> None:
    assert slide_following(pages, tracker) == following


def test_a_class_reads_its_deck_as_ingest_read_it(tmp_path: Path,
                                                   embedder: EmbeddingModel) -> None:
    ocr = "on" if ocr_available() else "off"
    with Workspace(Settings(data_dir=tmp_path / "data", ocr=ocr), embedder=embedder) as ws:
        ws.create_course("c1")
        ws.ingest("c1", [(_mixed_deck(tmp_path), FileMeta(doc_type="lecture"))])
        live = LiveClasses(ws)
        try:
            lc = live.start(ws.tenant, "c1", "Botany", slides="mixed-pdf")
            pages = slide_pages(ws, lc)
            assert len(pages) == 3 and "Photosynthesis" in pages[0]
            if ocr == "on":  # the page without a text layer, as OCR read it at ingest
                assert "simpleroot" in pages[1].lower().replace(" ", "")
            else:
                assert pages[1] == ""
            assert live.status(ws.tenant, "c1", lc.id).slide_following == "speech"
        finally:
            live.close()


def test_a_deck_without_readable_page_follows_time_and_the_teacher(
        tmp_path: Path, embedder: EmbeddingModel) -> None:
    with Workspace(Settings(data_dir=tmp_path / "data"), embedder=embedder) as ws:
        ws.create_course("c1")
        # a deck of four pages whose only text is a caption too short to compare speech with
        drafts = [ChunkDraft("Fig. 1", (), Locator(page=1), 0, 3)]
        Ingestor(ws.store, ws.embedder, ws.settings).add(
            ws.tenant, "c1", "en", DraftDocument("scans-pdf", "Scans", "scans.pdf", "h", 4,
                                                 drafts), FileMeta(doc_type="lecture"))
        live = LiveClasses(ws)
        try:
            lc = live.start(ws.tenant, "c1", "Scanned", slides="scans-pdf")
            assert slide_pages(ws, lc) == ["Fig. 1", "", "", ""]
            assert live.status(ws.tenant, "c1", lc.id).slide_following == "time"
            first = live.post(ws.tenant, "c1", lc.id, [
                TranscriptEvent(5.0, 9.0, "Welcome, today we look at these pictures.")])
            assert first.slide_page == 1  # nothing said matches a page: time has not moved
            live.post(ws.tenant, "c1", lc.id, [
                TranscriptEvent(900.0 + 10 * i, 905.0 + 10 * i, "And here is the next one.")
                for i in range(3)])
            moved = live.workspace.store.classes.get_class(ws.tenant, "c1", lc.id)
            assert (moved.slide_page or 0) > 1 and moved.slide_source == "tracked"
            assert live.set_slide(ws.tenant, "c1", lc.id, 3).slide_page == 3
            other = live.start(ws.tenant, "c1", "No deck")
            assert live.status(ws.tenant, "c1", other.id).slide_following == "teacher"
        finally:
            live.close()


def test_leave_one_lecture_out_chooses_on_the_others() -> None:
    a, b = LiveScoring(), LiveScoring(lexical=8.0)
    table = {a: {"x": 0.5, "y": 0.6, "z": 0.7}, b: {"x": 0.9, "y": 0.5, "z": 0.6}}
    out = slides_eval.leave_one_lecture_out(table, ["x", "y", "z"])
    # x: a 0.65 on y, z against b 0.55; y: a 0.6 against b 0.75; z: a 0.55 against b 0.7
    assert {k: (v["causal"], v["scoring"]["lexical"]) for k, v in out.items()} == {
        "x": (0.5, 12.0), "y": (0.5, 8.0), "z": (0.6, 8.0)}
    assert out["x"]["tuned_mean"] == 0.65
    tie = {a: {"x": 0.5, "y": 0.5}, b: {"x": 0.5, "y": 0.5}}
    assert slides_eval.leave_one_lecture_out(tie, ["x", "y"])["x"]["scoring"]["lexical"] == 12.0


def test_eval_slides_loo_and_ocr_per_lecture(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "mavils"
    for name in ("one", "two"):
        lecture = folder / name
        lecture.mkdir(parents=True)
        _mixed_deck(lecture).rename(lecture / "slides.pdf")
        segments = [{"start": a, "end": b, "text": text, "slide": [1, 1, 2, 3][i % 4]}
                    for i, ((text, _), (a, b)) in enumerate(zip(SPOKEN, _timed(), strict=True))]
        (lecture / "transcript.json").write_text(json.dumps({"segments": segments}))
    args = ["--data-dir", str(tmp_path / "data"), "eval", "slides", "--path", str(folder),
            "--mode", "causal", "--loo", "--json"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    row = report["lectures"][0]
    assert (row["image_pages"], row["ocr_needed"], row["ocr_available"]) == (
        1, True, ocr_available())
    assert row["ocr_used"] == ocr_available() == (row["ocr_pages"] == 1)
    assert set(row["loo_scoring"]) == {"lexical", "semantic", "background"}
    assert 0.0 <= row["causal_loo"] <= 1.0 and "causal_loo" in report["average"]
    assert report["targets"]["causal_loo"]["target"] == 0.60
    assert report["ran_without_ocr"] == ([] if ocr_available() else ["one", "two"])
