"""Rendering tutor turns in the terminal and as JSON."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from rich.console import Console, ConsoleOptions, RenderResult
from rich.live import Live
from rich.markup import escape
from rich.segment import Segment
from rich.text import Text

from ...ingest.tex_unicode import to_unicode
from ...types import Answer, Citation, DoneEvent, MetaEvent, StreamEvent, TokenEvent
from . import console, out


def citation_dict(c: Citation) -> dict[str, Any]:
    loc = {k: v for k, v in dataclasses.asdict(c.locator).items() if v is not None}
    return {"number": c.number, "chunk_id": c.chunk_id, "document_id": c.document_id,
            "title": c.title, "type": c.doc_type, "locator": loc, "label": c.label(),
            "snippet": c.snippet, "tier": c.tier, "tier_label": c.tier_label}


def answer_dict(a: Answer) -> dict[str, Any]:
    data = dataclasses.asdict(a)
    data["sources"] = [citation_dict(c) for c in a.sources]
    data["calls"] = list(a.calls)
    return data


class _Draft:
    """The reply as it streams, before its check: dim, and only its last lines (a live
    region taller than the screen cannot be redrawn)."""

    def __init__(self) -> None:
        self.text = ""

    def __rich_console__(self, con: Console, options: ConsoleOptions) -> RenderResult:
        lines = con.render_lines(Text(to_unicode(self.text), style="dim"), options, pad=False)
        for line in lines[-max(1, con.height - 4):]:
            yield from line
            yield Segment.line()


def stream_to_terminal(events: Iterable[StreamEvent], show_meta: bool = True) -> Answer:
    """The reply as it streams (in a terminal, dim, in a region it then replaces), then the
    reply as checked against its sources, the sources and a one-line summary. What the check
    took out is never left on the screen, and a pipe gets the checked reply alone."""
    answer: Answer | None = None
    draft = _Draft()
    live: Live | None = None
    try:
        for event in events:
            if isinstance(event, MetaEvent) and show_meta:
                level = f", {event.level}" if event.level else ""
                console.print(f"[dim]{event.category} / {event.intent}{level} · evidence "
                              f"{event.grade or '-'}[/dim]")
            elif isinstance(event, TokenEvent):
                draft.text += event.text
                if live is None and out.is_terminal:
                    live = Live(draft, console=out, transient=True, refresh_per_second=8)
                    live.start()
            elif isinstance(event, DoneEvent):
                answer = event.answer
    finally:
        if live is not None:
            live.stop()
    assert answer is not None
    # formulas as a person reads them (`∇²f(x)⁻¹`, not `\nabla^2 f(x)^{-1}`); --json keeps LaTeX
    out.print(to_unicode(answer.text), markup=False, highlight=False, soft_wrap=True)
    if answer.removed:
        print_checked(answer)
    print_sources(answer)
    return answer


def print_checked(a: Answer) -> None:
    """What the answer check took out of the reply shown above."""
    n = len(a.removed)
    console.print(f"\n[dim]Checked against the sources: {n} statement{'s' if n != 1 else ''} "
                  f"removed, the course material does not support {'them' if n != 1 else 'it'}"
                  ".[/dim]")


def print_explain(a: Answer) -> None:
    """Why the profile rerank moved passages (`ask --explain`), by source number when cited."""
    numbers = {c.chunk_id: c.number for c in a.sources}
    shown = {cid: n + 1 for n, cid in enumerate(a.context)}
    if not a.explain:
        console.print("[dim]No passage was moved by the student's profile.[/dim]")
        return
    out.print("\n[bold]Ranking[/bold]")
    for chunk_id, lines in a.explain:
        where = (f"[{numbers[chunk_id]}]" if chunk_id in numbers else
                 f"source {shown[chunk_id]}" if chunk_id in shown else chunk_id[:12])
        out.print(f"  {escape(where)}: {escape('; '.join(lines))}", highlight=False)


def print_sources(a: Answer) -> None:
    if a.sources:
        out.print("\n[bold]Sources[/bold]")
        for c in a.sources:
            during = f" [dim]{escape(c.tier_label)}[/dim]" if c.tier_label else ""
            out.print(f"  \\[{c.number}] [cyan]{escape(c.label())}[/cyan] ({c.doc_type}){during}")
    if not a.complete:
        console.print("[yellow]The answer is incomplete: the model stopped mid-way.[/yellow]")
    stages = " · ".join(f"{k} {v / 1000:.1f}s" for k, v in a.timings.items() if v >= 1)
    cost = f" · cost {a.cost:.5f}" if a.cost else ""
    console.print(f"[dim]{a.prompt_tokens}+{a.completion_tokens} tokens{cost}"
                  f"{' · ' + stages if stages else ''}[/dim]")
