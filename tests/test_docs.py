"""The documentation keeps up with the code: settings, commands, options and set-up."""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from coursetutor.cli import cli
from coursetutor.config import Settings

from .codes import server_codes

ROOT = Path(__file__).resolve().parents[1]
CLI_MD = ROOT / "docs" / "cli.md"
CONFIGURATION_MD = ROOT / "docs" / "configuration.md"
README = ROOT / "README.md"
CI = ROOT / ".ci" / "run"


def commands(
    group: click.Group = cli, prefix: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    """Every command and subcommand under `group`, with its path of names."""
    for name, command in sorted(group.commands.items()):
        yield (*prefix, name), command
        if isinstance(command, click.Group):
            yield from commands(command, (*prefix, name))


COMMANDS = dict(commands())
LEAVES = [path for path, c in COMMANDS.items() if not isinstance(c, click.Group)]
OPTIONS = [
    (path, opt)
    for path, command in [((), cli), *COMMANDS.items()]
    for param in command.params if isinstance(param, click.Option)
    for opt in param.opts + param.secondary_opts
]


def section(text: str, command: tuple[str, ...]) -> str:
    """The part of docs/cli.md about `command`: from its '## ' heading to the next one.

    The global options are described before the first heading.
    """
    parts = re.split(r"^## ", text, flags=re.MULTILINE)
    if not command:
        return parts[0]
    name = re.compile(rf"`coursetutor {' '.join(command)}(?![\w-])")
    found = [p for p in parts[1:] if name.search(p.splitlines()[0])]
    assert found, f"docs/cli.md has no '## ' heading for coursetutor {' '.join(command)}"
    return "".join(found)


def mentions(text: str, option: str) -> bool:
    """Whether `option` (`--type`, `-k`) occurs as a whole option name in `text`."""
    return re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", text) is not None


def test_the_walk_reaches_subcommands() -> None:
    assert {("demo",), ("eval",), ("eval", "retrieval")} <= set(COMMANDS)
    assert ("eval", "retrieval") in LEAVES and ("eval",) not in LEAVES


@pytest.mark.parametrize("name", [f.name for f in dataclasses.fields(Settings)])
def test_every_setting_is_documented(name: str) -> None:
    assert f"`{name}`" in CONFIGURATION_MD.read_text(encoding="utf-8")


@pytest.mark.parametrize("command", list(COMMANDS), ids=" ".join)
def test_every_command_is_documented(command: tuple[str, ...]) -> None:
    assert f"`coursetutor {' '.join(command)}" in CLI_MD.read_text(encoding="utf-8")


@pytest.mark.parametrize("command", LEAVES, ids=" ".join)
def test_every_command_has_a_heading(command: tuple[str, ...]) -> None:
    section(CLI_MD.read_text(encoding="utf-8"), command)


@pytest.mark.parametrize(
    ("command", "option"), OPTIONS, ids=[" ".join(("coursetutor", *c, o)) for c, o in OPTIONS]
)
def test_every_option_is_documented_with_its_command(command: tuple[str, ...], option: str) -> None:
    text = CLI_MD.read_text(encoding="utf-8")
    assert mentions(text, option)
    assert mentions(section(text, command), option)


@pytest.mark.parametrize(
    ("text", "option", "found"),
    [
        ("`--type T`", "--type", True),
        ("`--types`", "--type", False),
        ("--max-difficulty N", "--max-difficulty", True),
        ("`-k N`", "-k", True),
        ("`--keep`", "-k", False),
        ("--dataset xquadr|tvqa", "--dataset", True),
    ],
)
def test_mentions(text: str, option: str, found: bool) -> None:
    assert mentions(text, option) is found


def setup_commands() -> list[str]:
    """The commands of the README's first fenced code block."""
    match = re.search(r"^```[^\n]*\n(.*?)^```", README.read_text(encoding="utf-8"),
                      re.MULTILINE | re.DOTALL)
    assert match, "README.md has no fenced code block"
    return [ln for ln in match.group(1).splitlines() if ln.strip()]


def test_readme_starts_with_two_commands() -> None:
    first, second = setup_commands()
    assert first.endswith("coursetutor demo")
    assert second.endswith("pytest")


def test_ci_runs_the_readme_test_command() -> None:
    _, test_command = setup_commands()
    assert test_command in CI.read_text(encoding="utf-8").splitlines()


DOCS = [README, *sorted((ROOT / "docs").glob("*.md"))]
LINKS = sorted({
    (doc.relative_to(ROOT).as_posix(), target)
    for doc in DOCS
    for target in re.findall(r"\]\(([^)#\s]+)[^)]*\)", doc.read_text(encoding="utf-8"))
    if "://" not in target and not target.startswith("mailto:")
})


def resolve(doc: str, target: str) -> str:
    """The path a relative link in `doc` points at, relative to the repository root."""
    return Path(os.path.normpath(Path(doc).parent / target)).as_posix()


@pytest.mark.parametrize(
    ("doc", "target"),
    [pytest.param(doc, target, id=f"{doc}->{target}") for doc, target in LINKS],
)
def test_relative_links_resolve(doc: str, target: str) -> None:
    assert (ROOT / resolve(doc, target)).exists()


@pytest.mark.parametrize("code", sorted(server_codes()))
def test_every_error_code_is_documented_with_its_params(code: str) -> None:
    api_md = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    table = api_md.split("### Error codes", 1)[1].split("\n#", 1)[0]
    rows = re.findall(r"^\| `(\w+)` \| ([^|]*) \|", table, re.MULTILINE)
    params = {name: set(re.findall(r"`(\w+)`", cell)) for name, cell in rows}
    assert code in params, f"docs/api.md's table of error codes has no row for {code!r}"
    assert params[code] == server_codes()[code]
