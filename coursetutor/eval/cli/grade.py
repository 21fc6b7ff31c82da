"""`coursetutor eval grade`: the evidence grade on covered and uncovered questions."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ...config import Settings
from ...errors import InputError
from ...workspace import Workspace
from .. import datasets
from ..grade import eval_grade


@click.command("grade")
@click.option("--path", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              required=True, help="A SQuAD-format dataset file (KorQuAD, DRCD, SQuAD-it...).")
@click.option("--language", default=None,
              help="The course language (ISO 639-1); default: detected from the file's text.")
@click.option("--paragraphs", type=click.IntRange(1), default=200, show_default=True,
              help="The course: the first whole articles up to this many paragraphs.")
@click.option("--sample", type=click.IntRange(1), default=200, show_default=True,
              help="Answerable and unanswerable questions asked, each.")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def grade_command(ctx: click.Context, path: Path, language: str | None, paragraphs: int,
                  sample: int, as_json: bool) -> None:
    """How often answerable questions are declined and unanswerable ones answered."""
    settings: Settings = ctx.obj
    if language is not None and not (len(language) == 2 and language.isalpha()):
        raise InputError(f"--language must be a two-letter code, got {language!r}")
    ws = ctx.with_resource(Workspace(settings))
    ws.tenant = "eval"
    try:
        result = eval_grade(ws, path, language or datasets.text_language(path), paragraphs,
                            sample, progress=_progress)
    except (KeyError, TypeError, IndexError, AttributeError) as exc:
        raise InputError(f"{path}: not a SQuAD-format dataset file (missing {exc})") from exc
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    click.echo(f"\n{result['dataset']} ({result['language']}): a course of "
               f"{result['course_paragraphs']} paragraphs; {result['answerable']} answerable "
               f"and {result['unanswerable']} unanswerable questions, {result['seconds']} s")
    click.echo(f"{'rule':9}{'answerable: answered / model / declined':>42}"
               f"{'unanswerable: answered / model / declined':>44}{'AUROC':>8}")
    for name, r in result["rules"].items():
        a, u = r["answerable"], r["unanswerable"]
        cells = [f"{a['correct']:.3f} / {a['ambiguous']:.3f} / {a['incorrect']:.3f}",
                 f"{u['correct']:.3f} / {u['ambiguous']:.3f} / {u['incorrect']:.3f}"]
        click.echo(f"{name:9}{cells[0]:>42}{cells[1]:>44}{r['auroc']:>8.3f}")


def _progress(done: int, total: int) -> None:
    if done == total or done % 50 == 0:
        click.echo(f"  {done}/{total} questions", err=True)
