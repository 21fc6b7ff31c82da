"""Rendering tutor turns in the terminal and as JSON."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from rich.markup import escape

from .render import console, out
from .types import Answer, Citation, DoneEvent, MetaEvent, StreamEvent, TokenEvent


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


def stream_to_terminal(events: Iterable[StreamEvent], show_meta: bool = True) -> Answer:
    """Print tokens as they arrive, then the sources and a one-line summary."""
    answer: Answer | None = None
    streamed: list[str] = []
    for event in events:
        if isinstance(event, MetaEvent) and show_meta:
            level = f", {event.level}" if event.level else ""
            console.print(f"[dim]{event.category} / {event.intent}{level} · evidence "
                          f"{event.grade or '-'}[/dim]")
        elif isinstance(event, TokenEvent):
            out.print(event.text, end="", markup=False, highlight=False, soft_wrap=True)
            streamed.append(event.text)
        elif isinstance(event, DoneEvent):
            answer = event.answer
    out.print()
    assert answer is not None
    if answer.removed or "".join(streamed).strip() != answer.text.strip():
        print_checked(answer)
    print_sources(answer)
    return answer


def print_checked(a: Answer) -> None:
    """The answer as checked, when the check changed what streamed."""
    n = len(a.removed)
    why = (f"{n} statement{'s' if n != 1 else ''} removed: the course material does not "
           "support {}".format("them" if n != 1 else "it")) if n else "answer revised"
    console.print(f"\n[dim]Checked against the sources ({why}):[/dim]")
    out.print(a.text, markup=False, highlight=False, soft_wrap=True)


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
