"""A short or referring question asked during a class, expanded with the class's progress.

"and the other one?" or "why does that diverge?" say little a search can use; the slide on
screen and what was said last do. A template, no model call:

    "<question> <slide title> <topics> <the summary's key words>"

A question that stands on its own is searched as it is.
"""

from __future__ import annotations

import re
from collections import Counter

from ..retrieval.language import STOPWORDS
from ..retrieval.tokenize import tokenize
from .standing import ClassProgress

SHORT_WORDS = 1  # a one-word question ("kernels?") is about what is on screen
KEY_WORDS = 8  # words of the summary added to a referring question
# a question that points back at what was said: "and the other one?", "why does that
# diverge?", "what did he just say?" (a pronoun as the subject, a leading "and", "just said")
_REFERRING = {
    "en": r"^(and|but|so)\b|\b(the other( one)?|that one|this one|the (two|three|last|first|"
          r"second|previous|same) (ones?|examples?|methods?|ways?)|(just|earlier|before) "
          r"(say|said|show|showed|mention|mentioned|explain|explained)|(he|she|you) (said|"
          r"showed|mentioned|meant))\b|^(why|how|what|when|where|is|does|do|did|can)\s+"
          r"(\w+\s+)?(that|this|it|they|those|these)\b",
    "it": r"^(e|ma)\b|\b(l'altr[oa]|quell[oa] (di )?prima|appena (detto|mostrato)|ha (detto|"
          r"mostrato))\b|^(perch[eé]|come|cosa|che cosa)\s+(\w+\s+)?(quello|quella|questo|"
          r"questa)\b",
    "de": r"^(und|aber)\b|\b(der|die|das) andere\b|\b(gerade|eben) (gesagt|gezeigt)\b|"
          r"^(warum|wie|was)\s+(\w+\s+)?(das|dies|es)\b",
}


def content_words(text: str, language: str) -> list[str]:
    """The words of `text` that are not stop words or question words."""
    stop = STOPWORDS.get(language, frozenset())
    return [w for w in re.findall(r"\w+", text.lower())
            if w not in stop and w not in _ASKING and len(w) > 1]


_ASKING = frozenset("what which who how why when where does do did is are can could would "
                    "should explain tell please mean means".split())


def is_referring(question: str, language: str = "en") -> bool:
    """One word, or pointing back at something said before ("that", "the other one").

    Short questions that name their subject ("how to create titles?") are left alone: on the
    live TutorialVQA (train split) expanding them lost 2 points of hit@1.
    """
    if len(content_words(question, language)) <= SHORT_WORDS:
        return True
    pattern = _REFERRING.get(language)
    return bool(pattern and re.search(pattern, question.strip().lower()))


def key_words(text: str, language: str, limit: int = KEY_WORDS) -> list[str]:
    """The most repeated content words of `text`, in first-seen order (stems decide repeats)."""
    words = content_words(text, language)
    stems = {w: (tokenize(w, language) or [w])[0] for w in words}
    counts = Counter(stems[w] for w in words)
    best: dict[str, str] = {}
    for w in words:
        best.setdefault(stems[w], w)
    ranked = sorted(best, key=lambda s: -counts[s])[:limit]
    return [best[s] for s in best if s in ranked]


def with_progress(question: str, progress: ClassProgress | None, language: str = "en",
                  query: str | None = None) -> str:
    """The search query (`query`, else the question) expanded with the class's progress when
    the question needs it, else unchanged."""
    query = query or question
    if progress is None or not is_referring(question, language):
        return query
    asked = set(content_words(query, language))
    parts = [progress.slide_title, *progress.topics[:2]]
    extra = [w for w in key_words(progress.summary, language) if w not in asked]
    context = " ".join(p for p in [*parts, " ".join(extra)] if p).strip()
    return f"{query} {context}" if context else query
