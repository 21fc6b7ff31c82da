"""`coursetutor eval ...` commands."""

from __future__ import annotations

import click


@click.group("eval")
def eval_group() -> None:
    """Measure retrieval quality on real datasets."""
