"""`coursetutor demo` and the sample course the project ships."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import click

from ..ingest import load_manifest
from ..workspace import Workspace
from . import render
from .group import workspace

SAMPLE_COURSE = "numerical-methods-101"
SAMPLE_QUESTIONS = (
    "How does the bisection method work?",
    "What is the order of convergence of the secant method?",
    "When does Newton's method fail?",
    "Come funziona il metodo di bisezione?",
)


DEMO_ASKS = (SAMPLE_QUESTIONS[0], SAMPLE_QUESTIONS[3])


def load_sample_course(ws: Workspace) -> None:
    """Ingest the bundled sample course with a progress display and its report."""
    folder = resources.files("coursetutor") / "sample_course"
    with resources.as_file(folder) as path:
        m = load_manifest(Path(path) / "course.toml")
        ws.create_course(SAMPLE_COURSE, m.title, m.language)
        report = render.ingest_with_progress(ws, SAMPLE_COURSE, m.files)
        render.print_report(report)


@click.command()
@click.pass_context
def demo(ctx: click.Context) -> None:
    """Ingest the bundled sample course, show what search finds and ask the tutor."""
    from ..tutor import Tutor
    from .render import answer as render_answer

    ws = workspace(ctx)
    load_sample_course(ws)
    render.print_hits(SAMPLE_QUESTIONS[2], ws.search(SAMPLE_QUESTIONS[2], SAMPLE_COURSE, k=3))
    tutor = Tutor(ws)
    ctx.call_on_close(tutor.router.close)
    for question in DEMO_ASKS:
        render.out.print(f"\n[bold]tutor ? {question}[/bold]")
        render_answer.stream_to_terminal(tutor.stream(question, SAMPLE_COURSE, "demo"))
    render.out.print("\nServe it to students with [bold]coursetutor serve[/bold] "
                     "(student page, teacher page and API on http://127.0.0.1:8000).")
