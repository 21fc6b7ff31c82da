"""The tutor's commands: ask, chat, models, policy (real llama.cpp with the small model)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from coursetutor.cli import cli
from coursetutor.store import SQLiteStore
from coursetutor.tutor.replies import reply

from .support import SAMPLE_COURSE, TENANT, Sample, copy_db

pytestmark = pytest.mark.prose  # the scripted model writes prose

CONCEPT = "When does Newton's method fail?"


@pytest.fixture
def data_dir(tmp_path: Path, sample: Sample) -> Path:
    copy_db(sample.db_path, tmp_path / "data" / "coursetutor.db")
    return tmp_path / "data"


def invoke(data_dir: Path, env: dict[str, str], *args: str, stdin: str | None = None) -> Result:
    return CliRunner(env=env).invoke(cli, ["--data-dir", str(data_dir), *args], input=stdin,
                                     catch_exceptions=False)


@pytest.fixture
def small_model(smollm_path: Path) -> dict[str, str]:
    return {"COURSETUTOR_LLM_MODEL": str(smollm_path)}


def test_ask_json_answer(data_dir: Path, small_model: dict[str, str]) -> None:
    result = invoke(data_dir, small_model, "ask", CONCEPT, "--course", SAMPLE_COURSE,
                    "--student", "ana", "--json")
    assert result.exit_code == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["category"] == "lecture"
    assert answer["grade"] == "correct"
    assert answer["complete"] is True
    assert answer["prompt_tokens"] > 0
    assert [c["task"] for c in answer["calls"]] == ["answer"]
    assert {"categorize", "retrieve_grade", "generate", "total"} <= set(answer["timings"])
    for source in answer["sources"]:
        assert source["chunk_id"] in answer["context"]
        assert source["type"] != "solution"


def test_ask_streams_then_lists_sources(data_dir: Path, small_model: dict[str, str]) -> None:
    result = invoke(data_dir, small_model, "ask", CONCEPT, "--course", SAMPLE_COURSE)
    assert result.exit_code == 0, result.stderr
    assert "Sources" in result.stdout
    assert "tokens" in result.stderr  # the usage line


def test_ask_an_uncovered_question_says_so(data_dir: Path, small_model: dict[str, str]) -> None:
    result = invoke(data_dir, small_model, "ask", "What is the capital of France?", "--course",
                    SAMPLE_COURSE, "--json")
    answer = json.loads(result.stdout)
    assert (answer["covered"], answer["grade"], answer["sources"]) == (False, "incorrect", [])
    assert answer["text"].startswith(reply("not_covered", "en"))


@pytest.mark.parametrize(("args", "message"), [
    (["ask", " ", "--course", SAMPLE_COURSE], "Error: the question is empty"),
    (["ask", "x" * 4001, "--course", SAMPLE_COURSE],
     "Error: the question has 4001 characters; the limit is 4000 (max_question_chars): "
     "shorten it"),
    (["ask", CONCEPT, "--course", "nope"], "Error: course 'nope' does not exist"),
    (["ask", CONCEPT, "--course", SAMPLE_COURSE, "--session", "nope"],
     "Error: session 'nope' does not exist"),
])
def test_ask_bad_input_is_one_error_line(data_dir: Path, small_model: dict[str, str],
                                         args: list[str], message: str) -> None:
    result = invoke(data_dir, small_model, *args)
    assert result.exit_code == 1
    assert result.stderr.strip() == message


def test_ask_with_a_dead_server_says_what_to_start(data_dir: Path) -> None:
    env = {"COURSETUTOR_LLM_BACKEND": "openai", "COURSETUTOR_LLM_BASE_URL":
           "http://127.0.0.1:9/v1", "COURSETUTOR_LLM_RETRIES": "0"}
    result = invoke(data_dir, env, "ask", CONCEPT, "--course", SAMPLE_COURSE)
    assert result.exit_code == 1
    assert result.stderr.strip().startswith(
        "Error: cannot reach the OpenAI-compatible server at http://127.0.0.1:9/v1; start the "
        "server or fix llm_base_url")


def test_ask_with_a_missing_model_file(data_dir: Path, tmp_path: Path) -> None:
    result = invoke(data_dir, {"COURSETUTOR_LLM_MODEL": str(tmp_path / "none.gguf")}, "ask",
                    CONCEPT, "--course", SAMPLE_COURSE)
    assert result.exit_code == 1
    assert result.stderr.strip() == f"Error: no model file at {tmp_path / 'none.gguf'} (llm_model)"


def test_chat_keeps_one_session_until_new(data_dir: Path, small_model: dict[str, str]) -> None:
    stdin = f"{CONCEPT}\nand the other one?\n/new\n{CONCEPT}\n/quit\n"
    result = invoke(data_dir, small_model, "chat", "--course", SAMPLE_COURSE, "--student", "bo",
                    stdin=stdin)
    assert result.exit_code == 0, result.stderr
    store = SQLiteStore(data_dir / "coursetutor.db")
    try:
        sessions = store.list_sessions(TENANT, SAMPLE_COURSE, "bo")
        turns = [store.list_turns(TENANT, SAMPLE_COURSE, s.id) for s in sessions]
    finally:
        store.close()
    assert sorted(len(t) for t in turns) == [1, 2]
    two = next(t for t in turns if len(t) == 2)
    assert [t.category for t in two] == ["lecture", "followup"]


def test_chat_survives_a_bad_turn(data_dir: Path, small_model: dict[str, str]) -> None:
    result = invoke(data_dir, small_model, "chat", "--course", SAMPLE_COURSE, stdin="  \n/quit\n")
    assert result.exit_code == 0
    assert "Error: the question is empty" in result.stderr


def test_models_lists_every_backend(data_dir: Path, small_model: dict[str, str]) -> None:
    result = invoke(data_dir, {**small_model, "COURSETUTOR_LLM_TIMEOUT": "1"}, "models", "--json")
    assert result.exit_code == 0
    rows = {r["name"]: r for r in json.loads(result.stdout)}
    assert set(rows) == {"local", "ollama", "openai", "none"}
    assert rows["local"]["configured"] and rows["local"]["ready"]
    assert rows["local"]["detail"] == "GGUF file found"
    assert rows["none"]["ready"]


def test_policy_shows_and_sets(data_dir: Path) -> None:
    result = invoke(data_dir, {}, "policy", "--course", SAMPLE_COURSE)
    assert result.stdout.strip() == f"{SAMPLE_COURSE}: solutions hidden from students"
    result = invoke(data_dir, {}, "policy", "--course", SAMPLE_COURSE, "--allow-solutions")
    assert result.stdout.strip() == f"{SAMPLE_COURSE}: solutions allowed"
    result = invoke(data_dir, {}, "policy", "--course", "nope", "--hide-solutions")
    assert result.exit_code == 1
    assert result.stderr.strip() == "Error: course 'nope' does not exist"
