"""A document's title: the file's own title, or its name made readable.

The first heading of a file is not its title: notes that open with "Chapter 1: Functions"
would be cited under that heading from every chapter. A PDF's metadata title (when it is a
real one) or the file name is what names the document; headings name its sections.
"""

from __future__ import annotations

import re
from pathlib import Path

# metadata titles that say nothing about the document: tool defaults and file names
_PLACEHOLDER = re.compile(
    r"^(untitled|unknown|title|document|slide ?\d*|presentation\d*|microsoft (word|powerpoint)"
    r" - .*|.*\.(docx?|pptx?|tex|dvi|pdf|odt|key|pages))$", re.IGNORECASE)
_ORDER_PREFIX = re.compile(r"^\d{1,3}[ _.-]+(?=\D)")
_LANGUAGE_SUFFIX = re.compile(r"[ _-]([a-z]{2}(-[A-Za-z]{2,4})?)$")
_LANGUAGE_CODES = frozenset(
    "ar bg cs da de el en es et fa fi fr he hi hr hu id it ja ko lt lv nl no pl pt ro ru sk "
    "sl sr sv th tr uk vi zh".split())


def metadata_title(value: object) -> str | None:
    """The PDF metadata title when it names the document, else None."""
    if not isinstance(value, str):
        return None
    title = " ".join(value.split())
    if len(title) < 3 or len(title) > 200 or _PLACEHOLDER.match(title):
        return None
    return title


def readable_name(name: str) -> str:
    """'05_unimib_analisi-matematica_appunti_it.pdf' -> 'Unimib analisi-matematica appunti'.

    Drops the folder, the extension, an ordering prefix ('05_') and a trailing language code
    ('_it', '_zh-CN'); underscores become spaces (hyphens too when the name has no
    underscores or spaces: 'what-is-transfer-learning').
    """
    stem = Path(name).stem.strip()
    stem = _ORDER_PREFIX.sub("", stem) or stem
    suffix = _LANGUAGE_SUFFIX.search(stem)
    if suffix and suffix.group(1).split("-")[0] in _LANGUAGE_CODES and suffix.start() > 0:
        stem = stem[: suffix.start()]
    separator = "_" if "_" in stem or " " in stem else "-"
    stem = stem.replace(separator, " ")
    stem = " ".join(stem.split()) or Path(name).stem
    return stem[:1].upper() + stem[1:]


def distinct_title(title: str, name: str, taken: set[str]) -> str:
    """`title`, or `title (readable name)` when another document of the course has it."""
    if title not in taken:
        return title
    readable = readable_name(name)
    return title if readable == title else f"{title} ({readable})"
