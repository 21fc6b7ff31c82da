"""Search, ask (JSON and Server-Sent Events), sessions, readiness and metrics over HTTP."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from coursetutor.api import routes_tutor
from coursetutor.api.access import mint_key
from coursetutor.api.pump import KEEPALIVE, EventPump
from coursetutor.errors import (
    BackendTimeoutError,
    BackendUnavailableError,
    IncompleteAnswerError,
)
from coursetutor.retrieval import EmbeddingModel
from coursetutor.tutor.replies import reply
from coursetutor.types import StreamEvent, TokenEvent

from .api_support import (
    CONCEPT,
    COURSE,
    Api,
    Say,
    ScriptedLLM,
    assert_clean,
    coded,
    error_of,
    open_api,
    shape,
    sse,
)
from .support import Sample

pytestmark = pytest.mark.prose  # the scripted model writes prose

SSE = {"Accept": "text/event-stream"}
ANSWER_KEYS = {"text", "sources", "category", "intent", "grade", "evidence", "level", "covered",
               "complete", "language", "note", "session_id", "checked", "removed", "usage",
               "timings", "tier", "reused_from", "markers"}
SOURCE_KEYS = {"media", "number", "chunk", "document", "title", "type", "page", "start", "end",
               "anchor", "label", "snippet", "url", "section", "tier", "tier_label",
               "tier_code", "tier_params"}
DOWN = "cannot reach the Ollama server at http://127.0.0.1:11434: start it with `ollama serve`"


@pytest.fixture(scope="module")
def api(sample: Sample, embedder: EmbeddingModel,
        tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    """Passages only (llm_backend = none)."""
    with open_api(sample, embedder, tmp_path_factory.mktemp("api-tutor")) as found:
        yield found


OpenFake = Callable[..., tuple[Api, ScriptedLLM]]


@pytest.fixture
def with_model(sample: Sample, embedder: EmbeddingModel,
               tmp_path: Path) -> Iterator[OpenFake]:
    """Open an app whose model is a ScriptedLLM (one app per test)."""
    with contextlib.ExitStack() as stack:

        def make(fake: ScriptedLLM | None = None, **settings: Any) -> tuple[Api, ScriptedLLM]:
            llm = fake or ScriptedLLM()
            api = stack.enter_context(open_api(sample, embedder, tmp_path / "data", llm,
                                               **settings))
            return api, llm

        yield make


def enrolled(api: Api, student: str) -> dict[str, str]:
    """Headers of a new key for `student`, enrolled in the sample course."""
    api.store.enroll("default", COURSE, student)
    return {"Authorization": f"Bearer {mint_key(api.store, 'default', 'student', student)[1]}"}


def ask_sse(api: Api, who: str = "student", question: str = CONCEPT,
            **body: Any) -> tuple[Any, list[tuple[str, dict[str, Any]]]]:
    response = api.call(who, "POST", f"/v1/courses/{COURSE}/ask", headers=SSE,
                        json={"question": question, **body})
    kind = response.headers["content-type"]
    return response, sse(response.text) if kind.startswith("text/event-stream") else []


def terminal(events: list[tuple[str, dict[str, Any]]]) -> list[str]:
    return [name for name, _ in events if name in ("done", "error")]


# -- search --------------------------------------------------------------------------------


def test_search_hits(api: Api) -> None:
    response = api.call("student", "GET", f"/v1/courses/{COURSE}/search",
                        params={"q": "secant method order of convergence", "k": 3})
    body = response.json()
    assert (response.status_code, body["query"], len(body["hits"])) == (
        200, "secant method order of convergence", 3)
    assert [h["rank"] for h in body["hits"]] == [1, 2, 3]
    assert [h["score"] for h in body["hits"]] == sorted((h["score"] for h in body["hits"]),
                                                        reverse=True)
    assert set(body["hits"][0]) == {"media", "rank", "score", "chunk", "document", "title",
                                    "type", "topic", "section", "page", "start", "end",
                                    "anchor", "snippet", "text", "url"}
    assert body["ms"] >= 0


@pytest.mark.parametrize(("params", "check"), [
    ({"type": "exercise"}, lambda h: h["type"] == "exercise"),
    ({"type": ["transcript", "summary"]}, lambda h: h["type"] in ("transcript", "summary")),
    ({"max_difficulty": 1}, lambda h: h["type"] == "summary"),
    ({"mode": "bm25"}, lambda h: True),
    ({"mode": "vector"}, lambda h: True),
])
def test_search_filters(api: Api, params: dict[str, Any],
                        check: Callable[[dict[str, Any]], bool]) -> None:
    response = api.call("teacher", "GET", f"/v1/courses/{COURSE}/search",
                        params={"q": "bisection", "k": 10, **params})
    hits = response.json()["hits"]
    assert response.status_code == 200 and hits and all(check(h) for h in hits)


@pytest.mark.parametrize(("params", "fields"), [
    ({"q": "bisection", "k": 0}, [("k", "Input should be greater than or equal to 1")]),
    ({"q": "bisection", "k": 51}, [("k", "Input should be less than or equal to 50")]),
    ({"q": "bisection", "k": "five"},
     [("k", "Input should be a valid integer, unable to parse string as an integer")]),
    ({"k": 5}, [("q", "Field required")]),
    ({"q": ""}, [("q", "String should have at least 1 character")]),
    ({"q": "bisection", "mode": "magic"}, [("mode", "String should match pattern "
                                                    "'^(hybrid|bm25|vector)$'")]),
    ({"q": "bisection", "max_difficulty": 9},
     [("max_difficulty", "Input should be less than or equal to 5")]),
])
def test_search_validation_is_422(api: Api, params: dict[str, Any],
                                  fields: list[tuple[str, str]]) -> None:
    response = api.call("student", "GET", f"/v1/courses/{COURSE}/search", params=params)
    assert (response.status_code, error_of(response)) == (422, {
        "type": "validation",
        "message": "; ".join(f"{f}: {r}" for f, r in fields),
        "code": "validation", "params": {"fields": ", ".join(f for f, _ in fields)},
        "fields": [{"field": f, "reason": r} for f, r in fields]})


def test_search_of_an_unknown_type_is_422(api: Api) -> None:
    response = api.call("student", "GET", f"/v1/courses/{COURSE}/search",
                        params={"q": "bisection", "type": "poem"})
    assert response.status_code == 422
    assert [f["field"] for f in error_of(response)["fields"]] == ["type.0"]


# -- ask: JSON -----------------------------------------------------------------------------


def test_ask_json_without_a_model(api: Api) -> None:
    response = api.ask("student")
    assert response.status_code == 200
    body = response.json()
    assert set(body) == ANSWER_KEYS
    assert {k: body[k] for k in ("text", "category", "intent", "grade", "level", "covered",
                                 "complete", "language", "note", "usage")} == {
        "text": reply("no_llm", "en"), "category": "lecture", "intent": "concept",
        "grade": "correct", "level": "", "covered": True, "complete": True, "language": "en",
        "note": "passages only", "usage": {"prompt_tokens": 0, "completion_tokens": 0,
                                           "cost": 0.0}}
    assert [s["number"] for s in body["sources"]] == [1, 2, 3, 4, 5]
    assert all(set(s) == SOURCE_KEYS for s in body["sources"])
    assert all(s["url"].startswith(f"/v1/documents/{s['document']}/file?tenant=default&exp=")
               for s in body["sources"])
    assert {"retrieve", "grade", "total"} <= set(body["timings"])
    assert len(body["session_id"]) == 32


@pytest.mark.parametrize("question", ["   ", "\n\t"])
def test_a_blank_question_is_400(api: Api, question: str) -> None:
    response = api.ask("student", question)
    assert (response.status_code, error_of(response)) == (
        400, coded("empty_query", "the question is empty", "empty_question"))


def test_an_empty_question_is_400_like_a_blank_one(api: Api) -> None:
    response = api.ask("student", "")
    assert (response.status_code, error_of(response)) == (
        400, coded("empty_query", "the question is empty", "empty_question"))


def test_a_too_long_question_is_400(api: Api) -> None:
    response = api.ask("student", "x" * 4001)
    assert (response.status_code, error_of(response)) == (400, coded(
        "input", "the question has 4001 characters; the limit is 4000 (max_question_chars): "
        "shorten it", "question_too_long", length=4001, limit=4000))


@pytest.mark.parametrize(("body", "fields"), [
    ({}, [("question", "Field required")]),
    ({"question": CONCEPT, "level": 0}, [("level", "Input should be greater than or equal to 1")]),
    ({"question": CONCEPT, "level": 6}, [("level", "Input should be less than or equal to 5")]),
    ({"question": 42}, [("question", "Input should be a valid string")]),
    ({"question": CONCEPT, "session_id": 7}, [("session_id", "Input should be a valid string")]),
])
def test_ask_validation_is_422(api: Api, body: dict[str, Any],
                               fields: list[tuple[str, str]]) -> None:
    response = api.call("student", "POST", f"/v1/courses/{COURSE}/ask", json=body)
    assert (response.status_code, error_of(response)) == (422, {
        "type": "validation",
        "message": "; ".join(f"{f}: {r}" for f, r in fields),
        "code": "validation", "params": {"fields": ", ".join(f for f, _ in fields)},
        "fields": [{"field": f, "reason": r} for f, r in fields]})


def test_a_body_that_is_not_json_is_422(api: Api) -> None:
    response = api.call("student", "POST", f"/v1/courses/{COURSE}/ask", content=b"question?",
                        headers={"Content-Type": "application/json"})
    found = error_of(response)
    assert (response.status_code, found["type"]) == (422, "validation")
    assert_clean(response.text)


def test_ask_in_an_unknown_course_is_404(api: Api) -> None:
    response = api.ask("teacher", course="no-such-course")
    assert (response.status_code, error_of(response)) == (
        404, coded("not_found", "course 'no-such-course' does not exist", "course_not_found",
                   course="no-such-course"))


def test_ask_in_a_course_without_documents_is_404(api: Api) -> None:
    api.call("teacher", "POST", "/v1/courses", json={"id": "empty-course"})
    response = api.ask("teacher", course="empty-course")
    assert (response.status_code, error_of(response)) == (404, coded(
        "not_found", "course 'empty-course' has no documents yet: ingest some first",
        "course_empty", course="empty-course"))


# -- ask: Server-Sent Events ---------------------------------------------------------------


def test_sse_without_a_model(api: Api) -> None:
    response, events = ask_sse(api)
    assert (response.status_code, response.headers["cache-control"]) == (200, "no-cache")
    assert response.headers["content-type"].startswith("text/event-stream")
    assert [name for name, _ in events] == ["meta", "token", "sources", "done"]
    (_, meta), (_, token), (_, sources), (_, done) = events
    assert meta == {"session_id": done["session_id"], "category": "lecture",
                    "intent": "concept", "level": "", "grade": "correct", "language": "en"}
    assert token == {"text": done["text"]} == {"text": reply("no_llm", "en")}
    assert sources == {"sources": done["sources"]}
    assert set(done) == ANSWER_KEYS and done["complete"] is True


def test_sse_of_a_question_the_course_does_not_cover(api: Api) -> None:
    _, events = ask_sse(api, question="What is the capital of France?")
    assert shape(events) == ["meta", "token", "sources", "done"]
    done = events[-1][1]
    assert (done["covered"], done["grade"], done["sources"]) == (False, "incorrect", [])
    assert done["text"].startswith(reply("not_covered", "en"))


def test_sse_streams_the_models_pieces(with_model: OpenFake) -> None:
    # the stream's mechanics: the answer check (which would re-cite the claim) is off
    api, fake = with_model(ScriptedLLM([Say(("Bisection halves ", "the bracket [1]."))]),
                           answer_check=False)
    response, events = ask_sse(api)
    assert response.status_code == 200
    assert shape(events) == ["meta", "token", "sources", "done"]
    done = events[-1][1]
    assert events[0][1] == {"session_id": done["session_id"], "category": "lecture",
                            "intent": "concept", "level": "", "grade": "correct",
                            "language": "en"}
    assert [d["text"] for name, d in events if name == "token"] == ["Bisection halves ",
                                                                   "the bracket [1]."]
    assert events[-2] == ("sources", {"sources": done["sources"]})
    assert (done["text"], [s["number"] for s in done["sources"]], done["complete"],
            done["covered"]) == ("Bisection halves the bracket [1].", [1], True, True)
    assert done["usage"]["completion_tokens"] == 2 and done["usage"]["prompt_tokens"] > 0
    assert fake.kinds == ["answer"]


def test_the_answer_says_where_its_citation_markers_are(with_model: OpenFake) -> None:
    said = "On $[1, 2]$ and `[0, 4]` bisection halves the bracket [1]."
    api, _ = with_model(ScriptedLLM([Say((said,))]), answer_check=False)
    done = ask_sse(api)[1][-1][1]
    assert done["text"] == said
    # only the citation: the formula's and the code's brackets are the reply's words
    assert [done["text"][a:b] for a, b in done["markers"]] == ["[1]"]


def test_a_backend_failing_mid_stream_ends_with_an_error_event(with_model: OpenFake) -> None:
    api, _ = with_model(ScriptedLLM([Say(("Bisection ",), BackendUnavailableError(DOWN))]))
    response, events = ask_sse(api)
    assert response.status_code == 200
    assert [name for name, _ in events] == ["meta", "token", "error"]
    assert events[-1][1] == {"type": "backend_unavailable", "message": DOWN, "status": 503,
                             "code": "backend_unavailable", "params": {},
                             "request_id": response.headers["x-request-id"]}
    assert api.metric("coursetutor_active_streams") == 0


def test_an_interrupted_answer_ends_with_the_incomplete_marker(with_model: OpenFake) -> None:
    error = IncompleteAnswerError("connection dropped", partial="Bisection halves")
    api, _ = with_model(ScriptedLLM([Say(("Bisection ", "halves"), error)]))
    _, events = ask_sse(api)
    assert shape(events) == ["meta", "token", "sources", "done"]
    marker = reply("incomplete", "en")
    assert [d["text"] for name, d in events if name == "token"] == [
        "Bisection ", "halves", f"\n\n{marker}"]
    done = events[-1][1]
    assert (done["complete"], done["text"].endswith(f"\n\n{marker}")) == (False, True)


def test_a_timeout_before_any_text_ends_the_stream_with_504(with_model: OpenFake) -> None:
    timeout = Say((), BackendTimeoutError("no reply within 120 s"))
    api, _ = with_model(ScriptedLLM([timeout, timeout]))
    response, events = ask_sse(api)
    assert [name for name, _ in events] == ["meta", "error"]
    assert events[-1][1] == {"type": "backend_timeout", "message": "no reply within 120 s",
                             "code": "backend_timeout", "params": {},
                             "status": 504, "request_id": response.headers["x-request-id"]}
    as_json = api.ask("student")
    assert (as_json.status_code, error_of(as_json)) == (
        504, coded("backend_timeout", "no reply within 120 s"))


def test_an_unexpected_error_says_nothing_of_the_server(with_model: OpenFake,
                                                        tmp_path: Path) -> None:
    secret = RuntimeError(f"boom in {tmp_path}/secret.py")
    api, _ = with_model(ScriptedLLM([Say(("Bisection ",), secret), Say(("x",), secret)]))
    response, events = ask_sse(api)
    assert [name for name, _ in events] == ["meta", "token", "error"]
    assert events[-1][1] == {
        "type": "internal", "status": 500, "request_id": response.headers["x-request-id"],
        "message": "internal error; the server log has the details under this request id",
        "code": "internal", "params": {}}
    assert_clean(response.text, tmp_path)
    with TestClient(api.app, raise_server_exceptions=False) as quiet:
        as_json = quiet.post(f"/v1/courses/{COURSE}/ask", json={"question": CONCEPT},
                             headers=api.headers("student"))
    assert (as_json.status_code, as_json.json()["error"]["type"],
            as_json.json()["error"]["message"]) == (
        500, "internal",
        "internal error; the server log has the details under this request id")
    assert_clean(as_json.text, tmp_path)


def test_a_500_reply_has_a_request_id_and_is_counted(with_model: OpenFake) -> None:
    api, _ = with_model(ScriptedLLM([Say(("Bisection ",), RuntimeError("boom"))]))
    with TestClient(api.app, raise_server_exceptions=False) as quiet:
        response = quiet.post(f"/v1/courses/{COURSE}/ask", json={"question": CONCEPT},
                              headers={**api.headers("student"), "X-Request-ID": "trace-500"})
    assert (response.status_code, response.json()["error"]["request_id"]) == (500, "trace-500")
    counted = api.metric('coursetutor_http_requests_total{method="POST",'
                         'route="/v1/courses/{course}/ask",status="500"}')
    assert (response.headers.get("x-request-id"), counted) == ("trace-500", 1.0)


def test_a_backend_failing_mid_answer_is_503_as_json(with_model: OpenFake) -> None:
    api, _ = with_model(ScriptedLLM([Say(("Bisection ",), BackendUnavailableError(DOWN))]))
    response = api.ask("student")
    assert (response.status_code, error_of(response)) == (
        503, coded("backend_unavailable", DOWN))


@pytest.mark.parametrize("headers", [SSE, {}])
def test_a_dead_backend_is_503_before_any_stream(with_model: OpenFake,
                                                 headers: dict[str, str]) -> None:
    api, fake = with_model(ScriptedLLM(check_error=BackendUnavailableError(DOWN)))
    response = api.call("student", "POST", f"/v1/courses/{COURSE}/ask", headers=headers,
                        json={"question": CONCEPT})
    assert (response.status_code, response.headers["content-type"]) == (503,
                                                                         "application/json")
    assert error_of(response) == coded("backend_unavailable", DOWN)
    assert fake.kinds == []
    assert api.metric("coursetutor_active_streams") == 0


def test_readyz_with_a_dead_backend_is_503(with_model: OpenFake) -> None:
    api, _ = with_model(ScriptedLLM(check_error=BackendUnavailableError(DOWN)))
    response = api.client.get("/readyz")
    assert (response.status_code, response.json()) == (503, {
        "status": "not ready", "store": "ok", "llm": DOWN})


def test_readyz_with_a_live_backend(with_model: OpenFake) -> None:
    api, _ = with_model()
    response = api.client.get("/readyz")
    assert (response.status_code, response.json()) == (200, {
        "status": "ready", "store": "ok", "llm": "ok"})


def test_a_missing_model_file_is_503_without_its_path(sample: Sample, embedder: EmbeddingModel,
                                                      tmp_path: Path) -> None:
    model = tmp_path / "models" / "missing.gguf"
    with open_api(sample, embedder, tmp_path / "data", llm_backend="local",
                  llm_model=str(model)) as api:
        response = api.ask("student")
        ready = api.client.get("/readyz")
    assert (response.status_code, ready.status_code) == (503, 503)
    assert error_of(response)["type"] == "model_not_found"
    assert_clean(response.text, tmp_path)
    assert_clean(ready.text, tmp_path)


def test_a_client_that_goes_away_stops_the_model(with_model: OpenFake) -> None:
    gate = threading.Event()
    fake = ScriptedLLM([Say(("one ", "two ", "three ", "four "), gate=gate)])
    api, _ = with_model(fake, api_rate_student_streams=1)
    seen = []
    with api.client.stream("POST", f"/v1/courses/{COURSE}/ask", headers={
            **SSE, **api.headers("student")}, json={"question": CONCEPT}) as response:
        for line in response.iter_lines():
            seen.append(line)
            if line.startswith("event: token"):
                break
    assert seen[0] == "event: meta"
    gate.set()  # the model writes its next piece, which nobody reads any more
    assert fake.closed.wait(5), "the model's stream was not closed"
    # the worker stops at the piece it was handing over when the client left, or the next one
    assert fake.yielded in (["one "], ["one ", "two "])
    assert api.metric("coursetutor_active_streams") == 0
    gate.clear()
    after = ask_sse(api)[1]  # the stream slot of the abandoned answer was given back
    assert terminal(after) == ["done"]


def test_a_stream_holds_one_slot_until_it_ends(with_model: OpenFake) -> None:
    gate = threading.Event()
    fake = ScriptedLLM([Say(("Bisection ", "halves ", "the bracket [1]."), gate=gate)])
    api, _ = with_model(fake, api_rate_student_streams=1)
    with api.client.stream("POST", f"/v1/courses/{COURSE}/ask", headers={
            **SSE, **api.headers("student")}, json={"question": CONCEPT}) as first:
        lines = first.iter_lines()
        assert next(lines) == "event: meta"
        assert api.metric("coursetutor_active_streams") == 1
        second = api.ask("student")
        assert (second.status_code, second.headers["retry-after"], error_of(second)) == (
            429, "1", coded("rate_limit", "rate limit: 1 answers at a time for this student; "
                            "wait for one to finish"))
        other = api.ask("teacher")  # other keys have their own slots
        assert other.status_code == 200
        gate.set()
        rest = sse("\n".join(lines) + "\n")
    assert terminal(rest) == ["done"]
    assert api.ask("student").status_code == 200


def test_a_refusal_by_the_streams_limit_is_counted(with_model: OpenFake) -> None:
    gate = threading.Event()
    api, _ = with_model(ScriptedLLM([Say(("a ", "b [1]."), gate=gate)]),
                        api_rate_student_streams=1)
    with api.client.stream("POST", f"/v1/courses/{COURSE}/ask", headers={
            **SSE, **api.headers("student")}, json={"question": CONCEPT}) as first:
        lines = first.iter_lines()  # kept: a dropped iterator closes the stream (a disconnect)
        assert next(lines) == "event: meta"
        refused = api.ask("student")
        gate.set()
    assert refused.status_code == 429
    assert api.metric('coursetutor_rate_limited_total{role="student"}') == 1


def test_an_ask_waiting_for_a_worker_opens_its_stream_with_queued(
        with_model: OpenFake) -> None:
    gate = threading.Event()
    fake = ScriptedLLM([Say(("Bisection ", "halves ", "the bracket [1]."), gate=gate),
                        Say(("It halves ", "the bracket [1]."))])
    # the second ask is the same question: reuse off, so that it is answered afresh
    api, _ = with_model(fake, api_ask_workers=1, reuse=False, answer_check=False)
    with api.client.stream("POST", f"/v1/courses/{COURSE}/ask", headers={
            **SSE, **api.headers("student")}, json={"question": CONCEPT}) as first:
        first_lines = first.iter_lines()
        assert next(first_lines) == "event: meta"
        with api.client.stream("POST", f"/v1/courses/{COURSE}/ask", headers={
                **SSE, **api.headers("teacher")}, json={"question": CONCEPT}) as second:
            assert second.status_code == 200
            second_lines = second.iter_lines()
            assert [next(second_lines), next(second_lines)] == [
                "event: queued", 'data: {"waiting": 1}']
            gate.set()
            later = sse("\n".join(second_lines) + "\n")
        earlier = sse("\n".join(first_lines) + "\n")
    assert terminal(earlier) == ["done"]
    assert shape(later) == ["meta", "token", "sources", "done"]
    assert later[-1][1]["text"] == "It halves the bracket [1]."


def test_a_quiet_stream_sends_keep_alive_comments(with_model: OpenFake,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(routes_tutor, "KEEPALIVE_SECONDS", 0.05)
    gate = threading.Event()
    api, _ = with_model(ScriptedLLM([Say(("Bisection ", "halves the bracket [1]."),
                                         gate=gate)]), answer_check=False)
    lines = []
    with api.client.stream("POST", f"/v1/courses/{COURSE}/ask", headers={
            **SSE, **api.headers("student")}, json={"question": CONCEPT}) as response:
        for line in response.iter_lines():
            lines.append(line)
            if line == ": keep-alive":
                gate.set()
    events = sse("\n".join(lines) + "\n")
    assert shape(events) == ["meta", "token", "sources", "done"]
    assert events[-1][1]["text"] == "Bisection halves the bracket [1]."


# -- the pump between the tutor's thread and the event loop ---------------------------------


def test_a_quiet_pump_answers_keepalive() -> None:
    async def wait() -> Any:
        return await EventPump(asyncio.get_running_loop()).next(timeout=0.01)

    assert asyncio.run(wait()) is KEEPALIVE


def run_pump(make: Callable[[], Iterator[StreamEvent]], cancel_after: int | None = None,
             after_cancel: Callable[[], None] = lambda: None,
             ) -> tuple[list[Any], threading.Thread]:
    """Consume a pump fed by `make` on a thread; cancel after `cancel_after` events."""

    async def consume() -> tuple[list[Any], threading.Thread]:
        pump = EventPump(asyncio.get_running_loop())
        if cancel_after == 0:
            pump.cancelled.set()
        worker = threading.Thread(target=pump.run, args=(make,))
        worker.start()
        got: list[Any] = []
        while True:
            try:
                event = await pump.next()
            except Exception as exc:
                got.append(exc)
                continue
            if event is None:
                return got, worker
            got.append(event)
            if len(got) == cancel_after:
                pump.cancelled.set()
                after_cancel()

    got, worker = asyncio.run(consume())
    worker.join(5)
    return got, worker


def test_the_pump_passes_every_event_then_ends() -> None:
    got, _ = run_pump(lambda: iter([TokenEvent("a"), TokenEvent("b")]))
    assert got == [TokenEvent("a"), TokenEvent("b")]


def test_the_pump_closes_the_generator_when_cancelled() -> None:
    log: list[str] = []
    gate = threading.Event()

    def events() -> Iterator[StreamEvent]:
        try:
            for piece in ("a", "b", "c", "d"):
                log.append(piece)
                yield TokenEvent(piece)
                gate.wait(5)  # the consumer cancels after the first event
        except GeneratorExit:
            log.append("closed")
            raise

    got, worker = run_pump(events, cancel_after=1, after_cancel=gate.set)
    assert not worker.is_alive()
    # the worker notices the cancel after putting at most one more event, and closes the turn
    assert log in (["a", "closed"], ["a", "b", "closed"])
    assert got == [TokenEvent(p) for p in log[:-1]]


def test_a_pump_cancelled_before_it_starts_never_builds_the_turn() -> None:
    built: list[bool] = []

    def make() -> Iterator[StreamEvent]:
        built.append(True)
        return iter([TokenEvent("a")])

    assert run_pump(make, cancel_after=0)[0] == []
    assert built == []


def test_the_pump_raises_the_turns_error_then_ends() -> None:
    def events() -> Iterator[StreamEvent]:
        yield TokenEvent("a")
        raise BackendUnavailableError(DOWN)

    got, _ = run_pump(events)
    assert got[0] == TokenEvent("a") and isinstance(got[1], BackendUnavailableError)
    assert len(got) == 2


# -- the real small model ------------------------------------------------------------------


def test_sse_with_the_real_small_model(sample: Sample, embedder: EmbeddingModel,
                                       tmp_path: Path, smollm_path: Path) -> None:
    with open_api(sample, embedder, tmp_path / "data", llm_backend="local",
                  llm_model=str(smollm_path), llm_max_tokens=48) as api:
        response, events = ask_sse(api, question="When does Newton's method fail?")
        assert api.client.get("/readyz").json()["llm"] == "ok"
    assert response.status_code == 200
    assert shape(events) == ["meta", "token", "sources", "done"]
    done = events[-1][1]
    tokens = "".join(d["text"] for name, d in events if name == "token")
    assert done["text"] and tokens.strip()
    if not done["removed"]:  # the check kept the draft: the final text is what streamed
        assert done["text"].startswith(tokens.strip()[:20])
    assert events[-2] == ("sources", {"sources": done["sources"]})
    assert events[0][1]["session_id"] == done["session_id"]
    assert done["usage"]["completion_tokens"] > 0


# -- sessions ------------------------------------------------------------------------------


def without_urls(session: dict[str, Any]) -> dict[str, Any]:
    return {**session, "turns": [{**t, "sources": [{k: v for k, v in s.items() if k != "url"}
                                                   for s in t["sources"]]}
                                 for t in session["turns"]]}


def test_sessions_of_a_student(api: Api) -> None:
    cleo = enrolled(api, "cleo")
    path = f"/v1/courses/{COURSE}"
    first = api.client.post(f"{path}/ask", headers=cleo, json={"question": CONCEPT}).json()
    sid = first["session_id"]
    second = api.client.post(f"{path}/ask", headers=cleo,
                             json={"question": "What is the capital of France?",
                                   "session_id": sid, "student": "someone-else"}).json()
    assert second["session_id"] == sid

    listed = api.client.get(f"{path}/sessions", headers=cleo).json()["sessions"]
    assert [{k: s[k] for k in ("id", "course", "student", "ended", "turns", "title")}
            for s in listed] == [{"id": sid, "course": COURSE, "student": "cleo",
                                  "ended": None, "turns": 2, "title": CONCEPT}]
    session = api.client.get(f"{path}/sessions/{sid}", headers=cleo).json()
    assert session["session"] == listed[0]
    assert [(t["ordinal"], t["question"], t["answer"], t["grade"], t["covered"])
            for t in session["turns"]] == [
        (1, CONCEPT, first["text"], "correct", True),
        (2, "What is the capital of France?", second["text"], "incorrect", False)]
    assert session["turns"][0]["sources"] == first["sources"]

    for who in ("teacher", "admin"):
        by_teacher = api.call(who, "GET", f"{path}/sessions", params={"student": "cleo"})
        assert by_teacher.json() == {"sessions": listed}
        # the same, but with links signed for staff (they open solutions whatever the policy)
        assert without_urls(api.call(who, "GET", f"{path}/sessions/{sid}").json()) == (
            without_urls(session))
    assert api.call("student", "GET", f"{path}/sessions/{sid}").status_code == 404
    # a student naming another student still lists its own sessions
    assert api.call("student", "GET", f"{path}/sessions", params={"student": "cleo"}).json()[
        "sessions"] == api.call("student", "GET", f"{path}/sessions").json()["sessions"] != listed

    ended = api.client.post(f"{path}/sessions/{sid}/end", headers=cleo).json()
    assert ended["ended"] is not None and ended["turns"] == 2
    again = api.call("teacher", "POST", f"{path}/sessions/{sid}/end").json()
    assert again["ended"] == ended["ended"]


def test_another_students_session_is_404(api: Api) -> None:
    dan, eve = enrolled(api, "dan"), enrolled(api, "eve")
    path = f"/v1/courses/{COURSE}"
    sid = api.client.post(f"{path}/ask", headers=dan, json={"question": CONCEPT}).json()[
        "session_id"]
    missing = coded("not_found", f"session {sid!r} does not exist", "session_not_found",
                    session=sid)
    for method, url, body in (("GET", f"{path}/sessions/{sid}", None),
                              ("POST", f"{path}/sessions/{sid}/end", None),
                              ("POST", f"{path}/ask", {"question": CONCEPT, "session_id": sid})):
        response = api.client.request(method, url, headers=eve, json=body)
        assert (response.status_code, error_of(response)) == (404, missing)
    assert api.client.get(f"{path}/sessions", headers=eve).json() == {"sessions": []}
    assert api.store.get_session("default", COURSE, sid).ended is None
    assert api.store.get_session("default", COURSE, sid).turns == 1


def test_an_unknown_session_is_404(api: Api) -> None:
    response = api.ask("student", session_id="0" * 32)
    assert (response.status_code, error_of(response)) == (
        404, coded("not_found", f"session {'0' * 32!r} does not exist", "session_not_found",
                   session="0" * 32))


def test_a_teacher_asks_as_a_student_or_as_itself(api: Api) -> None:
    path = f"/v1/courses/{COURSE}/sessions"
    as_fred = api.ask("teacher", student="fred").json()["session_id"]
    own = api.ask("teacher").json()["session_id"]
    fred = api.call("teacher", "GET", path, params={"student": "fred"}).json()["sessions"]
    mine = api.call("teacher", "GET", path).json()["sessions"]
    assert ([s["id"] for s in fred], [s["id"] for s in mine]) == ([as_fred], [own])
    assert mine[0]["student"] == f"key:{api.key_ids['teacher']}"


def test_sessions_are_listed_most_recent_first(api: Api) -> None:
    gil = enrolled(api, "gil")
    path = f"/v1/courses/{COURSE}"
    sids = [api.client.post(f"{path}/ask", headers=gil, json={"question": CONCEPT}).json()[
        "session_id"] for _ in range(3)]
    listed = api.client.get(f"{path}/sessions", headers=gil).json()["sessions"]
    assert [s["id"] for s in listed] == sids[::-1]


def test_analytics_count_the_asks(api: Api) -> None:
    before = api.call("teacher", "GET", f"/v1/courses/{COURSE}/analytics").json()
    api.ask("student", "Who won the 1998 world cup in Saint-Denis?")
    after = api.call("teacher", "GET", f"/v1/courses/{COURSE}/analytics").json()
    assert after["turns"] == before["turns"] + 1
    assert after["not_covered"][0] == "Who won the 1998 world cup in Saint-Denis?"
    assert api.call("student", "GET", f"/v1/courses/{COURSE}/analytics").status_code == 403
    assert api.call("teacher_b", "GET", f"/v1/courses/{COURSE}/analytics").status_code == 404


# -- metrics -------------------------------------------------------------------------------


def metric_lines(api: Api) -> list[str]:
    text: str = api.client.get("/metrics").text
    return text.splitlines()


def test_metrics_after_an_ask(with_model: OpenFake) -> None:
    api, _ = with_model(ScriptedLLM([Say(("Bisection halves ", "the bracket [1]."))]))
    done = api.ask("student").json()
    response = api.client.get("/metrics")
    assert response.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
    route = 'method="POST",route="/v1/courses/{course}/ask",status="200"'
    expected = {
        f"coursetutor_http_requests_total{{{route}}}": 1.0,
        'coursetutor_http_request_seconds_count{route="/v1/courses/{course}/ask"}': 1.0,
        'coursetutor_ask_stage_seconds_count{stage="retrieve"}': 1.0,
        'coursetutor_ask_stage_seconds_count{stage="grade"}': 1.0,
        'coursetutor_ask_stage_seconds_count{stage="first_token"}': 1.0,
        'coursetutor_ask_stage_seconds_count{stage="total"}': 1.0,
        "coursetutor_ask_queue_seconds_count": 1.0,
        "coursetutor_ask_queue_depth": 0.0,
        "coursetutor_active_streams": 0.0,
        "coursetutor_active_sessions": 1.0,
        'coursetutor_llm_tokens_total{direction="in",model="scripted-model",task="answer"}':
            float(done["usage"]["prompt_tokens"]),
        'coursetutor_llm_tokens_total{direction="out",model="scripted-model",task="answer"}':
            2.0,
        'coursetutor_llm_cost_total{model="scripted-model",task="answer"}': 0.0,
        'coursetutor_evidence_grades_total{grade="correct"}': 1.0,
        'coursetutor_retrievals_total{result="hits",route="ask"}': 1.0,
        "coursetutor_contexts_total": 1.0,
        "coursetutor_context_over_budget_total": 0.0,
    }
    assert {name: api.metric(name) for name in expected} == expected
    assert api.metric("coursetutor_threads") > 0


def test_metrics_label_unmatched_routes_once(api: Api) -> None:
    before = api.metric('coursetutor_http_requests_total{method="GET",route="unmatched",'
                        'status="404"}')
    api.client.get("/no/such/path/123")
    api.client.get("/no/such/path/456")
    after = api.metric('coursetutor_http_requests_total{method="GET",route="unmatched",'
                       'status="404"}')
    assert after == before + 2
    assert not [line for line in metric_lines(api) if "/no/such/path" in line]


def test_no_error_reply_carries_a_trace_or_a_path(api: Api) -> None:
    data_dir = api.settings.data_dir
    for response in (api.ask("student", "   "), api.ask("student", "x" * 5000),
                     api.call("student", "POST", f"/v1/courses/{COURSE}/ask", json={}),
                     api.ask("student", course="no-such-course"),
                     api.ask("student", session_id="nope"),
                     api.call("student", "GET", f"/v1/courses/{COURSE}/search")):
        assert response.status_code >= 400
        assert_clean(response.text, data_dir, data_dir.parent)


def test_metrics_count_live_class_tiers_and_stages() -> None:
    import dataclasses

    from coursetutor.api.metrics import Metrics
    from coursetutor.types import Answer

    metrics = Metrics()
    base = Answer("x [1]", (), "lecture", "concept", "correct", 0.8, "en",
                  timings={"memory": 1.0, "retrieve": 12.0, "rerank": 0.4, "total": 20.0})
    metrics.observe_answer(dataclasses.replace(base, tier="class"))
    metrics.observe_answer(dataclasses.replace(base, tier="class"))
    metrics.observe_answer(dataclasses.replace(base, tier="course"))
    metrics.observe_answer(base)  # not asked during a class: no tier
    text = metrics.render().decode()
    assert 'coursetutor_class_tiers_total{tier="class"} 2.0' in text
    assert 'coursetutor_class_tiers_total{tier="course"} 1.0' in text
    assert 'coursetutor_ask_stage_seconds_count{stage="rerank"} 4.0' in text
    assert 'coursetutor_ask_stage_seconds_count{stage="memory"} 4.0' in text
