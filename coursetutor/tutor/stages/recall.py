"""Stage: recall. What the tutor remembers of the student beyond this session's recent
turns (tutor/memory.py): summaries, profile, weak areas, and the last session's turns when
the question goes on from it."""

from __future__ import annotations

import dataclasses

from ...types import Turn
from ..memory import Recall, TurnStart, start_turn
from .opened import Opened
from .tools import Tools


@dataclasses.dataclass(frozen=True)
class Recalled:
    """The opened turn with the student's memory; `history` and `level` as answered."""

    opened: Opened
    memory: Recall
    history: tuple[Turn, ...]  # the last session's bridge turns, then this session's
    level: int


def recall(tools: Tools, o: Opened) -> Recalled:
    memory = start_turn(tools.ws.store, tools.summarizer, TurnStart(
        tools.ws.tenant, o.course, o.student, o.session_id, o.question, o.history, o.level,
        o.fresh, tools.settings.session_idle_minutes), tools.log)
    return Recalled(o, memory, (*memory.bridge, *o.history), memory.level)
