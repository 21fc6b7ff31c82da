"""A/B comparison: the same questions answered under two settings, metric by metric.

Each metric is compared on the questions where both runs have a value (paired): the two means,
their difference (B − A) and a seeded percentile bootstrap 95% interval of the mean paired
difference. Yes/no outcomes also get McNemar's exact test (two-sided binomial test on the
questions where the two runs disagree).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..config import Settings, load_settings
from ..errors import ConfigError, MissingDependencyError
from ..tutor import Tutor
from ..workspace import Workspace
from .answers import Paths, Progress, run_suites

RESAMPLES = 2000  # bootstrap resamples
PLOT_HINT = "pip install 'coursetutor[eval]' (or: pip install matplotlib)"


@dataclasses.dataclass(frozen=True)
class Metric:
    key: str  # the per-answer record's field
    binary: bool  # a yes/no outcome (True counts 1)
    scope: str = "all"  # which questions: all, answerable, unanswerable
    lower_is_better: bool = False


METRICS: tuple[Metric, ...] = (
    Metric("faithfulness", False),
    Metric("unsupported_terms", False, lower_is_better=True),
    Metric("answer_relevance", False),
    Metric("context_precision", False, "answerable"),
    Metric("context_recall", False, "answerable"),
    Metric("seconds", False, lower_is_better=True),
    Metric("first_token_seconds", False, lower_is_better=True),
    Metric("cited_gold", True, "answerable"),
    Metric("wrongly_declined", True, "answerable", lower_is_better=True),
    Metric("wrongly_answered", True, "unanswerable", lower_is_better=True),
    Metric("key_fact_recall", False, "answerable"),
    Metric("correct_complete", True, "answerable"),
    Metric("empty", True, lower_is_better=True),
    Metric("quote_first", True, lower_is_better=True),
    Metric("false_removals", False, lower_is_better=True),
)


@dataclasses.dataclass(frozen=True)
class Row:
    """One metric of the comparison."""

    metric: str
    n: int  # questions with a value in both runs
    a: float | None
    b: float | None
    diff: float | None  # mean of B − A over the paired questions
    low: float | None  # bootstrap 95% interval of diff
    high: float | None
    binary: bool = False
    a_only: int = 0  # binary: yes in A, no in B
    b_only: int = 0  # binary: no in A, yes in B
    p_value: float | None = None  # McNemar's exact test (binary only)
    lower_is_better: bool = False


def bootstrap_interval(diffs: Sequence[float], seed: int = 0, resamples: int = RESAMPLES,
                       level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of `diffs` (seeded, so repeatable)."""
    values = np.asarray(diffs, dtype=np.float64)
    if values.size == 0:
        raise ValueError("a bootstrap needs at least one value")
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, values.size, size=(resamples, values.size))].mean(axis=1)
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return float(low), float(high)


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Two-sided exact McNemar p-value from the two counts of discordant pairs."""
    n = a_only + b_only
    if n == 0:
        return 1.0
    k = min(a_only, b_only)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / float(2**n)
    return float(min(1.0, 2 * tail))


def _in_scope(record: dict[str, Any], scope: str) -> bool:
    if scope == "answerable":
        return bool(record.get("answerable"))
    if scope == "unanswerable":
        return not record.get("answerable")
    return True


def paired(a: Sequence[dict[str, Any]], b: Sequence[dict[str, Any]],
           metric: Metric) -> list[tuple[float, float]]:
    """(A, B) values of `metric` for the questions (by id) where both runs have one."""
    by_id = {r["id"]: r for r in b}
    pairs: list[tuple[float, float]] = []
    for ra in a:
        rb = by_id.get(ra["id"])
        if rb is None or not _in_scope(ra, metric.scope):
            continue
        va, vb = ra.get(metric.key), rb.get(metric.key)
        if va is not None and vb is not None:
            pairs.append((float(va), float(vb)))
    return pairs


def compare_metric(a: Sequence[dict[str, Any]], b: Sequence[dict[str, Any]], metric: Metric,
                   seed: int = 0) -> Row:
    pairs = paired(a, b, metric)
    if not pairs:
        return Row(metric.key, 0, None, None, None, None, None, metric.binary,
                   lower_is_better=metric.lower_is_better)
    xa = [p[0] for p in pairs]
    xb = [p[1] for p in pairs]
    diffs = [y - x for x, y in pairs]
    low, high = bootstrap_interval(diffs, seed)
    a_only = b_only = 0
    p_value = None
    if metric.binary:
        a_only = sum(1 for x, y in pairs if x and not y)
        b_only = sum(1 for x, y in pairs if y and not x)
        p_value = round(mcnemar_exact(a_only, b_only), 4)
    return Row(metric.key, len(pairs), _r(sum(xa) / len(xa)), _r(sum(xb) / len(xb)),
               _r(sum(diffs) / len(diffs)), _r(low), _r(high), metric.binary, a_only, b_only,
               p_value, metric.lower_is_better)


def _r(x: float) -> float:
    return round(x, 4)


def compare_records(a: Sequence[dict[str, Any]], b: Sequence[dict[str, Any]],
                    seed: int = 0) -> list[Row]:
    """Every metric of two runs' per-answer records, paired by question id."""
    return [compare_metric(a, b, m, seed) for m in METRICS]


def table(rows: Sequence[Row], names: tuple[str, str] = ("A", "B")) -> str:
    """The comparison as a fixed-width text table."""
    head = (f"{'metric':22}{'n':>5}{names[0][:10]:>11}{names[1][:10]:>11}{'B − A':>9}"
            f"{'95% interval':>20}{'McNemar p (A/B only)':>24}")
    lines = [head, "-" * len(head)]
    for r in rows:
        if r.n == 0:
            lines.append(f"{r.metric:22}{0:>5}{'-':>11}{'-':>11}{'-':>9}{'-':>20}")
            continue
        interval = f"[{r.low:+.3f}, {r.high:+.3f}]"
        p = f"{r.p_value:.3f} ({r.a_only}/{r.b_only})" if r.p_value is not None else ""
        lines.append(f"{r.metric:22}{r.n:>5}{r.a:>11.3f}{r.b:>11.3f}{r.diff:>+9.3f}"
                     f"{interval:>20}{p:>24}")
    return "\n".join(lines)


def plot(rows: Sequence[Row], path: Path, names: tuple[str, str] = ("A", "B")) -> None:
    """A chart: per metric, the two means as bars and the paired difference with its interval."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise MissingDependencyError(f"--plot needs matplotlib: {PLOT_HINT}") from exc
    shown = [r for r in rows if r.n and r.a is not None and r.b is not None]
    if not shown:
        raise ValueError("nothing to plot: no metric has a value in both runs")
    cols = 3
    rows_n = math.ceil(len(shown) / cols)
    fig, axes = plt.subplots(rows_n, cols, figsize=(4 * cols, 3 * rows_n), squeeze=False)
    for ax, r in zip(axes.flat, shown, strict=False):
        assert r.a is not None and r.b is not None and r.diff is not None
        ax.bar([0, 1], [r.a, r.b], color=["#8c8c8c", "#2b6cb0"], width=0.6)
        ax.set_xticks([0, 1], [names[0][:14], names[1][:14]])
        note = f" p={r.p_value:.3f}" if r.p_value is not None else ""
        ax.set_title(f"{r.metric} (n={r.n})\nB−A {r.diff:+.3f} [{r.low:+.3f}, {r.high:+.3f}]"
                     f"{note}", fontsize=9)
        ax.tick_params(labelsize=8)
    for ax in list(axes.flat)[len(shown):]:
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def settings_for(config: Path, base: Settings) -> Settings:
    """The settings of one side: `config` over the defaults and the environment; the data
    directory, store and tenant of the command line unless the file sets its own."""
    import tomllib

    try:
        data = tomllib.loads(config.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{config}: {exc}") from exc
    table = data.get("coursetutor", data)
    keep = {k: getattr(base, k) for k in ("data_dir", "store", "files_dir")
            if k not in table}
    return dataclasses.replace(load_settings(config), **keep)


TutorFactory = Callable[[Workspace], Tutor]


def run_side(settings: Settings, suites: Sequence[str], paths: Paths, limit: int | None,
             progress: Progress | None, make_tutor: TutorFactory) -> dict[str, Any]:
    """Run the suites under one side's settings, in the evaluation tenant; answers are never
    reused (side B would answer from side A's earlier answers)."""
    with Workspace(dataclasses.replace(settings, reuse=False)) as ws:
        ws.tenant = "eval"
        tutor = make_tutor(ws)
        try:
            return run_suites(tutor, suites, paths, limit, progress)
        finally:
            tutor.router.close()


def compare_runs(a: dict[str, Any], b: dict[str, Any], suites: Sequence[str],
                 seed: int = 0) -> dict[str, list[Row]]:
    """Per suite, every metric of the two runs' records side by side."""
    return {s: compare_records(a[s]["records"], b[s]["records"], seed) for s in suites}
