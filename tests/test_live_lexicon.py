"""The course lexicon: near-misses of course terms corrected, correct speech left alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from coursetutor.eval import lexicon as lexicon_eval
from coursetutor.live.lexicon import Correction, Lexicon, edit_distance, sound_key

MAVILS = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "mavils-dev"

COURSE = [
    "An eigenvector of a matrix A is a vector v with Av = lambda v; lambda is its eigenvalue.",
    "Every eigenvector of a symmetric matrix is orthogonal to the others. The eigenvector "
    "basis diagonalises A.",
    "Satoshi Nakamoto wrote the Bitcoin paper; Nakamoto consensus orders the blocks.",
    "Homogeneous coordinates add one dimension; inhomogeneous coordinates drop it. "
    "Homogeneous points are equal up to scale.",
    "The covariance matrix of a Gaussian process and its kernel function.",
]


@pytest.fixture(scope="module")
def lexicon() -> Lexicon:
    return Lexicon.from_texts(COURSE)


def test_sound_key_and_edit_distance() -> None:
    assert sound_key("eigenvector") == "AKNFKTR"
    assert sound_key("Nakamotto") == sound_key("Nakamoto")
    assert edit_distance("kitten", "sitting") == 3
    assert edit_distance("ab", "ba") == 1


@pytest.mark.parametrize(("heard", "meant", "rule"), [
    ("the eigen vector of A", "the eigenvector of A", "join"),
    ("so the eigen-vector is", "so the eigenvector is", "join"),
    ("Nakamotto wrote it", "Nakamoto wrote it", "near"),
])
def test_near_misses_are_corrected(lexicon: Lexicon, heard: str, meant: str,
                                   rule: str) -> None:
    text, fixes = lexicon.correct(heard)
    assert text == meant
    assert [f.rule for f in fixes] == [rule]
    assert heard[fixes[0].start : fixes[0].end] == fixes[0].raw


def test_a_misheard_phrase_that_sounds_like_a_term() -> None:
    lexicon = Lexicon.from_texts(["The eigenvector and the eigenvalue. Each eigenvector "
                                  "spans a line."])
    assert lexicon.correct("and the I can vector spans a line") == (
        "and the eigenvector spans a line",
        [Correction(8, 20, "I can vector", "eigenvector", "sound")])


@pytest.mark.parametrize("said", [
    "we write it in homogeneous coordinates",  # the course says 'homogeneous' more often
    "any homogeneous point",
    "the covariance and the kernels",  # another form of a course word
    "and so forth",  # short words are never corrected
    "we can not see every one of them",  # stop words are never joined
    "the x coordinate you see",
    "a vector and a matrix",
])
def test_correct_speech_is_left_alone(lexicon: Lexicon, said: str) -> None:
    assert lexicon.correct(said) == (said, [])


def test_empty_course_corrects_nothing() -> None:
    assert Lexicon.from_texts([]).correct("the eigen vector") == ("the eigen vector", [])


def test_mangled_terms_in_the_evaluation_are_restored() -> None:
    found, words, mangled, restored = lexicon_eval.lecture_result(
        "toy", COURSE, ["The eigenvector basis and Nakamoto consensus."])
    assert (found, words) == ([], 6)
    assert mangled == 2 and restored >= 1


@pytest.mark.skipif(not MAVILS.is_dir(), reason="../shared/datasets/mavils-dev is absent")
def test_mavils_captions_are_mostly_left_alone() -> None:
    result = lexicon_eval.evaluate(MAVILS, None, ["computer-vision"])
    assert result["words"] > 4000
    assert result["corrections_per_1000_words"] < 1.0
    assert result["restored_share"] > 0.5


@pytest.mark.parametrize("said", [
    "the size of the data set",  # English writes the compound apart
    "my initial reaction was to look closer",  # a word and a small word after it
    "we'll come back to that",  # contractions are never joined
    "it will become larger",  # a short common word
    "when we do analyses of these data",  # only the ending differs
])
def test_what_the_captions_taught_is_left_alone(said: str) -> None:
    lexicon = Lexicon.from_texts([
        "The dataset and its data. Each dataset is split.", "Reactions. Reactions of patients.",
        "The Wellcome Trust. Wellcome archives.", "It became law; it became clear.",
        "Analysis of variance. Analysis plan."])
    assert lexicon.correct(said) == (said, [])
