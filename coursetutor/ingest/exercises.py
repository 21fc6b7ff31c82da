"""JSON exercise sheets and exams: {"title": ..., "items": [{"title": ..., "text": ...}]}."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import CorruptFileError, EmptyDocumentError
from ..types import Locator, Section
from .markdown import read_text, slugify
from .parsed import ParsedDocument
from .transcript import segments_from_json


def _is_segments(data: Any) -> bool:
    items = data.get("segments") if isinstance(data, dict) else data
    return isinstance(items, list) and bool(items) and all(
        isinstance(i, dict) and "start" in i and "end" in i for i in items
    )


def parse_exercises(data: Any, name: str) -> ParsedDocument:
    """Parse an exercise/exam JSON document into one section per item."""
    if isinstance(data, dict):
        title = str(data.get("title") or Path(name).stem)
        items = data.get("items") or data.get("exercises") or data.get("questions")
    else:
        title, items = Path(name).stem, data
    if not isinstance(items, list):
        raise CorruptFileError(f"{name}: expected 'items': a list of {{title, text}}")
    doc = ParsedDocument(title=title, sections=[], kind="prose")
    for n, item in enumerate(items, start=1):
        if not isinstance(item, dict) or not str(item.get("text", "")).strip():
            raise CorruptFileError(f"{name}: item {n} needs a 'text'")
        heading = str(item.get("title") or f"Exercise {n}")
        doc.sections.append(
            Section(text=str(item["text"]).strip(), path=(title, heading),
                    locator=Locator(anchor=slugify(heading)))
        )
    if not doc.sections:
        raise EmptyDocumentError(f"{name}: no exercises", code="no_exercises", file=name)
    return doc


def load_json(path: Path) -> ParsedDocument:
    """A .json file: timed segments or an exercise sheet, by its shape."""
    try:
        data = json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        raise CorruptFileError(f"{path.name}: invalid JSON ({exc.msg})") from exc
    if _is_segments(data):
        return ParsedDocument(title=path.stem, sections=segments_from_json(data, path.name),
                              kind="timed")
    return parse_exercises(data, path.name)
