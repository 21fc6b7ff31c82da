"""Where a class stands: the slide on screen, what was said in the last minutes, its topics.

The summary is extractive (no model): the sentences of the last `WINDOW_SECONDS` of transcript
that share the most words with the rest of that window, in the order they were said.
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections import Counter
from collections.abc import Callable, Sequence

from ..retrieval.class_rerank import Focus
from ..retrieval.language import STOPWORDS
from ..retrieval.tokenize import tokenize
from ..store import Store
from ..types import Locator

WINDOW_SECONDS = 15 * 60.0
SUMMARY_SENTENCES = 3
SUMMARY_CHARS = 400
TOPICS = 5
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+")
_SLIDE = re.compile(r"^slide-(\d+)$")


@dataclasses.dataclass(frozen=True)
class Spoken:
    """One piece of a class's transcript: what was said, when, over which slide."""

    text: str
    start: float
    end: float
    page: int | None = None


@dataclasses.dataclass(frozen=True)
class ClassProgress:
    """The state of a class at `now` (seconds since it started)."""

    class_id: str
    now: float
    slide_page: int | None
    slide_title: str
    summary: str
    topics: tuple[str, ...]
    slides_document: str = ""
    started: float = 0.0  # when the class started (epoch seconds), for "today's class, 10:23"
    document: str = ""  # its transcript document when not `class-<id>` (a recorded lecture)

    @property
    def document_id(self) -> str:
        """The class's transcript document."""
        return self.document or class_document(self.class_id)

    def focus(self) -> Focus:
        """What the progress-aware rerank needs of it."""
        return Focus(self.document_id, self.now, self.slide_page, self.slides_document)

    def line(self) -> str:
        """'now: slide 12 — Kernel functions' (empty before any slide is known)."""
        if self.slide_page is None:
            return ""
        title = f" — {self.slide_title}" if self.slide_title else ""
        return f"now: slide {self.slide_page}{title}"


def class_document(class_id: str) -> str:
    """The document id a live class's transcript is indexed under."""
    return f"class-{class_id}"


def spoken_of(text: str, locator: Locator) -> Spoken | None:
    """A transcript chunk as Spoken (None without times)."""
    if locator.start is None:
        return None
    match = _SLIDE.match(locator.anchor or "")
    end = locator.end if locator.end is not None else locator.start
    return Spoken(text, locator.start, end, int(match.group(1)) if match else None)


def recent(spoken: Sequence[Spoken], now: float,
           window: float = WINDOW_SECONDS) -> list[Spoken]:
    """What was said in the `window` seconds before `now`, in order."""
    return sorted((s for s in spoken if s.start < now and s.end >= now - window),
                  key=lambda s: s.start)


def summarize(texts: Sequence[str], language: str = "en", sentences: int = SUMMARY_SENTENCES,
              chars: int = SUMMARY_CHARS) -> str:
    """The `sentences` most central sentences of `texts` (at most `chars`), in order."""
    pieces = [s.strip() for t in texts for s in _SENTENCE.split(t) if len(s.strip()) > 20]
    if not pieces:
        return ""
    stop = STOPWORDS.get(language, frozenset())
    words = [{w for w in tokenize(p, language) if w not in stop and len(w) > 2} for p in pieces]
    df = Counter(w for ws in words for w in ws)
    score = [sum(df[w] - 1 for w in ws) / (1 + len(ws)) ** 0.5 for ws in words]
    order = sorted(range(len(pieces)), key=lambda i: (-score[i], -i))
    chosen: list[int] = []
    used = 0
    for i in order:
        if len(chosen) == sentences:
            break
        if used + len(pieces[i]) > chars and chosen:
            continue
        chosen.append(i)
        used += len(pieces[i])
    text = " ".join(pieces[i] for i in sorted(chosen))
    return text if len(text) <= chars else text[: chars - 1].rsplit(" ", 1)[0] + "…"


def topics_of(spoken: Sequence[Spoken], slide_titles: dict[int, str],
              limit: int = TOPICS) -> tuple[str, ...]:
    """The titles of the slides spoken over, most recent first, without repeats."""
    seen: list[str] = []
    for s in reversed(spoken):
        title = slide_titles.get(s.page) if s.page is not None else None
        if title and title not in seen:
            seen.append(title)
    return tuple(seen[:limit])


def build_progress(class_id: str, now: float, spoken: Sequence[Spoken],
                   slide_page: int | None = None, slide_titles: dict[int, str] | None = None,
                   language: str = "en", slides_document: str = "",
                   started: float = 0.0, document: str = "") -> ClassProgress:
    """The progress state from the transcript so far (pure: the store reads are the caller's).

    Without a slide set by the teacher or the tracker, the page is the last one spoken over.
    """
    titles = slide_titles or {}
    window = recent(spoken, now)
    if slide_page is None:
        slide_page = next((s.page for s in reversed(window) if s.page is not None), None)
    return ClassProgress(
        class_id, now, slide_page, titles.get(slide_page, "") if slide_page else "",
        summarize([s.text for s in window], language), topics_of(window, titles),
        slides_document, started, document)


def slide_titles(store: Store, tenant: str, course: str, document_id: str) -> dict[int, str]:
    """Each page of a slide deck and its title (its section, else its first line)."""
    titles: dict[int, str] = {}
    for row in store.export_chunks(tenant, course, document_id):
        page = row.locator.page
        if page is None or page in titles:
            continue
        first = next((line.strip() for line in row.text.splitlines() if line.strip()), "")
        titles[page] = row.section_path[-1] if row.section_path else first[:80]
    return titles


def class_progress(store: Store, tenant: str, course: str, class_id: str,
                   clock: Callable[[], float] = time.time) -> ClassProgress:
    """The progress of a class of the course (NotFoundError outside its tenant and course).

    "Now" is the class's time on the clock (its end once it has ended), or the end of the
    last thing said when a replayed transcript runs ahead of the clock.
    """
    live = store.classes.get_class(tenant, course, class_id)
    events = store.classes.list_events(tenant, course, class_id)
    spoken = [Spoken(e.text, e.start, e.end, e.page) for e in events if e.text.strip()]
    now = max((live.ended or clock()) - live.started, max((s.end for s in spoken), default=0))
    deck = live.slides_document_id or ""
    titles = slide_titles(store, tenant, course, deck) if deck else {}
    return build_progress(class_id, now, spoken, live.slide_page, titles,
                          store.course_language(tenant, course), deck, live.started)
