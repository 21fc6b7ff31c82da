"""Input validation at the edge: every text a caller sends is checked here before any work.

Text must be valid Unicode (no lone surrogates, which JSON's `\\ud800` escapes can smuggle in
and which no store, tokenizer or log can encode), free of control characters (free text may
hold tab, newline and carriage return), and no longer than its field allows. A value that fails
is refused with 422 and a body naming the field (`fields: [{"field", "reason"}]`), the shape
FastAPI's own validation errors get from `errors.install`.

- Body fields use the typed aliases (`Line`, `Text`, `Id`, ...) in their pydantic models.
- Path and query parameters of every route are checked by `check_params`, an app-wide
  dependency, so a route added later is covered without a line of its own.
- Bodies a route reads itself (transcript events in JSON, WebVTT or SubRip, WebSocket
  messages) are checked by `validated` against a pydantic type built from the same aliases,
  and their text as a whole by `check_body`.
- Form fields of uploads go through `form_text` and `form_int`; file names through
  `file_name`, before they touch the disk.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, TypeVar

from fastapi.exceptions import RequestValidationError
from pydantic import BeforeValidator, TypeAdapter, ValidationError
from pydantic_core import PydanticCustomError
from starlette.requests import HTTPConnection

T = TypeVar("T")

MAX_PATH_PARAM = 512  # ids are at most 128 characters; a course:document ref is longer
MAX_QUERY_PARAM = 4096  # a search query is at most 4,000 characters (the route says so)
MAX_FILE_NAME_BYTES = 150  # well under the 255 bytes a file system allows in one name
TEXT_PARAMS = frozenset({"q"})  # query parameters that are free text (may hold newlines)

_SURROGATE = re.compile("[\ud800-\udfff]")
_CONTROL_IN_TEXT = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")  # keeps \t \n \r
_CONTROL_IN_LINE = re.compile("[\x00-\x1f\x7f-\x9f]")
_UNSAFE_NAME = re.compile(r"[^\w.\- ]+")
_DIGITS = re.compile(r"[0-9]{1,9}")


def refusal(value: str, max_length: int, multiline: bool = False) -> str | None:
    """Why `value` is refused (too long, or not acceptable text), or None."""
    if len(value) > max_length:
        return f"at most {max_length} characters, got {len(value)}"
    return problem(value, multiline)


def problem(value: str, multiline: bool = False) -> str | None:
    """Why `value` is not acceptable text, or None when it is."""
    if _SURROGATE.search(value):
        return "not valid Unicode text (a lone surrogate)"
    bad = (_CONTROL_IN_TEXT if multiline else _CONTROL_IN_LINE).search(value)
    if bad is not None:
        return f"control character U+{ord(bad.group()):04X} is not allowed"
    return None


def refused(reason: str) -> PydanticCustomError:
    """A pydantic error whose message is `reason` alone (a ValueError's would start with
    "Value error, ")."""
    return PydanticCustomError("value_error", "{reason}", {"reason": reason})


def _checker(max_length: int, multiline: bool) -> BeforeValidator:
    """A pydantic validator refusing text longer than `max_length` or not acceptable (a
    tighter `Field(max_length=...)` where the alias is used applies after it). It runs before
    pydantic reads the value as a string, which would refuse a lone surrogate in words of its
    own."""

    def checked(value: Any) -> Any:
        reason = refusal(value, max_length, multiline) if isinstance(value, str) else None
        if reason:
            raise refused(reason)
        return value

    return BeforeValidator(checked)


# one line of text (roles, types, languages); a Field(max_length=...) where used tightens it
Line = Annotated[str, _checker(1000, multiline=False)]
# free text: questions and messages (tab and newlines allowed)
Text = Annotated[str, _checker(100_000, multiline=True)]
# ids of courses, students, sessions and tenants
Id = Annotated[str, _checker(128, multiline=False)]
# titles and labels
Name = Annotated[str, _checker(300, multiline=False)]


def invalid(where: str, field: str, reason: str) -> RequestValidationError:
    """The 422 of a value that fails validation, in FastAPI's own error shape."""
    return RequestValidationError([{"loc": (where, field), "msg": reason,
                                    "type": "value_error"}])


def check(where: str, field: str, value: str, max_length: int,
          multiline: bool = False) -> str:
    """`value`, or a 422 naming `field` when it is too long or not acceptable text."""
    reason = refusal(value, max_length, multiline)
    if reason:
        raise invalid(where, field, reason)
    return value


def validated(adapter: TypeAdapter[T], data: Any, *loc: str | int) -> T:
    """`data` as `adapter` reads it, or a 422 naming each field that fails, under the body
    path `loc` (`validated(EVENTS, items, "events")` names `events.0.start`)."""
    try:
        return adapter.validate_python(data)
    except ValidationError as exc:
        raise RequestValidationError([
            {"loc": ("body", *loc, *err["loc"]), "msg": err["msg"], "type": err["type"]}
            for err in exc.errors(include_url=False, include_input=False,
                                  include_context=False)]) from None


def check_body(raw: bytes) -> str:
    """A body a route reads itself as text: UTF-8 without lone surrogates or control
    characters other than tab, newline and carriage return (422 naming `body` and the line)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise invalid("body", "body", f"not UTF-8 text (byte 0x{raw[exc.start]:02X} at "
                                      f"offset {exc.start})") from None
    return check_text("body", text)


def check_text(field: str, text: str) -> str:
    """`text` (a whole body or WebSocket message), or a 422 naming `field` and the line."""
    reason = problem(text, multiline=True)
    if reason:
        bad = next(n for n, line in enumerate(text.split("\n"), start=1) if problem(line, True))
        raise invalid("body", field, f"line {bad}: {reason}")
    return text


VALIDATION = "validation"  # the type and code of a refusal


def describe(exc: RequestValidationError) -> dict[str, Any]:
    """The `error` object of a refusal, without a request id: type, message and fields."""
    fields = [{"field": ".".join(str(p) for p in err.get("loc", ())[1:]) or "body",
               "reason": err.get("msg", "")} for err in exc.errors()]
    return {"type": VALIDATION, "code": VALIDATION,
            "params": {"fields": ", ".join(f["field"] for f in fields)}, "fields": fields,
            "message": "; ".join(f"{f['field']}: {f['reason']}" for f in fields)}


def check_params(request: HTTPConnection) -> None:
    """Every path and query parameter of a request or WebSocket (an app-wide dependency)."""
    for name, value in request.path_params.items():
        if isinstance(value, str):
            check("path", name, value, MAX_PATH_PARAM)
    for name, value in request.query_params.multi_items():
        check("query", name, value, MAX_QUERY_PARAM, multiline=name in TEXT_PARAMS)


def form_text(form: Mapping[str, Any], field: str, max_length: int, default: str = "") -> str:
    """A text field of a multipart form (a file sent in its place is refused)."""
    value = form.get(field)
    if value is None or value == "":
        return default
    if not isinstance(value, str):
        raise invalid("form", field, "must be text, not a file")
    return check("form", field, value, max_length)


def form_int(form: Mapping[str, Any], field: str, default: int, low: int, high: int) -> int:
    """A whole-number field of a multipart form: ASCII digits only, within [low, high]."""
    raw = form_text(form, field, 32).strip()
    if not raw:
        return default
    if not _DIGITS.fullmatch(raw) or not low <= int(raw) <= high:
        shown = raw if len(raw) <= 12 else raw[:12] + "..."
        raise invalid("form", field, f"must be a whole number {low}-{high}, got {shown!r}")
    return int(raw)


def file_name(raw: str) -> str:
    """A safe name for an uploaded file: its last part, letters, digits, `_ . - ` and spaces
    only, at most MAX_FILE_NAME_BYTES bytes of UTF-8 with its suffix kept ('' if none is
    left)."""
    name = _UNSAFE_NAME.sub("_", Path(raw.replace("\\", "/")).name).strip(" .")
    stem, dot, suffix = name.rpartition(".")
    if not dot or len(suffix) > 16:
        stem, suffix = name, ""
    tail = f".{suffix}" if suffix else ""
    room = MAX_FILE_NAME_BYTES - len(tail.encode())
    short = stem.encode()[:room].decode(errors="ignore").rstrip(" .")
    return f"{short}{tail}" if short else ""
