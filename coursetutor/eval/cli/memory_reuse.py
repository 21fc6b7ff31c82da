"""The `--reuse` section of `coursetutor eval memory`: reuse of past answers on XQuAD-R."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import click

from ...errors import InputError
from ...llm.router import Router
from ...workspace import Workspace
from ..memory_reuse import LANGUAGES, course_run, embed_side, load, sweep
from ..memory_reuse_time import time_reuse


def reuse_section(ctx: click.Context, folder: Path | None, limit: int | None, timing: int,
                  quiet: bool) -> dict[str, Any]:
    """The reuse figures: thresholds from the data, false reuse and reuse shares, and the
    time saved per reused turn."""
    if folder is None:
        raise InputError("--reuse needs --data DIR (the datasets folder with xquadr-*.json)")
    started = time.perf_counter()
    ws = ctx.with_resource(Workspace(ctx.obj))
    ws.tenant = "eval"
    progress = None if quiet else _progress
    questions = load(folder, limit)
    sides = {lang: embed_side(ws.embedder, lang, questions[lang], progress)
             for lang in LANGUAGES}
    result: dict[str, Any] = {"questions_per_language": len(questions["en"]),
                              "embedder": ws.embedder.model_id}
    result.update(sweep(sides))
    result["course"] = course_run(ws.settings, sides)
    if timing:
        router = Router(ws.settings)
        ctx.call_on_close(router.close)
        result["time"] = time_reuse(ws, router, folder, sides, timing,
                                    None if quiet else _timing_progress)
    result["seconds"] = round(time.perf_counter() - started, 1)
    return result


def reuse_text(r: dict[str, Any]) -> str:
    """The reuse section as a few lines."""
    c, h, a = r["chosen"], r["held_out"], r["all"]
    lines = [
        f"\nReuse of past answers: XQuAD-R, {r['questions_per_language']} questions per "
        f"language, {r['pairs']['negatives_per_language']} hard-negative pairs per language "
        f"({r['pairs']['left_out']['same_answer']} same-answer and "
        f"{r['pairs']['left_out']['same_text']} same-text pairs left out)",
        f"  thresholds from the data: {c['threshold']} (one script), "
        f"{c['threshold_cross_script']} (two scripts); {c['rule']}",
        f"  {'':24}{'held out':>10}{'all':>10}{'0.85, no gate':>15}",
    ]
    start = r["start_0.85_without_gate"]
    for kind, label in (("false_reuse", "false reuse"), ("reused", "paraphrases reused")):
        for pair in h[kind]:
            lines.append(f"  {label + ' ' + pair:24}{h[kind][pair]:>10.2%}{a[kind][pair]:>10.2%}"
                         f"{start[kind][pair]:>15.2%}")
    course = r["course"]
    lines.append(f"  as a course ({course['entries']} entries, thresholds "
                 f"{course['threshold']} / {course['threshold_cross_script']}): "
                 + ", ".join(f"{lang} reused right {course[lang]['reused_right']:.1%} wrong "
                             f"{course[lang]['reused_wrong']:.2%}" for lang in LANGUAGES))
    if "time" in r:
        t = r["time"]
        lines.append(f"  time ({t['turns']} reused turns, model {t['model']}): search + context "
                     f"{t['median_ms_search_and_context']} ms, reuse + context "
                     f"{t['median_ms_reuse_and_context']} ms, saved "
                     f"{t['median_ms_saved_per_reused_turn']} ms per reused turn (medians; "
                     f"x{t['ratio']}); the lookup costs a turn not reused "
                     f"{t['median_ms_lookup_on_a_miss']} ms")
    return "\n".join(lines)


def _progress(stage: str, done: int, total: int) -> None:
    if done == total:
        click.echo(f"  reuse: {stage} {done}/{total}", err=True)


def _timing_progress(done: int, total: int) -> None:
    if done % 5 == 0 or done == total:
        click.echo(f"  reuse: timed {done}/{total}", err=True)
