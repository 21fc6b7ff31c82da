"""`coursetutor eval live`: the live TutorialVQA, with and without the class context."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from ...config import Settings
from ...tutor.tiers import WIDE_K, Bar, weights_of
from ...workspace import Workspace
from .. import live
from ..live import best_bar


@click.command("live")
@click.option("--path", required=True, type=click.Path(exists=True, dir_okay=False,
                                                        path_type=Path),
              help="TutorialVQA questions (tvqa-dev.json; tune on dev or train only).")
@click.option("--videos", required=True, type=click.Path(exists=True, dir_okay=False,
                                                          path_type=Path),
              help="TutorialVQA transcripts (tvqa-videos.json): the course's lectures.")
@click.option("--limit", type=click.IntRange(1), default=None, help="Only the first N questions.")
@click.option("--cross", is_flag=True,
              help="Also ask every question during another lecture (the tiers must widen).")
@click.option("--threshold", type=click.FloatRange(0, 1), default=None,
              help="Tier threshold (default: the live_tier_threshold setting).")
@click.option("--ratio", type=click.FloatRange(0, 1), default=None,
              help="Tier ratio (default: the live_tier_ratio setting).")
@click.option("--candidates", "wide", type=click.IntRange(1), default=WIDE_K, show_default=True,
              help="Candidates of the course search the tiers are cut from.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_context
def live_command(ctx: click.Context, path: Path, videos: Path, limit: int | None, cross: bool,
                 threshold: float | None, ratio: float | None, wide: int, as_json: bool) -> None:
    """hit@1 / hit@5 per delay after the answer was said, without and with class context."""
    settings: Settings = ctx.obj
    ws = ctx.with_resource(Workspace(settings))
    ws.tenant = "eval"
    bar = Bar(settings.live_tier_threshold if threshold is None else threshold,
              settings.live_tier_ratio if ratio is None else ratio)
    records, seconds = live.timed(lambda: live.run(ws, videos, path, limit, cross, _progress,
                                                   wide=wide))
    result = live.report(records, bar, seconds, weights_of(settings))
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    _print(result)


def _print(result: dict[str, Any]) -> None:
    click.echo(f"\nlive TutorialVQA: {result['questions']} questions, tier threshold "
               f"{result['threshold']} and ratio {result['ratio']}, {result['seconds']} s "
               f"({result['rewritten']} rewritten with the progress)")
    click.echo(f"{'delay':12}{'questions':>10}   without hit@1/hit@5   with hit@1/hit@5"
               f"   class tier")
    for name, row in result["delays"].items():
        w, c = row["without"], row["with"]
        click.echo(f"{name:12}{row['questions']:>10}   {w['hit@1']:.3f} / {w['hit@5']:.3f}"
                   f"          {c['hit@1']:.3f} / {c['hit@5']:.3f}       {row['class_tier']:.3f}")
    if any(r["elsewhere"] for r in result["sweep"]):
        click.echo("\ntier bar sweep (hit@1 with class context), the best threshold per ratio:"
                   " in the lecture / elsewhere")
        for ratio in sorted({r["ratio"] for r in result["sweep"]}):
            row = best_bar([r for r in result["sweep"] if r["ratio"] == ratio])
            click.echo(f"  ratio {ratio:.2f}  threshold {row['threshold']:.2f}   "
                       f"{row['in_lecture']:.3f} / {row['elsewhere']:.3f}   mean {row['mean']:.4f}")
        b = result["best"]
        click.echo(f"best mean: threshold {b['threshold']:.2f}, ratio {b['ratio']:.2f} "
                   f"({b['mean']:.4f})")


def _progress(done: int, total: int) -> None:
    if done % 100 == 0 or done == total:
        click.echo(f"  {done}/{total} questions", err=True)
