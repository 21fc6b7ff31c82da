"""Prompts are files under tutor/prompts/, one per purpose, filled by name."""

from __future__ import annotations

import functools
import re
from importlib import resources

_PLACEHOLDER = re.compile(r"\{(\w+)\}")


@functools.cache
def load(name: str) -> str:
    """The text of prompt file `name` (without .txt)."""
    return (resources.files("coursetutor.tutor") / "prompts" / f"{name}.txt").read_text(
        encoding="utf-8"
    ).strip()


def render(name: str, **values: object) -> str:
    """Prompt `name` with its {placeholders} filled."""
    missing = set(_PLACEHOLDER.findall(load(name))) - set(values)

    def fill(m: re.Match[str]) -> str:
        key = m.group(1)
        return str(values[key]) if key in values else m.group(0)

    if missing:
        raise KeyError(f"prompt {name!r} needs {', '.join(sorted(missing))}")
    # one pass: text inserted for a placeholder is never scanned for more placeholders
    return _PLACEHOLDER.sub(fill, load(name))
