"""Live classes through the HTTP API: start, transcript in (JSON, WebVTT, SubRip, WebSocket),
slides, search finding what was said, end; roles and tenants."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from starlette.websockets import WebSocketDisconnect

from coursetutor.retrieval import EmbeddingModel

from .api_support import COURSE, COURSE_B, Api, coded, error_of, open_api
from .support import Sample

CLASSES = f"/v1/courses/{COURSE}/classes"
SENTENCE = ("The regula falsi method keeps a bracket like bisection but cuts it where the "
            "secant line crosses zero.")
VTT = """WEBVTT

00:01:00.000 --> 00:01:04.000
Aitken's delta squared process accelerates a linearly converging sequence.

00:01:04.500 --> 00:01:08.000
<v Rossi>It needs three consecutive iterates.</v>
"""
SRT = """1
00:02:00,000 --> 00:02:03,000
Steffensen's method applies Aitken's process to fixed point iteration.
"""


@pytest.fixture(scope="module")
def api(sample: Sample, embedder: EmbeddingModel,
        tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    with open_api(sample, embedder, tmp_path_factory.mktemp("api-classes")) as found:
        yield found


def start(api: Api, **body: Any) -> dict[str, Any]:
    response = api.call("teacher", "POST", CLASSES, json=body)
    assert response.status_code == 201, response.text
    started: dict[str, Any] = response.json()
    return started


def search(api: Api, query: str) -> list[dict[str, Any]]:
    response = api.call("student", "GET", f"/v1/courses/{COURSE}/search",
                        params={"q": query, "k": 3})
    assert response.status_code == 200
    hits: list[dict[str, Any]] = response.json()["hits"]
    return hits


def test_a_class_fed_through_the_api_end_to_end(api: Api) -> None:
    lc = start(api, title="Lecture 3: bracketing")
    assert (lc["title"], lc["running"], lc["slide_page"], lc["document"]) == (
        "Lecture 3: bracketing", True, None, f"{COURSE}:class-{lc['id']}")
    one = f"{CLASSES}/{lc['id']}"
    posted = api.call("teacher", "POST", f"{one}/events", json=[
        {"start": 12.0, "end": 15.5, "text": "Good morning.", "speaker": "Rossi"},
        {"start": 16.0, "end": 17.0, "text": "The regula", "final": False},
    ])
    assert posted.status_code == 200, posted.text
    assert posted.json() == {"class": lc["id"], "accepted": 2, "seqs": [1, 2],
                             "slide_page": None}
    final = api.call("teacher", "POST", f"{one}/events",
                     json={"start": 16.0, "end": 22.0, "text": SENTENCE, "final": True})
    assert final.json()["seqs"] == [2]  # the partial caption's place
    slide = api.call("teacher", "POST", f"{one}/slide", json={"page": 4})
    assert (slide.json()["slide_page"], slide.json()["slide_source"]) == (4, "teacher")
    hits = search(api, "regula falsi keeps a bracket where the secant line crosses zero")
    assert hits[0]["document"] == f"{COURSE}:class-{lc['id']}"
    assert hits[0]["type"] == "transcript" and hits[0]["title"] == "Lecture 3: bracketing"
    assert hits[0]["text"] == f"Good morning. {SENTENCE}"
    assert (hits[0]["start"], hits[0]["end"]) == (12.0, 22.0)
    state = api.call("student", "GET", one).json()
    assert (state["events"], state["chunks"], state["slide_page"]) == (2, 1, 4)
    assert state["slide_following"] == "teacher"  # no deck: the teacher's page events
    assert state["last_event"]["text"] == SENTENCE and state["last_event"]["final"]
    ended = api.call("teacher", "POST", f"{one}/end")
    assert ended.status_code == 200 and ended.json()["running"] is False
    late = api.call("teacher", "POST", f"{one}/events", json={"start": 30, "end": 31,
                                                              "text": "Too late."})
    assert late.status_code == 409
    assert error_of(late) == coded("conflict", f"class {lc['id']!r} has ended", "class_ended",
                                   klass=lc["id"])
    listed = api.call("student", "GET", CLASSES).json()["classes"]
    assert lc["id"] in [c["id"] for c in listed]
    assert api.metric("coursetutor_transcript_lag_seconds_count") >= 2
    assert api.metric('coursetutor_slide_changes_total{source="teacher"}') >= 1


@pytest.mark.parametrize("content_type, body, texts", [
    ("text/vtt", VTT, ["Aitken's delta squared process accelerates a linearly converging "
                       "sequence.", "It needs three consecutive iterates."]),
    ("application/x-subrip", SRT,
     ["Steffensen's method applies Aitken's process to fixed point iteration."]),
])
def test_webvtt_and_subrip_fragments(api: Api, content_type: str, body: str,
                                     texts: list[str]) -> None:
    lc = start(api)
    response = api.call("teacher", "POST", f"{CLASSES}/{lc['id']}/events",
                        content=body.encode(), headers={"Content-Type": content_type})
    assert response.status_code == 200, response.text
    events = api.store.classes.list_events("default", COURSE, lc["id"])
    assert [e.text for e in events] == texts
    assert all(e.final for e in events)


@pytest.mark.parametrize("content_type, body, message", [
    ("application/json", b"{not json", "not JSON"),
    ("application/json", b'{"start": 1, "end": 2}', "events.0.text: Field required"),
    ("application/json", b'[{"start": "one", "end": 2, "text": "x"}]',
     "events.0.start: Input should be a valid number"),
    ("application/json", b'{"start": 5, "end": 2, "text": "x"}',
     "events.0.end: must not be before start (5 s)"),
    ("application/json", b"[]", "no events"),
    ("text/vtt", b"WEBVTT\n\nno cues here", "no WebVTT cues"),
    ("text/plain", b"hello", "unsupported content type"),
])
def test_bad_bodies_are_422_with_a_message(api: Api, content_type: str, body: bytes,
                                           message: str) -> None:
    lc = start(api)
    response = api.call("teacher", "POST", f"{CLASSES}/{lc['id']}/events", content=body,
                        headers={"Content-Type": content_type})
    assert response.status_code == 422
    error = error_of(response)
    assert error["type"] == "validation" and message in error["message"]


def test_who_may_do_what(api: Api) -> None:
    assert api.call("student", "POST", CLASSES, json={}).status_code == 403
    lc = start(api)
    one = f"{CLASSES}/{lc['id']}"
    event = {"start": 0, "end": 1, "text": "Hello."}
    assert api.call("student", "POST", f"{one}/events", json=event).status_code == 403
    assert api.call("student", "POST", f"{one}/slide", json={"page": 2}).status_code == 403
    assert api.call("student", "POST", f"{one}/end").status_code == 403
    assert api.call("outsider", "GET", CLASSES).status_code == 404  # not enrolled
    assert api.call("outsider", "GET", one).status_code == 404
    assert api.call("none", "GET", CLASSES).status_code == 401
    # another tenant's teacher sees nothing of it, not even with its own course in the path
    for path in (one, f"/v1/courses/{COURSE_B}/classes/{lc['id']}"):
        assert api.call("teacher_b", "GET", path).status_code == 404
        assert api.call("teacher_b", "POST", f"{path}/events", json=event).status_code == 404
        assert api.call("teacher_b", "POST", f"{path}/end").status_code == 404
    assert api.call("teacher_b", "GET", f"/v1/courses/{COURSE_B}/classes").json() == {
        "classes": []}
    assert api.call("teacher", "GET", one).json()["running"] is True
    missing = api.call("teacher", "POST", CLASSES, json={"slides": "no-such-deck"})
    assert missing.status_code == 404


def test_the_websocket_takes_events_until_the_class_ends(api: Api) -> None:
    lc = start(api)
    path = f"{CLASSES}/{lc['id']}/stream"
    with api.client.websocket_connect(path, headers=api.headers("teacher")) as ws:
        ws.send_json({"start": 1.0, "end": 3.0, "text": "Streaming works."})
        assert ws.receive_json() == {"class": lc["id"], "accepted": 1, "seqs": [1],
                                     "slide_page": None}
        ws.send_text("00:00:04.000 --> 00:00:06.000\nA cue as WebVTT.")
        assert ws.receive_json()["seqs"] == [2]
        ws.send_text("{broken")
        assert ws.receive_json()["error"]["status"] == 422
        api.call("teacher", "POST", f"{CLASSES}/{lc['id']}/end")
        ws.send_json({"start": 7.0, "end": 8.0, "text": "After the end."})
        assert ws.receive_json()["error"]["status"] == 409
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_json()
        assert closed.value.code == 4409
    texts = [e.text for e in api.store.classes.list_events("default", COURSE, lc["id"])]
    assert texts == ["Streaming works.", "A cue as WebVTT."]


@pytest.mark.parametrize("who, code", [("student", 4403), ("none", 4401)])
def test_the_websocket_refuses_callers_who_may_not_feed(api: Api, who: str,
                                                        code: int) -> None:
    lc = start(api)
    with pytest.raises(WebSocketDisconnect) as refused, api.client.websocket_connect(
            f"{CLASSES}/{lc['id']}/stream", headers=api.headers(who)) as ws:
        ws.receive_json()
    assert refused.value.code == code
