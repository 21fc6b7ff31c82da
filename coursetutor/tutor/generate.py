"""Streaming the answer: hold back a NOT_COVERED reply, note an interrupted stream."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator, Sequence

from ..errors import BackendTimeoutError, IncompleteAnswerError
from ..llm import GenParams, Message
from ..llm.router import CallRecord, Router
from .tidy import ENDS, looping, settled, stuttering

NOT_COVERED = "NOT_COVERED"


@dataclasses.dataclass
class Draft:
    """What the model said so far, and how the stream ended."""

    text: str = ""
    complete: bool = True
    declined: bool = False  # the model answered NOT_COVERED
    first_token_ms: float | None = None
    late: bool = False  # stopped at the turn's deadline


def stream_answer(router: Router, messages: Sequence[Message], params: GenParams,
                  log: list[CallRecord], draft: Draft, started: float,
                  emit: bool = True, deadline: float | None = None,
                  enough: Callable[[str], bool] | None = None) -> Iterator[str]:
    """Yield text pieces as they come (none when `emit` is False); fill `draft`. Past
    `deadline` (a `time.perf_counter()` instant) the model is stopped and the draft is
    incomplete. `enough`: the model is stopped, the draft whole, once it holds all that
    will be shown of it (asked of what is written up to its last whole word)."""
    held = ""
    words = ""  # the draft up to its last whole word, as `enough` last read it
    deltas = router.stream("answer", messages, params, log)
    try:
        for delta in deltas:
            if not delta.text:
                continue
            if draft.first_token_ms is None:
                draft.first_token_ms = (time.perf_counter() - started) * 1000
            draft.text += delta.text
            # one sentence over and over (checked as one ends), or one phrase: the rest would
            # be the same
            if (any(c in ENDS for c in delta.text) and looping(draft.text)) or stuttering(
                    draft.text):
                deltas.close()  # the model stops now (and frees itself for the next call)
                break
            if enough is not None and (whole := settled(draft.text)) != words:
                words = whole
                if enough(whole):  # the rest would not be shown: a rung's first sentences
                    deltas.close()
                    draft.text = whole
                    break
            if deadline is not None and time.perf_counter() >= deadline:
                deltas.close()
                draft.complete = False
                draft.late = True
            if not draft.text.lstrip().startswith(NOT_COVERED[: len(draft.text.lstrip())]):
                piece, held = held + delta.text, ""
                if emit:
                    yield piece
            elif NOT_COVERED in draft.text:
                draft.declined = True
            else:
                held += delta.text
            if draft.late:
                break
    except (IncompleteAnswerError, BackendTimeoutError) as exc:
        if isinstance(exc, BackendTimeoutError) and not draft.text:
            raise
        draft.complete = False
    if held and not draft.declined and emit:
        yield held
    stripped = draft.text.strip()
    # a short reply that says NOT_COVERED anywhere is a refusal, whatever surrounds it
    draft.declined = draft.declined or stripped.startswith(NOT_COVERED) or (
        NOT_COVERED in stripped and len(stripped) < 200
    )
