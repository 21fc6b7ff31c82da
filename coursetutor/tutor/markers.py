"""Citation markers in a reply: [2] or [1, 3]."""

from __future__ import annotations

import re

MARKER = re.compile(r"\[(\d{1,3}(?:\s*[,;]\s*\d{1,3})*)\]")  # [2] or [1, 3]


def cited_numbers(text: str) -> list[int]:
    """Numbers cited as [n] or [n, m], in order of first appearance."""
    seen: list[int] = []
    for m in MARKER.finditer(text):
        for part in re.split(r"[,;]", m.group(1)):
            n = int(part)
            if n not in seen:
                seen.append(n)
    return seen
