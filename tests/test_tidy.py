"""How a rung's help is cut to what holds (tidy.py): a last sentence the token limit cut,
a hint kept to its first two sentences, before a lead-in and the list it opened, and when
the model writing it has written all of that."""

from __future__ import annotations

import pytest

from coursetutor.tutor.tidy import (
    begins_sentence,
    fills,
    first_sentences,
    settled,
    whole_sentences,
)


@pytest.mark.parametrize(("text", "kept"), [
    # the token limit cut the last sentence: the reply ends where the one before did
    ("Check the signs of f(a) and f(b) [1]. Then the intermediate value theorem gives",
     "Check the signs of f(a) and f(b) [1]."),
    ("高斯-牛顿法适用于这里，因为残差是观测值和预测值之间的平方差。这使得方法可以迭代地调整 [1]",
     "高斯-牛顿法适用于这里，因为残差是观测值和预测值之间的平方差。 [1]"),
    ("1. Calculate f(2) and f(3) [1].\n2. [1]", "1. Calculate f(2) and f(3) [1]."),
    # whole, or nothing whole before the cut: as it is
    ("Compute the midpoint `c = (a + b) / 2` [1]", "Compute the midpoint `c = (a + b) / 2` [1]"),
    ("Look at e.g. the step size and compute", "Look at e.g. the step size and compute"),
])
def test_a_reply_ends_with_a_whole_sentence(text: str, kept: str) -> None:
    assert whole_sentences(text) == kept


@pytest.mark.parametrize(("text", "kept"), [
    ("Solve `(b - a) / 2^n <= tol` for n [1]. This tells you how many steps. Here is a "
     "breakdown:\n\n1. [1]", "Solve `(b - a) / 2^n <= tol` for n [1]. This tells you how many "
                             "steps."),
    ("Compute f'(x) [1]. The iteration formula is given by:\n\nThis formula updates x. [3]",
     "Compute f'(x) [1]."),
    ("To compute the secant iterates, follow these steps:\n\n1. Calculate f(2) and f(3) [1]."
     "\n2. [1]", "To compute the secant iterates, follow these steps: Calculate f(2) and f(3) "
                 "[1]."),
    ("残差是平方差[1]。这使得方法可以迭代。[1] 第三句。",
     "残差是平方差[1]。这使得方法可以迭代。[1]"),
    ("Take one observation (e.g. y = 0) [2]. Look at the sign. Then conclude.",
     "Take one observation (e.g. y = 0) [2]. Look at the sign."),
])
def test_a_hint_is_its_first_two_sentences(text: str, kept: str) -> None:
    assert first_sentences(text, 2) == kept


def test_a_hint_announced_in_bold_keeps_the_hint() -> None:
    said = ("**Hint for the student:**\n\nCheck the signs of `f(1)` and `f(2)` [1]. Then "
            "recall the theorem. Then conclude.")
    assert first_sentences(said, 2) == ("Check the signs of `f(1)` and `f(2)` [1]. Then "
                                        "recall the theorem.")


def test_a_hint_announced_on_a_line_of_its_own_keeps_the_hint() -> None:
    said = ("Ecco un'idea di come rispondere: [1]\n\nDefinisci il punto medio `c_0` di "
            "`[a, b]` [1]. Poi confronta i segni. Infine conta i passi.")
    assert first_sentences(said, 2) == ("Definisci il punto medio `c_0` di `[a, b]` [1]. "
                                        "Poi confronta i segni.")


@pytest.mark.parametrize(("text", "kept"), [
    # guiding questions numbered one per line, in bold: a paragraph of questions
    ("1. **What is the theorem you use?**\n2. **What hypotheses must you check?** [1]",
     "What is the theorem you use? What hypotheses must you check? [1]"),
    # announced on a line of their own: the questions without the announcement
    ("Here are two short questions that will help the student understand this step:\n\n"
     "1. What is the interval `[a_k, b_k]` after `k` steps?\n2. How long is it? [1]",
     "What is the interval `[a_k, b_k]` after `k` steps? How long is it? [1]"),
    # a list after a question that is no question list: cut as before
    ("What is f(1)? What is f(2)?\n1. Compute f(1).", "What is f(1)? What is f(2)?"),
])
def test_guiding_questions_in_a_list_are_the_questions(text: str, kept: str) -> None:
    assert first_sentences(text, 3) == kept


@pytest.mark.parametrize(("written", "words"), [
    ("Compute the midpoint. Then", "Compute the midpoint."),
    ("Compute x_1.", "Compute"),  # "x_1." may yet be "x_1.618"
    ("先计算中点。然后计", "先计算中点。然后计"),  # each Chinese character is a word
    ("Compute", ""),
])
def test_what_is_written_up_to_its_last_whole_word(written: str, words: str) -> None:
    assert settled(written) == words


@pytest.mark.parametrize(("written", "enough"), [
    # the second sentence is whole once a third begins, its marker kept
    ("Compute the midpoint [1]. Then compute f(c). [2] Next", True),
    ("Compute the midpoint [1]. Then compute f(c). [2]", False),
    ("Compute the midpoint [1]. Then compute x_1.", False),
    ("先计算中点。然后计算f(c)。[1]再", True),
    ("先计算中点。然后计算f(c)。", False),
    # a lead-in: what is shown is the list's first item, which is still being written
    ("Follow these steps:\n1. Compute the midpoint. 2. Compare", False),
])
def test_a_hint_is_written_once_its_two_sentences_are_whole(written: str, enough: bool) -> None:
    assert fills(written, 2) is enough
    if enough:  # what is shown of it is what would be shown of any longer reply
        assert first_sentences(written, 2) == first_sentences(f"{written} goes on. More.", 2)


@pytest.mark.parametrize(("written", "begun"), [
    ("Compute f(c). [2] Next", True), ("先计算。[1]再", True), ("Steps:\n1.", True),
    # the second word: tidying takes a sentence's first word alone for one cut off
    ("Compute f(c). The length", True),
    ("Compute f(c) and", False), ("Compute f(c).", False), ("f(c). The length of", False),
])
def test_a_draft_is_read_again_when_a_sentence_begins(written: str,
                                                                     begun: bool) -> None:
    assert begins_sentence(written) is begun
