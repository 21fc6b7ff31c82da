"""`coursetutor eval slides` and `coursetutor eval lexicon` on MaViLS lectures."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ...config import Settings
from ...errors import InputError
from ...ingest.ocr import make_ocr
from ...retrieval.embed import get_embedder
from .. import lexicon as lexicon_eval
from .. import slides as slides_eval

DEFAULT_FOLDER = Path("../shared/datasets/mavils-dev")
LOO_QUERY_CACHE = 100_000  # sentence vectors kept while --loo replays the lectures


def _folder(path: Path | None) -> Path:
    folder = path or DEFAULT_FOLDER
    if not folder.is_dir():
        raise InputError(f"{folder}: no MaViLS folder (give --path FOLDER)")
    return folder


def _progress(name: str) -> None:
    click.echo(f"  {name}", err=True)


_path = click.option("--path", type=click.Path(file_okay=False, path_type=Path), default=None,
                     help="The MaViLS folder (one folder per lecture with slides.pdf and "
                          "transcript.json; default ../shared/datasets/mavils-dev).")
_lecture = click.option("--lecture", "lectures", multiple=True,
                        help="Only this lecture (repeatable).")


@click.command("slides")
@_path
@_lecture
@click.option("--mode", type=click.Choice(slides_eval.MODES), default="both", show_default=True)
@click.option("--loo", is_flag=True,
              help="Also score the live tracker leave-one-lecture-out: each lecture under the "
                   "scoring chosen on the other lectures alone (column causal_loo).")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def slides_command(settings: Settings, path: Path | None, lectures: tuple[str, ...], mode: str,
                   loo: bool, as_json: bool) -> None:
    """Share of annotated sentences on the right slide: TF-IDF baseline, live, recorded."""
    folder = _folder(path)
    embedder = get_embedder(settings.embedder, settings.embed_threads)
    if loo:  # every scoring replays the same sentences: embed each once
        embedder.query_cache_size = LOO_QUERY_CACHE
    result = slides_eval.evaluate(folder, embedder, make_ocr(settings.ocr), mode, lectures,
                                  _progress, loo)
    click.echo(json.dumps(result, indent=2) if as_json else slides_eval.table(result))


@click.command("lexicon")
@_path
@_lecture
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def lexicon_command(settings: Settings, path: Path | None, lectures: tuple[str, ...],
                    as_json: bool) -> None:
    """The course lexicon on the captions: its corrections (to check) and mangled terms
    restored."""
    folder = _folder(path)
    known = slides_eval.lecture_names(folder)
    for name in lectures:
        if name not in known:
            raise InputError(f"unknown lecture {name!r}; valid: {', '.join(known)}")
    result = lexicon_eval.evaluate(folder, make_ocr(settings.ocr), lectures, _progress)
    click.echo(json.dumps(result, indent=2) if as_json else lexicon_eval.table(result))
