"""`coursetutor topics` and `coursetutor student ...`: a course's topic list, students'
profiles, their export and erasure, retention, and the teacher's view of a class."""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from ..errors import InputError
from ..memory import course_topics
from ..memory.insights import course_insights, course_students
from ..memory.privacy import export_student, forget_student
from ..memory.retention import purge_expired_turns
from .group import workspace
from .render import out


def _echo_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def _read_topics(path: Path) -> list[str]:
    """Topics from a file: one a line (# starts a comment), or a JSON array."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from exc
    if text.lstrip().startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path} is not a JSON array of topics: {exc}") from exc
        if not isinstance(data, list) or not all(isinstance(t, str) for t in data):
            raise InputError(f"{path} must hold a JSON array of strings")
        return data
    return [line.split("#", 1)[0].strip() for line in text.splitlines()]


@click.command()
@click.option("--course", required=True)
@click.option("--set", "set_file", type=click.Path(path_type=Path),
              help="Replace the list by the topics in FILE (one a line, or a JSON array).")
@click.option("--add", "added", multiple=True, help="Add a topic (repeatable).")
@click.option("--remove", "removed", multiple=True, help="Remove a topic (repeatable).")
@click.option("--reset", is_flag=True, help="Forget the correction: the material's list again.")
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
@click.pass_context
def topics(ctx: click.Context, course: str, set_file: Path | None, added: tuple[str, ...],
           removed: tuple[str, ...], reset: bool, as_json: bool) -> None:
    """Show or correct a course's topic list (from ingest topics, then chapter and section
    titles; a correction is stored and wins)."""
    ws = workspace(ctx)
    ws.store.get_course(ws.tenant, course)
    if reset:
        ws.store.profiles.set_topic_list(ws.tenant, course, None)
    if set_file or added or removed:
        current = _read_topics(set_file) if set_file else course_topics(
            ws.store, ws.tenant, course)
        gone = {t.casefold() for t in removed}
        unknown = gone - {t.casefold() for t in current}
        if unknown:
            raise InputError(f"not in the topic list: {', '.join(sorted(unknown))}")
        kept = [t for t in current if t.casefold() not in gone] + list(added)
        ws.store.profiles.set_topic_list(ws.tenant, course, kept)
    names = course_topics(ws.store, ws.tenant, course)
    corrected = ws.store.profiles.topic_list(ws.tenant, course) is not None
    if as_json:
        _echo_json({"course": course, "corrected": corrected, "topics": names})
        return
    source = "corrected by a teacher" if corrected else "from the material"
    click.echo(f"{course}: {len(names)} topics ({source})")
    for name in names:
        click.echo(f"  {name}")


@click.group()
def student() -> None:
    """Students' profiles: show, correct, export, forget; retention; the class view."""


def _when(seconds: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(seconds)) if seconds else "never"


@student.command("show")
@click.option("--course", required=True)
@click.option("--student", "name", required=True)
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def show(ctx: click.Context, course: str, name: str, as_json: bool) -> None:
    """A student's profile: level, style, goals, topics studied, weak areas, mastery."""
    ws = workspace(ctx)
    ws.store.get_course(ws.tenant, course)
    profile = ws.store.profiles.get(ws.tenant, course, name)
    weak = ws.store.mastery.weak_areas(ws.tenant, course, name)
    mastery = ws.store.mastery.estimates(ws.tenant, course, name)
    if as_json:
        _echo_json({"profile": dataclasses.asdict(profile),
                    "weak_areas": [dataclasses.asdict(w) for w in weak],
                    "mastery": [dataclasses.asdict(m) | {"mastered": m.mastered}
                                for m in mastery]})
        return
    p = profile
    click.echo(f"{name} in {course}: level {p.level or 'not set'}, style {p.style or 'none'}, "
               f"language {p.language or 'as asked'}")
    if p.goals:
        click.echo(f"goals: {p.goals}")
    table = Table("topic", "turns", "first seen", "last seen", "mastery")
    estimate = {m.topic: m for m in mastery}
    for t in p.topics:
        m = estimate.get(t.topic)
        table.add_row(t.topic, str(t.turns), _when(t.first_seen), _when(t.last_seen),
                      f"{m.estimate:.2f}{' mastered' if m.mastered else ''}" if m else "")
    out.print(table)
    for w in weak:
        click.echo(f"weak area [{w.id}] {w.topic}: {w.misconception} "
                   f"(turns {', '.join(w.turn_ids)})")


@student.command("edit")
@click.option("--course", required=True)
@click.option("--student", "name", required=True)
@click.option("--level", type=click.IntRange(0, 5), help="1-5, 0 to clear.")
@click.option("--style", help="'examples first', 'theory first', 'step by step', '' for none.")
@click.option("--goals")
@click.option("--language")
@click.option("--resolve", "resolved", multiple=True, help="Remove a weak area (its id).")
@click.option("--remove-topic", "removed", multiple=True, help="Remove a studied topic.")
@click.pass_context
def edit(ctx: click.Context, course: str, name: str, level: int | None, style: str | None,
         goals: str | None, language: str | None, resolved: tuple[str, ...],
         removed: tuple[str, ...]) -> None:
    """Correct a student's profile."""
    ws = workspace(ctx)
    p = ws.store.profiles.update(ws.tenant, course, name, level=level, style=style,
                                 goals=goals, language=language)
    for area in resolved:
        ws.store.mastery.resolve(ws.tenant, course, name, area)
    for topic in removed:
        if not ws.store.profiles.remove_topic(ws.tenant, course, name, topic):
            raise InputError(f"{name} has no studied topic {topic!r}")
    click.echo(f"{name} in {course}: level {p.level or 'not set'}, style {p.style or 'none'}")


@student.command("export")
@click.option("--course", default=None, help="One course (default: all of the tenant's).")
@click.option("--student", "name", required=True)
@click.option("--output", type=click.Path(path_type=Path), help="Write to FILE, not stdout.")
@click.pass_context
def export(ctx: click.Context, course: str | None, name: str, output: Path | None) -> None:
    """Everything stored about a student, as one JSON document."""
    ws = workspace(ctx)
    if course is not None:
        ws.store.get_course(ws.tenant, course)
    data = json.dumps(export_student(ws.store, ws.tenant, name, course), indent=2,
                      ensure_ascii=False, default=str)
    if output is None:
        click.echo(data)
        return
    output.write_text(data + "\n", encoding="utf-8")
    click.echo(f"wrote {output}")


@student.command("forget")
@click.option("--course", default=None,
              help="Only this course (the enrolment stays); default: the whole tenant, "
                   "with the student's keys and enrolments.")
@click.option("--student", "name", required=True)
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.pass_context
def forget(ctx: click.Context, course: str | None, name: str, yes: bool) -> None:
    """Erase everything stored about a student: turns, sessions, summaries, profile,
    mastery, weak areas, reused answers and cached turns."""
    ws = workspace(ctx)
    if course is not None:
        ws.store.get_course(ws.tenant, course)
    where = f"course {course}" if course else f"tenant {ws.tenant}"
    if not yes:
        click.confirm(f"Erase everything stored about {name} in {where}?", abort=True)
    gone = forget_student(ws.store, ws.settings, ws.tenant, name, course)
    parts = ", ".join(f"{n} {t}" for t, n in sorted(gone.rows.items())) or "nothing stored"
    click.echo(f"{name} erased from {where}: {parts}; {gone.cache_keys} cache keys")


@student.command("purge")
@click.option("--course", default=None, help="One course (default: every course).")
@click.pass_context
def purge(ctx: click.Context, course: str | None) -> None:
    """Delete turns older than their course's retention_days (summaries and profiles stay)."""
    ws = workspace(ctx)
    purged = purge_expired_turns(ws.store, ws.tenant, course)
    if not purged:
        click.echo("no course keeps turns for a limited time (coursetutor policy "
                   "--retention-days N)")
    for name, count in sorted(purged.items()):
        click.echo(f"{name}: {count} turns deleted "
                   f"(older than {ws.store.profiles.retention_days(ws.tenant, name)} days)")


@student.command("list")
@click.option("--course", required=True)
@click.option("--idle-days", type=click.FloatRange(0), default=14, show_default=True,
              help="Students not seen for this many days are flagged.")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def list_students(ctx: click.Context, course: str, idle_days: float, as_json: bool) -> None:
    """The course's students with their profiles, least recently seen first."""
    ws = workspace(ctx)
    ws.store.get_course(ws.tenant, course)
    rows = course_students(ws.store, ws.tenant, course, idle_days)
    if as_json:
        _echo_json([dataclasses.asdict(r) for r in rows])
        return
    table = Table("student", "last seen", "level", "style", "topics", "turns", "weak areas",
                  "mastered")
    for r in rows:
        table.add_row(r.student + (" (idle)" if r.idle else ""), _when(r.last_seen),
                      str(r.level or ""), r.style, str(r.topics), str(r.turns),
                      str(r.weak_areas), str(r.mastered))
    out.print(table)


@student.command("insights")
@click.option("--course", required=True)
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def insights(ctx: click.Context, course: str, as_json: bool) -> None:
    """The weak areas most students share and mastery per topic across the class."""
    ws = workspace(ctx)
    ws.store.get_course(ws.tenant, course)
    found = course_insights(ws.store, ws.tenant, course,
                            course_topics(ws.store, ws.tenant, course))
    if as_json:
        _echo_json(dataclasses.asdict(found))
        return
    table = Table("weak area (topic)", "students", "misconceptions", "example questions")
    for w in found.weak_areas:
        table.add_row(w.topic, str(w.students), "\n".join(w.misconceptions),
                      "\n".join(w.questions))
    out.print(table)
    table = Table("topic", "students", "mean mastery", "mastered")
    for m in found.mastery:
        table.add_row(m.topic, str(m.students), f"{m.mean:.2f}", str(m.mastered))
    out.print(table)
