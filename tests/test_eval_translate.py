"""`coursetutor eval retrieval --translate`: questions translated as the tutor translates them."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from coursetutor.cli import cli
from coursetutor.config import Settings
from coursetutor.eval.cli import retrieval as eval_cli
from coursetutor.eval.retrieval import QueryTranslator
from coursetutor.llm.base import LLM, Delta, GenParams, Message, Usage
from coursetutor.llm.router import Router
from coursetutor.tutor import prompts
from coursetutor.tutor.replies import language_name

from .test_eval import METRICS, MODES, tiny_xquadr

# the English questions q0-q2 of tiny_xquadr, two of them asked in Chinese
CHINESE = {
    "欧洲最高的活火山是哪一座？": "Which is the tallest active volcano in Europe?",
    "埃特纳火山的熔岩流到达哪个城镇？": "Which town do the lava flows of Etna reach?",
}
QUESTIONS = [
    (0, 0, 0, "欧洲最高的活火山是哪一座？"),
    (0, 0, 1, "埃特纳火山的熔岩流到达哪个城镇？"),
    (0, 0, 2, "Which city did Vesuvius bury under ash?"),  # already in the pool's language
]


class Translator(LLM):
    """Answers the translate prompt from a dictionary (nothing for unknown questions)."""

    backend = "scripted"

    def __init__(self, translations: dict[str, str]) -> None:
        super().__init__("scripted-model")
        self.translations = translations
        self.prompts: list[str] = []

    @classmethod
    def from_settings(cls, settings: Settings, model: str) -> Translator:
        return cls({})

    def stream(self, messages: Sequence[Message], params: GenParams) -> Iterator[Delta]:
        [message] = messages
        self.prompts.append(message.content)
        question = message.content.rsplit("Question: ", 1)[-1]
        yield Delta(self.translations.get(question, ""))
        yield Delta(usage=Usage(len(message.content.split()), 1), finish="stop")


@pytest.fixture(autouse=True)
def _no_config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI reads ./coursetutor.toml and COURSETUTOR_* variables: none of either here."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("COURSETUTOR_LLM_BACKEND", raising=False)


@pytest.fixture
def model(monkeypatch: pytest.MonkeyPatch) -> Translator:
    """The model the CLI's Router hands out, for every task."""
    fake = Translator(CHINESE)
    monkeypatch.setattr(eval_cli, "Router",
                        lambda settings: Router(settings, factory=lambda task, name: fake))
    return fake


def run_eval(tmp_path: Path, *args: str) -> Result:
    english = tiny_xquadr(tmp_path / "xquadr-en.json")
    chinese = tiny_xquadr(tmp_path / "xquadr-zh.json", QUESTIONS)
    return CliRunner().invoke(cli, [
        "--data-dir", str(tmp_path / "data"), "eval", "retrieval", "--dataset", "xquadr",
        "--path", str(english), "--query-lang", str(chinese), "--translate", *args,
    ], catch_exceptions=False)


def test_only_questions_in_another_language_are_translated(
    tmp_path: Path, model: Translator
) -> None:
    result = run_eval(tmp_path, "--json")
    assert result.exit_code == 0, result.stderr
    assert "Traceback" not in result.stderr  # progress only
    report = json.loads(result.stdout)
    assert set(report) >= {"dataset", "questions", "units", "seconds", "translate", *MODES,
                           "hybrid_other_query"}
    assert (report["dataset"], report["questions"], report["units"]) == ("xquadr-zh-en", 3, 9)
    for mode in [*MODES, "hybrid_other_query"]:
        assert list(report[mode]) == METRICS
    # the same prompt as the tutor's, into the pool's language, for the Chinese questions only
    assert model.prompts == [prompts.render("translate", language=language_name("en"), question=q,
                                            terms="") for q in CHINESE]
    translate = report["translate"]
    assert list(translate) == ["backend", "model", "translated", "unchanged",
                               "median_seconds", "seconds"]
    assert translate["backend"] == "scripted" and translate["model"] == "scripted-model"
    assert (translate["translated"], translate["unchanged"]) == (2, 0)
    assert 0.0 <= translate["median_seconds"] < 1.0
    # the English translations share the sentences' rare words: BM25 finds every gold sentence
    assert report["bm25"]["R@1"] == 1.0


def test_without_translate_no_model_is_asked(tmp_path: Path, model: Translator) -> None:
    english = tiny_xquadr(tmp_path / "xquadr-en.json")
    chinese = tiny_xquadr(tmp_path / "xquadr-zh.json", QUESTIONS)
    result = CliRunner().invoke(cli, [
        "--data-dir", str(tmp_path / "data"), "eval", "retrieval", "--dataset", "xquadr",
        "--path", str(english), "--query-lang", str(chinese), "--json",
    ], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    assert "translate" not in json.loads(result.stdout)
    assert model.prompts == []


def test_limit_and_table(tmp_path: Path, model: Translator) -> None:
    result = run_eval(tmp_path, "--limit", "1")
    assert result.exit_code == 0, result.stderr
    assert len(model.prompts) == 1
    lines = result.stdout.splitlines()
    assert lines[1].startswith("xquadr-zh-en (en): 1 questions, 9 units, ")
    assert re.fullmatch(r"translated 1 questions with scripted scripted-model "
                        r"\(median \d+\.\d\d s; 0 left untranslated by the model\)", lines[-1])


def test_no_usable_translation_searches_the_original() -> None:
    fake = Translator({"二分法是如何工作的？": "How does the bisection method work?"})
    translator = QueryTranslator(Router(Settings(), factory=lambda task, name: fake))
    assert translator("How does bisection work?", "en") == "How does bisection work?"
    assert translator("二分法是如何工作的？", "en") == (
        "How does the bisection method work? 二分法是如何工作的？")
    assert translator("牛顿法什么时候失败？", "en") == "牛顿法什么时候失败？"  # empty reply
    # an English question in an Italian course is translated into Italian
    assert translator("How does bisection work?", "it") == "How does bisection work?"
    assert fake.prompts[-1] == prompts.render("translate", language=language_name("it"),
                                              question="How does bisection work?", terms="")
    report = translator.report()
    assert (report["translated"], report["unchanged"]) == (3, 2)
    assert len(translator.log) == 3 and {r.task for r in translator.log} == {"categorize"}


def test_translate_needs_a_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COURSETUTOR_LLM_BACKEND", "none")
    result = run_eval(tmp_path, "--json")
    assert result.exit_code == 1
    assert result.stderr == "Error: --translate needs a model, but llm_backend is 'none'\n"
    assert result.stdout == ""


def test_translate_fails_early_when_the_model_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COURSETUTOR_LLM_BACKEND", "local")
    monkeypatch.setenv("COURSETUTOR_LLM_MODEL", str(tmp_path / "absent.gguf"))
    result = run_eval(tmp_path, "--json")
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: ") and result.stderr.count("\n") == 1
    assert result.stdout == ""
    assert not (tmp_path / "data").exists()  # failed before any course was built
