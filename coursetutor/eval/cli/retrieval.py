"""`coursetutor eval retrieval`: recall and MRR of the search on real datasets."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ...config import Settings
from ...errors import ConfigError, InputError
from ...llm.router import Router
from ...workspace import Workspace
from .. import datasets
from ..retrieval import ALL_SETS, QueryTranslator, evaluate, prepare

if TYPE_CHECKING:
    pass

Progress = Callable[[int, int], None]


@click.command("retrieval")
@click.option("--dataset", type=click.Choice(datasets.DATASETS),
              help="The kind of dataset file (required unless --all).")
@click.option("--path", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="The dataset file (questions; units too except for tvqa).")
@click.option("--query-lang", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="XQuAD-R file of another language to take the questions from.")
@click.option("--videos", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="TutorialVQA transcripts (tvqa-videos.json).")
@click.option("--language", default=None,
              help="The course language (ISO 639-1); default: detected from the file's text.")
@click.option("--all", "folder", type=click.Path(exists=True, file_okay=False, path_type=Path),
              default=None, help="Every development set found in this datasets folder, "
                                 "one table.")
@click.option("--limit", type=click.IntRange(1), default=None, help="Only the first N questions.")
@click.option("--translate", is_flag=True,
              help="Translate questions not in the course's language with the configured "
                   "model first, as the tutor does.")
@click.option("--profile", "student", default=None,
              help="Also rank the hybrid results with this student's profile rerank (in the "
                   "eval tenant), as the tutor does.")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def retrieval(ctx: click.Context, dataset: str | None, path: Path | None,
              query_lang: Path | None, videos: Path | None, language: str | None,
              folder: Path | None, limit: int | None, translate: bool, student: str | None,
              as_json: bool) -> None:
    """R@1, R@5, R@10 and MRR@10 for BM25 alone, vectors alone and hybrid."""
    settings: Settings = ctx.obj
    if folder is None and (dataset is None or path is None):
        raise InputError("--dataset and --path are required (or --all FOLDER)")
    if language is not None and not (len(language) == 2 and language.isalpha()):
        raise InputError(f"--language must be a two-letter code, got {language!r}")
    translator = QueryTranslator(_translation_router(ctx, settings)) if translate else None
    ws = ctx.with_resource(Workspace(settings))
    ws.tenant = "eval"
    if folder is not None:
        _run_all(ws, folder, limit, translator, as_json)
        return
    assert dataset is not None and path is not None
    try:
        prepared, warnings = prepare(ws, dataset, path, query_lang, videos, limit, language)
    except (KeyError, TypeError, IndexError, AttributeError) as exc:
        raise InputError(f"{path}: not a {dataset} dataset file (missing {exc})") from exc
    for warning in warnings:
        click.echo(f"Warning: {warning}", err=True)
    rerank = None
    if student is not None:
        from ...memory.adaptive import reranker

        rerank = reranker(ws.store, settings, ws.tenant, prepared.course, student)
    result = evaluate(ws, prepared, _progress, translator, rerank)
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    click.echo(f"\n{result['dataset']} ({result['language']}): {result['questions']} "
               f"questions, {result['units']} units, {result['seconds']} s")
    click.echo(f"{'':8}{'R@1':>8}{'R@5':>8}{'R@10':>8}{'MRR@10':>8}")
    for mode in ("bm25", "vector", "hybrid", "hybrid_other_query", "hybrid_profile"):
        if mode not in result:
            continue
        m = result[mode]
        label = {"hybrid_other_query": "hybrid, the other query (with/without the original)",
                 "hybrid_profile": f"hybrid, profile of {student}"}.get(mode, mode)
        click.echo(f"{label:8}" + "".join(f"{m[k]:>8.3f}" for k in ("R@1", "R@5", "R@10",
                                                                     "MRR@10")))
    if "hybrid_profile" in result:
        click.echo(f"rankings the profile changed: {result['hybrid_profile']['rankings_changed']}")
    if "translate" in result:
        t = result["translate"]
        median = "-" if t["median_seconds"] is None else f"{t['median_seconds']:.2f} s"
        click.echo(f"translated {t['translated']} questions with {t['backend']} {t['model']} "
                   f"(median {median}; {t['unchanged']} left untranslated by the model)")


def _run_all(ws: Workspace, folder: Path, limit: int | None,
             translator: QueryTranslator | None, as_json: bool) -> None:
    """Every set of `ALL_SETS` whose files are in `folder`, then one table (or JSON list)."""
    results: list[dict[str, Any]] = []
    for spec in ALL_SETS:
        files = [spec.path, spec.query_lang, spec.videos]
        if not all((folder / f).is_file() for f in files if f):
            click.echo(f"  {spec.name}: skipped (files not in {folder})", err=True)
            continue
        click.echo(f"  {spec.name}:", err=True)
        path = folder / spec.path
        try:
            prepared, warnings = prepare(
                ws, spec.dataset, path, folder / spec.query_lang if spec.query_lang else None,
                folder / spec.videos if spec.videos else None, limit, name=spec.name)
        except (KeyError, TypeError, IndexError, AttributeError) as exc:
            raise InputError(f"{path}: not a {spec.dataset} dataset file (missing {exc})"
                             ) from exc
        for warning in warnings:
            click.echo(f"Warning: {warning}", err=True)
        results.append(evaluate(ws, prepared, _progress, translator))
    if as_json:
        click.echo(json.dumps(results, indent=2))
        return
    click.echo(f"\n{'set':14}{'lang':>5}{'questions':>10}   BM25 R@1/R@5   vectors R@1/R@5"
               f"   hybrid R@1/R@5")
    for r in results:
        cells = "".join(f"   {r[m]['R@1']:.3f} / {r[m]['R@5']:.3f}  "
                        for m in ("bm25", "vector", "hybrid"))
        click.echo(f"{r['dataset']:14}{r['language']:>5}{r['questions']:>10}{cells}")


def _translation_router(ctx: click.Context, settings: Settings) -> Router:
    """The tutor's Router, its small-task model loaded (or reached) before any search."""
    router = Router(settings)
    if not router.enabled:
        raise ConfigError("--translate needs a model, but llm_backend is 'none'")
    ctx.call_on_close(router.close)
    router.llm("categorize")  # a missing model or a server that is down fails here
    return router


def _progress(done: int, total: int) -> None:
    if done % 100 == 0 or done == total:
        click.echo(f"  {done}/{total} questions", err=True)
