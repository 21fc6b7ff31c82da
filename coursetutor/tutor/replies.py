"""Canned replies in the student's language (English when a language has none)."""

from __future__ import annotations

import functools
import tomllib
from importlib import resources

from ..retrieval.language import LANGUAGE_NAMES


@functools.cache
def _table() -> dict[str, dict[str, str]]:
    raw = (resources.files("coursetutor.tutor") / "replies.toml").read_text(encoding="utf-8")
    return tomllib.loads(raw)


def reply(key: str, language: str, **values: str) -> str:
    """The canned reply `key` in `language`, with {placeholders} filled."""
    table = _table()
    text = table.get(language, table["en"]).get(key) or table["en"][key]
    for name, value in values.items():
        text = text.replace("{" + name + "}", value)
    return text


def language_name(code: str) -> str:
    """'it' -> 'Italian' (the code itself when unknown)."""
    return LANGUAGE_NAMES.get(code, code)
