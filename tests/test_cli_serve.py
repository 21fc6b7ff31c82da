"""`coursetutor keys`, `enrol` and `serve`, run in-process with click's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from click.testing import CliRunner, Result

from coursetutor.api import logs
from coursetutor.api.access import authenticate
from coursetutor.cli import cli
from coursetutor.cli import serve as cli_serve
from coursetutor.cli.serve import first_keys
from coursetutor.config import Settings
from coursetutor.errors import AuthenticationError
from coursetutor.store import SQLiteStore
from coursetutor.workspace import Workspace

from .support import SAMPLE_COURSE, Sample, copy_db


@pytest.fixture(autouse=True)
def _no_config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI reads ./coursetutor.toml when present: run where there is none."""
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def data_dir(tmp_path: Path, sample: Sample) -> Path:
    """A data directory holding a copy of the ingested sample course."""
    copy_db(sample.db_path, tmp_path / "data" / "coursetutor.db")
    return tmp_path / "data"


def run(data_dir: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--data-dir", str(data_dir), *args],
                              catch_exceptions=False)


def store_of(data_dir: Path) -> SQLiteStore:
    return SQLiteStore(data_dir / "coursetutor.db")


def create(data_dir: Path, *args: str, tenant: str | None = None) -> dict[str, Any]:
    prefix = ["--tenant", tenant] if tenant else []
    result = run(data_dir, *prefix, "keys", "create", "--json", *args)
    assert result.exit_code == 0, result.stderr
    found: dict[str, Any] = json.loads(result.stdout)
    return found


# -- keys ----------------------------------------------------------------------------------


def test_keys_create_json(data_dir: Path) -> None:
    made = create(data_dir, "--role", "student", "--student", "ana", "--name", "Ana")
    assert made == {"id": made["id"], "key": made["key"], "tenant": "default",
                    "role": "student", "student": "ana", "name": "Ana"}
    assert made["key"].startswith(f"ct_{made['id']}_")
    store = store_of(data_dir)
    try:
        key = authenticate(store, made["key"])
        assert (key.id, key.role, key.student, key.revoked) == (made["id"], "student", "ana",
                                                               None)
        assert made["key"] not in (data_dir / "coursetutor.db").read_bytes().decode("latin-1")
    finally:
        store.close()


def test_keys_create_in_a_new_tenant(data_dir: Path) -> None:
    made = create(data_dir, "--role", "teacher", "--name", "Prof. Rossi", tenant="uni-a")
    assert (made["tenant"], made["role"], made["student"]) == ("uni-a", "teacher", "")
    store = store_of(data_dir)
    try:
        assert [t.id for t in store.list_tenants()] == ["default", "uni-a"]
    finally:
        store.close()


def test_keys_create_text(data_dir: Path) -> None:
    result = run(data_dir, "keys", "create", "--role", "admin")
    assert result.exit_code == 0
    first, = result.stdout.splitlines()
    words = first.split()
    assert words[:3] == ["admin", "key", words[2]] and words[3:6] == ["for", "tenant",
                                                                     "default:"]
    assert words[6].startswith(f"ct_{words[2]}_")
    assert result.stderr == "Keep it: it is not stored and cannot be shown again.\n"


@pytest.mark.parametrize(("args", "message"), [
    (["--role", "student"], "a student key needs the student id it asks as"),
    (["--role", "teacher", "--student", "ana"],
     "only student keys name a student; this is a teacher key"),
    (["--role", "student", "--student", "no spaces"],
     "student id 'no spaces' is not valid: use 1-128 letters, digits and _ . @ -, starting "
     "with a letter or digit"),
])
def test_keys_create_errors(data_dir: Path, args: list[str], message: str) -> None:
    result = run(data_dir, "keys", "create", *args)
    assert (result.exit_code, result.stderr, result.stdout) == (1, f"Error: {message}\n", "")


def test_keys_create_an_unknown_role(data_dir: Path) -> None:
    result = run(data_dir, "keys", "create", "--role", "owner")
    assert result.exit_code == 2 and "'owner' is not one of" in result.stderr


def test_keys_list(data_dir: Path) -> None:
    teacher = create(data_dir, "--role", "teacher", "--name", "Prof. Rossi")
    student = create(data_dir, "--role", "student", "--student", "ana")
    other = create(data_dir, "--role", "teacher", tenant="uni-b")
    result = run(data_dir, "keys", "list", "--json")
    assert json.loads(result.stdout) == [
        {"id": teacher["id"], "tenant": "default", "role": "teacher", "student": "",
         "name": "Prof. Rossi", "revoked": False},
        {"id": student["id"], "tenant": "default", "role": "student", "student": "ana",
         "name": "", "revoked": False}]
    everywhere = json.loads(run(data_dir, "keys", "list", "--all-tenants", "--json").stdout)
    assert [k["id"] for k in everywhere] == [teacher["id"], student["id"], other["id"]]
    text = run(data_dir, "keys", "list").stdout
    assert text == (f"{teacher['id']}  default  teacher  {'-':<16} {'active':<8} Prof. Rossi\n"
                    f"{student['id']}  default  student  {'ana':<16} {'active':<8} \n")
    assert teacher["key"] not in text and student["key"] not in text


def test_keys_revoke(data_dir: Path) -> None:
    made = create(data_dir, "--role", "student", "--student", "ana")
    result = run(data_dir, "keys", "revoke", made["id"])
    assert (result.exit_code, result.stdout) == (
        0, f"Revoked student key {made['id']} of tenant default.\n")
    listed = json.loads(run(data_dir, "keys", "list", "--json").stdout)
    assert [(k["id"], k["revoked"]) for k in listed] == [(made["id"], True)]
    assert "revoked" in run(data_dir, "keys", "list").stdout
    store = store_of(data_dir)
    try:
        with pytest.raises(AuthenticationError, match="revoked"):
            authenticate(store, made["key"])
    finally:
        store.close()


def test_keys_revoke_an_unknown_key(data_dir: Path) -> None:
    result = run(data_dir, "keys", "revoke", "000000000000")
    assert (result.exit_code, result.stderr) == (
        1, "Error: key '000000000000' does not exist\n")


# -- enrol ---------------------------------------------------------------------------------


def students(data_dir: Path, tenant: str = "default") -> list[str]:
    store = store_of(data_dir)
    try:
        return store.list_students(tenant, SAMPLE_COURSE)
    finally:
        store.close()


def test_enrol_and_remove(data_dir: Path) -> None:
    result = run(data_dir, "enrol", "--course", SAMPLE_COURSE, "--student", "ana",
                 "--student", "bob")
    assert (result.exit_code, result.stdout) == (
        0, f"Enrolled 2 student(s) in {SAMPLE_COURSE}.\n")
    assert students(data_dir) == ["ana", "bob"]
    again = run(data_dir, "enrol", "--course", SAMPLE_COURSE, "--student", "ana")
    assert again.exit_code == 0 and students(data_dir) == ["ana", "bob"]
    removed = run(data_dir, "enrol", "--course", SAMPLE_COURSE, "--student", "bob", "--remove")
    assert (removed.exit_code, removed.stdout) == (
        0, f"Removed 1 student(s) from {SAMPLE_COURSE}.\n")
    assert students(data_dir) == ["ana"]


@pytest.mark.parametrize(("args", "message"), [
    (["--course", "no-such-course", "--student", "ana"], "course 'no-such-course' does not exist"),
    (["--course", SAMPLE_COURSE, "--student", "zed", "--remove"],
     f"student 'zed' is not enrolled in {SAMPLE_COURSE!r}"),
])
def test_enrol_errors(data_dir: Path, args: list[str], message: str) -> None:
    result = run(data_dir, "enrol", *args)
    assert (result.exit_code, result.stderr, result.stdout) == (1, f"Error: {message}\n", "")


def test_enrol_in_another_tenant(data_dir: Path) -> None:
    result = run(data_dir, "--tenant", "uni-b", "enrol", "--course", SAMPLE_COURSE,
                 "--student", "ana")
    assert (result.exit_code, result.stderr) == (
        1, f"Error: course {SAMPLE_COURSE!r} does not exist\n")


# -- serve ---------------------------------------------------------------------------------


def test_first_keys(data_dir: Path) -> None:
    with Workspace(Settings(data_dir=data_dir)) as ws:
        made = first_keys(ws)
        assert [(role, who) for role, who, _ in made] == [("teacher", made[0][1]),
                                                          ("student", "student-1")]
        teacher = authenticate(ws.store, made[0][2])
        student = authenticate(ws.store, made[1][2])
        assert (teacher.role, teacher.id, student.role, student.student) == (
            "teacher", made[0][1], "student", "student-1")
        assert ws.store.student_courses("default", "student-1") == [SAMPLE_COURSE]
        assert first_keys(ws) == []  # only on a store without keys


class Served:
    """What `serve` handed to uvicorn.run (and the log level it set up)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[tuple[Any, dict[str, Any]]] = []
        self.log_levels: list[str] = []
        monkeypatch.setattr(uvicorn, "run", self)
        # the real set-up rewires process-wide loggers; keep them for the other tests
        monkeypatch.setattr(logs, "setup", self.log_levels.append)

    def __call__(self, app: Any, **kwargs: Any) -> None:
        self.calls.append((app, kwargs))


def test_serve_prints_the_first_keys_then_runs(data_dir: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    served = Served(monkeypatch)
    monkeypatch.setattr(cli_serve, "_terminal", lambda: True)  # else they go to a file
    result = run(data_dir, "serve", "--port", "8123")
    assert result.exit_code == 0, result.stderr
    lines = result.stderr.splitlines()
    assert lines[0].startswith("New teacher key (") and ", shown only now: ct_" in lines[0]
    assert lines[1].startswith("New student key (student-1), shown only now: ct_")
    assert lines[2] == ("Student page http://127.0.0.1:8123/  teacher page "
                        "http://127.0.0.1:8123/teacher  API docs http://127.0.0.1:8123/docs")
    ((app, kwargs),) = served.calls
    assert (kwargs["host"], kwargs["port"]) == ("127.0.0.1", 8123)
    assert (app.title, kwargs["log_config"], served.log_levels) == ("coursetutor", None,
                                                                     ["info"])
    again = run(data_dir, "serve", "--host", "0.0.0.0")
    assert again.exit_code == 0
    assert "New " not in again.stderr and "http://0.0.0.0:8000/" in again.stderr


def test_serve_empty_loads_no_sample(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    served = Served(monkeypatch)
    data_dir = tmp_path / "empty"
    result = run(data_dir, "serve", "--empty")
    assert result.exit_code == 0, result.stderr
    assert "Loading the sample course" not in result.stderr and len(served.calls) == 1
    store = store_of(data_dir)
    try:
        assert store.list_courses("default") == []
        assert [k.role for k in store.list_keys("default")] == ["teacher", "student"]
    finally:
        store.close()


def test_serve_names_each_feature_a_missing_package_turns_off(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from coursetutor.config import load_settings

    real = importlib.util.find_spec
    gone = {"websockets", "llama_cpp"}
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name in gone else real(name, *a))
    lines = cli_serve.missing_features(load_settings(env={}, llm_backend="local"))
    assert "live captions (the class WebSocket) is off: pip install 'coursetutor[live]'" in lines
    assert any(line.startswith("the bundled model is off") for line in lines)
    gone.clear()
    assert not [line for line in cli_serve.missing_features(load_settings(env={}))
                if "captions" in line or "bundled" in line]


def test_the_readme_install_serves_the_captions_socket() -> None:
    import tomllib

    project = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    assert any(d.startswith("websockets") for d in project["project"]["dependencies"])
