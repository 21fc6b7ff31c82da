"""Markdown and plain-text loader: the heading hierarchy becomes the section path."""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import CorruptFileError, EmptyDocumentError
from ..types import Locator, Section
from .cleaning import join_hyphenated, nfkc
from .parsed import ParsedDocument

_ATX = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


def slugify(text: str) -> str:
    """GitHub-style heading anchor."""
    text = re.sub(r"[^\w\s-]", "", text.strip().lower(), flags=re.UNICODE)
    return re.sub(r"\s+", "-", text)


def read_text(path: Path) -> str:
    """Read a UTF-8 (or UTF-8 with BOM) text file, NFKC-normalized."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CorruptFileError(f"{path.name}: cannot read ({exc.strerror})") from exc
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CorruptFileError(f"{path.name}: not UTF-8 text", code="not_utf8",
                               file=path.name) from exc
    if "\x00" in text:
        raise CorruptFileError(f"{path.name}: binary data in a text file", code="binary_text",
                               file=path.name)
    return nfkc(text)


def parse_markdown(text: str, name: str) -> ParsedDocument:
    """Split Markdown into paragraphs under their heading path; a file with one top-level
    heading is titled by it (one with several is titled by its name: they are chapters)."""
    doc = ParsedDocument(title=Path(name).stem, sections=[], kind="prose")
    trail: list[tuple[int, str]] = []
    para: list[str] = []
    in_fence = False
    # level-1 headings, and whether text came first: one at the top names the file,
    # several are its chapters
    top: list[tuple[str, bool]] = []

    def flush() -> None:
        body = join_hyphenated("\n".join(para)).strip()
        para.clear()
        if body:
            path = tuple(t for _, t in trail)
            anchor = slugify(trail[-1][1]) if trail else None
            doc.sections.append(Section(text=body, path=path, locator=Locator(anchor=anchor)))

    for line in text.split("\n"):
        if _FENCE.match(line):
            in_fence = not in_fence
            para.append(line)
            continue
        m = None if in_fence else _ATX.match(line)
        if m:
            flush()
            level, title = len(m.group(1)), m.group(2).strip()
            if level == 1:
                top.append((title, bool(doc.sections or trail)))
            trail = [(lv, t) for lv, t in trail if lv < level] + [(level, title)]
        elif not line.strip() and not in_fence:
            flush()
        else:
            para.append(line)
    flush()
    if len(top) == 1 and not top[0][1]:
        doc.title = top[0][0]
    if not doc.sections:
        raise EmptyDocumentError(f"{name}: no text", code="no_text", file=name)
    return doc


def load_markdown(path: Path) -> ParsedDocument:
    """Load a .md or .txt file."""
    return parse_markdown(read_text(path), path.name)
