"""The student's computations that do not hold, pointed out: a tutor that carries on from
"70 divided by 3 is equal to 24" teaches the slip. The help on an exercise opens with a line
naming each one (never its right value), unless the reply already asks the student to check
it."""

from __future__ import annotations

from .arithmetic import doubts, slips
from .leak import numbers
from .replies import reply

__all__ = ["point_out"]

MOST = 2  # computations named in one line


def point_out(text: str, message: str, language: str) -> str:
    """`text` opened by a line naming the computations of `message` that do not hold, when
    it does not question them itself; `text` as it is when there are none."""
    named = [e for e in slips(message) if not _questioned(e.left, e.stated, text)]
    if not named:
        return text
    line = reply("wrong_sum", language, sums="; ".join(
        f"{e.left.replace('*', '×').replace('/', '÷')} = {e.stated}" for e in named[:MOST]))
    return f"{line}\n\n{text}" if text else line


def _questioned(left: str, stated: str, text: str) -> bool:
    """Does the reply name this computation (its numbers) and doubt it?"""
    wanted = numbers(f"{left} {stated}")
    return wanted <= numbers(text) and doubts(text)
