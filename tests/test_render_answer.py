"""The tutor's reply in the terminal: the draft streams, the checked reply stays."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from coursetutor.cli.render import answer as render_answer
from coursetutor.types import (
    Answer,
    Citation,
    DoneEvent,
    Locator,
    MetaEvent,
    SourcesEvent,
    StreamEvent,
    TokenEvent,
)


def _checked_turn() -> list[StreamEvent]:
    cited = Citation(1, "c1", "d", "Lecture", "lecture", Locator(page=2), "text")
    answer = Answer("Bisection halves the bracket [1].", (cited,), "lecture", "concept",
                    "correct", 0.9, "en", removed=("It needs a continuous derivative [1].",),
                    checked=True)
    return [MetaEvent("s", "lecture", "concept", "", "correct", "en"),
            TokenEvent("It needs a continuous derivative [1]. "),
            TokenEvent("Bisection halves the bracket [1]."),
            SourcesEvent(answer.sources), DoneEvent(answer)]


def test_a_pipe_gets_the_checked_reply_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    buffer = io.StringIO()
    monkeypatch.setattr(render_answer, "out", Console(file=buffer, width=200))
    monkeypatch.setattr(render_answer, "console", Console(file=buffer, width=200))
    render_answer.stream_to_terminal(_checked_turn())
    shown = buffer.getvalue()
    assert "continuous derivative" not in shown
    assert "Bisection halves the bracket [1]." in shown
    assert "Checked against the sources: 1 statement removed" in shown


def test_a_terminal_sees_the_draft_stream_then_only_the_checked_reply(
        monkeypatch: pytest.MonkeyPatch) -> None:
    buffer = io.StringIO()
    monkeypatch.setattr(render_answer, "out", Console(file=buffer, width=80, height=24,
                                                      force_terminal=True))
    monkeypatch.setattr(render_answer, "console", Console(file=io.StringIO()))
    render_answer.stream_to_terminal(_checked_turn())
    drawn, erased, after = buffer.getvalue().rpartition("\x1b[2K")
    assert erased and "continuous derivative" in drawn  # streamed, then erased
    assert "continuous derivative" not in after
    assert "Bisection halves the bracket [1]." in after
