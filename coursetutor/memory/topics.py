"""A course's topic list and the topics of a chunk.

The list is made from the material: first the topic each document was given at ingest
(`FileMeta.topic`, the manifest's `topic`), then the chapter and section titles (the first two
levels of the section path, numbering taken off) of teaching documents that were given none.
A teacher's correction of the list is stored (`store.profiles.set_topic_list`) and wins.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..store import Store
from ..store.profiles import TopicSource, check_topics
from ..types import Chunk

__all__ = ["chunk_topics", "course_topics", "material_topics", "title_topic"]

# headings of these documents name tasks ("Exercise 3: How many steps?"), not topics
_TASK_TYPES = frozenset({"exercise", "solution", "exam"})
_NUMBERING = re.compile(
    r"^\s*(?:(?:chapter|chapitre|kapitel|capitolo|cap[ií]tulo|section|§)\s*)?"
    r"(?:\d{1,2}(?:\.\d{1,3})*|[IVXLC]+\.|第[一二三四五六七八九十百0-9]+[章节節])[.):]?\s+", re.I)
_LEVELS = 2  # chapter and section


def title_topic(heading: str) -> str:
    """A heading as a topic name: '2.1 Newton's method' -> "Newton's method"."""
    return " ".join(_NUMBERING.sub("", heading).split()).rstrip(":.").strip()


def _titles(source: TopicSource) -> list[str]:
    paths = [p for p in source.section_paths if p]
    if not paths:
        return []
    # a heading every chunk of the document sits under is the document's title, no topic
    shared = int(all(p[0] == paths[0][0] for p in paths) and any(len(p) > 1 for p in paths))
    return [title_topic(h) for p in paths for h in p[shared:shared + _LEVELS]]


def material_topics(sources: Sequence[TopicSource]) -> list[str]:
    """The topic list the material gives: ingest topics, then chapter and section titles of
    teaching documents without one."""
    named = [s.topic for s in sources if s.topic.strip()]
    titles = [t for s in sources if not s.topic.strip() and s.doc_type not in _TASK_TYPES
              for t in _titles(s)]
    return check_topics(named + titles)


def course_topics(store: Store, tenant: str, course: str) -> list[str]:
    """The course's topic list: the teacher's if they corrected it, else the material's."""
    corrected, sources = store.profiles.topic_material(tenant, course)
    return corrected if corrected is not None else material_topics(sources)


def chunk_topics(chunk: Chunk, topics: Sequence[str]) -> tuple[str, ...]:
    """The topics of `topics` a chunk is about: its document's ingest topic if listed, else
    the titles of its section path that are (spelled as in the list)."""
    listed = {t.casefold(): t for t in topics}
    own = listed.get(" ".join(chunk.topic.split()).casefold())
    if own is not None:
        return (own,)
    found: list[str] = []
    for heading in chunk.section_path:
        name = listed.get(title_topic(heading).casefold())
        if name is not None and name not in found:
            found.append(name)
    return tuple(found)
