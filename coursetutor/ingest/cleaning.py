"""Text cleaning for extracted pages: headers/footers, hyphenation, NFKC, contents pages."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

_DIGITS = re.compile(r"\d+")
_HYPHEN_BREAK = re.compile(r"(\w)-\n(\w)")
_TOC_LINE = re.compile(r"(\.{3,}|…|\s{2,}|\t)\s*\d+\s*$|^\s*\d+(\.\d+)*\s+.+\s\d+\s*$")
_TOC_TITLE = re.compile(r"^\s*(table of contents|contents|inhaltsverzeichnis|indice|sommario|"
                        r"table des matières|índice|目录|目錄|目次|차례|목차)\s*$", re.IGNORECASE)


# TeX's large delimiters (the cmex10 font) come out of PDFs without a Unicode map as control
# characters at their font positions: "x − \x10 ∇2f(x) \x11−1" is x − (∇²f(x))⁻¹. They are
# read as the delimiters they draw (the whitespace controls 0x09-0x0D stay what they are).
_CMEX = str.maketrans({
    0x00: "(", 0x01: ")", 0x02: "[", 0x03: "]", 0x04: "⌊", 0x05: "⌋", 0x06: "⌈", 0x07: "⌉",
    0x08: "{", 0x0E: "/", 0x0F: "\\",
    0x10: "(", 0x11: ")", 0x12: "(", 0x13: ")", 0x14: "[", 0x15: "]", 0x16: "⌊", 0x17: "⌋",
    0x18: "⌈", 0x19: "⌉", 0x1A: "{", 0x1B: "}", 0x1C: "⟨", 0x1D: "⟩", 0x1E: "/", 0x1F: "\\",
})


def nfkc(text: str) -> str:
    """Unicode NFKC (full-width to half-width, ligatures split), keeping line breaks; TeX
    delimiters extracted as control characters become the brackets they are."""
    text = unicodedata.normalize("NFKC", text).replace("\r\n", "\n").replace("\r", "\n")
    return text.translate(_CMEX)


def join_hyphenated(text: str) -> str:
    """Join words split by a hyphen at a line break ('deriv-\\native' -> 'derivative')."""
    return _HYPHEN_BREAK.sub(r"\1\2", text)


def _shape(line: str) -> str:
    return _DIGITS.sub("#", line.strip().lower())


def repeated_margins(pages: list[str], edge: int = 2, share: float = 0.5) -> set[str]:
    """Line shapes found in the first/last `edge` lines of at least `share` of the pages."""
    if len(pages) < 3:
        return set()
    counts: Counter[str] = Counter()
    for page in pages:
        lines = [ln for ln in page.split("\n") if ln.strip()]
        counts.update({_shape(ln) for ln in lines[:edge] + lines[-edge:]})
    need = max(2, int(share * len(pages) + 0.999))
    return {shape for shape, n in counts.items() if n >= need and shape}


def strip_margins(page: str, shapes: set[str], edge: int = 2) -> str:
    """Drop lines at the top or bottom of `page` whose shape is a repeated margin."""
    lines = page.split("\n")
    kept_idx = [i for i, ln in enumerate(lines) if ln.strip()]
    drop: set[int] = set()
    for i in kept_idx[:edge] + kept_idx[-edge:]:
        if _shape(lines[i]) in shapes:
            drop.add(i)
    return "\n".join(ln for i, ln in enumerate(lines) if i not in drop)


def is_contents_page(page: str) -> bool:
    """True for a table-of-contents page: a contents title or mostly 'title .... 12' lines."""
    lines = [ln for ln in page.split("\n") if ln.strip()]
    if not lines:
        return False
    if any(_TOC_TITLE.match(ln) for ln in lines[:3]):
        return True
    toc = sum(bool(_TOC_LINE.search(ln)) for ln in lines)
    return len(lines) >= 5 and toc / len(lines) >= 0.6


def clean_pages(pages: list[str]) -> list[str]:
    """Apply NFKC, margin removal and hyphen joining to every page."""
    normalized = [nfkc(p) for p in pages]
    shapes = repeated_margins(normalized)
    return [join_hyphenated(strip_margins(p, shapes)).strip() for p in normalized]
