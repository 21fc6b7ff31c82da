from __future__ import annotations

import pytest

from coursetutor.tutor.arithmetic import slips
from coursetutor.tutor.slips import point_out

MESSAGE = ("To work out how many pencils fit in a box we divide the total (70) by the number of "
           "boxes (3). So 70 divided by 3 is equal to 24. That means each box holds 24.")


@pytest.mark.parametrize(("language", "line"), [
    ("en", "Check this computation again: 70 ÷ 3 = 24 does not hold."),
    ("it", "Ricontrolla questo calcolo: 70 ÷ 3 = 24 non è corretto."),
    ("zh", "请再检查一下这个计算：70 ÷ 3 = 24 不成立。"),
])
def test_the_help_opens_with_the_student_s_slip(language: str, line: str) -> None:
    assert point_out("1. Count the pencils in the boxes [1].", MESSAGE, language) == (
        f"{line}\n\n1. Count the pencils in the boxes [1].")


def test_a_reply_that_questions_the_slip_itself_is_left_alone() -> None:
    text = "You wrote 70 / 3 = 24 [1]. Check that division: which number do you divide?"
    assert point_out(text, MESSAGE, "en") == text


def test_no_slip_no_line() -> None:
    assert point_out("Divide by 4 [1].", "So it's 3 + 3 + 6 = 12.", "en") == "Divide by 4 [1]."


def test_a_message_is_read_sentence_by_sentence() -> None:
    # "no" in one sentence does not make the next one a question
    said = "No idea if this is right. So 70 divided by 3 is equal to 24."
    assert [e.text for e in slips(said)] == ["70 divided by 3 is equal to 24"]
    assert slips("Is 70 divided by 3 equal to 24?") == []
