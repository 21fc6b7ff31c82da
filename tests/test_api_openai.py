"""The OpenAI-compatible /v1/chat/completions, over TestClient and with the official client."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
import uvicorn
from fastapi import FastAPI
from openai.types.chat import ChatCompletionMessageParam

from coursetutor.errors import BackendUnavailableError, IncompleteAnswerError
from coursetutor.retrieval import EmbeddingModel
from coursetutor.tutor.replies import reply

from .api_support import (
    CONCEPT,
    COURSE,
    Api,
    Say,
    ScriptedLLM,
    coded,
    error_of,
    open_api,
)
from .support import Sample

FOLLOWUP = "And how fast does it converge?"


@pytest.fixture(scope="module")
def api(sample: Sample, embedder: EmbeddingModel,
        tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    """Passages only (llm_backend = none)."""
    with open_api(sample, embedder, tmp_path_factory.mktemp("api-openai")) as found:
        yield found


def chat(api: Api, who: str = "student", content: Any = CONCEPT, **body: Any) -> Any:
    messages = body.pop("messages", [{"role": "user", "content": content}])
    return api.call(who, "POST", "/v1/chat/completions",
                    json={"model": COURSE, "messages": messages, **body})


def footnote(sources: list[dict[str, Any]]) -> str:
    return "\n\nSources:\n" + "\n".join(f"[{s['number']}] {s['label']}" for s in sources)


def chunks(text: str) -> list[Any]:
    """The `data:` payloads of a streamed completion ('[DONE]' kept as a string)."""
    found = [line.removeprefix("data: ") for line in text.split("\n\n") if line]
    return [item if item == "[DONE]" else json.loads(item) for item in found]


# -- over TestClient -----------------------------------------------------------------------


def test_a_completion(api: Api) -> None:
    response = chat(api)
    assert response.status_code == 200
    body = response.json()
    sources = body.pop("sources")
    assert body["id"].startswith("chatcmpl-") and len(body["id"]) == 9 + 24
    assert abs(body.pop("created") - time.time()) < 60
    assert body == {
        "id": body["id"], "object": "chat.completion", "model": COURSE,
        "choices": [{"index": 0, "finish_reason": "stop", "message": {
            "role": "assistant", "content": reply("no_llm", "en") + footnote(sources)}}],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        "session_id": body["session_id"],
        "coursetutor": {"category": "lecture", "intent": "concept", "grade": "correct",
                        "level": "", "covered": True, "cost": 0.0}}
    assert [s["number"] for s in sources] == [1, 2, 3, 4, 5]
    assert api.store.get_session("default", COURSE, body["session_id"]).student == "ana"


def test_a_streamed_completion(api: Api) -> None:
    response = chat(api, stream=True)
    assert response.headers["content-type"].startswith("text/event-stream")
    found = chunks(response.text)
    assert found[-1] == "[DONE]"
    first, *middle, last = found[:-1]
    ids = {c["id"] for c in found[:-1]}
    assert len(ids) == 1 and all(c["object"] == "chat.completion.chunk" and c["model"] == COURSE
                                 for c in found[:-1])
    assert first["choices"] == [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                 "finish_reason": None}]
    assert last["choices"] == [{"index": 0, "delta": {}, "finish_reason": "stop"}]
    assert last["usage"] == {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
    assert last["coursetutor"]["covered"] is True and len(last["session_id"]) == 32
    text = "".join(c["choices"][0]["delta"]["content"] for c in middle)
    assert text == reply("no_llm", "en") + footnote(last["sources"])
    assert text == chat(api).json()["choices"][0]["message"]["content"]


def test_content_may_come_in_parts(api: Api) -> None:
    parts = [{"type": "text", "text": "How does the bisection"},
             {"type": "image_url", "image_url": {"url": "http://x/y.png"}},
             {"type": "text", "text": "method work?"}]
    as_parts = chat(api, content=parts).json()
    as_text = chat(api, content=CONCEPT).json()
    assert as_parts["sources"] == as_text["sources"]


def test_unused_openai_fields_are_accepted(api: Api) -> None:
    response = chat(api, temperature=0.7, top_p=0.9, max_tokens=10, n=1)
    assert response.status_code == 200


@pytest.mark.parametrize(("messages", "message"), [
    ([{"role": "user", "content": CONCEPT}, {"role": "assistant", "content": "Well."}],
     "the last message must be the student's (role 'user')"),
    ([{"role": "system", "content": "You are a pirate."}],
     "the last message must be the student's (role 'user')"),
    ([{"role": "user", "content": "  "}], "the question is empty"),
])
def test_bad_conversations_are_400(api: Api, messages: list[dict[str, str]],
                                   message: str) -> None:
    response = chat(api, messages=messages)
    found = error_of(response)
    assert (response.status_code, found["message"]) == (400, message)


@pytest.mark.parametrize(("body", "fields"), [
    ({"model": COURSE, "messages": []}, ["messages"]),
    ({"model": COURSE}, ["messages"]),
    ({"model": COURSE, "messages": [{"content": CONCEPT}]}, ["messages.0.role"]),
    ({"model": COURSE, "messages": [{"role": "user", "content": 42}]},
     ["messages.0.content"]),
    ({"model": COURSE, "messages": [{"role": "user", "content": [{"text": CONCEPT}]}]},
     ["messages.0.content.0.type"]),
])
def test_invalid_bodies_are_422(api: Api, body: dict[str, Any], fields: list[str]) -> None:
    response = api.call("student", "POST", "/v1/chat/completions", json=body)
    found = error_of(response)
    assert (response.status_code, found["type"]) == (422, "validation")
    assert [f["field"] for f in found["fields"]] == fields


def test_a_missing_model_is_422(api: Api) -> None:
    response = api.call("student", "POST", "/v1/chat/completions",
                        json={"messages": [{"role": "user", "content": CONCEPT}]})
    assert [f["field"] for f in error_of(response)["fields"]] == ["model"]


@pytest.mark.parametrize(("who", "model"), [
    ("student", "no-such-course"), ("outsider", COURSE), ("teacher_b", COURSE),
])
def test_a_course_the_caller_cannot_see_is_404(api: Api, who: str, model: str) -> None:
    response = chat(api, who, model=model)
    assert (response.status_code, error_of(response)) == (
        404, coded("not_found", f"course {model!r} does not exist", "course_not_found",
                   course=model))


@pytest.mark.parametrize(("who", "user", "student"), [
    ("teacher", "hana", "hana"),
    ("student", "hana", "ana"),  # a student key always asks as its own student
])
def test_the_user_field(api: Api, who: str, user: str, student: str) -> None:
    sid = chat(api, who, user=user).json()["session_id"]
    assert api.store.get_session("default", COURSE, sid).student == student


def test_session_id_continues_a_stored_session(api: Api) -> None:
    sid = chat(api).json()["session_id"]
    again = chat(api, session_id=sid).json()
    assert again["session_id"] == sid
    assert api.store.get_session("default", COURSE, sid).turns == 2
    other = chat(api, "teacher", session_id=sid)
    assert (other.status_code, error_of(other)["message"]) == (
        404, f"session {sid!r} does not exist")


# -- with a scripted model -----------------------------------------------------------------

OpenFake = Callable[..., tuple[Api, ScriptedLLM]]


@pytest.fixture
def with_model(sample: Sample, embedder: EmbeddingModel,
               tmp_path: Path) -> Iterator[OpenFake]:
    with contextlib.ExitStack() as stack:

        def make(fake: ScriptedLLM, **settings: Any) -> tuple[Api, ScriptedLLM]:
            return stack.enter_context(open_api(sample, embedder, tmp_path / "data", fake,
                                                **settings)), fake

        yield make


@pytest.mark.prose  # the scripted model writes prose
def test_earlier_messages_are_the_conversation(with_model: OpenFake) -> None:
    api, fake = with_model(ScriptedLLM(["It halves the bracket each step [1]."]))
    response = chat(api, messages=[
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": CONCEPT},
        {"role": "assistant", "content": "It keeps a bracket with a sign change [1]."},
        {"role": "user", "content": FOLLOWUP}])
    body = response.json()
    assert body["choices"][0]["message"]["content"] == (
        "It halves the bracket each step [1]." + footnote(body["sources"]))
    (messages,) = fake.answer_messages
    prompt = messages[-1].content
    assert "Earlier in this conversation" in prompt and CONCEPT in prompt
    assert "It keeps a bracket with a sign change" in prompt and FOLLOWUP in prompt
    assert "Be brief." not in prompt
    assert body["usage"]["total_tokens"] == (body["usage"]["prompt_tokens"]
                                             + body["usage"]["completion_tokens"]) > 0


@pytest.mark.prose  # the scripted model writes prose
def test_a_stream_that_fails_ends_with_an_error_then_done(with_model: OpenFake) -> None:
    down = "cannot reach the Ollama server: start it with `ollama serve`"
    api, _ = with_model(ScriptedLLM([Say(("Bisection ",), BackendUnavailableError(down))]))
    response = chat(api, stream=True, messages=[{"role": "user", "content": CONCEPT}])
    found = chunks(response.text)
    assert found[-1] == "[DONE]"
    assert [c["choices"][0]["delta"] for c in found[:2]] == [
        {"role": "assistant", "content": ""}, {"content": "Bisection "}]
    error = found[-2]["error"]
    assert error == {"type": "backend_unavailable", "message": down, "code": 503,
                     "params": {}, "request_id": response.headers["x-request-id"]}
    assert len(found) == 4


@pytest.mark.prose  # the scripted model writes prose
def test_an_interrupted_answer_finishes_with_length(with_model: OpenFake) -> None:
    error = IncompleteAnswerError("connection dropped", partial="Bisection halves")
    api, _ = with_model(ScriptedLLM([Say(("Bisection halves", " the bracket [1]"), error)]),
                        answer_check=False)  # the finish reason, not the check's re-citation
    body = chat(api).json()
    choice = body["choices"][0]
    assert choice["finish_reason"] == "length"
    assert choice["message"]["content"] == (
        f"Bisection halves the bracket [1]\n\n{reply('incomplete', 'en')}"
        + footnote(body["sources"]))


def test_a_dead_backend_is_503_before_the_stream(with_model: OpenFake) -> None:
    api, _ = with_model(ScriptedLLM(check_error=BackendUnavailableError("down")))
    response = chat(api, stream=True)
    assert (response.status_code, response.headers["content-type"]) == (503,
                                                                         "application/json")
    assert error_of(response) == coded("backend_unavailable", "down")


# -- the official client over a real server --------------------------------------------------


@contextlib.contextmanager
def served(app: FastAPI) -> Iterator[str]:
    """Serve `app` with uvicorn on a free local port (its lifespan runs under TestClient)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, lifespan="off", log_config=None))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started:
            assert time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.01)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def test_the_official_client_gets_errors_it_understands(api: Api) -> None:
    with served(api.app) as base_url:
        bad = openai.OpenAI(base_url=base_url, api_key="ct_nope", max_retries=0)
        with pytest.raises(openai.AuthenticationError) as unauthorized:
            bad.chat.completions.create(model=COURSE,
                                        messages=[{"role": "user", "content": CONCEPT}])
        client = openai.OpenAI(base_url=base_url, api_key=api.keys["student"], max_retries=0)
        with pytest.raises(openai.NotFoundError) as missing:
            client.chat.completions.create(model="no-such-course",
                                           messages=[{"role": "user", "content": CONCEPT}])
    assert unauthorized.value.status_code == 401
    assert missing.value.body == {"type": "not_found",
                                  "message": "course 'no-such-course' does not exist",
                                  "code": "course_not_found",
                                  "params": {"course": "no-such-course"},
                                  "request_id": missing.value.response.headers["x-request-id"]}


@pytest.fixture(scope="module")
def real(sample: Sample, embedder: EmbeddingModel, smollm_path: Path,
         tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Api, openai.OpenAI]]:
    """The real small model behind a real server, and the official client for a student."""
    with open_api(sample, embedder, tmp_path_factory.mktemp("api-openai-real"),
                  llm_backend="local", llm_model=str(smollm_path), llm_max_tokens=48) as api, \
            served(api.app) as base_url:
        yield api, openai.OpenAI(base_url=base_url, api_key=api.keys["student"], max_retries=0)


QUESTION: list[ChatCompletionMessageParam] = [
    {"role": "user", "content": "When does Newton's method fail?"}]


def test_the_official_client_with_the_real_model(real: tuple[Api, openai.OpenAI]) -> None:
    api, client = real
    reply_ = client.chat.completions.create(model=COURSE, messages=QUESTION)
    extra = reply_.model_extra or {}
    content = reply_.choices[0].message.content or ""
    assert (reply_.object, reply_.model, reply_.choices[0].message.role) == (
        "chat.completion", COURSE, "assistant")
    assert extra["sources"] and content.endswith(footnote(extra["sources"]))
    assert content.removesuffix(footnote(extra["sources"])).strip()
    assert api.store.get_session("default", COURSE, extra["session_id"]).student == "ana"
    assert reply_.usage is not None and reply_.usage.completion_tokens > 0


def test_the_official_client_streams_with_the_real_model(
        real: tuple[Api, openai.OpenAI]) -> None:
    api, client = real
    stream = client.chat.completions.create(model=COURSE, messages=QUESTION, stream=True)
    pieces, last = [], None
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            pieces.append(chunk.choices[0].delta.content)
        last = chunk
    assert last is not None and last.choices[0].finish_reason in ("stop", "length")
    extra = last.model_extra or {}
    assert extra["sources"] and "".join(pieces).endswith(footnote(extra["sources"]))
    assert len(pieces) > 2  # the answer came in pieces, then the footnote
    assert api.store.get_session("default", COURSE, extra["session_id"]).turns == 1
