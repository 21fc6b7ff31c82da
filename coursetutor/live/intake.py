"""Transcript in: JSON events, WebVTT and SubRip fragments, and recorded transcripts.

JSON: one event `{"start", "end", "text", "speaker"?, "final"?}`, a list of them, or
`{"events": [...]}` (also `{"segments": [...]}`, the shape of a recorded transcript), with
seconds since the class started. WebVTT and SubRip cues become `{"start", "end", "text"}`
items, final, their times signed as written (`-00:00:01.000` is -1 s, refused like a negative
JSON `start`). This module only takes a body apart into its items; the API checks every item
with one model (`api/routes_classes.py`), whatever the format it came in.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..errors import CorruptFileError, EmptyDocumentError, InputError
from ..ingest.transcript import load_transcript, parse_timestamp
from ..store.classes import TranscriptEvent

__all__ = ["MAX_EVENTS", "MAX_SECONDS", "MAX_SPEAKER", "MAX_TEXT", "body_items",
           "items_from_cues", "items_from_json", "message_items", "read_recording"]

MAX_EVENTS = 500  # events in one request
MAX_TEXT = 4000  # characters of one event's text
MAX_SPEAKER = 200  # characters of one event's speaker
MAX_SECONDS = 7 * 24 * 3600  # a class lasts at most a week (store.classes.check_event)
JSON_TYPES = ("application/json", "")
VTT_TYPES = ("text/vtt",)
SRT_TYPES = ("application/x-subrip", "text/srt", "application/srt")

# at most 9 digits of hours: int() of thousands of digits is slow, then refused
_STAMP = r"(?<![\d.,:])(?:\d{1,9}:)?\d{1,2}:\d{2}[.,]\d{1,3}(?![\d.,:])"
_TIMING = re.compile(rf"(-?)\s*({_STAMP})\s*-->\s*(-?)\s*({_STAMP})")
# blank lines part cues; only spaces and tabs count as blank, so that no control character
# vanishes as white space before it is checked
_BLANK = re.compile(r"\n[ \t]*\n")
_TAG = re.compile(r"<[^>]+>")


def items_from_json(data: Any) -> list[Any]:
    """The event items of a parsed JSON body (InputError when there are none or too many)."""
    if isinstance(data, dict) and ("events" in data or "segments" in data):
        data = data.get("events", data.get("segments"))
    items = data if isinstance(data, list) else [data]
    if not items:
        raise InputError("no events in the body")
    if len(items) > MAX_EVENTS:
        raise InputError(f"{len(items)} events in one body; at most {MAX_EVENTS}")
    return items


def _seconds(sign: str, stamp: str) -> float:
    return -parse_timestamp(stamp) if sign else parse_timestamp(stamp)


def _cue(block: str) -> dict[str, Any] | None:
    """The item of one cue block (None for a block without times: a header, a NOTE)."""
    lines = [line.strip(" \t") for line in block.strip(" \t\n").split("\n")]
    for i, line in enumerate(lines):
        if "-->" in line:
            m = _TIMING.search(line)
            if m is None:
                raise InputError(f"cannot read the times of {line[:60]!r}")
            return {"start": _seconds(m[1], m[2]), "end": _seconds(m[3], m[4]),
                    "text": _TAG.sub("", " ".join(lines[i + 1:])).strip(" \t")}
    return None


def items_from_cues(text: str, what: str = "WebVTT or SubRip") -> list[dict[str, Any]]:
    """The cues of a WebVTT or SubRip fragment as `{"start", "end", "text"}` items."""
    blocks = _BLANK.split(text.replace("\r\n", "\n").replace("\r", "\n"))
    items = [item for block in blocks if (item := _cue(block)) is not None]
    if not items:
        raise InputError(f"no {what} cues with 'start --> end' times in the body")
    if len(items) > MAX_EVENTS:
        raise InputError(f"{len(items)} cues in one body; at most {MAX_EVENTS}")
    return items


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"the body is not JSON ({exc.msg} at character {exc.pos})") from None
    except ValueError:  # an integer of over 4,300 digits
        raise InputError("the body holds a number too long to read") from None


def body_items(text: str, content_type: str) -> list[Any]:
    """The event items of a request body by its content type: JSON, `text/vtt` or
    `application/x-subrip` (InputError saying what is wrong)."""
    kind = content_type.split(";", 1)[0].strip().lower()
    if kind in VTT_TYPES or kind in SRT_TYPES:
        return items_from_cues(text, "WebVTT" if kind in VTT_TYPES else "SubRip")
    if kind in JSON_TYPES or kind.endswith("+json"):
        return items_from_json(_json(text))
    raise InputError(f"unsupported content type {kind!r}; send application/json, text/vtt or "
                     "application/x-subrip")


def message_items(text: str) -> list[Any]:
    """The event items of a WebSocket message: JSON, else WebVTT or SubRip cues."""
    if text.lstrip().startswith(("{", "[")):
        return items_from_json(_json(text))
    return items_from_cues(text)


def read_recording(path: Path) -> list[TranscriptEvent]:
    """A recorded transcript (.json, .vtt or .srt) as final events in time order."""
    if path.suffix.lower() not in (".json", ".vtt", ".srt"):
        raise InputError(f"{path.name}: a recorded transcript is .json, .vtt or .srt")
    try:
        parsed = load_transcript(path)
    except (CorruptFileError, EmptyDocumentError) as exc:
        raise InputError(str(exc)) from exc
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from exc
    events = [TranscriptEvent(s.locator.start or 0.0, s.locator.end or 0.0,
                              " ".join(s.text.split())) for s in parsed.sections]
    return sorted(events, key=lambda e: (e.start, e.end))
