"""`coursetutor eval fusion`: the CJK keyword weight, leave-one-dataset-out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from ...config import Settings
from ...errors import InputError
from ...workspace import Workspace
from .. import cjk_fusion
from ..retrieval import Prepared
from .answers import QUESTIONS


@click.command("fusion")
@click.option("--all", "folder", required=True,
              type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="The datasets folder (drcd-dev-zh.json, korquad-dev-ko.json, "
                   "xquadr-zh.json; a set whose file is absent is skipped).")
@click.option("--pack", type=click.Path(exists=True, file_okay=False, path_type=Path),
              default=None, help="The course pack folder: its Chinese notes are one more set.")
@click.option("--questions", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The course-pack question set (default: "
                   "tests/data/coursepack_questions.json of the checkout).")
@click.option("--cache", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Folder for each set's saved candidate lists (made once, then replayed).")
@click.option("--paragraphs", type=click.IntRange(1), default=None,
              help="Sample the paragraph sets (DRCD, KorQuAD): whole articles, in the order "
                   "of a hash of their titles, up to N paragraphs. Default: every paragraph.")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def fusion_command(ctx: click.Context, folder: Path, pack: Path | None,
                   questions: Path | None, cache: Path, paragraphs: int | None,
                   as_json: bool) -> None:
    """Leave-one-dataset-out choice of the CJK keyword weight: for each CJK set, the rule
    chosen on the others and its R@1 / MRR@10 there, against BM25 and vectors alone."""
    settings: Settings = ctx.obj
    ws = ctx.with_resource(Workspace(settings))
    ws.tenant = "eval"
    saved: dict[str, dict[str, Any]] = {}
    sample = "all" if paragraphs is None else f"articles by title hash, {paragraphs} paragraphs"
    for spec in cjk_fusion.CJK_SETS:
        if not (folder / spec.path).is_file():
            click.echo(f"  {spec.name}: skipped ({spec.path} not in {folder})", err=True)
            continue
        one = sample if spec.dataset == "squad" else "all"
        saved[spec.name] = _lists(
            cache, spec.name, one,
            lambda spec=spec: cjk_fusion.prepare_set(ws, folder, spec, paragraphs), ws)
    if pack is not None:
        question_set = questions or QUESTIONS
        if not question_set.is_file():
            raise InputError(f"{question_set}: no such question set; give --questions FILE")
        saved[cjk_fusion.PACK_SET] = _lists(
            cache, cjk_fusion.PACK_SET, "all",
            lambda: cjk_fusion.prepare_pack(ws, question_set, pack), ws)
    if len(saved) < 2:
        raise InputError("leave-one-dataset-out needs at least two sets")
    replayed = cjk_fusion.replay_grid(saved, progress=lambda m: click.echo(f"  {m}", err=True))
    folds = cjk_fusion.leave_one_out(replayed)
    on_all = cjk_fusion.choose(replayed.table, replayed.bm25, list(saved))
    result = cjk_fusion.report(folds, saved, on_all)
    click.echo(json.dumps(result, indent=2) if as_json else cjk_fusion.table(result))


def _lists(cache: Path, name: str, sample: str, prepare: Any, ws: Workspace) -> dict[str, Any]:
    """The saved lists of one set, gathered (and saved) first when the cache lacks them."""
    path = cache / f"{name}.json"
    found = cjk_fusion.load(path, sample)
    if found is not None:
        click.echo(f"  {name}: {len(found['questions'])} questions from {path}", err=True)
        return found
    click.echo(f"  {name}: loading", err=True)
    prepared: Prepared = prepare()
    rows = cjk_fusion.gather(ws, prepared, _progress)
    language = ws.store.course_language(ws.tenant, prepared.course)
    cjk_fusion.save(path, name, language, prepared.units, sample, rows)
    found = cjk_fusion.load(path, sample)
    assert found is not None
    return found


def _progress(done: int, total: int) -> None:
    if done % 200 == 0 or done == total:
        click.echo(f"  {done}/{total} questions", err=True)
