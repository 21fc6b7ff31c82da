"""The sections a course check asks about, and the questions made without a model.

A section is what a student would ask about: a document's section path (chapter > section);
where a document has none, its page; where it has neither (a transcript window), one chunk.
"""

from __future__ import annotations

import dataclasses
import re

from ..store.base import ChunkRow

__all__ = ["Unit", "heading_question", "key_sentence", "repeated_topics", "sample_evenly",
           "topic_of", "units_of"]

# "What is X?" in the languages the tutor replies in; others ask in English
WHAT_IS = {
    "en": "What is {topic}?",
    "it": "Che cos'è {topic}?",
    "de": "Was ist {topic}?",
    "fr": "Qu'est-ce que {topic} ?",
    "es": "¿Qué es {topic}?",
    "pt": "O que é {topic}?",
    "nl": "Wat is {topic}?",
    "zh": "什么是{topic}？",
    "ja": "{topic}とは何ですか？",
    "ko": "{topic}이란 무엇인가요?",
}
MAX_QUESTION_WORDS = 16
MAX_QUESTION_CHARS = 40  # scripts written without spaces
_NUMBERING = re.compile(r"^\s*(?:(?:§\s*)?(?:\d+(?:\.\d+)*\.?|[IVXLC]+\.|[A-Z]\.)\s+"
                        r"|第\s*[一二三四五六七八九十百零〇两\d]+\s*[章节篇]\s*)")
# headings that already ask ("How the method works", "Che cos'è una radice")
ASKING = {
    "en": r"how|why|when|what|which|where|who",
    "it": r"che|come|quando|perch[eé]|quale|quali|cosa|dove",
    "de": r"wie|was|warum|wann|welche[rs]?|wo",
    "fr": r"comment|pourquoi|quand|qu'|quel(le)?s?|o[uù]",
    "es": r"c[oó]mo|qu[eé]|por qu[eé]|cu[aá]ndo|cu[aá]l(es)?|d[oó]nde",
}
_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")  # no words by spaces
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])")


@dataclasses.dataclass(frozen=True)
class Unit:
    """One section of a document: its name, where it starts and its chunks in order."""

    name: str  # "Chapter > Section", or the locator label where there is no section path
    heading: str  # the last part of the section path ("" where there is none)
    locator: str  # where it starts: "p. 3", "01:02-01:30", "#anchor"
    page: int | None
    chunks: tuple[ChunkRow, ...]

    @property
    def text(self) -> str:
        return "\n".join(c.text for c in self.chunks)


def units_of(chunks: list[ChunkRow]) -> list[Unit]:
    """The document's chunks grouped into sections, in document order."""
    groups: dict[tuple[object, ...], list[ChunkRow]] = {}
    for chunk in sorted(chunks, key=lambda c: c.ordinal):
        if chunk.section_path:
            key: tuple[object, ...] = ("path", *chunk.section_path)
        elif chunk.locator.page is not None:
            key = ("page", chunk.locator.page)
        else:
            key = ("chunk", chunk.ordinal)
        groups.setdefault(key, []).append(chunk)
    units = []
    for rows in groups.values():
        first = rows[0]
        label = first.locator.label()
        path = " > ".join(first.section_path)
        units.append(Unit(path or label or f"passage {first.ordinal + 1}",
                          first.section_path[-1] if first.section_path else "", label,
                          first.locator.page, tuple(rows)))
    return units


def sample_evenly(units: list[Unit], limit: int) -> list[Unit]:
    """At most `limit` units spread evenly over the document (all of them when fewer)."""
    if len(units) <= limit:
        return units
    step = len(units) / limit
    return [units[int(i * step)] for i in range(limit)]


def topic_of(heading: str) -> str:
    """A heading without its numbering: '2.1 Newton's method' -> "Newton's method"."""
    return _NUMBERING.sub("", heading).strip().rstrip(":.")


def heading_question(unit: Unit, language: str, repeated: frozenset[str] = frozenset()
                     ) -> str:
    """'What is <heading>?' in the document's language (English where there is no template).

    A heading that says little alone (one word, or one the document uses more than once:
    "Example", "Summary") is told apart by its parent's:
    "What is Example (The secant method)?".
    """
    topic = topic_of(unit.heading)
    if topic.endswith(("?", "？")):  # "Exercise 3: How many steps?" asks itself
        return topic
    code = language.split("-")[0].lower()
    if code in ASKING and re.match(rf"^(?:{ASKING[code]})(?:\b|$)", topic, re.I):
        return f"{topic}?"
    template = WHAT_IS.get(code, WHAT_IS["en"])
    parents = unit.name.split(" > ")[:-1]
    one_word = len(topic.split()) == 1 and not _UNSPACED.search(topic)
    vague = topic in repeated or one_word
    if vague and parents:
        topic = f"{topic} ({topic_of(parents[-1])})"
    return template.format(topic=topic)


def repeated_topics(units: list[Unit]) -> frozenset[str]:
    """Heading topics that more than one section of the document has."""
    topics = [topic_of(u.heading) for u in units if u.heading]
    return frozenset(t for t in topics if topics.count(t) > 1)


def key_sentence(text: str) -> str:
    """The text's longest sentence (the one that says most), cut to MAX_QUESTION_WORDS words,
    or MAX_QUESTION_CHARS characters for text written without spaces."""
    flat = " ".join(text.split())
    sentences = [s.strip() for s in _SENTENCE_END.split(flat) if s.strip()] or [flat]
    sentence = max(sentences, key=lambda s: (len(s.split()), len(s)))
    words = sentence.split()
    if len(words) > 1:
        return " ".join(words[:MAX_QUESTION_WORDS])
    return sentence[:MAX_QUESTION_CHARS]
