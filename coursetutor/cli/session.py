"""`coursetutor session ...`: a student's sessions with their summaries, and ending one."""

from __future__ import annotations

import json
import time

import click
from rich.table import Table

from ..llm.router import Router
from ..store.summaries import Summary
from ..tutor import Tutor
from ..tutor.remember import close_idle, end_session
from .group import workspace
from .render import out


def _when(stamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp))


def continuing(tutor: Tutor, course: str, student: str) -> Summary | None:
    """The summary a new chat starts from: the student's idle sessions summarized first."""
    ws = tutor.ws
    close_idle(tutor.summarizer, ws.store, ws.tenant, course, student, "",
               ws.settings.session_idle_minutes, [])
    latest = ws.store.summaries.latest(ws.tenant, course, student, 1)
    return latest[0] if latest else None


def ended(tutor: Tutor, course: str, session_id: str | None) -> Summary | None:
    """End a chat's session with its summary (None: no session or no turns)."""
    if session_id is None:
        return None
    return end_session(tutor.summarizer, tutor.ws.store, tutor.ws.tenant, course, session_id,
                       [])


@click.group("session")
def session_group() -> None:
    """A student's sessions and their summaries."""


@session_group.command("list")
@click.option("--course", required=True)
@click.option("--student", default="cli", show_default=True)
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def list_sessions(ctx: click.Context, course: str, student: str, as_json: bool) -> None:
    """The student's sessions in COURSE, newest first, each with its summary."""
    ws = workspace(ctx)
    sessions = ws.store.list_sessions(ws.tenant, course, student)
    summaries = {s.session_id: s for s in ws.store.summaries.for_student(ws.tenant, student,
                                                                         course)
                 if s.kind == "session"}
    if as_json:
        click.echo(json.dumps([{
            "id": s.id, "created": s.created, "updated": s.updated, "ended": s.ended,
            "summary": summaries[s.id].as_dict() if s.id in summaries else None,
        } for s in sessions], indent=2, ensure_ascii=False))
        return
    table = Table("session", "last turn", "ended", "summary")
    for s in sessions:
        found = summaries.get(s.id)
        table.add_row(s.id, _when(s.updated), _when(s.ended) if s.ended else "",
                      found.text if found else "")
    out.print(table)


@session_group.command("end")
@click.argument("session_id")
@click.option("--course", required=True)
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def end(ctx: click.Context, session_id: str, course: str, as_json: bool) -> None:
    """End SESSION_ID and store its summary (written by the model when one is configured)."""
    ws = workspace(ctx)
    router = Router(ws.settings)
    ctx.call_on_close(router.close)
    summary = end_session(router if ws.settings.summary_model else None, ws.store, ws.tenant,
                          course, session_id, [])
    if as_json:
        click.echo(json.dumps(summary.as_dict() if summary else None, indent=2,
                              ensure_ascii=False))
    else:
        out.print(summary.text if summary else "[dim]ended; it had no turns to summarize[/dim]")
