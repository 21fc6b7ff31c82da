"""`coursetutor eval across`: the cross-language thresholds of the statement check on XQuAD-R."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import click

from ...config import Settings
from ...errors import InputError
from ...retrieval.embed import get_embedder
from ...tutor.statement_check import DROP, DROP_ACROSS, KEEP, KEEP_ACROSS
from .. import across

DEFAULT_FOLDER = Path("../shared/datasets")


@click.command("across")
@click.option("--path", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="The folder of xquadr-en.json, xquadr-de.json and xquadr-zh.json "
                   "(default ../shared/datasets).")
@click.option("--keep", type=click.FloatRange(0, 1), default=KEEP_ACROSS, show_default=True,
              help="The KEEP to measure beside the chosen one.")
@click.option("--drop", type=click.FloatRange(0, 1), default=DROP_ACROSS, show_default=True,
              help="The DROP to measure beside the chosen one.")
@click.option("--seed", type=int, default=7, show_default=True,
              help="The seed of the split of the paragraphs in halves.")
@click.option("--limit", type=click.IntRange(2), default=None,
              help="Only the first N paragraphs of each file (a quick run).")
@click.option("--json", "as_json", is_flag=True)
@click.pass_obj
def across_command(settings: Settings, path: Path | None, keep: float, drop: float, seed: int,
                   limit: int | None, as_json: bool) -> None:
    """Translations against other claims: the e5 cosine across languages, thresholds chosen
    on half the paragraphs and measured on the other half."""
    folder = path or DEFAULT_FOLDER
    missing = [f"xquadr-{x}.json" for x in across.LANGUAGES
               if not (folder / f"xquadr-{x}.json").is_file()]
    if missing:
        raise InputError(f"{folder}: no {', '.join(missing)} (give --path FOLDER)")
    if drop > keep:
        raise InputError(f"--drop {drop} is above --keep {keep}")
    started = time.perf_counter()
    embedder = get_embedder(settings.embedder, settings.embed_threads)
    result = across.evaluate(folder, embedder, (keep, drop), (KEEP, DROP), limit, seed,
                             _progress)
    result["seconds"] = round(time.perf_counter() - started, 1)
    click.echo(json.dumps(result, indent=2) if as_json else table(result))


def _progress(done: int, total: int) -> None:
    click.echo(f"  {done}/{total} texts embedded", err=True)


def _cells(row: dict[str, Any]) -> str:
    t, o, q = (row.get(k + "_shares", {}) for k in across.KINDS)
    return (f"{t.get('below', 0):7.3f}{t.get('band', 0):7.3f}{t.get('below_mid', 0):7.3f}"
            f"{o.get('above', 0):7.3f}{o.get('band', 0):7.3f}"
            f"{1 - o.get('below_mid', 1):7.3f}{1 - q.get('below_mid', 1):7.3f}")


def table(result: dict[str, Any]) -> str:
    """The held-out figures, one line per language pair and thresholds."""
    split = result["split"]
    lines = [f"held-out half: {split['held_out']} of {split['choose'] + split['held_out']} "
             f"paragraphs (seed {split['seed']}); thresholds chosen on the other half",
             f"{'':22}{'translations removed':>21}{'other claims kept':>21}{'questions':>10}",
             f"{'pair':7}{'KEEP/DROP':>12}{'AUROC':>7}{'<DROP':>7}{'model':>7}{'no mdl':>7}"
             f"{'>=KEEP':>7}{'model':>7}{'no mdl':>7}{'no mdl':>7}"]
    for which in ("current", "chosen"):
        keep, drop = result[which]["keep"], result[which]["drop"]
        for name, row in result["held_out"][which].items():
            thresholds = f"{keep:.3f}/{drop:.3f}"
            lines.append(f"{name:7}{thresholds:>12}{row['auroc']:7.3f}{_cells(row)}")
    ref = result["reference"]["en-en"]
    thresholds = f"{ref['keep']:.3f}/{ref['drop']:.3f}"
    lines.append(f"{'en-en':7}{thresholds:>12}{'':7}{'':21}"
                 f"{_cells(ref)[21:]}   (same language, reference)")
    lines.append("negation differs (sent to the model across languages), all paragraphs:")
    for name, shares in result.get("negation_flipped", {}).items():
        lines.append(f"{name:7}  translations {shares['translation']:.3f}   "
                     f"other claims {shares['other']:.3f}")
    lines.append(f"{result['seconds']} s")
    return "\n".join(lines)
