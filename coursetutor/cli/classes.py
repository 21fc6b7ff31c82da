"""`coursetutor class`: run a live class from the command line and replay recorded lectures."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from ..config import Settings
from ..errors import InputError
from ..live.intake import read_recording
from ..live.replay import replay
from ..live.session import ClassStatus, LiveClasses
from ..store.classes import LiveClass
from ..store.redis import connect
from ..workspace import Workspace


@contextlib.contextmanager
def _live(ctx: click.Context) -> Iterator[LiveClasses]:
    settings: Settings = ctx.obj
    ws = ctx.with_resource(Workspace(settings))
    live = LiveClasses(ws, connect(settings) if settings.redis else None)
    try:
        yield live
    finally:
        live.close()


def _class_id(live: LiveClasses, tenant: str, course: str, class_id: str | None) -> str:
    return class_id or live.current(tenant, course).id


def _when(epoch: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(epoch)) if epoch else "-"


def _line(c: LiveClass) -> str:
    slide = f"slide {c.slide_page} ({c.slide_source})" if c.slide_page else "slide unknown"
    state = "running" if c.running else f"ended {_when(c.ended)}"
    return f"{c.id}  {c.title}  started {_when(c.started)}  {state}  {slide}"


def _class_json(c: LiveClass) -> dict[str, Any]:
    return {**dataclasses.asdict(c), "running": c.running, "document": c.document_id}


@click.group("class")
def class_group() -> None:
    """Live classes: start and end one, feed it a recorded transcript, see where it is."""


@class_group.command("start")
@click.option("--course", required=True)
@click.option("--slides", default=None, help="Document id of the slide deck shown (a "
              "document of the course; its page is tracked from the speech).")
@click.option("--title", default="", help="Title (default: 'Class <date> <time>').")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def start(ctx: click.Context, course: str, slides: str | None, title: str,
          as_json: bool) -> None:
    """Start a class of COURSE; its transcript becomes the document class-<id>."""
    with _live(ctx) as live:
        found = live.start(ctx.obj.tenant, course, title, slides)
    click.echo(json.dumps(_class_json(found)) if as_json else f"started {_line(found)}")


@class_group.command("end")
@click.option("--course", required=True)
@click.option("--class", "class_id", default=None, help="The class (default: the course's "
              "running class).")
@click.pass_context
def end(ctx: click.Context, course: str, class_id: str | None) -> None:
    """End a class (its last chunk is written first)."""
    with _live(ctx) as live:
        found = live.end(ctx.obj.tenant, course,
                         _class_id(live, ctx.obj.tenant, course, class_id))
    click.echo(f"ended {_line(found)}")


@class_group.command("list")
@click.option("--course", required=True)
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def list_classes(ctx: click.Context, course: str, as_json: bool) -> None:
    """The course's classes, the latest first."""
    with _live(ctx) as live:
        found = live.workspace.store.classes.list_classes(ctx.obj.tenant, course)
    if as_json:
        click.echo(json.dumps([_class_json(c) for c in found]))
        return
    for c in found:
        click.echo(_line(c))
    if not found:
        click.echo(f"no classes in course {course!r} yet")


FOLLOWING = {
    "time": "the deck has no readable page: the slide follows time and the teacher's page "
            "changes",
    "teacher": "no slide tracking: the slide follows the teacher's page changes",
}


def _status_json(s: ClassStatus) -> dict[str, Any]:
    last = dataclasses.asdict(s.last) if s.last else None
    return {**_class_json(s.live), "events": s.events, "chunks": s.chunks, "last_event": last,
            "slide_following": s.slide_following}


@class_group.command("status")
@click.option("--course", required=True)
@click.option("--class", "class_id", default=None, help="The class (default: the course's "
              "running class).")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def status(ctx: click.Context, course: str, class_id: str | None, as_json: bool) -> None:
    """Where a class is: its slide, events, chunks and last sentence."""
    with _live(ctx) as live:
        found = live.status(ctx.obj.tenant, course,
                            _class_id(live, ctx.obj.tenant, course, class_id))
    if as_json:
        click.echo(json.dumps(_status_json(found)))
        return
    click.echo(_line(found.live))
    click.echo(f"{found.events} events, {found.chunks} chunks in {found.live.document_id}")
    if found.slide_following != "speech" and found.live.slides_document_id:
        click.echo(FOLLOWING[found.slide_following])
    if found.last:
        click.echo(f"last at {found.last.end:.1f} s: {found.last.text}")


@class_group.command("feed")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--course", required=True)
@click.option("--class", "class_id", default=None, help="The class (default: the course's "
              "running class, else a new one named after the file, ended when it is fed).")
@click.option("--speed", type=click.FloatRange(min=0), default=1.0, show_default=True,
              help="1: real time; N: N times faster; 0: as fast as it goes in.")
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
@click.pass_context
def feed(ctx: click.Context, path: Path, course: str, class_id: str | None, speed: float,
         as_json: bool) -> None:
    """Replay a recorded transcript (.json, .vtt, .srt) into a class through the same intake
    as a live one."""
    tenant = ctx.obj.tenant
    events = read_recording(path)
    if not events:
        raise InputError(f"{path.name}: no sentences to feed")
    with _live(ctx) as live:
        running = live.workspace.store.classes.list_classes(tenant, course, running=True)
        started = None
        if class_id is None and not running:
            started = live.start(tenant, course, path.stem.replace("_", " "))
        target = class_id or (started.id if started else _class_id(live, tenant, course, None))
        step = max(1, len(events) // 10)

        def shown(done: int, total: int) -> None:
            if not as_json and (done % step == 0 or done == total):
                click.echo(f"{done}/{total} sentences", err=True)

        report = replay(live, tenant, course, target, events, speed, shown)
        if started is not None:
            live.end(tenant, course, target)
        state = live.status(tenant, course, target)
    figures = {"class": target, "events": report.events, "posts": report.posts,
               "chunks": state.chunks, "seconds": round(report.seconds, 2), "speed": speed,
               "lag_p50_s": round(report.percentile(50), 3),
               "lag_p95_s": round(report.percentile(95), 3)}
    if as_json:
        click.echo(json.dumps(figures))
        return
    click.echo(f"fed {report.events} sentences in {report.posts} posts to class {target} "
               f"({state.chunks} chunks) in {report.seconds:.1f} s; said to searchable: "
               f"p50 {figures['lag_p50_s']} s, p95 {figures['lag_p95_s']} s")
