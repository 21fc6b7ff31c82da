"""`coursetutor eval ...`: one module per evaluation's command, put under one group here."""

from __future__ import annotations

import click

from . import across, answers, fusion, grade, live, memory, retrieval, slides

__all__ = ["eval_group"]


@click.group("eval")
def eval_group() -> None:
    """Measure retrieval quality on real datasets."""


for command in (retrieval.retrieval, fusion.fusion_command, answers.answers, answers.compare,
                live.live_command, memory.memory_command, grade.grade_command,
                slides.slides_command, slides.lexicon_command, across.across_command):
    eval_group.add_command(command)
