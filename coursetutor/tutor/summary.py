"""A conversation folded into a few sentences: by the model, or extracted when it cannot.

A summary names the topics, what the student got right, where they were stuck and which
exercise rung they reached. The facts come from the turns themselves (their cited sections,
exercise keys and rungs, and the right or wrong answers recorded for them); the model only
words them, so a summary written without a model says the same things in plainer form.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import Sequence
from typing import Literal

from ..errors import BackendError
from ..llm import GenParams, Message
from ..llm.router import CallRecord, Router
from ..types import Turn
from . import prompts
from .pedagogy import LADDER

By = Literal["model", "extractive"]
RUNGS: tuple[str, ...] = LADDER
# the student saying they do not follow, in the languages the tutor's rules know
_STUCK = re.compile(
    r"\b(stuck|don'?t (get|understand|follow)|confus|lost|no idea|still wrong|doesn'?t work|"
    r"non (ho capito|capisco)|bloccat|verstehe (es )?nicht|komme nicht weiter|je ne comprends "
    r"pas|no entiendo)|不懂|不明白|卡住|모르겠|막혔|わからない", re.IGNORECASE)
_MAX_QUESTIONS = 4


@dataclasses.dataclass(frozen=True)
class Fold:
    """What a summary is made from: the summary so far and the turns to add to it."""

    turns: tuple[Turn, ...]  # oldest first
    previous: str = ""  # the running summary the turns are added to
    right: tuple[str, ...] = ()  # topics answered right in these turns (recorded elsewhere)
    wrong: tuple[str, ...] = ()  # topics answered wrongly, or "topic: misconception"
    max_words: int = 90


@dataclasses.dataclass(frozen=True)
class Digest:
    """A summary and the facts it was written from."""

    text: str
    topics: tuple[str, ...]
    exercise_key: str  # the last exercise the turns worked on
    level: str  # the rung it reached
    by: By


def exercise_name(key: str) -> str:
    """An exercise key as a reader would name it: its innermost heading or item."""
    where = key.split(":", 1)[-1]
    return where.split(" > ")[-1].strip()


def turn_topics(turns: Sequence[Turn], limit: int = 4) -> tuple[str, ...]:
    """The sections the turns' cited sources come from, most cited first."""
    counts: Counter[str] = Counter()
    for turn in turns:
        for name in dict.fromkeys(c.section or c.title for c in turn.sources):
            if name:
                counts[name] += 1
    return tuple(name for name, _ in counts.most_common(limit))


def last_exercise(turns: Sequence[Turn]) -> tuple[str, str]:
    """The key and highest rung of the last exercise the turns worked on."""
    key = next((t.exercise_key for t in reversed(turns) if t.exercise_key), "")
    levels = [t.level for t in turns if t.exercise_key == key and t.level in RUNGS]
    return key, max(levels, key=RUNGS.index) if key and levels else ""


def stuck_on(turns: Sequence[Turn]) -> tuple[str, ...]:
    """Where the student was stuck: exercises they needed several rungs on, and what they
    said they did not follow."""
    found: list[str] = []
    for key, n in Counter(t.exercise_key for t in turns if t.exercise_key).items():
        if n > 1:
            found.append(exercise_name(key))
    for turn in turns:
        if _STUCK.search(turn.question) and not turn.exercise_key:
            found.append(_quoted(turn.question))
    return tuple(dict.fromkeys(found))


def facts(fold: Fold) -> list[str]:
    """The summary's facts as short sentences, most telling first."""
    turns = fold.turns
    topics = turn_topics(turns)
    key, level = last_exercise(turns)
    out: list[str] = []
    if topics:
        out.append("Topics: " + "; ".join(topics) + ".")
    if fold.right:
        out.append("Got right: " + "; ".join(dict.fromkeys(fold.right)) + ".")
    if fold.wrong:
        out.append("Got wrong: " + "; ".join(dict.fromkeys(fold.wrong)) + ".")
    stuck = stuck_on(turns)
    if stuck:
        out.append("Stuck on: " + "; ".join(stuck) + ".")
    if key:
        out.append(f"Exercise: {exercise_name(key)}, reached the {level or 'hint'} rung.")
    asked = [_quoted(t.question) for t in turns if t.grade not in ("", "incorrect")]
    if asked:
        out.append("Asked: " + "; ".join(asked[-_MAX_QUESTIONS:]) + ".")
    return out


def extractive(fold: Fold) -> Digest:
    """The summary made of the facts alone, the earlier summary first, within the words."""
    key, level = last_exercise(fold.turns)
    text = " ".join(facts(fold))
    if fold.previous:
        text = f"Earlier: {fold.previous} Then: {text}" if text else fold.previous
    return Digest(_cut(text, fold.max_words, keep_end=True), turn_topics(fold.turns), key,
                  level, "extractive")


def summarize(router: Router | None, fold: Fold, log: list[CallRecord]) -> Digest:
    """The model's summary of `fold`; the extractive one when there is no model (or None),
    it fails or it says nothing usable."""
    fallback = extractive(fold)
    if router is None or not router.enabled or not fold.turns:
        return fallback
    prompt = prompts.render(
        "summarize", words=fold.max_words, previous=fold.previous or "(none)",
        conversation=_conversation(fold.turns), facts="\n".join(facts(fold)) or "(none)")
    try:
        reply = router.complete("summarize", [Message("user", prompt)],
                                GenParams(temperature=0.0, max_tokens=fold.max_words * 2),
                                log)
    except BackendError:
        return fallback
    text = _cleaned(reply.text)
    if len(text.split()) < 4 or "NOT_COVERED" in text:
        return fallback
    return dataclasses.replace(fallback, text=_cut(text, fold.max_words), by="model")


def _conversation(turns: Sequence[Turn]) -> str:
    lines = []
    for t in turns:
        rung = f" [exercise help, {t.level} rung]" if t.exercise_key and t.level else ""
        lines.append(f"Student: {t.question}\nTutor{rung}: {_cut(t.answer, 50)}")
    return "\n".join(lines)


def _quoted(question: str, words: int = 12) -> str:
    return f'"{_cut(" ".join(question.split()), words)}"'


def _cleaned(text: str) -> str:
    """The model's reply without a heading it put first or markdown it added."""
    text = re.sub(r"^\s*(summary|riassunto|zusammenfassung)\s*:\s*", "", text.strip(),
                  flags=re.IGNORECASE)
    return " ".join(text.replace("**", "").split())


def _cut(text: str, words: int, keep_end: bool = False) -> str:
    """At most `words` words (the last ones with `keep_end`), marked where cut."""
    parts = text.split()
    if len(parts) <= words:
        return " ".join(parts)
    if keep_end:
        return "... " + " ".join(parts[-words:])
    return " ".join(parts[:words]) + " ..."
