"""`coursetutor migrate` and `coursetutor copy`: upgrade a store, move a deployment."""

from __future__ import annotations

import json
import time

import click

from ..config import Settings
from ..store import open_store
from ..store.copy import copy_store
from ..store.sql import redact


@click.command()
@click.option("--store", "url", default=None,
              help="Store URL (default: the configured store).")
@click.pass_context
def migrate(ctx: click.Context, url: str | None) -> None:
    """Bring a store's schema up to this version (run once before starting new workers)."""
    settings: Settings = ctx.obj
    url = url or settings.store_url
    store = open_store(url, settings.vector_exact_limit, settings)
    try:
        version = store.migrate()
    finally:
        store.close()
    click.echo(f"{redact(url)}: schema version {version} (up to date)")


@click.command("copy")
@click.option("--from", "source_url", default=None,
              help="Store to copy from (default: the configured store).")
@click.option("--to", "target_url", required=True,
              help="Store to copy into, e.g. postgresql://user@host/db (must hold no course).")
@click.option("--json", "as_json", is_flag=True, help="Print the counts as JSON.")
@click.pass_context
def copy_command(ctx: click.Context, source_url: str | None, target_url: str,
                 as_json: bool) -> None:
    """Copy a whole store into another without re-embedding (SQLite <-> PostgreSQL)."""
    settings: Settings = ctx.obj
    source_url = source_url or settings.store_url
    if source_url == target_url:
        raise click.UsageError("--from and --to name the same store")
    started = time.perf_counter()
    source = open_store(source_url, settings.vector_exact_limit, settings)
    try:
        target = open_store(target_url, settings.vector_exact_limit, settings)
        try:
            report = copy_store(source, target,
                                None if as_json else lambda m: click.echo(m, err=True))
        finally:
            target.close()
    finally:
        source.close()
    seconds = time.perf_counter() - started
    if as_json:
        click.echo(json.dumps(report.as_dict() | {"seconds": round(seconds, 2)}))
        return
    counts = ", ".join(f"{n} {name}" for name, n in report.as_dict().items())
    click.echo(f"copied {redact(source_url)} -> {redact(target_url)}: {counts} "
               f"in {seconds:.1f} s")
