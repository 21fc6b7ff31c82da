"""The local llama.cpp backend with the real SmolLM2-135M, and the bundled-model join."""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest

from coursetutor.config import Settings
from coursetutor.errors import MissingDependencyError, ModelBusyError, ModelNotFoundError
from coursetutor.llm import bundled
from coursetutor.llm.base import GenParams, Message
from coursetutor.llm.bundled import INSTALL_HINT, BundledModel, bundled_model_path, part_files
from coursetutor.llm.local import LocalLLM
from coursetutor.llm.router import CallRecord, Router
from coursetutor.retrieval import EmbeddingModel
from coursetutor.store import SQLiteStore
from coursetutor.tutor.turn import Tutor
from coursetutor.types import DoneEvent, MetaEvent, SourcesEvent
from coursetutor.workspace import Workspace

from .support import SAMPLE_COURSE

needs_llama_cpp = pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None,
                                     reason="the local backend needs llama-cpp-python")
QUESTION = [Message("system", "You are a tutor."), Message("user", "What is bisection?")]


@pytest.fixture(scope="module")
def smollm(smollm_path: Path) -> Iterator[LocalLLM]:
    llm = LocalLLM(smollm_path, threads=4, context_tokens=2048)
    yield llm
    llm.close()


# -- the local backend ---------------------------------------------------------------------


def test_stream_yields_text_then_usage(smollm: LocalLLM) -> None:
    deltas = list(smollm.stream(QUESTION, GenParams(temperature=0.0, max_tokens=8)))
    *text, last = deltas
    assert text and all(d.text and d.usage is None and d.finish is None for d in text)
    assert last.text == ""
    assert last.usage is not None
    assert last.usage.completion_tokens == len(text) == 8
    assert last.usage.prompt_tokens > 10
    assert last.finish == "length"


def test_complete_is_the_joined_stream(smollm: LocalLLM) -> None:
    params = GenParams(temperature=0.0, max_tokens=12)
    streamed = "".join(d.text for d in smollm.stream(QUESTION, params))
    done = smollm.complete(QUESTION, params)
    assert (done.text, done.finish, done.usage.completion_tokens) == (streamed, "length", 12)


def test_json_mode_constrains_the_output(smollm: LocalLLM) -> None:
    done = smollm.complete([Message("user", "Is 2 bigger than 1? Answer in JSON.")],
                           GenParams(temperature=0.0, max_tokens=16, json=True))
    assert done.text.lstrip().startswith("{")


def test_prompt_tokens_do_not_depend_on_how_the_reply_ended(smollm: LocalLLM) -> None:
    ask = [Message("user", "What is 2+2? Answer with a number only.")]
    short = list(smollm.stream(ask, GenParams(temperature=0.0, max_tokens=3)))[-1]
    whole = list(smollm.stream(ask, GenParams(temperature=0.0, max_tokens=300)))[-1]
    assert (short.finish, whole.finish) == ("length", "stop")
    assert short.usage is not None and whole.usage is not None
    assert short.usage.prompt_tokens == whole.usage.prompt_tokens


def test_a_stream_stopped_early_is_still_booked(smollm: LocalLLM) -> None:
    """The tutor closes a looping stream before its usage comes: the router counts it."""
    router = Router(Settings(), factory=lambda task, model: smollm)
    log: list[CallRecord] = []
    deltas = router.stream("answer", QUESTION, GenParams(temperature=0.0, max_tokens=20), log)
    next(deltas), next(deltas)
    deltas.close()
    [call] = log
    assert call.usage.prompt_tokens > 5 and call.usage.completion_tokens >= 1


def test_forgetting_prompts_changes_no_reply(smollm: LocalLLM) -> None:
    """A cold start (as the latency benchmark makes) gives the same greedy reply."""
    params = GenParams(temperature=0.0, max_tokens=10)
    warm = smollm.complete(QUESTION, params)
    smollm.forget_prompts()
    cold = smollm.complete(QUESTION, params)
    assert (cold.text, cold.usage) == (warm.text, warm.usage)


def test_count_tokens(smollm: LocalLLM) -> None:
    assert smollm.count_tokens("Bisection halves the bracket.") == 7
    assert smollm.count_tokens("") == 0
    assert smollm.count_tokens("二分法每一步把区间减半。") > 0


def test_from_settings_uses_the_model_path_and_context(smollm_path: Path, tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, llm_model=str(smollm_path), llm_context_tokens=1024)
    llm = LocalLLM.from_settings(settings, str(smollm_path))
    assert (llm.model, llm.context_tokens, llm.backend) == (str(smollm_path), 1024, "local")
    assert list(tmp_path.iterdir()) == []  # a GGUF path needs no joined bundled model


@needs_llama_cpp
def test_a_file_that_is_not_gguf(tmp_path: Path) -> None:
    bad = tmp_path / "model.gguf"
    bad.write_bytes(b"this is not a model\n" * 64)
    with pytest.raises(ModelNotFoundError, match=r"cannot load .* as a GGUF model"):
        LocalLLM(bad)


@needs_llama_cpp
def test_a_missing_model_file(tmp_path: Path) -> None:
    with pytest.raises(ModelNotFoundError, match="no model file at"):
        LocalLLM(tmp_path / "missing.gguf")


# -- the bundled model: parts joined once and verified -------------------------------------

PARTS = [b"GGUF" + b"a" * 1000, b"b" * 777, b"c" * 5]
JOINED = b"".join(PARTS)


def tiny_model(sha256: str = hashlib.sha256(JOINED).hexdigest(),
               prefix: str = "coursetutor_test_no_such_part") -> BundledModel:
    return BundledModel("tiny", "tiny.gguf", prefix, len(PARTS), sha256)


@pytest.fixture
def parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Small part files standing in for the installed part packages."""
    files = []
    for i, data in enumerate(PARTS):
        files.append(tmp_path / "parts" / f"{i}.bin")
        files[-1].parent.mkdir(exist_ok=True)
        files[-1].write_bytes(data)
    monkeypatch.setattr(bundled, "part_files", lambda model: files)
    return files


def test_missing_part_packages_raise_with_the_install_hint(tmp_path: Path) -> None:
    with pytest.raises(MissingDependencyError, match="tiny is not installed") as caught:
        bundled_model_path(tmp_path / "models", tiny_model())
    assert INSTALL_HINT in str(caught.value)
    assert not (tmp_path / "models" / "tiny.gguf").exists()


def test_part_files_come_from_the_part_packages(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    for n, names in [(1, ["b.bin", "a.bin", "notes.txt"]), (2, ["c.bin"])]:
        data = tmp_path / "site" / f"ct_fake_part{n}" / "data"
        data.mkdir(parents=True)
        (data.parent / "__init__.py").write_text("")
        for name in names:
            (data / name).write_bytes(name.encode())
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    importlib.invalidate_caches()
    model = BundledModel("fake", "fake.gguf", "ct_fake_part", 2, "0" * 64)
    assert [p.relative_to(tmp_path / "site").as_posix() for p in part_files(model)] == [
        "ct_fake_part1/data/a.bin", "ct_fake_part1/data/b.bin", "ct_fake_part2/data/c.bin",
    ]
    with pytest.raises(ModelNotFoundError, match="checksum"):
        bundled_model_path(tmp_path / "models", model)


def test_part_packages_without_data_files(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "site" / "ct_empty_part1").mkdir(parents=True)
    (tmp_path / "site" / "ct_empty_part1" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    importlib.invalidate_caches()
    with pytest.raises(MissingDependencyError, match="no data files"):
        part_files(BundledModel("empty", "empty.gguf", "ct_empty_part", 1, "0" * 64))


def test_checksum_mismatch_leaves_nothing_behind(tmp_path: Path, parts: list[Path]) -> None:
    models = tmp_path / "models"
    with pytest.raises(ModelNotFoundError, match="refusing to load it"):
        bundled_model_path(models, tiny_model(sha256="0" * 64))
    assert list(models.iterdir()) == []


def test_parts_are_joined_and_verified_once(tmp_path: Path, parts: list[Path],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    models = tmp_path / "models"
    path = bundled_model_path(models, tiny_model())
    assert path == models / "tiny.gguf"
    assert path.read_bytes() == JOINED
    marker = models / "tiny.gguf.verified"
    stat = path.stat()
    assert marker.read_text() == f"{stat.st_size} {stat.st_mtime_ns}"
    assert sorted(p.name for p in models.iterdir()) == ["tiny.gguf", "tiny.gguf.verified"]

    def no_rehash(path: Path) -> str:
        raise AssertionError("a verified model was hashed again")

    monkeypatch.setattr(bundled, "_sha256", no_rehash)
    monkeypatch.setattr(bundled, "part_files", lambda model: pytest.fail("joined again"))
    assert bundled_model_path(models, tiny_model()) == path
    assert path.stat().st_mtime_ns == stat.st_mtime_ns


def test_a_joined_file_without_marker_is_hashed_and_marked(tmp_path: Path) -> None:
    target = tmp_path / "tiny.gguf"
    target.write_bytes(JOINED)
    assert bundled_model_path(tmp_path, tiny_model()) == target
    assert (tmp_path / "tiny.gguf.verified").is_file()


def test_a_changed_joined_file_is_refused(tmp_path: Path, parts: list[Path]) -> None:
    path = bundled_model_path(tmp_path, tiny_model())
    path.write_bytes(JOINED[:-1] + b"X")  # same size, new mtime: the marker no longer matches
    with pytest.raises(ModelNotFoundError, match="delete it to rejoin"):
        bundled_model_path(tmp_path, tiny_model())


# -- one tutor turn with the real small model ----------------------------------------------


@pytest.mark.slow
def test_tutor_turn_with_the_real_model(tmp_path: Path, smollm_path: Path,
                                        sample_store: SQLiteStore,
                                        embedder: EmbeddingModel) -> None:
    settings = Settings(data_dir=tmp_path, llm_model=str(smollm_path), llm_max_tokens=40,
                        llm_temperature=0.0)
    tutor = Tutor(Workspace(settings, store=sample_store, embedder=embedder))
    events = list(tutor.stream("How does the bisection method work?", SAMPLE_COURSE))
    assert isinstance(events[0], MetaEvent)
    assert isinstance(events[-2], SourcesEvent)
    done = events[-1]
    assert isinstance(done, DoneEvent)
    answer = done.answer
    assert (answer.complete, answer.grade, answer.category) == (True, "correct", "lecture")
    assert answer.prompt_tokens > 100
    answered = [c for c in answer.calls if c["task"] == "answer"]
    assert 0 < int(answered[0]["completion_tokens"]) <= 40  # type: ignore[call-overload]
    assert [c["backend"] for c in answer.calls][-1] == "local"
    assert answer.text.strip()
    tutor.router.close()


def test_the_prompt_cache_counts_what_its_states_keep(smollm: LocalLLM) -> None:
    from coursetutor.llm.prompt_cache import prompt_cache

    context = smollm._contexts[0]
    llama = context.llama
    with context.lock:
        llama.reset()
        tokens = llama.tokenize(b"The bisection method halves a bracket.")
        llama.eval(tokens)
        state = llama.save_state()
    # no copy of the logits table (n_batch x vocabulary floats) nothing reads
    assert state.scores.nbytes == 0 and state.n_tokens == len(tokens)
    per_state = state.llama_state_size + state.scores.nbytes + state.input_ids.nbytes
    cache = prompt_cache(capacity_bytes=2 * per_state + per_state // 2)
    for key in ((1,), (2,), (3,)):
        cache[key] = state
    assert cache.cache_size == 2 * per_state  # the oldest went out to stay under the cap
    assert (1,) not in cache and (3,) in cache


def test_a_prompt_state_loaded_from_the_cache_gives_the_same_reply(
        smollm: LocalLLM, monkeypatch: pytest.MonkeyPatch) -> None:
    smollm.forget_prompts()
    params = GenParams(temperature=0.0, max_tokens=12)
    first = [Message("system", "You are a tutor."), Message("user", "What is bisection?")]
    other = [Message("system", "You are a tutor."), Message("user", "What is a secant?")]
    fresh = smollm.complete(first, params).text
    smollm.complete(other, params)  # the context now holds the other prompt
    llama = smollm._contexts[0].llama
    loaded: list[int] = []
    load = llama.load_state
    monkeypatch.setattr(llama, "load_state", lambda state: (loaded.append(state.n_tokens),
                                                            load(state))[1])
    assert smollm.complete(first, params).text == fresh
    assert loaded  # the first prompt's state came back from the cache, not evaluated again


def test_answers_and_short_tasks_keep_their_prompts_apart(smollm: LocalLLM) -> None:
    smollm.forget_prompts()
    params = GenParams(temperature=0.0, max_tokens=2)
    smollm.complete([Message("system", "You are a tutor."), Message("user", "Hi.")], params)
    for question in ("Is the sky blue?", "Is grass green?", "Is snow white?"):
        smollm.complete([Message("user", f"{question} Answer yes or no.")], params)
    answers, tasks = (context.llama.cache for context in smollm._contexts)
    # one cache for both contexts: a judge's prompts leave the answer's state in it
    assert answers is tasks and len(answers.cache_state) == 4
    assert any(key[:20] == tuple(smollm._contexts[0].llama.input_ids[:20])
               for key in answers.cache_state)


def test_a_prompt_one_context_evaluated_loads_into_the_other(smollm: LocalLLM) -> None:
    """A translation runs in the answers' context when it is free and in the tasks' while an
    answer is written: the instructions either evaluated serve both, and the reply is the
    one a context that evaluated the whole prompt gives."""
    rules = "Translate the student's sentence into Italian. Keep formulas as written. " * 4
    first = [Message("system", rules), Message("user", "The bisection method halves a bracket.")]
    second = [Message("system", rules), Message("user", "The secant method needs two points.")]
    params = GenParams(temperature=0.0, max_tokens=10)
    answers = smollm._contexts[0]
    smollm._context(1)
    smollm.forget_prompts()
    with answers.lock:  # the tasks' context evaluates the whole prompt
        alone = smollm.complete(second, params).text
    smollm.forget_prompts()
    smollm.complete(first, params)  # in the answers' context
    with answers.lock:
        tasks = smollm._contexts[1].llama
        evaluated: list[int] = []
        real = tasks.eval
        tasks.eval = lambda tokens: (evaluated.append(len(tokens)), real(tokens))
        try:
            loaded = smollm.complete(second, params).text
        finally:
            del tasks.eval
    prompt = len(tasks.tokenize(rules.encode(), add_bos=False))
    assert loaded == alone and evaluated and evaluated[0] < prompt


def test_a_short_task_runs_while_an_answer_stream_is_paused(smollm: LocalLLM) -> None:
    """The tutor judges a statement while the model has more statements to write: the judge
    gets the second context, and the paused answer goes on as if nothing had run between."""
    params = GenParams(temperature=0.0, max_tokens=12)
    alone = smollm.complete(QUESTION, params).text
    stream = smollm.stream(QUESTION, params)
    first = next(stream).text
    judged = smollm.complete([Message("user", "Is 2 bigger than 1? Answer yes or no.")],
                             GenParams(temperature=0.0, max_tokens=2, wait=False))
    rest = "".join(delta.text for delta in stream)
    assert judged.text.strip() and first + rest == alone


def test_a_call_that_may_not_wait_fails_at_once_when_both_contexts_are_taken(
        smollm: LocalLLM) -> None:
    params = GenParams(temperature=0.0, max_tokens=8)
    answer = smollm.stream(QUESTION, params)
    task = smollm.stream([Message("user", "Say hello.")], params)
    next(answer), next(task)
    with pytest.raises(ModelBusyError, match="both contexts"):
        smollm.complete([Message("user", "Is 2 bigger than 1?")],
                        GenParams(max_tokens=2, wait=False))
    answer.close(), task.close()
    assert smollm.complete([Message("user", "Say hi.")], GenParams(max_tokens=2)).text


# -- grammar-constrained sampling on the likeliest tokens ----------------------------------

STATEMENTS_SCHEMA = {
    "type": "object", "required": ["statements"],
    "properties": {"statements": {"type": "array", "minItems": 1, "maxItems": 2, "items": {
        "type": "object", "required": ["text", "evidence"],
        "properties": {"text": {"type": "string"},
                       "evidence": {"type": "array", "items": {"enum": ["S1", "S2"]}}}}}}}
EVIDENCE = [Message("system", "Answer from the evidence as JSON statements citing it."),
            Message("user", "[S1] Bisection halves the bracket at every step.\n"
                            "[S2] It keeps the half where the sign of f changes.\n"
                            "Question: How does bisection work?")]


@pytest.mark.parametrize("temperature", [0.0, 0.2])
def test_a_grammar_on_the_likeliest_tokens_writes_what_the_whole_vocabulary_does(
        smollm: LocalLLM, temperature: float) -> None:
    from coursetutor.llm import lazy_grammar

    llama = smollm._contexts[0].llama
    lazy = llama._init_sampler
    used: list[lazy_grammar.LazyGrammarSampler] = []

    def counted(**kw: object) -> object:
        sampler = lazy(**kw)
        used.append(sampler)
        return sampler

    params = GenParams(temperature=temperature, max_tokens=60, schema=STATEMENTS_SCHEMA)
    try:
        llama._init_sampler = type(llama)._init_sampler.__get__(llama)  # llama-cpp-python's
        smollm.forget_prompts()
        stock = smollm.complete(EVIDENCE, params).text
        llama._init_sampler = counted
        smollm.forget_prompts()
        shortlisted = smollm.complete(EVIDENCE, params).text
    finally:
        llama._init_sampler = lazy
    assert shortlisted == stock and stock.startswith("{")
    [sampler] = used
    assert sampler.steps == 60 or stock.rstrip().endswith("}")
    assert sampler.shortlisted > sampler.steps // 2  # most steps never saw the whole vocabulary
