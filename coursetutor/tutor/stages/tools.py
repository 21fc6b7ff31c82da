"""What every stage of a turn works with: the workspace, the model router, the turn's log
of model calls and its answer-reuse stage."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from ...config import Settings, summaries_by_model
from ...llm.router import CallRecord, Router
from ...memory.topics import course_topics
from ...workspace import Workspace
from ..reuse import AnswerReuse


@dataclasses.dataclass(frozen=True)
class Tools:
    """The services of one turn (the log is the turn's own, filled as it goes)."""

    ws: Workspace
    router: Router
    log: list[CallRecord]
    reuse: AnswerReuse
    course: str
    _topics: list[list[str]] = dataclasses.field(default_factory=list)

    def topics(self) -> Sequence[str]:
        """The course's topic list, read on first use and once per turn."""
        if not self._topics:
            self._topics.append(course_topics(self.ws.store, self.ws.tenant, self.course))
        return self._topics[0]

    @property
    def settings(self) -> Settings:
        return self.ws.settings

    @property
    def summarizer(self) -> Router | None:
        """The router that writes summaries; None: they are extracted from the turns."""
        return self.router if summaries_by_model(self.settings) else None
