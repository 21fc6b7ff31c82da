"""Timed transcripts: SubRip (.srt), WebVTT (.vtt) and JSON segments [{start, end, text}]."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..errors import CorruptFileError, EmptyDocumentError
from ..types import Locator, Section
from .markdown import read_text
from .parsed import ParsedDocument

_TIME = re.compile(r"(?:(\d+):)?(\d{1,2}):(\d{2})[.,](\d{1,3})")
_ARROW = re.compile(rf"({_TIME.pattern})\s*-->\s*({_TIME.pattern})")
_TAG = re.compile(r"<[^>]+>")


def parse_timestamp(value: str) -> float:
    """'01:02:03,450' or '02:03.450' -> seconds."""
    m = _TIME.fullmatch(value.strip())
    if not m:
        raise ValueError(f"bad timestamp {value!r}")
    h, mnt, s, frac = m.groups()
    return int(h or 0) * 3600 + int(mnt) * 60 + int(s) + int(frac.ljust(3, "0")) / 1000


def parse_cues(text: str) -> list[Section]:
    """Cues of an SRT or WebVTT file as timed sections (markup tags removed)."""
    cues: list[Section] = []
    for block in re.split(r"\n\s*\n", text.replace("\r", "")):
        lines = [ln.strip() for ln in block.strip().split("\n")]
        for i, line in enumerate(lines):
            m = _ARROW.search(line)
            if m:
                start = parse_timestamp(m.group(1))
                end = parse_timestamp(m.group(6))
                body = _TAG.sub("", " ".join(lines[i + 1 :])).strip()
                if body and end >= start:
                    cues.append(Section(text=body, locator=Locator(start=start, end=end)))
                break
    return cues


def segments_from_json(data: Any, name: str) -> list[Section]:
    """[{start, end, text}] (seconds) -> timed sections."""
    items = data.get("segments") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise CorruptFileError(f"{name}: expected a list of {{start, end, text}} segments")
    cues: list[Section] = []
    for n, item in enumerate(items, start=1):
        try:
            start, end, body = float(item["start"]), float(item["end"]), str(item["text"])
        except (KeyError, TypeError, ValueError) as exc:
            raise CorruptFileError(f"{name}: segment {n} needs numeric start/end and text") from exc
        if end < start:
            raise CorruptFileError(f"{name}: segment {n} ends before it starts")
        if body.strip():
            cues.append(Section(text=body.strip(), locator=Locator(start=start, end=end)))
    return cues


def load_transcript(path: Path) -> ParsedDocument:
    """Load .srt, .vtt or a JSON segment list."""
    text = read_text(path)
    if path.suffix.lower() == ".json":
        try:
            cues = segments_from_json(json.loads(text), path.name)
        except json.JSONDecodeError as exc:
            raise CorruptFileError(f"{path.name}: invalid JSON ({exc.msg})") from exc
    else:
        cues = parse_cues(text)
    if not cues:
        raise EmptyDocumentError(f"{path.name}: no timed cues found", code="no_timed_cues",
                                 file=path.name)
    return ParsedDocument(title=path.stem, sections=cues, kind="timed")
