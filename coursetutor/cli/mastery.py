"""`coursetutor mastery params`: a course's Bayesian Knowledge Tracing parameters."""

from __future__ import annotations

import dataclasses
import json

import click

from ..errors import InputError
from ..memory import bkt
from .group import workspace

Prob = click.FloatRange(0.0, 1.0, min_open=True, max_open=True)


@click.group("mastery")
def mastery_group() -> None:
    """Mastery per topic (Bayesian Knowledge Tracing) in a course."""


@mastery_group.command("params")
@click.option("--course", required=True)
@click.option("--prior", type=Prob, default=None, help="p(L0): known before any answer.")
@click.option("--learn", type=Prob, default=None, help="p(T): learnt at one opportunity.")
@click.option("--slip", type=Prob, default=None, help="p(S): wrong although known.")
@click.option("--guess", type=Prob, default=None, help="p(G): right although not known.")
@click.option("--reset", is_flag=True, help="Back to the settings' parameters (bkt_*).")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def params(ctx: click.Context, course: str, prior: float | None, learn: float | None,
           slip: float | None, guess: float | None, reset: bool, as_json: bool) -> None:
    """Show or set the course's BKT parameters (unset ones keep their current value)."""
    ws = workspace(ctx)
    ws.store.get_course(ws.tenant, course)
    given = {k: v for k, v in {"prior": prior, "learn": learn, "slip": slip,
                               "guess": guess}.items() if v is not None}
    if reset and given:
        raise InputError("--reset takes no parameter values")
    if reset:
        ws.store.mastery.set_params(ws.tenant, course, None)
    elif given:
        current = bkt.course_params(ws.store, ws.settings, ws.tenant, course)
        ws.store.mastery.set_params(ws.tenant, course, dataclasses.replace(current, **given))
    own = ws.store.mastery.params(ws.tenant, course)
    shown = own or bkt.settings_params(ws.settings)
    if as_json:
        click.echo(json.dumps({"course": course, "source": "course" if own else "settings",
                               **dataclasses.asdict(shown)}))
        return
    source = "the course's own" if own else "from the settings (bkt_*)"
    click.echo(f"{course}: prior {shown.prior:g}, learn {shown.learn:g}, slip {shown.slip:g}, "
               f"guess {shown.guess:g} ({source}); mastered at {bkt.MASTERED:g}")
