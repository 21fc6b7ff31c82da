"""`coursetutor eval answers` and `compare`: the tutor's answers on the question suites, and
two configurations side by side."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ...config import Settings
from ...errors import InputError
from ...workspace import Workspace

if TYPE_CHECKING:
    from ..answers import Paths

SUITES = ("abstention", "mrbench", "leaks", "ladder", "languages", "coursepack")
QUESTIONS = Path("tests/data/coursepack_questions.json")


def _suite_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The options `eval answers` and `eval compare` share: where the questions are."""
    for option in reversed((
        click.option("--data", "folder", default=None,
                     type=click.Path(exists=True, file_okay=False, path_type=Path),
                     help="The datasets folder (clapnq-*.jsonl, mrbench-v1.json)."),
        click.option("--pack", default=None,
                     type=click.Path(exists=True, file_okay=False, path_type=Path),
                     help="The course pack folder (pdf/, transcripts/) for the coursepack "
                          "suite."),
        click.option("--questions", default=None,
                     type=click.Path(exists=True, dir_okay=False, path_type=Path),
                     help="The course-pack question set (default: "
                          "tests/data/coursepack_questions.json of the checkout)."),
        click.option("--limit", type=click.IntRange(1), default=None,
                     help="Only N questions of each set (N answerable + N unanswerable)."),
        click.option("--course", "courses", multiple=True,
                     help="Only the course-pack questions of this course of the question set "
                          "(repeatable; e.g. analisi)."),
        click.option("--split", default="",
                     help="Only the course-pack questions of this split of the question set "
                          "(its `splits`; e.g. statements-heldout)."),
    )):
        fn = option(fn)
    return fn


def suite_paths(suites: tuple[str, ...], folder: Path | None, pack: Path | None,
                questions: Path | None, courses: tuple[str, ...] = (),
                sources: bool = True, split: str = "") -> Paths:
    """Check that every chosen suite has its files; one error naming the missing option."""
    from ..answers import Paths

    if folder is None and {"abstention", "mrbench"} & set(suites):
        raise InputError("--data DIR (the datasets folder) is required for the "
                         f"{' and '.join(s for s in suites if s in ('abstention', 'mrbench'))}"
                         " suite")
    if "coursepack" in suites:
        if pack is None:
            raise InputError("--pack DIR (the course pack folder) is required for the "
                             "coursepack suite")
        questions = questions or QUESTIONS
        if not questions.is_file():
            raise InputError(f"{questions}: no such question set; give --questions FILE")
    return Paths(folder, pack, questions, sources, courses, split)


@click.command("answers")
@_suite_options
@click.option("--suite", "suites", multiple=True, type=click.Choice(SUITES),
              help="Run only these suites (repeatable; default: all but coursepack, and "
                   "coursepack too when --pack is given).")
@click.option("--no-sources", "no_sources", is_flag=True,
              help="Ingest the course pack's PDFs without the LaTeX or Markdown sources the "
                   "question set gives them (into courses of their own): the baseline.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the whole result as JSON, with every per-answer record.")
@click.pass_context
def answers(ctx: click.Context, folder: Path | None, pack: Path | None,
            questions: Path | None, limit: int | None, courses: tuple[str, ...],
            split: str, suites: tuple[str, ...], no_sources: bool, as_json: bool) -> None:
    """Faithfulness, relevance, context, abstention, leaks and languages with the model."""
    from ...tutor import Tutor
    from .. import answers as run

    settings: Settings = ctx.obj
    chosen = suites or tuple(s for s in SUITES if s != "coursepack" or pack is not None)
    paths = suite_paths(chosen, folder, pack, questions, courses, not no_sources, split)
    # every question answered afresh: an earlier run's answers are not reused
    ws = ctx.with_resource(Workspace(dataclasses.replace(settings, reuse=False)))
    ws.tenant = "eval"
    tutor = Tutor(ws)
    ctx.call_on_close(tutor.router.close)
    result: dict[str, Any] = {"backend": settings.llm_backend, "limit": limit}
    # progress goes to standard error, so a --json run shows it too
    result.update(run.run_suites(tutor, chosen, paths, limit, _suite_progress))
    if as_json:
        click.echo(json.dumps(result, indent=2, ensure_ascii=False))
        return
    brief = {k: ({kk: vv for kk, vv in v.items() if kk != "records"} if isinstance(v, dict)
                 else v) for k, v in result.items()}
    click.echo(json.dumps(brief, indent=2, ensure_ascii=False))
    for suite, part in result.items():
        if isinstance(part, dict) and "metrics" in part:
            click.echo(f"\n{suite}:")
            click.echo(metrics_table(part["metrics"]))


COMPARE_SUITES = ("abstention", "coursepack")


@click.command("compare")
@click.option("--config", "configs", multiple=True, required=True,
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="A settings file (coursetutor.toml); give it twice: A, then B.")
@_suite_options
@click.option("--suite", "suites", multiple=True, type=click.Choice(COMPARE_SUITES),
              help="The question sets (repeatable; default: coursepack with --pack, else "
                   "abstention).")
@click.option("--plot", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also draw the comparison as a PNG chart (needs matplotlib).")
@click.option("--no-sources-in", "no_sources_in", type=click.Choice(["A", "B"]), default=None,
              help="Run this side on the course pack's PDFs without their LaTeX or Markdown "
                   "sources (give the same --config twice to see what the sources add).")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the bootstrap intervals.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the comparison and both runs as JSON, with every record.")
@click.pass_context
def compare(ctx: click.Context, configs: tuple[Path, ...], folder: Path | None,
            pack: Path | None, questions: Path | None, limit: int | None,
            courses: tuple[str, ...], split: str, suites: tuple[str, ...], plot: Path | None,
            no_sources_in: str | None, seed: int, as_json: bool) -> None:
    """The same questions under two settings files, every metric side by side."""
    from ...tutor import Tutor
    from .. import compare as ab

    if len(configs) != 2:
        raise InputError(f"give --config exactly twice (A, then B), got {len(configs)}")
    chosen = suites or (("coursepack",) if pack is not None else ("abstention",))
    paths = suite_paths(chosen, folder, pack, questions, courses, split=split)
    side_paths = [dataclasses.replace(paths, sources=no_sources_in != side) for side in "AB"]
    if plot is not None:
        _check_plot(plot)
    sides = [ab.settings_for(c, ctx.obj) for c in configs]
    names = (configs[0].stem, configs[1].stem)
    if no_sources_in:
        names = tuple(f"{n}-pdf" if side == no_sources_in else n  # type: ignore[assignment]
                      for n, side in zip(names, "AB", strict=True))
    if names[0] == names[1]:
        names = (f"A:{names[0]}", f"B:{names[1]}")
    progress = _suite_progress  # on standard error, with --json too
    runs = [ab.run_side(s, chosen, p, limit, progress, Tutor)
            for s, p in zip(sides, side_paths, strict=True)]
    compared = ab.compare_runs(runs[0], runs[1], chosen, seed)
    if plot is not None:
        for suite, rows in compared.items():
            target = plot if len(compared) == 1 else plot.with_stem(f"{plot.stem}-{suite}")
            ab.plot(rows, target, names)
    if as_json:
        click.echo(json.dumps({
            "a": {"config": str(configs[0]), **runs[0]},
            "b": {"config": str(configs[1]), **runs[1]},
            "seed": seed, "limit": limit,
            "compare": {s: [dataclasses.asdict(r) for r in rows]
                        for s, rows in compared.items()},
        }, indent=2, ensure_ascii=False))
        return
    for suite, rows in compared.items():
        click.echo(f"\n{suite}: A = {configs[0]}, B = {configs[1]}")
        click.echo(ab.table(rows, names))


def _check_plot(path: Path) -> None:
    """Fail before hours of answers, not after: matplotlib and the chart's folder."""
    from ...errors import MissingDependencyError

    try:
        import matplotlib  # noqa: F401
    except ImportError as exc:
        from ..compare import PLOT_HINT

        raise MissingDependencyError(f"--plot needs matplotlib: {PLOT_HINT}") from exc
    if not path.parent.is_dir():
        raise InputError(f"--plot {path}: no such folder {path.parent}")


def metrics_table(m: dict[str, Any]) -> str:
    """The means of the per-answer figures, one per line."""
    rows = [(key, m.get(key)) for key in METRIC_LINES]
    return "\n".join(f"  {key:32}{'-' if v is None else v}" for key, v in rows)


METRIC_LINES = ("questions", "answerable", "faithfulness", "unsupported_terms",
                "answers_with_unsupported_terms", "answer_relevance", "context_precision",
                "context_recall", "cited_gold", "wrongly_declined", "wrongly_answered",
                "removed_claims", "draft_faithfulness", "draft_unsupported_terms",
                "draft_answers_with_unsupported_terms", "seconds")


def _suite_progress(suite: str, done: int, total: int) -> None:
    """Every answer: one takes tens of seconds with the bundled model on a CPU."""
    click.echo(f"  {suite}: {done}/{total}", err=True)
