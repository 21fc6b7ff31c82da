"""Citation markers in a reply: [2] or [1, 3].

Not every bracket of numbers is a marker: an interval such as `[0, 4]` or $[1, 2]$ is part of
what a source says. A marker never holds 0 (sources count from 1) and never sits inside code
or a formula (right after a backtick, `$` or a backslash, or right before a backtick), and a
bracket of several numbers that a source itself writes is taken for the source's own words
(`content_brackets`), wherever the reply quotes it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_NUMBER = r"[1-9]\d{0,2}"
MARKER = re.compile(rf"(?<![`$\\])\[({_NUMBER}(?:\s*[,;]\s*{_NUMBER})*)\](?!`)")  # [2], [1, 3]


def content_brackets(texts: Iterable[str]) -> frozenset[str]:
    """Brackets of several numbers ("[1, 2]") that the given source texts write themselves."""
    return frozenset(m.group(0) for text in texts for m in MARKER.finditer(text)
                     if re.search(r"[,;]", m.group(1)))


def cited_numbers(text: str, content: frozenset[str] = frozenset()) -> list[int]:
    """Numbers cited as [n] or [n, m], in order of first appearance (brackets in `content`
    are the sources' own words, not markers)."""
    seen: list[int] = []
    for m in MARKER.finditer(text):
        if m.group(0) in content:
            continue
        for part in re.split(r"[,;]", m.group(1)):
            n = int(part)
            if n not in seen:
                seen.append(n)
    return seen


def marker_spans(text: str, content: frozenset[str] = frozenset()) -> tuple[tuple[int, int],
                                                                                  ...]:
    """Where the citation markers are in `text`: (start, end) offsets in characters, so a
    page shows as citations exactly the brackets the tutor counted as citations."""
    return tuple(m.span() for m in MARKER.finditer(text) if m.group(0) not in content)
