"""Transcript in: JSON events, WebVTT and SubRip fragments, and recorded transcripts.

JSON: one event `{"start", "end", "text", "speaker"?, "final"?}`, a list of them, or
`{"events": [...]}` (also `{"segments": [...]}`, the shape of a recorded transcript), with
seconds since the class started. WebVTT and SubRip fragments are read by the transcript
loader's own cue parser; their cues are final.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from ..errors import CorruptFileError, EmptyDocumentError, InputError
from ..ingest.transcript import load_transcript, parse_cues
from ..store.classes import TranscriptEvent, check_event

__all__ = ["MAX_EVENTS", "MAX_TEXT", "events_from_json", "events_from_text", "parse_body",
           "read_recording"]

MAX_EVENTS = 500  # events in one request
MAX_TEXT = 4000  # characters of one event's text
JSON_TYPES = ("application/json", "")
VTT_TYPES = ("text/vtt",)
SRT_TYPES = ("application/x-subrip", "text/srt", "application/srt")


def _number(item: dict[str, Any], field: str, n: int) -> float:
    value = item.get(field)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InputError(f"event {n}: {field!r} must be a number of seconds")
    return float(value)


def _event(item: Any, n: int) -> TranscriptEvent:
    if not isinstance(item, dict):
        raise InputError(f"event {n}: expected an object with start, end and text")
    text, speaker, final = item.get("text"), item.get("speaker", ""), item.get("final", True)
    if not isinstance(text, str):
        raise InputError(f"event {n}: 'text' must be a string")
    if len(text) > MAX_TEXT:
        raise InputError(f"event {n}: 'text' is over {MAX_TEXT} characters")
    if not isinstance(speaker, str) or len(speaker) > 200:
        raise InputError(f"event {n}: 'speaker' must be a string of at most 200 characters")
    if not isinstance(final, bool):
        raise InputError(f"event {n}: 'final' must be true or false")
    event = TranscriptEvent(_number(item, "start", n), _number(item, "end", n),
                            " ".join(text.split()), speaker.strip(), final)
    try:
        return check_event(event)
    except InputError as exc:
        raise InputError(f"event {n}: {exc}") from exc


def events_from_json(data: Any) -> list[TranscriptEvent]:
    """Events from a parsed JSON body (InputError naming the first bad one)."""
    if isinstance(data, dict) and ("events" in data or "segments" in data):
        data = data.get("events", data.get("segments"))
    items = data if isinstance(data, list) else [data]
    if not items:
        raise InputError("no events in the body")
    if len(items) > MAX_EVENTS:
        raise InputError(f"{len(items)} events in one body; at most {MAX_EVENTS}")
    events = [_event(item, n) for n, item in enumerate(items, start=1)]
    return [e for e in events if e.text or not e.final]


def events_from_text(text: str, what: str = "WebVTT or SubRip") -> list[TranscriptEvent]:
    """The cues of a WebVTT or SubRip fragment as final events."""
    events = [TranscriptEvent(c.locator.start or 0.0, c.locator.end or 0.0,
                              " ".join(c.text.split())) for c in parse_cues(text)]
    if not events:
        raise InputError(f"no {what} cues with 'start --> end' times in the body")
    if len(events) > MAX_EVENTS:
        raise InputError(f"{len(events)} cues in one body; at most {MAX_EVENTS}")
    return [check_event(e) for e in events]


def parse_body(body: bytes, content_type: str) -> list[TranscriptEvent]:
    """The events of a request body by its content type: JSON, `text/vtt` or
    `application/x-subrip` (InputError saying what is wrong)."""
    kind = content_type.split(";", 1)[0].strip().lower()
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError("the body is not UTF-8 text") from exc
    if kind in VTT_TYPES or kind in SRT_TYPES:
        return events_from_text(text, "WebVTT" if kind in VTT_TYPES else "SubRip")
    if kind in JSON_TYPES or kind.endswith("+json"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"the body is not JSON ({exc.msg} at character {exc.pos})") from exc
        return events_from_json(data)
    raise InputError(f"unsupported content type {kind!r}; send application/json, text/vtt or "
                     "application/x-subrip")


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
