"""`coursetutor eval ...` commands."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from ..config import Settings
from ..errors import ConfigError, InputError
from ..llm.router import Router
from ..workspace import Workspace
from . import datasets
from .retrieval import QueryTranslator, eval_tvqa, eval_units

Progress = Callable[[int, int], None]


@click.group("eval")
def eval_group() -> None:
    """Measure retrieval quality on real datasets."""


def _language(path: Path, default: str) -> str:
    tail = path.stem.rsplit("-", 1)[-1]
    return tail if len(tail) == 2 and tail.isalpha() else default


@eval_group.command("retrieval")
@click.option("--dataset", type=click.Choice(datasets.DATASETS), required=True)
@click.option("--path", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              required=True, help="The dataset file (questions; units too except for tvqa).")
@click.option("--query-lang", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="XQuAD-R file of another language to take the questions from.")
@click.option("--videos", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="TutorialVQA transcripts (tvqa-videos.json).")
@click.option("--limit", type=click.IntRange(1), default=None, help="Only the first N questions.")
@click.option("--translate", is_flag=True,
              help="Translate questions not in the course's language with the configured "
                   "model first, as the tutor does.")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def retrieval(ctx: click.Context, dataset: str, path: Path, query_lang: Path | None,
              videos: Path | None, limit: int | None, translate: bool, as_json: bool) -> None:
    """R@1, R@5, R@10 and MRR@10 for BM25 alone, vectors alone and hybrid."""
    settings: Settings = ctx.obj
    translator = QueryTranslator(_translation_router(ctx, settings)) if translate else None
    ws = ctx.with_resource(Workspace(settings))
    ws.tenant = "eval"
    progress = None if as_json else _progress
    try:
        result = _run(ws, dataset, path, query_lang, videos, limit, progress, translator)
    except (KeyError, TypeError, IndexError, AttributeError) as exc:
        raise InputError(f"{path}: not a {dataset} dataset file (missing {exc})") from exc
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    click.echo(f"\n{result['dataset']}: {result['questions']} questions, "
               f"{result['units']} units, {result['seconds']} s")
    click.echo(f"{'':8}{'R@1':>8}{'R@5':>8}{'R@10':>8}{'MRR@10':>8}")
    for mode in ("bm25", "vector", "hybrid"):
        m = result[mode]
        click.echo(f"{mode:8}" + "".join(f"{m[k]:>8.3f}" for k in ("R@1", "R@5", "R@10",
                                                                    "MRR@10")))
    if "translate" in result:
        t = result["translate"]
        median = "-" if t["median_seconds"] is None else f"{t['median_seconds']:.2f} s"
        click.echo(f"translated {t['translated']} questions with {t['backend']} {t['model']} "
                   f"(median {median}; {t['unchanged']} left untranslated by the model)")


def _translation_router(ctx: click.Context, settings: Settings) -> Router:
    """The tutor's Router, its small-task model loaded (or reached) before any search."""
    router = Router(settings)
    if not router.enabled:
        raise ConfigError("--translate needs a model, but llm_backend is 'none'")
    ctx.call_on_close(router.close)
    router.llm("categorize")  # a missing model or a server that is down fails here
    return router


def _run(
    ws: Workspace, dataset: str, path: Path, query_lang: Path | None, videos: Path | None,
    limit: int | None, progress: Progress | None, translator: QueryTranslator | None = None,
) -> dict[str, Any]:
    """Load the dataset and evaluate it."""
    if dataset == "tvqa":
        if videos is None:
            raise InputError("--videos FILE (tvqa-videos.json) is required for tvqa")
        return eval_tvqa(ws, videos, path, progress, limit, translator)
    if dataset == "xquadr":
        units = datasets.load_xquadr(path, _language(path, "en"))
    elif dataset == "squad":
        units = datasets.load_squad(path, _language(path, "it"))
    else:
        units = datasets.load_clapnq(path)
    if limit:
        units.questions = units.questions[:limit]
    queries = datasets.xquadr_questions(query_lang) if query_lang else None
    name = dataset if query_lang is None else f"{dataset}-{_language(query_lang, 'xx')}"
    return eval_units(ws, f"{name}-{units.language}", units, queries, progress, translator)


def _progress(done: int, total: int) -> None:
    if done % 100 == 0 or done == total:
        click.echo(f"  {done}/{total} questions", err=True)


SUITES = ("abstention", "mrbench", "leaks", "languages")


@eval_group.command("answers")
@click.option("--data", "folder", type=click.Path(exists=True, file_okay=False, path_type=Path),
              required=True, help="The datasets folder (clapnq-*.jsonl, mrbench-v1.json).")
@click.option("--suite", "suites", multiple=True, type=click.Choice(SUITES),
              help="Run only these suites (repeatable; default: all).")
@click.option("--limit", type=click.IntRange(1), default=None,
              help="Only the first N questions of each set (N answerable + N unanswerable).")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def answers(ctx: click.Context, folder: Path, suites: tuple[str, ...], limit: int | None,
            as_json: bool) -> None:
    """Abstention, citations, answer leaks and languages with the configured model."""
    from ..tutor import Tutor
    from . import answers as run

    settings: Settings = ctx.obj
    ws = ctx.with_resource(Workspace(settings))
    ws.tenant = "eval"
    tutor = Tutor(ws)
    ctx.call_on_close(tutor.router.close)
    progress = None if as_json else _suite_progress
    chosen = suites or SUITES
    result: dict[str, Any] = {"backend": settings.llm_backend, "limit": limit}
    if "abstention" in chosen:
        result["abstention"] = run.timed(lambda: run.eval_abstention(tutor, folder, limit,
                                                                     progress))
    if "mrbench" in chosen:
        result["mrbench"] = run.timed(lambda: run.eval_mrbench(
            tutor, folder / "mrbench-v1.json", limit, progress))
    if {"leaks", "languages"} & set(chosen):
        course = _sample_course(ws)
        folder_of_sample = _sample_folder()
        if "leaks" in chosen:
            exercises = run.sample_exercises(folder_of_sample)
            result["sample_leaks"] = run.timed(lambda: run.eval_sample_leaks(
                tutor, course, exercises, progress))
        if "languages" in chosen:
            result["languages"] = run.timed(lambda: run.eval_languages(tutor, course, progress))
    click.echo(json.dumps(result, indent=2, ensure_ascii=False))


def _sample_folder() -> Path:
    from importlib import resources

    return Path(str(resources.files("coursetutor") / "sample_course"))


def _sample_course(ws: Workspace) -> str:
    """Ingest the shipped sample course into the evaluation tenant (unchanged files skip)."""
    from ..ingest import load_manifest

    m = load_manifest(_sample_folder() / "course.toml")
    course = m.course_id or "sample"
    ws.create_course(course, m.title, m.language)
    ws.ingest(course, m.files)
    return course


def _suite_progress(suite: str, done: int, total: int) -> None:
    if done % 10 == 0 or done == total:
        click.echo(f"  {suite}: {done}/{total}", err=True)
