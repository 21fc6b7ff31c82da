"""After generation: which [n] markers are real, and which sources were actually cited."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..types import Citation, Hit
from .context import Source
from .markers import MARKER as MARKER
from .markers import cited_numbers as cited_numbers
from .markers import content_brackets

SNIPPET_CHARS = 240
_GONE = "\x00"


def strip_invalid(text: str, valid: set[int], content: frozenset[str] = frozenset()) -> str:
    """Remove citation markers that point at no source (the model invented them); brackets
    in `content` are the sources' own words ("[1, 2]", an interval) and stay as they are."""
    def fix(m: re.Match[str]) -> str:
        if m.group(0) in content:
            return m.group(0)
        kept = [p.strip() for p in re.split(r"[,;]", m.group(1)) if int(p) in valid]
        return f"[{', '.join(kept)}]" if kept else _GONE

    # only the spaces around a removed marker are tidied; the model's own text stays as it is
    text = re.sub(rf" *{_GONE} *(?=[.,;:!?]|$)", "", MARKER.sub(fix, text))
    return re.sub(rf" *{_GONE} *", " ", text)


def snippet(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SNIPPET_CHARS else text[: SNIPPET_CHARS - 1].rstrip() + "…"


def section_of(path: tuple[str, ...]) -> str:
    """The section a citation names: the innermost heading of the passage."""
    return path[-1] if path else ""


def to_citation(source: Source) -> Citation:
    chunk = source.hit.chunk
    return Citation(source.number, chunk.id, chunk.document_id, chunk.document_title,
                    chunk.doc_type, source.hit.locator, snippet(source.text),
                    section_of(chunk.section_path), source.hit.tier,
                    source.hit.tier_label)


def hit_citation(number: int, hit: Hit, text: str) -> Citation:
    """Hit `hit` cited as [number], showing `text` (a passage's start, or one line of it)."""
    chunk = hit.chunk
    return Citation(number, chunk.id, chunk.document_id, chunk.document_title, chunk.doc_type,
                    hit.locator, text, section_of(chunk.section_path), hit.tier, hit.tier_label)


def as_citations(hits: Sequence[Hit]) -> tuple[Citation, ...]:
    """Passages shown as they are (no model wrote a reply), numbered in order."""
    return tuple(hit_citation(i + 1, h, snippet(h.chunk.text)) for i, h in enumerate(hits))


def check_citations(text: str, sources: Sequence[Source]) -> tuple[str, tuple[Citation, ...]]:
    """Drop markers to unknown sources; return the text and the cited sources in order."""
    valid = {s.number for s in sources}
    content = content_brackets(s.hit.chunk.text for s in sources)
    clean = strip_invalid(text, valid, content)
    by_number = {s.number: s for s in sources}
    return clean, tuple(to_citation(by_number[n]) for n in cited_numbers(clean, content)
                        if n in by_number)
