"""`coursetutor eval memory`: the student-memory figures, one section per measurement
(MathDial misconceptions; answer reuse adds its own), as text or `--json`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from ...config import Settings
from ...errors import ConfigError, InputError
from ...llm.router import Router
from .. import memory
from .memory_reuse import reuse_section, reuse_text

MATHDIAL_FILE = "mathdial-dev.jsonl"


@click.command("memory")
@click.option("--data", "folder", default=None,
              type=click.Path(exists=True, file_okay=False, path_type=Path),
              help=f"The datasets folder ({MATHDIAL_FILE}).")
@click.option("--mathdial", default=None,
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="The MathDial file itself (default: --data's).")
@click.option("--limit", type=click.IntRange(1), default=None,
              help="Only the first N dialogues (the local model takes ~20 s each).")
@click.option("--out", default=None, type=click.Path(dir_okay=False, path_type=Path),
              help="Write each dialogue's diagnosis and verdicts here (JSON lines).")
@click.option("--reuse", is_flag=True,
              help="Reuse of past answers on XQuAD-R (--data's xquadr-*.json) instead.")
@click.option("--reuse-timing", type=click.IntRange(0), default=10, show_default=True,
              help="With --reuse: reused turns timed against searched ones (0: none).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_context
def memory_command(ctx: click.Context, folder: Path | None, mathdial: Path | None,
                   limit: int | None, out: Path | None, reuse: bool, reuse_timing: int,
                   as_json: bool) -> None:
    """Misconceptions named from MathDial students' wrong solutions, judged against the
    teachers' descriptions, beside an always-"calculation error" baseline."""
    settings: Settings = ctx.obj
    if reuse:  # --limit: the first N English questions (and the rest of their paragraph)
        found = {"reuse": reuse_section(ctx, folder, limit, reuse_timing, as_json)}
        click.echo(json.dumps(found, indent=2) if as_json else reuse_text(found["reuse"]))
        return
    path = mathdial or (folder / MATHDIAL_FILE if folder else None)
    if path is None:
        raise InputError("give --data DIR (the datasets folder) or --mathdial FILE")
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    if out is not None and not out.parent.is_dir():
        raise InputError(f"--out {out}: no such folder {out.parent}")
    items = memory.load_mathdial(path, limit)
    router = Router(settings)
    if not router.enabled:
        raise ConfigError("eval memory needs a model (the judge), but llm_backend is 'none'")
    ctx.call_on_close(router.close)
    result: dict[str, Any] = {}
    progress = _progress  # on standard error, with --json too
    if out is None:
        result["mathdial"] = memory.run_mathdial(router, items, None, progress)
    else:
        with out.open("w", encoding="utf-8") as stream:
            result["mathdial"] = memory.run_mathdial(router, items, stream, progress)
    if as_json:
        click.echo(json.dumps(result, indent=2, ensure_ascii=False))
        return
    click.echo(mathdial_text(result["mathdial"]))


def mathdial_text(m: dict[str, Any]) -> str:
    """The MathDial section as a few lines."""
    v = m["verdicts"]
    return "\n".join([
        f"\nMathDial: {m['items']} dialogues, judge {m['judge']['backend']} "
        f"{m['judge']['model']}",
        f"  agreement with the teachers     {m['agreement']}",
        f"  baseline '{m['baseline']}'  {m['baseline_agreement']}",
        f"  diagnoses: {v['misconception']} misconceptions, {v['correct']} said correct, "
        f"{v['no answer read']} unreadable; median {m['median_diagnose_seconds']} s each",
    ])


def _progress(done: int, total: int) -> None:
    if done % 5 == 0 or done == total:
        click.echo(f"  mathdial: {done}/{total}", err=True)
