"""`coursetutor class`: start, feed a recorded lecture, status, list and end, in-process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from coursetutor.cli import cli

from .support import SAMPLE_COURSE, SAMPLE_DIR, Sample, copy_db

SRT = SAMPLE_DIR / "lecture-01-video.srt"


@pytest.fixture
def data_dir(tmp_path: Path, sample: Sample, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)  # no ./coursetutor.toml
    copy_db(sample.db_path, tmp_path / "data" / "coursetutor.db")
    return tmp_path / "data"


def run(data_dir: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--data-dir", str(data_dir), "class", *args],
                              catch_exceptions=False)


def test_a_class_from_start_to_end(data_dir: Path) -> None:
    started = run(data_dir, "start", "--course", SAMPLE_COURSE, "--title", "Newton", "--json")
    assert started.exit_code == 0, started.output
    lc = json.loads(started.stdout)
    assert (lc["title"], lc["running"], lc["document"]) == ("Newton", True, f"class-{lc['id']}")
    fed = run(data_dir, "feed", str(SRT), "--course", SAMPLE_COURSE, "--speed", "0", "--json")
    assert fed.exit_code == 0, fed.output
    figures = json.loads(fed.stdout)
    assert (figures["class"], figures["events"], figures["posts"]) == (lc["id"], 121, 121)
    assert 10 <= figures["chunks"] <= 40  # ~300-500 characters each
    assert 0 < figures["lag_p50_s"] <= figures["lag_p95_s"]
    status = json.loads(run(data_dir, "status", "--course", SAMPLE_COURSE, "--json").stdout)
    assert (status["events"], status["chunks"], status["running"]) == (
        121, figures["chunks"], True)
    assert status["slide_following"] == "teacher"  # no deck: the teacher's page events
    assert status["last_event"]["text"] == "before Thursday. Thanks everyone, see you next time."
    search = CliRunner().invoke(cli, ["--data-dir", str(data_dir), "search",
                                      "Newton's method tangent line", "--course",
                                      SAMPLE_COURSE, "--json", "-k", "10"])
    assert f"class-{lc['id']}" in {h["document_id"] for h in json.loads(search.stdout)}
    ended = run(data_dir, "end", "--course", SAMPLE_COURSE)
    assert ended.exit_code == 0 and ended.stdout.startswith(f"ended {lc['id']}  Newton")
    listed = run(data_dir, "list", "--course", SAMPLE_COURSE)
    assert listed.stdout.count("\n") == 1 and " ended " in listed.stdout
    again = run(data_dir, "end", "--course", SAMPLE_COURSE)
    assert again.exit_code == 1
    assert again.stderr == (f"Error: no class is running in course {SAMPLE_COURSE!r}; "
                            "name the class\n")


def test_feeding_with_no_running_class_runs_one_for_the_file(data_dir: Path) -> None:
    fed = run(data_dir, "feed", str(SRT), "--course", SAMPLE_COURSE, "--speed", "0")
    assert fed.exit_code == 0, fed.output
    assert fed.stdout.startswith("fed 121 sentences in 121 posts to class ")
    listed = json.loads(run(data_dir, "list", "--course", SAMPLE_COURSE, "--json").stdout)
    assert [(c["title"], c["running"]) for c in listed] == [("lecture-01-video", False)]


@pytest.mark.parametrize("args, message", [
    (["feed", "notes.txt", "--course", SAMPLE_COURSE],
     "notes.txt: a recorded transcript is .json, .vtt or .srt"),
    (["start", "--course", "nope"], "course 'nope' does not exist"),
    (["start", "--course", SAMPLE_COURSE, "--slides", "nope"],
     f"document 'nope' does not exist in course {SAMPLE_COURSE!r}"),
])
def test_errors_are_one_line(data_dir: Path, args: list[str], message: str) -> None:
    result = run(data_dir, *args)
    assert (result.exit_code, result.stderr, result.stdout) == (1, f"Error: {message}\n", "")
