from __future__ import annotations

import pytest

from coursetutor.tutor.lists import relabel


@pytest.mark.parametrize(("text", "expected"), [
    ("1. Ms. Jones got cards [1].\n4. She got 5 gift cards. [1]",
     "1. Ms. Jones got cards [1].\n2. She got 5 gift cards. [1]"),
    ("Steps:\n1) a\n3) b\n7) c", "Steps:\n1) a\n2) b\n3) c"),
    ("3. a\n5. b", "3. a\n4. b"),  # the steps rung counts on from the solution's step
    ("3. a\n4. b", "3. a\n4. b"),
    ("2. a\n1. b", "2. a\n1. b"),  # not rising: not a list it can mend
    ("x = 3.5 and\n2. a", "x = 3.5 and\n2. a"),
    ("", ""),
])
def test_a_list_with_items_taken_out_counts_on(text: str, expected: str) -> None:
    assert relabel(text) == expected
