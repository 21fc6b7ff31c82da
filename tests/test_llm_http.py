"""The HTTP generation backends (Ollama, OpenAI-compatible) and their retry policy."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import httpx
import pytest

from coursetutor.config import Settings
from coursetutor.errors import (
    BackendError,
    BackendTimeoutError,
    BackendUnavailableError,
    ConfigError,
    IncompleteAnswerError,
    ModelNotFoundError,
)
from coursetutor.llm.base import Delta, GenParams, Message, Usage
from coursetutor.llm.http import HTTPLLM
from coursetutor.llm.ollama import OllamaLLM
from coursetutor.llm.openai_compat import OpenAICompatLLM
from coursetutor.llm.retry import (
    RetryPolicy,
    TransientError,
    is_retryable_status,
    parse_retry_after,
)

MESSAGES = [Message("system", "Answer from the course."), Message("user", "What is h?")]
OLLAMA_URL = "http://ollama.test:11434"
OPENAI_URL = "http://server.test/v1"

Reply = Callable[[], httpx.Response]


class Script:
    """A fake server: answers requests in turn from scripted replies, the last one repeating."""

    def __init__(self, *replies: Reply) -> None:
        self.replies = replies
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return self.replies[min(len(self.requests), len(self.replies)) - 1]()

    def bodies(self) -> list[Any]:
        return [json.loads(r.content) if r.content else None for r in self.requests]


class BreaksAfter(httpx.SyncByteStream):
    """A response body that sends some bytes and then fails like a broken connection."""

    def __init__(self, data: bytes, error: Exception) -> None:
        self.data = data
        self.error = error

    def __iter__(self) -> Iterator[bytes]:
        if self.data:
            yield self.data
        raise self.error


def ndjson(*objects: dict[str, Any]) -> Reply:
    return lambda: httpx.Response(
        200, content=b"".join(json.dumps(o).encode() + b"\n" for o in objects)
    )


def sse(*objects: dict[str, Any], done: bool = True) -> bytes:
    events = [f"data: {json.dumps(o)}\n\n" for o in objects] + (
        ["data: [DONE]\n\n"] if done else []
    )
    return "".join(events).encode()


def ok_sse(*objects: dict[str, Any], done: bool = True) -> Reply:
    return lambda: httpx.Response(200, content=sse(*objects, done=done))


def status(code: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> Reply:
    return lambda: httpx.Response(code, json=body, headers=headers)


def broken(data: bytes, error: Exception) -> Reply:
    return lambda: httpx.Response(200, stream=BreaksAfter(data, error))


def refused() -> httpx.Response:
    raise httpx.ConnectError("[Errno 111] Connection refused")


def chunk(content: str = "", finish: str | None = None) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": {"content": content}, "finish_reason": finish}]}


USAGE_CHUNK = {"choices": [], "usage": {"prompt_tokens": 21, "completion_tokens": 3}}
HELLO_SSE = ok_sse(chunk(""), chunk("Hel"), chunk("lo."), chunk(finish="stop"), USAGE_CHUNK)
HELLO = [Delta("Hel"), Delta("lo."), Delta("", Usage(21, 3), "stop")]


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def policy(sleeps: list[float]) -> RetryPolicy:
    """Three retries; waits are recorded instead of slept, jitter always draws its maximum."""
    return RetryPolicy(retries=3, sleep=sleeps.append, random=lambda: 1.0)


def ollama(script: Script, policy: RetryPolicy, model: str = "qwen2.5:1.5b") -> OllamaLLM:
    return OllamaLLM(model, OLLAMA_URL, retry=policy, transport=httpx.MockTransport(script))


def openai(
    script: Script, policy: RetryPolicy, model: str = "tutor", key: str = ""
) -> OpenAICompatLLM:
    transport = httpx.MockTransport(script)
    return OpenAICompatLLM(model, OPENAI_URL, api_key=key, retry=policy, transport=transport)


# -- the retry policy -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("draw", "expected"),
    [(1.0, [0.5, 1.0, 2.0, 4.0, 8.0, 8.0]), (0.25, [0.125, 0.25, 0.5, 1.0, 2.0, 2.0])],
)
def test_delay_is_full_jitter_exponential_and_capped(draw: float, expected: list[float]) -> None:
    policy = RetryPolicy(random=lambda: draw)
    assert [policy.delay(attempt) for attempt in range(6)] == expected


def test_delay_honours_retry_after_up_to_the_cap() -> None:
    policy = RetryPolicy(random=lambda: 1.0)
    assert (policy.delay(0, 3.0), policy.delay(2, 0.0), policy.delay(0, 120.0)) == (3.0, 0.0, 8.0)


@pytest.mark.parametrize(
    ("header", "seconds"),
    [("3", 3.0), (" 1.5 ", 1.5), ("0", 0.0), (None, None), ("-1", None),
     ("Wed, 21 Oct 2015 07:28:00 GMT", None)],
)  # fmt: skip
def test_parse_retry_after(header: str | None, seconds: float | None) -> None:
    assert parse_retry_after(header) == seconds


@pytest.mark.parametrize(
    ("code", "retryable"),
    [(429, True), (500, True), (502, True), (503, True), (504, True), (501, False),
     (400, False), (401, False), (404, False), (200, False)],
)  # fmt: skip
def test_retryable_statuses(code: int, retryable: bool) -> None:
    assert is_retryable_status(code) is retryable


def test_call_gives_up_after_the_retries(policy: RetryPolicy, sleeps: list[float]) -> None:
    calls: list[int] = []

    def fail() -> int:
        calls.append(1)
        try:
            raise OSError("refused")
        except OSError as exc:
            raise TransientError("cannot reach it") from exc

    with pytest.raises(BackendUnavailableError) as info:
        policy.call(fail)
    assert (str(info.value), len(calls), sleeps) == ("cannot reach it (4 attempts)", 4, [0.5, 1, 2])
    assert isinstance(info.value.__cause__, OSError)


def test_stream_is_never_restarted_once_it_yielded(
    policy: RetryPolicy, sleeps: list[float]
) -> None:
    starts: list[int] = []

    def attempt() -> Iterator[str]:
        starts.append(1)
        yield "first"
        raise TransientError("dropped")

    received: list[str] = []
    with pytest.raises(BackendUnavailableError, match=r"^dropped$"):
        received.extend(policy.stream(attempt))
    assert (received, len(starts), sleeps) == (["first"], 1, [])


# -- Ollama ------------------------------------------------------------------------------------


def test_ollama_streams_pieces_and_usage(policy: RetryPolicy) -> None:
    script = Script(
        ndjson(
            {"message": {"role": "assistant", "content": "Step "}, "done": False},
            {"message": {"role": "assistant", "content": ""}, "done": False},
            {"message": {"role": "assistant", "content": "size."}, "done": False},
            {"message": {"role": "assistant", "content": ""}, "done": True,
             "done_reason": "stop", "prompt_eval_count": 30, "eval_count": 2},
        )
    )  # fmt: skip
    deltas = list(ollama(script, policy).stream(MESSAGES, GenParams()))
    assert deltas == [Delta("Step "), Delta("size."), Delta("", Usage(30, 2), "stop")]
    assert (script.requests[0].method, str(script.requests[0].url)) == (
        "POST",
        f"{OLLAMA_URL}/api/chat",
    )
    assert script.bodies() == [
        {
            "model": "qwen2.5:1.5b",
            "messages": [
                {"role": "system", "content": "Answer from the course."},
                {"role": "user", "content": "What is h?"},
            ],
            "stream": True,
            "options": {"temperature": 0.2, "num_predict": 320, "seed": 0},
        }
    ]


def test_ollama_json_mode_and_length_finish(policy: RetryPolicy) -> None:
    final = {"message": {"content": "}"}, "done": True, "done_reason": "length", "eval_count": 9}
    script = Script(ndjson({"message": {"content": '{"a": 1'}, "done": False}, final))
    llm = ollama(script, policy)
    params = GenParams(temperature=0.0, max_tokens=64, stop=("\n\n",), json=True, seed=7)
    completion = llm.complete(MESSAGES, params)
    prompt_estimate = sum(llm.count_tokens(m.content) for m in MESSAGES)
    assert (completion.text, completion.usage, completion.finish) == (
        '{"a": 1}',
        Usage(prompt_estimate, 9),  # a fully cached prompt comes without prompt_eval_count
        "length",
    )
    body = script.bodies()[0]
    assert (body["format"], body["options"]) == (
        "json",
        {"temperature": 0.0, "num_predict": 64, "seed": 7, "stop": ["\n\n"]},
    )


def test_ollama_missing_model_on_chat(policy: RetryPolicy, sleeps: list[float]) -> None:
    script = Script(status(404, {"error": 'model "llama9" not found, try pulling it first'}))
    with pytest.raises(ModelNotFoundError) as info:
        list(ollama(script, policy, "llama9").stream(MESSAGES, GenParams()))
    assert str(info.value) == "model llama9 is not pulled; run `ollama pull llama9`"
    assert (len(script.requests), sleeps) == (1, [])


def test_ollama_error_line_mid_stream_keeps_the_partial_text(policy: RetryPolicy) -> None:
    script = Script(ndjson({"message": {"content": "The "}, "done": False}, {"error": "OOM"}))
    received: list[Delta] = []
    with pytest.raises(IncompleteAnswerError, match=r"^Ollama: OOM$") as info:
        received.extend(ollama(script, policy).stream(MESSAGES, GenParams()))
    assert (info.value.partial, received, len(script.requests)) == ("The ", [Delta("The ")], 1)


TAGS = {"models": [{"name": "qwen2.5:1.5b", "model": "qwen2.5:1.5b"}, {"name": "phi3:latest"}]}


@pytest.mark.parametrize("model", ["qwen2.5:1.5b", "phi3", "phi3:latest"])
def test_ollama_check_finds_pulled_models(policy: RetryPolicy, model: str) -> None:
    script = Script(status(200, TAGS))
    ollama(script, policy, model).check()
    assert [str(r.url) for r in script.requests] == [f"{OLLAMA_URL}/api/tags"]


def test_ollama_check_names_the_pull_command(policy: RetryPolicy) -> None:
    with pytest.raises(ModelNotFoundError) as info:
        ollama(Script(status(200, TAGS)), policy, "mistral").check()
    assert str(info.value) == "model mistral is not pulled; run `ollama pull mistral`"


def test_ollama_unreachable_after_retries(policy: RetryPolicy, sleeps: list[float]) -> None:
    script = Script(refused)
    with pytest.raises(BackendUnavailableError) as info:
        ollama(script, policy).check()
    assert str(info.value) == (
        f"cannot reach Ollama at {OLLAMA_URL}; start it with `ollama serve` (4 attempts)"
    )
    assert isinstance(info.value.__cause__, httpx.ConnectError)
    assert (len(script.requests), sleeps) == (4, [0.5, 1.0, 2.0])


# -- OpenAI-compatible -------------------------------------------------------------------------


def test_openai_streams_pieces_and_usage_with_the_api_key(policy: RetryPolicy) -> None:
    script = Script(HELLO_SSE)
    assert list(openai(script, policy, key="sk-test").stream(MESSAGES, GenParams())) == HELLO
    request = script.requests[0]
    assert (str(request.url), request.headers["authorization"]) == (
        f"{OPENAI_URL}/chat/completions",
        "Bearer sk-test",
    )
    assert script.bodies() == [
        {
            "model": "tutor",
            "messages": [
                {"role": "system", "content": "Answer from the course."},
                {"role": "user", "content": "What is h?"},
            ],
            "stream": True,
            "stream_options": {"include_usage": True},
            "temperature": 0.2,
            "max_tokens": 320,
            "seed": 0,
        }
    ]


def test_openai_sends_no_authorization_without_a_key(policy: RetryPolicy) -> None:
    script = Script(HELLO_SSE)
    list(openai(script, policy).stream(MESSAGES, GenParams()))
    assert "authorization" not in script.requests[0].headers


def test_openai_json_mode_and_estimated_usage(policy: RetryPolicy) -> None:
    script = Script(ok_sse(chunk('{"ok": '), chunk("true}", "length")))  # no usage chunk
    llm = openai(script, policy)
    completion = llm.complete(MESSAGES, GenParams(stop=("END",), json=True))
    prompt = sum(llm.count_tokens(m.content) for m in MESSAGES)
    expected = Usage(prompt, llm.count_tokens('{"ok": true}'))
    assert (completion.text, completion.usage, completion.finish) == (
        '{"ok": true}',
        expected,
        "length",
    )
    body = script.bodies()[0]
    assert (body["response_format"], body["stop"]) == ({"type": "json_object"}, ["END"])


def test_openai_retries_503_with_backoff(policy: RetryPolicy, sleeps: list[float]) -> None:
    busy = status(503, {"error": {"message": "overloaded"}})
    script = Script(busy, busy, HELLO_SSE)
    assert list(openai(script, policy).stream(MESSAGES, GenParams())) == HELLO
    assert (len(script.requests), sleeps) == (3, [0.5, 1.0])


def test_openai_429_honours_retry_after(policy: RetryPolicy, sleeps: list[float]) -> None:
    script = Script(status(429, {"error": "slow down"}, {"Retry-After": "3"}), HELLO_SSE)
    assert list(openai(script, policy).stream(MESSAGES, GenParams())) == HELLO
    assert (len(script.requests), sleeps) == (2, [3.0])


def test_openai_gives_up_with_the_status_and_the_server_words(
    policy: RetryPolicy, sleeps: list[float]
) -> None:
    script = Script(status(503, {"error": {"message": "model is\n  loading"}}))
    with pytest.raises(BackendUnavailableError) as info:
        list(openai(script, policy).stream(MESSAGES, GenParams()))
    assert str(info.value) == (
        f"HTTP 503 from the OpenAI-compatible server at {OPENAI_URL}: model is loading (4 attempts)"
    )
    assert (len(script.requests), sleeps) == (4, [0.5, 1.0, 2.0])


def test_openai_unreachable_names_the_url(policy: RetryPolicy) -> None:
    llm = openai(Script(refused), RetryPolicy(retries=0))
    with pytest.raises(BackendUnavailableError) as info:
        list(llm.stream(MESSAGES, GenParams()))
    assert str(info.value) == (
        f"cannot reach the OpenAI-compatible server at {OPENAI_URL}; start the server "
        "or fix llm_base_url"
    )


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (httpx.ReadTimeout("timed out"), "the OpenAI-compatible server sent nothing for 120 s"),
        (httpx.RemoteProtocolError("peer closed connection"), "dropped the connection"),
    ],
)
def test_openai_failure_mid_answer_keeps_the_partial_text(
    policy: RetryPolicy, sleeps: list[float], error: Exception, expected: str
) -> None:
    script = Script(broken(sse(chunk("Hel"), done=False), error), HELLO_SSE)
    received: list[Delta] = []
    with pytest.raises(IncompleteAnswerError, match=expected) as info:
        received.extend(openai(script, policy).stream(MESSAGES, GenParams()))
    assert (info.value.partial, received) == ("Hel", [Delta("Hel")])
    assert (len(script.requests), sleeps) == (1, [])  # never started again: no repeated text
    assert info.value.__cause__ is error


def test_openai_read_timeout_before_any_text(policy: RetryPolicy, sleeps: list[float]) -> None:
    script = Script(broken(b": keep-alive\n\n", httpx.ReadTimeout("timed out")))
    with pytest.raises(BackendTimeoutError) as info:
        list(openai(script, policy).stream(MESSAGES, GenParams()))
    assert str(info.value) == (
        f"the OpenAI-compatible server at {OPENAI_URL} sent nothing for 120 s (llm_timeout)"
    )
    assert (len(script.requests), sleeps) == (1, [])


def test_openai_dropped_before_any_text_is_retried(
    policy: RetryPolicy, sleeps: list[float]
) -> None:
    script = Script(broken(sse(chunk(""), done=False), httpx.ReadError("reset")), HELLO_SSE)
    assert list(openai(script, policy).stream(MESSAGES, GenParams())) == HELLO
    assert (len(script.requests), sleeps) == (2, [0.5])


def test_openai_reply_cut_short_without_done(policy: RetryPolicy) -> None:
    script = Script(ok_sse(chunk("Half an"), done=False))
    with pytest.raises(IncompleteAnswerError, match="ended the reply before its end") as info:
        list(openai(script, policy).stream(MESSAGES, GenParams()))
    assert (info.value.partial, len(script.requests)) == ("Half an", 1)


def test_openai_unknown_model_on_chat(policy: RetryPolicy) -> None:
    script = Script(status(404, {"error": {"message": "The model `big` does not exist."}}))
    with pytest.raises(ModelNotFoundError) as info:
        list(openai(script, policy, "big").stream(MESSAGES, GenParams()))
    assert str(info.value) == (
        f"model big is not served at {OPENAI_URL}: The model `big` does not exist."
    )


MODELS = {"object": "list", "data": [{"id": "qwen-7b"}, {"id": "tutor"}]}


def test_openai_check_paths(policy: RetryPolicy) -> None:
    openai(Script(status(200, MODELS)), policy).check()
    with pytest.raises(ModelNotFoundError) as info:
        openai(Script(status(200, MODELS)), policy, "gpt-9").check()
    assert str(info.value) == (
        f"model gpt-9 is not served at {OPENAI_URL}; available: qwen-7b, tutor"
    )
    with pytest.raises(ModelNotFoundError, match="lists no models"):
        openai(Script(status(200, {"data": []})), policy).check()


def test_openai_check_refused_key(policy: RetryPolicy) -> None:
    script = Script(status(401, {"error": {"message": "Incorrect API key"}}))
    with pytest.raises(BackendError) as info:
        openai(script, policy, key="wrong").check()
    assert type(info.value) is BackendError
    assert str(info.value) == (
        f"the OpenAI-compatible server at {OPENAI_URL} refused the API key (llm_api_key): "
        "HTTP 401: Incorrect API key"
    )
    assert len(script.requests) == 1


def test_openai_empty_model_is_the_first_listed(policy: RetryPolicy) -> None:
    script = Script(status(200, MODELS), HELLO_SSE)
    llm = openai(script, policy, model="")
    assert list(llm.stream(MESSAGES, GenParams())) == HELLO
    assert [str(r.url) for r in script.requests] == [
        f"{OPENAI_URL}/models",
        f"{OPENAI_URL}/chat/completions",
    ]
    assert (llm.model, script.bodies()[1]["model"]) == ("qwen-7b", "qwen-7b")


# -- construction -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cls", "url", "model"),
    [
        (OllamaLLM, "http://127.0.0.1:11434", "qwen2.5:1.5b"),
        (OpenAICompatLLM, "http://127.0.0.1:8000/v1", ""),
    ],
)
def test_from_settings_defaults(cls: type[HTTPLLM], url: str, model: str) -> None:
    llm = cls.from_settings(Settings(llm_timeout=30.0, llm_retries=1, llm_api_key="k"), "")
    assert (llm.base_url, llm.model, llm.timeout, llm.retry.retries) == (url, model, 30.0, 1)
    llm.close()


def test_timeouts_reach_the_request(policy: RetryPolicy) -> None:
    script = Script(status(200, MODELS))
    transport = httpx.MockTransport(script)
    OpenAICompatLLM("tutor", OPENAI_URL, timeout=5.0, retry=policy, transport=transport).check()
    timeouts = script.requests[0].extensions["timeout"]
    assert timeouts == {"connect": 5.0, "read": 5.0, "write": 5.0, "pool": 5.0}
    OllamaLLM(timeout=300.0, transport=httpx.MockTransport(script)).get_json("/api/tags")
    timeouts = script.requests[1].extensions["timeout"]
    assert timeouts == {"connect": 10.0, "read": 300.0, "write": 300.0, "pool": 300.0}


def test_base_url_must_be_http() -> None:
    with pytest.raises(ConfigError, match="must start with http:// or https://"):
        OllamaLLM(base_url="localhost:11434")


# -- a real HTTP server ------------------------------------------------------------------------


class OpenAIHandler(BaseHTTPRequestHandler):
    """Speaks just enough of the OpenAI API; `/v1/cut/...` drops the stream after one chunk."""

    seen: ClassVar[list[tuple[str, str, Any]]] = []

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.seen.append(("GET", self.path, self.headers.get("Authorization")))
        self._send(json.dumps(MODELS).encode(), "application/json")

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.seen.append(("POST", self.path, body["model"]))
        if self.path.startswith("/v1/cut/"):
            self._send(sse(chunk("Hel"), done=False), "text/event-stream", length=10_000)
            return
        events = sse(chunk("Hel"), chunk("lo."), chunk(finish="stop"), USAGE_CHUNK)
        self._send(events, "text/event-stream")

    def _send(self, data: bytes, kind: str, length: int | None = None) -> None:
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(length or len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()
        self.close_connection = True


@pytest.fixture
def real_server() -> Iterator[str]:
    OpenAIHandler.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), OpenAIHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join()


def test_real_server_end_to_end(real_server: str) -> None:
    llm = OpenAICompatLLM("", f"{real_server}/v1", api_key="sk-local", timeout=10.0)
    try:
        llm.check()
        completion = llm.complete(MESSAGES, GenParams())
    finally:
        llm.close()
    assert (completion.text, completion.usage, completion.finish) == (
        "Hello.",
        Usage(21, 3),
        "stop",
    )
    assert OpenAIHandler.seen == [
        ("GET", "/v1/models", "Bearer sk-local"),
        ("POST", "/v1/chat/completions", "qwen-7b"),
    ]


def test_real_server_dropping_the_stream(real_server: str, sleeps: list[float]) -> None:
    policy = RetryPolicy(sleep=sleeps.append)
    llm = OpenAICompatLLM("tutor", f"{real_server}/v1/cut", timeout=10.0, retry=policy)
    with pytest.raises(IncompleteAnswerError, match="dropped the connection") as info:
        list(llm.stream(MESSAGES, GenParams()))
    llm.close()
    assert (info.value.partial, len(OpenAIHandler.seen), sleeps) == ("Hel", 1, [])


def test_real_closed_port_is_unavailable(sleeps: list[float]) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    policy = RetryPolicy(retries=1, sleep=sleeps.append, random=lambda: 1.0)
    llm = OpenAICompatLLM("tutor", f"http://127.0.0.1:{port}/v1", timeout=5.0, retry=policy)
    with pytest.raises(BackendUnavailableError) as info:
        list(llm.stream(MESSAGES, GenParams()))
    llm.close()
    assert str(info.value) == (
        f"cannot reach the OpenAI-compatible server at http://127.0.0.1:{port}/v1; "
        "start the server or fix llm_base_url (2 attempts)"
    )
    assert sleeps == [0.5]
