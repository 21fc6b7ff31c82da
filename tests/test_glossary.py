"""Dictionary translation of a question's keywords (Chinese questions, English courses)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest

from coursetutor.config import Settings
from coursetutor.retrieval import EmbeddingModel, Retriever, SearchTrace
from coursetutor.retrieval.glossary import Glossary, cedict, glossary_for
from coursetutor.retrieval.tokenize import tokenize
from coursetutor.types import SearchFilters
from coursetutor.workspace import Workspace

from .support import SAMPLE_COURSE, TENANT, Sample

LINES = [
    "# CC-CEDICT",
    "#! version=1",
    "黑 黑 [Hei1] /abbr. for Heilongjiang 黑龍江|黑龙江[Hei1 long2 jiang1]/",
    "黑 黑 [hei1] /black/dark/sinister/",
    "成功 成功 [Cheng2 gong1] /Chenggong or Chengkung town in Taitung County 臺東縣|台东县[Tai2 dong1 Xian4], Taiwan/",  # noqa: E501
    "成功 成功 [cheng2 gong1] /success/to succeed/CL:次[ci4],個|个[ge4]/",
    "華沙 华沙 [Hua2 sha1] /Warsaw, capital of Poland/",
    "特斯拉 特斯拉 [Te4 si1 la1] /Nikola Tesla (1856-1943), Serbian inventor and engineer/",
    "人口 人口 [ren2 kou3] /population/people/",
    "多少 多少 [duo1 shao5] /number/amount/somewhat/",
    "的 的 [de5] /of/~'s (possessive particle)/",
    "是 是 [shi4] /is/are/am/yes/to be/",
    "少 少 [shao3] /few/less/to lack/",
    "多 多 [duo1] /many/much/",
    "繁 繁 [fan2] /variant of 煩|烦[fan2]/",
]


@pytest.fixture(scope="module")
def small() -> Glossary:
    return Glossary.from_cedict(LINES)


def english(text: str) -> list[str]:
    return tokenize(text, "en")


def test_entries_keep_common_senses_first_and_drop_notes(small: Glossary) -> None:
    assert small.senses["黑"][:3] == ["black", "dark", "sinister"]
    assert small.senses["成功"][:2] == ["success", "to succeed"]
    assert small.senses["华沙"] == small.senses["華沙"] == ["Warsaw"]
    assert small.senses["特斯拉"] == ["Nikola Tesla"]
    assert "繁" not in small.senses  # a cross-reference is no sense


def test_segmentation_takes_the_longest_known_word(small: Glossary) -> None:
    assert small.segment("华沙的人口是多少？") == ["华沙", "的", "人口", "是", "多少", "？"]
    assert small.segment("特斯拉 in 1884") == ["特斯拉", " in 1884"]
    assert small.segment("") == []


def test_translation_gives_english_terms(small: Glossary) -> None:
    terms = small.translate("华沙的人口是多少？", english)
    assert terms[:2] == ["warsaw", "popul"]
    assert "of" not in terms and "is" not in terms  # stop words of the senses are dropped
    assert small.translate("成功", english)[0] == "success"


def test_single_characters_use_their_first_sense_only(small: Glossary) -> None:
    assert small.translate("黑", english) == ["black"]


def test_numbers_and_latin_words_are_kept_unknown_characters_dropped(small: Glossary) -> None:
    terms = small.translate("鐵特斯拉 NFL 50", english)
    assert terms == ["nikola", "tesla", "nfl", "50"]


def test_only_chinese_questions_in_english_courses_get_a_glossary() -> None:
    assert glossary_for("de", "en") is None
    assert glossary_for("zh", "zh") is None
    assert glossary_for("en", "zh") is None
    assert glossary_for("zh", "en") is cedict()


def test_the_bundled_dictionary_knows_course_words() -> None:
    glossary = cedict()
    assert glossary is not None
    assert {"secant", "newton", "fail"} <= set(
        glossary.translate("割线法 牛顿法什么时候会失败？", english))


# -- in a search -------------------------------------------------------------------


@pytest.fixture(scope="module")
def ws(sample: Sample, embedder: EmbeddingModel) -> Iterator[Workspace]:
    with Workspace(Settings(data_dir=sample.db_path.parent), embedder=embedder) as workspace:
        yield workspace


def _search(ws: Workspace, settings: Settings, question: str) -> tuple[list[str], SearchTrace]:
    trace = SearchTrace()
    hits = Retriever(ws.store, ws.embedder, settings).search(
        question, SearchFilters(TENANT, SAMPLE_COURSE), k=5, trace=trace)
    return [h.chunk.id for h in hits], trace


def test_a_chinese_question_searches_english_keywords(ws: Workspace) -> None:
    ids, trace = _search(ws, ws.settings, "割线法的收敛阶是多少？")
    assert len(ids) == 5
    assert trace.translated and trace.language == "zh"
    assert trace.keyword_weight == 1.0
    hits = Retriever(ws.store, ws.embedder, ws.settings).search(
        "割线法的收敛阶是多少？", SearchFilters(TENANT, SAMPLE_COURSE), k=5, mode="bm25")
    assert hits and "secant" in hits[0].chunk.text.lower()


def test_keyword_translation_can_be_turned_off(ws: Workspace) -> None:
    off = dataclasses.replace(ws.settings, translate_keywords=False)
    _, trace = _search(ws, off, "割线法的收敛阶是多少？")
    assert not trace.translated
    assert trace.keyword_weight < 1.0


def test_english_questions_are_never_translated(ws: Workspace) -> None:
    _, trace = _search(ws, ws.settings, "What is the order of convergence of the secant method?")
    assert not trace.translated


def test_a_translated_question_has_its_chinese_words_translated_too(ws: Workspace) -> None:
    """The tutor searches "translation + original": both halves become English keywords."""
    question = "What is the order of the secant method? 割线法的收敛阶是多少？"
    _, trace = _search(ws, ws.settings, question)
    assert trace.translated and trace.keyword_weight == 1.0
    terms = Retriever(ws.store, ws.embedder, ws.settings)._terms(
        "order of the secant method 收敛", SearchTrace(), "en",
        SearchFilters(ws.tenant, SAMPLE_COURSE))
    assert terms[:5] == ["order", "of", "the", "secant", "method"]
    assert len(terms) > 5 and not any("\u4e00" <= c <= "\u9fff" for t in terms for c in t)
