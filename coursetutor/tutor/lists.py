"""Numbered lists in a reply, after some of their items were taken out."""

from __future__ import annotations

import itertools
import re

__all__ = ["relabel"]

# "3. ", "3) " opening a line (a decimal "3.5" is no label)
_LABEL = re.compile(r"^(?P<indent>[ \t]*)(?P<n>\d{1,2})(?P<mark>[.)])(?=[ \t])", re.MULTILINE)


def relabel(text: str) -> str:
    """`text` with each numbered list counted again from its first label, when items taken out
    of it left gaps ("1. … 4. …" becomes "1. … 2. …"); a list that counts on already, or whose
    labels do not rise, stays as it is."""
    labels = list(_LABEL.finditer(text))
    if len(labels) < 2:
        return text
    numbers = [int(m.group("n")) for m in labels]
    rising = all(b > a for a, b in itertools.pairwise(numbers))
    if not rising or numbers[-1] - numbers[0] == len(numbers) - 1:
        return text
    first = numbers[0]
    out: list[str] = []
    pos = 0
    for k, m in enumerate(labels):
        out.append(text[pos:m.start("n")])
        out.append(str(first + k))
        pos = m.end("n")
    out.append(text[pos:])
    return "".join(out)
