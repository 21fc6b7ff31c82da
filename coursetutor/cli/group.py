"""The root `coursetutor` group, the settings it loads and what every command shares."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from ..config import Settings, load_settings
from ..errors import CoursetutorError
from ..workspace import Workspace


class Group(click.Group):
    """Turns every coursetutor error into one line on stderr and exit status 1."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except CoursetutorError as exc:
            click.echo(f"Error: {exc}", err=True)
            sys.exit(1)


@click.group(cls=Group)
@click.option("--config", "config_file", type=click.Path(path_type=Path), default=None,
              help="Configuration file (default: ./coursetutor.toml if present).")
@click.option("--data-dir", type=click.Path(path_type=Path), default=None,
              help="Where the embedded store lives (default: .coursetutor).")
@click.option("--tenant", default=None, help="Tenant id (default: 'default').")
@click.version_option(package_name="coursetutor")
@click.pass_context
def cli(ctx: click.Context, config_file: Path | None, data_dir: Path | None,
        tenant: str | None) -> None:
    """coursetutor: an AI tutor that answers only from a course's own material."""
    ctx.obj = load_settings(config_file, data_dir=data_dir, tenant=tenant)


def workspace(ctx: click.Context) -> Workspace:
    """The workspace of the settings the root group loaded, closed when the command ends."""
    settings: Settings = ctx.obj
    return ctx.with_resource(Workspace(settings))
