"""The `coursetutor` command line: parse, call the library, print.

Each group of commands is a module of this package; this one puts them under the root group.
"""

from __future__ import annotations

from ..eval.cli import eval_group
from . import (
    classes,
    ingest,
    keys,
    listen,
    lti,
    mastery,
    sample,
    serve,
    session,
    store,
    student,
    tutor,
)
from .group import cli
from .sample import DEMO_ASKS, SAMPLE_COURSE, SAMPLE_QUESTIONS, load_sample_course

__all__ = ["DEMO_ASKS", "SAMPLE_COURSE", "SAMPLE_QUESTIONS", "cli", "load_sample_course", "main"]

for command in (ingest.ingest, ingest.search, ingest.courses, ingest.documents, ingest.remove,
                sample.demo, tutor.ask, tutor.chat, tutor.check, tutor.models, tutor.policy,
                eval_group, serve.serve, serve.worker, keys.keys, keys.enrol, store.migrate,
                store.copy_command, student.student, student.topics, classes.class_group,
                session.session_group, mastery.mastery_group, lti.lti_group):
    cli.add_command(command)
classes.class_group.add_command(listen.listen)


def main() -> None:
    cli(prog_name="coursetutor")
