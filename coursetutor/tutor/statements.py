"""Writing under a contract: short statements, each with the evidence sentences it restates.

The model's reply is a JSON object `{"statements": [{"text": ..., "evidence": ["S1"]}]}`
whose schema names only this turn's evidence ids: on llama.cpp the schema is a grammar, so a
statement without its sentence cannot be produced; Ollama (`format`) and OpenAI-compatible
servers (`response_format`) are sent the same schema, and a reply that still does not parse
is asked for once more in plainer words (`parse`, then the retry prompt).

While the reply streams, each statement is passed on as soon as its text is closed
(`StatementStream`), so the student reads the first statement before the last is written.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator, Sequence
from typing import Any

from .wording import points_at

MAX_STATEMENTS = 5
# a JSON escape, or (the empty group) a backslash that starts none: LaTeX's
_ESCAPE = re.compile(r'\\(\\|"|/|u[0-9a-fA-F]{4}|[bfnrt](?![a-zA-Z])|)')


@dataclasses.dataclass(frozen=True)
class Statement:
    """One statement of a reply and the ids of the evidence sentences it restates."""

    text: str
    evidence: tuple[str, ...]
    # the model wrote an evidence id as what its last words point at ("La definizione è
    # descritta in [S1]."): the statement sends to its sentence instead of saying it
    points: bool = False


def schema(ids: Sequence[str], most: int = MAX_STATEMENTS) -> dict[str, Any]:
    """The JSON schema of a reply that may cite only `ids`."""
    return {
        "type": "object",
        "properties": {"statements": {
            "type": "array", "minItems": 1, "maxItems": most,
            "items": {
                "type": "object",
                "properties": {
                    # no length bounds: llama.cpp spells a bound out as that many grammar
                    # rules, which slows every sampled token (max_tokens bounds the reply)
                    "text": {"type": "string"},
                    "evidence": {"type": "array", "minItems": 1, "maxItems": 3,
                                 "items": {"type": "string", "enum": list(ids)}},
                },
                "required": ["text", "evidence"],
            },
        }},
        "required": ["statements"],
    }


def parse(raw: str, ids: Sequence[str]) -> list[Statement] | None:
    """The statements of a reply; None when it is not the contract's JSON. Evidence ids not
    in `ids` are dropped, and so is a statement left with none: it restates nothing."""
    start, end = raw.find("{"), raw.rfind("}")
    try:
        data = json.loads(latex_safe(raw[start:end + 1])) if start >= 0 < end else None
    except json.JSONDecodeError:
        data = None
    items = data.get("statements") if isinstance(data, dict) else None
    if not isinstance(items, list):
        return None
    known, out = set(ids), []
    for item in items[:MAX_STATEMENTS]:
        if not isinstance(item, dict) or not isinstance(item.get("text"), str):
            continue
        cited = item.get("evidence")
        cited = [cited] if isinstance(cited, str) else cited if isinstance(cited, list) else []
        evidence = tuple(dict.fromkeys(str(e).strip().upper() for e in cited
                                       if str(e).strip().upper() in known))
        written = " ".join(item["text"].split())
        text = _bare(written)
        if text and evidence:
            out.append(Statement(text, evidence, points=_points(written)))
    return out


# what the model writes that the reply adds itself: a list number ("1. 区间套…", the reply
# numbers steps), an evidence id in the text ("… 导数为 0. [S2]", the reply cites it as [n])
_ENUMERATED = re.compile(r"^(?:\d{1,2}[.)]\s+)+")
_IDS = re.compile(r"\s*\[\s*S\d{1,2}(?:\s*,\s*S\d{1,2})*\s*\]", re.I)
# a list number inside, copied with a sentence that holds two items ("… we stop. 4. If …")
_ITEM_INSIDE = re.compile(r"(?<=[.;:!?])\s+\d{1,2}[.)]\s+(?=[^\W\d_])")


def _bare(text: str) -> str:
    """A statement's text without the list numbers and evidence ids the model wrote in it."""
    return _IDS.sub("", _ITEM_INSIDE.sub(" ", _ENUMERATED.sub("", text))).strip()


_POINTED = re.compile(r"^(.*?)\s*\[\s*S\d{1,2}(?:\s*,\s*S\d{1,2})*\s*\]\s*[.\u3002]?\s*$", re.I)


def _points(text: str) -> bool:
    """Does the text end on an evidence id that its last word points at ("descritta in
    [S1].", "见 [S2]"), not one that cites what it said ("… è continua in x₀ [S1].")?"""
    found = _POINTED.match(text)
    return found is not None and points_at(found.group(1))


def latex_safe(raw: str) -> str:
    """The reply with each backslash that starts a LaTeX command escaped: a model writing
    `\\frac` or `\\nabla` inside a JSON string writes the escapes `\\f` and `\\n` (a form
    feed, a new line) followed by letters, and `\\Delta` is no JSON at all. A JSON escape
    stays one where no letter follows it (`\\n` at a line's end, `\\"`, `\\u00e8`)."""
    return _ESCAPE.sub(lambda m: m.group(0) if m.group(1) else "\\\\", raw)


class StatementStream:
    """The statements of a streamed JSON reply, each as soon as its object is closed."""

    def __init__(self, ids: Sequence[str]) -> None:
        self.ids = list(ids)
        self.raw = ""
        self._depth = 0
        self._string = False
        self._escaped = False
        self._start = -1

    def feed(self, piece: str) -> Iterator[Statement]:
        """Add a piece of the reply; yield the statements it completed."""
        for ch in piece:
            self.raw += ch
            if self._string:
                if self._escaped:
                    self._escaped = False
                elif ch == "\\":
                    self._escaped = True
                elif ch == '"':
                    self._string = False
                continue
            if ch == '"':
                self._string = True
            elif ch in "{[":
                self._depth += 1
                if ch == "{" and self._depth == 3:  # {"statements": [ {here} ]}
                    self._start = len(self.raw) - 1
            elif ch in "}]":
                if ch == "}" and self._depth == 3 and self._start >= 0:
                    found = parse('{"statements": [' + self.raw[self._start:] + "]}", self.ids)
                    self._start = -1
                    yield from found or ()
                self._depth -= 1
