"""CLI commands that talk to the tutor: ask, chat, models, policy, check."""

from __future__ import annotations

import json

import click
from rich.markup import escape
from rich.table import Table

from ..config import Settings
from ..errors import CoursetutorError
from ..llm.status import backend_status
from ..tutor import Tutor
from .group import workspace
from .render import answer as render_answer
from .render import out
from .session import continuing, ended

CHAT_HELP = "Type a question; /new starts a new session, /quit (or Ctrl-D) leaves."


def _tutor(ctx: click.Context) -> Tutor:
    ws = workspace(ctx)
    tutor = Tutor(ws)
    ctx.call_on_close(tutor.router.close)
    return tutor


@click.command()
@click.argument("question")
@click.option("--course", required=True)
@click.option("--student", default="cli", show_default=True, help="Student id (memory, ladder).")
@click.option("--session", "session_id", default=None, help="Continue this session.")
@click.option("--level", type=click.IntRange(1, 5), default=3, show_default=True,
              help="The student's level, 1 (beginner) to 5.")
@click.option("--class", "class_id", default=None,
              help="Asked during this class: its passages first, labelled.")
@click.option("--explain", is_flag=True,
              help="Also say why passages moved in the ranking (the student's profile).")
@click.option("--json", "as_json", is_flag=True, help="Print the whole answer as JSON.")
@click.pass_context
def ask(ctx: click.Context, question: str, course: str, student: str, session_id: str | None,
        level: int, class_id: str | None, explain: bool, as_json: bool) -> None:
    """Ask the tutor QUESTION about a course; the answer streams, then its sources."""
    tutor = _tutor(ctx)
    if as_json:
        answer = tutor.ask(question, course, student, session_id, level, class_id)
        click.echo(json.dumps(render_answer.answer_dict(answer), indent=2, ensure_ascii=False))
    else:
        answer = render_answer.stream_to_terminal(tutor.stream(
            question, course, student, session_id, level, class_id=class_id))
        if explain:
            render_answer.print_explain(answer)


@click.command()
@click.option("--course", required=True)
@click.option("--student", default="cli", show_default=True)
@click.option("--level", type=click.IntRange(1, 5), default=3, show_default=True)
@click.option("--class", "class_id", default=None,
              help="Chat during this class: its passages first, labelled.")
@click.pass_context
def chat(ctx: click.Context, course: str, student: str, level: int,
         class_id: str | None) -> None:
    """An interactive session with the tutor (history and the exercise ladder carry over)."""
    tutor = _tutor(ctx)
    tutor.ws.store.get_course(tutor.ws.tenant, course)
    out.print(f"[bold]{course}[/bold] · {CHAT_HELP}")
    last = continuing(tutor, course, student)
    if last is not None:
        out.print(f"[dim]continuing from last session: {escape(last.text)}[/dim]")
    session_id: str | None = None
    while True:
        try:
            question = click.prompt("you", prompt_suffix="> ").strip()
        except (EOFError, click.Abort):
            out.print()
            question = "/quit"
        if question in ("/quit", "/exit", "/new"):
            summary = ended(tutor, course, session_id)  # a session ends with its summary
            if summary is not None:
                out.print(f"[dim]session summary: {escape(summary.text)}[/dim]")
            if question != "/new":
                break
            session_id = None
            out.print("[dim]new session[/dim]")
            continue
        try:
            answer = render_answer.stream_to_terminal(
                tutor.stream(question, course, student, session_id, level,
                             class_id=class_id))
        except CoursetutorError as exc:  # one bad turn does not end the session
            click.echo(f"Error: {exc}", err=True)
            continue
        session_id = answer.session_id


@click.command()
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def models(ctx: click.Context, as_json: bool) -> None:
    """Show the generation backends and whether each is ready."""
    settings: Settings = ctx.obj
    rows = backend_status(settings)
    if as_json:
        click.echo(json.dumps([r.__dict__ for r in rows], indent=2))
        return
    table = Table("backend", "model", "ready", "detail")
    for r in rows:
        name = f"{r.name} (configured)" if r.configured else r.name
        table.add_row(name, r.model, "yes" if r.ready else "no", r.detail)
    out.print(table)


@click.command()
@click.option("--course", required=True)
@click.option("--allow-solutions/--hide-solutions", default=None,
              help="Whether students may see solution documents and full solutions.")
@click.option("--retention-days", type=click.IntRange(0, 36_500), default=None,
              help="Keep turns this many days (0: forever); summaries and profiles stay.")
@click.pass_context
def policy(ctx: click.Context, course: str, allow_solutions: bool | None,
           retention_days: int | None) -> None:
    """Show or set a course's policy on solutions and how long it keeps turns."""
    ws = workspace(ctx)
    if allow_solutions is None:
        info = ws.store.get_course(ws.tenant, course)
    else:
        info = ws.store.set_course_policy(ws.tenant, course, allow_solutions)
    if retention_days is not None:
        ws.store.profiles.set_retention_days(ws.tenant, course, retention_days)
    state = "allowed" if info.allow_solutions else "hidden from students"
    days = ws.store.profiles.retention_days(ws.tenant, course)
    kept = f"; turns kept {days} days" if days else ""
    click.echo(f"{course}: solutions {state}{kept}")


@click.command()
@click.option("--course", required=True)
@click.option("-k", "k", type=click.IntRange(1, 50), default=5, show_default=True,
              help="A section is found when one of its chunks is in the top K.")
@click.option("--sections", "max_sections", type=click.IntRange(1, 1000), default=25,
              show_default=True, help="At most this many sections per document.")
@click.option("--no-answers", is_flag=True,
              help="With a model on: generate and search the questions, do not answer them.")
@click.option("--json", "as_json", is_flag=True, help="Print the whole report as JSON.")
@click.pass_context
def check(ctx: click.Context, course: str, k: int, max_sections: int, no_answers: bool,
          as_json: bool) -> None:
    """Check a course before students arrive: does each section's own question find it, is
    it answered, which pages have no text or look garbled."""
    from ..health import check_course, check_dict
    from .render import check as render_check

    report = check_course(_tutor(ctx), course, k, max_sections, answer=not no_answers)
    if as_json:
        click.echo(json.dumps(check_dict(report), indent=2, ensure_ascii=False))
    else:
        render_check.print_check(report)
