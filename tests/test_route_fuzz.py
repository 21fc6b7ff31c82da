"""Every route through the shared validation (issue 27, item 2).

First the findings, each a regression test: transcript events (JSON, WebVTT, SubRip and
WebSocket messages) with lone surrogates, control characters, negative, NaN, infinite or huge
times, or an end before the start are refused with a 422 naming the field, and nothing of
them is stored. Then the fuzz (tests/route_fuzz.py): the app's route table is walked and every
path, query and body field of every route is fuzzed, seeded, as an authorised caller of the
right tenant with the model off. No reply is a 5xx or holds internal text, a 422 names the
field it refuses, and a refused request changes nothing in the store.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from coursetutor.retrieval import EmbeddingModel

from .api_support import COURSE, STUDENT, error_of
from .route_fuzz import (
    BODIES,
    BODYLESS,
    EVENT,
    HAND_PARSED,
    QUERIES,
    SIGNED,
    SPARE,
    SURROGATE,
    Site,
    open_site,
    route_table,
    run,
)


@pytest.fixture(scope="module")
def site(embedder: EmbeddingModel, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    with open_site(embedder, tmp_path_factory.mktemp("route-fuzz")) as found:
        yield found


def post_events(site: Site, body: bytes | str, content_type: str = "application/json") -> Any:
    raw = body.encode() if isinstance(body, str) else body
    return site.api.call("teacher", "POST", site.events, content=raw,
                         headers={"Content-Type": content_type})


def refusal(response: Any) -> tuple[list[str], str]:
    """The fields a 422 names and its message."""
    assert response.status_code == 422, response.text
    error = error_of(response)
    assert error["type"] == "validation"
    return [f["field"] for f in error["fields"]], error["message"]


# -- the findings --------------------------------------------------------------------------


@pytest.mark.parametrize(("change", "field", "reason"), [
    ({"text": SURROGATE}, "events.0.text", "not valid Unicode text (a lone surrogate)"),
    ({"speaker": SURROGATE}, "events.0.speaker", "not valid Unicode text (a lone surrogate)"),
    ({"text": "a\u0000b"}, "events.0.text", "control character U+0000 is not allowed"),
    ({"text": "bell\u0007"}, "events.0.text", "control character U+0007 is not allowed"),
    ({"speaker": "Ro\u001bssi"}, "events.0.speaker", "control character U+001B is not allowed"),
    ({"speaker": "Rossi\tand Bianchi"}, "events.0.speaker",
     "control character U+0009 is not allowed"),
    ({"start": -1}, "events.0.start", "Input should be greater than or equal to 0"),
    ({"end": 0.5}, "events.0.end", "must not be before start (1 s)"),
    ({"start": 1e308}, "events.0.start",
     "Input should be less than or equal to 604800"),
    ({"end": 10**30}, "events.0.end", "Input should be less than or equal to 604800"),
    ({"start": True}, "events.0.start", "Input should be a valid number"),
    ({"start": "1"}, "events.0.start", "Input should be a valid number"),
    ({"final": "yes"}, "events.0.final", "Input should be a valid boolean"),
    ({"text": "x" * 4001}, "events.0.text", "String should have at most 4000 characters"),
])
def test_a_bad_json_event_is_422_naming_its_field_and_is_not_stored(
        site: Site, change: dict[str, Any], field: str, reason: str) -> None:
    before = site.stored_events()
    response = post_events(site, json.dumps({**EVENT, **change}))
    assert refusal(response) == ([field], f"{field}: {reason}")
    assert "Error" not in response.text
    assert site.stored_events() == before


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_a_time_that_is_not_finite_is_422(site: Site, literal: str) -> None:
    body = f'{{"start": {literal}, "end": 2, "text": "Bisection."}}'
    assert refusal(post_events(site, body)) == (
        ["events.0.start"], "events.0.start: Input should be a finite number")


def test_a_number_too_long_to_read_is_422(site: Site) -> None:
    body = '{"start": ' + "9" * 5000 + ', "end": 2, "text": "Bisection."}'
    assert refusal(post_events(site, body)) == (
        ["body"], "body: the body holds a number too long to read")


def test_the_nth_event_of_a_list_is_named(site: Site) -> None:
    body = json.dumps({"events": [EVENT, {**EVENT, "text": "ok\u0000"}]})
    assert refusal(post_events(site, body))[0] == ["events.1.text"]


VTT_NEGATIVE = "WEBVTT\n\n-00:00:01.000 --> 00:00:02.000\nBisection halves the bracket.\n"
SRT_NEGATIVE = "1\n-00:00:01,000 --> 00:00:02,000\nBisection halves the bracket.\n"


@pytest.mark.parametrize(("content_type", "body"), [
    ("text/vtt", VTT_NEGATIVE),
    ("application/x-subrip", SRT_NEGATIVE),
    ("application/json", json.dumps({**EVENT, "start": -1})),
])
def test_a_negative_time_is_the_same_422_in_every_format(site: Site, content_type: str,
                                                         body: str) -> None:
    before = site.stored_events()
    assert refusal(post_events(site, body, content_type)) == (
        ["events.0.start"], "events.0.start: Input should be greater than or equal to 0")
    assert site.stored_events() == before


@pytest.mark.parametrize(("content_type", "body", "field", "reason"), [
    ("text/vtt", "WEBVTT\n\n00:00:03.000 --> 00:00:02.000\nBackwards.\n", "events.0.end",
     "must not be before start (3 s)"),
    ("application/x-subrip", "1\n00:00:03,000 --> 00:00:02,000\nBackwards.\n", "events.0.end",
     "must not be before start (3 s)"),
    ("text/vtt", "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\n-1\n\n"
                 "00:00:01.000 --> 999999999:00:01.000\nLate.\n", "events.1.end",
     "Input should be less than or equal to 604800"),
    ("text/vtt", "WEBVTT\n\n00:00:01.000 --> 99:00:00:02.000\nOdd.\n", "body",
     "cannot read the times of '00:00:01.000 --> 99:00:00:02.000'"),
])
def test_cue_times_are_checked_like_json_times(site: Site, content_type: str, body: str,
                                               field: str, reason: str) -> None:
    assert refusal(post_events(site, body, content_type)) == ([field], f"{field}: {reason}")


@pytest.mark.parametrize(("content_type", "body", "reason"), [
    ("text/vtt", b"WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nBi\x00section\n",
     "line 4: control character U+0000 is not allowed"),
    ("application/x-subrip", b"1\n00:00:01,000 --> 00:00:02,000\nBi\x00section\n",
     "line 3: control character U+0000 is not allowed"),
    ("text/vtt", b"WEBVTT\n\n00:00:01.000 --> 00:00:02.000\n\x1fBisection\n",
     "line 4: control character U+001F is not allowed"),
    ("text/vtt", b"WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nBi\xed\xa0\x80section\n",
     "not UTF-8 text (byte 0xED at offset 40)"),
    ("application/json", b'{"start": 1, "end": 2, "text": "\xff"}',
     "not UTF-8 text (byte 0xFF at offset 32)"),
])
def test_control_characters_and_bad_bytes_in_a_body_are_422(site: Site, content_type: str,
                                                             body: bytes, reason: str) -> None:
    before = site.stored_events()
    assert refusal(post_events(site, body, content_type)) == (["body"], f"body: {reason}")
    assert site.stored_events() == before


def test_cues_keep_working(site: Site) -> None:
    body = ("WEBVTT\r\n\r\nNOTE a comment\r\n\r\n00:00:05.000 --> 00:00:06.500 line:-1\r\n"
            "<v Rossi>The secant\tmethod</v>\r\n\r\n")
    response = post_events(site, body, "text/vtt")
    assert response.status_code == 200, response.text
    last = site.stored_events()[-1]
    assert (last.start, last.end, last.raw_text, last.speaker) == (
        5.0, 6.5, "The secant method", "")


@pytest.mark.parametrize(("message", "field"), [
    (json.dumps({**EVENT, "text": SURROGATE}), "events.0.text"),
    (json.dumps({**EVENT, "speaker": SURROGATE}), "events.0.speaker"),
    (json.dumps({**EVENT, "text": "bell\u0007"}), "events.0.text"),
    ('{"start": NaN, "end": 2, "text": "x"}', "events.0.start"),
    ("-00:00:01.000 --> 00:00:02.000\nNegative.", "events.0.start"),
    ("00:00:01.000 --> 00:00:02.000\nNUL\x00 in a cue.", "body"),
    ("00:00:01.000 --> 00:00:02.000\nA lone \ud800 in a cue.", "body"),
    (b"00:00:01.000 --> 00:00:02.000\n\xff", "body"),
    ("{broken", "body"),
])
def test_a_bad_websocket_message_is_a_422_naming_its_field(site: Site, message: str | bytes,
                                                           field: str) -> None:
    before = site.stored_events()
    with site.socket() as ws:
        ws.send_bytes(message) if isinstance(message, bytes) else ws.send_text(message)
        error = ws.receive_json()["error"]
        assert (error["type"], error["status"]) == ("validation", 422)
        assert [f["field"] for f in error["fields"]] == [field]
        assert "Error" not in error["message"]
        ws.send_bytes(json.dumps({**EVENT, "start": 7, "end": 8}).encode())  # still open
        assert ws.receive_json()["accepted"] == 1
    assert [e.text for e in site.stored_events()] == [e.text for e in before] + [EVENT["text"]]


def test_a_websocket_message_over_the_body_limit_is_413(site: Site) -> None:
    with site.socket() as ws:
        ws.send_text(json.dumps({**EVENT, "text": "x" * site.api.settings.api_max_json_bytes}))
        assert ws.receive_json()["error"]["status"] == 413


@pytest.mark.parametrize("value", ["inf", "Infinity", "nan", "1e400"])
def test_idle_days_must_be_a_finite_number(site: Site, value: str) -> None:
    response = site.api.call("teacher", "GET",
                             f"/v1/courses/{COURSE}/students?idle_days={value}")
    assert refusal(response)[0] == ["idle_days"]



# -- what the fuzz found besides -----------------------------------------------------------


def test_a_file_signature_that_is_not_hex_is_422(site: Site) -> None:
    query = "&".join(f"{k}={v}" for k, v in {**site.signed, "sig": "%C3%A9" * 8}.items())
    response = site.api.client.get(f"/v1/documents/{site.ids['ref']}/file?{query}")
    assert refusal(response)[0] == ["sig"]


def test_a_refused_profile_patch_changes_nothing(site: Site) -> None:
    path = f"/v1/courses/{COURSE}/students/{SPARE}/profile"
    before = site.api.call("admin", "GET", path).json()
    for body in ({"goals": "new goals", "remove_topics": ["never studied"]},
                 {"level": 5, "resolve_weak_areas": ["no-such-area"]}):
        assert site.api.call("admin", "PATCH", path, json=body).status_code == 404
    assert site.api.call("admin", "GET", path).json() == before


def test_a_refused_course_patch_changes_nothing(site: Site) -> None:
    path = f"/v1/courses/{COURSE}"
    before = site.api.call("teacher", "GET", path).json()
    response = site.api.call("teacher", "PATCH", path, json={"title": "Renamed",
                                                             "language": "12"})
    assert response.status_code == 400
    assert site.api.call("teacher", "GET", path).json() == before


def test_an_ask_in_an_unknown_class_opens_no_session(site: Site) -> None:
    before = site.api.store.list_sessions("default", COURSE, STUDENT)
    response = site.api.ask("student", "How does bisection work?", class_id="no-such-class")
    assert response.status_code == 404
    assert site.api.store.list_sessions("default", COURSE, STUDENT) == before


@pytest.mark.parametrize(("content", "field"), [
    (5, "messages.0.content"),
    ([5], "messages.0.content.0"),
    ([{"type": 5, "text": "hi"}], "messages.0.content.0.type"),
    ([{"type": "text", "text": "hi\u0000"}], "messages.0.content"),
])
def test_a_chat_message_names_the_part_it_refuses(site: Site, content: Any,
                                                  field: str) -> None:
    body = {"model": COURSE, "messages": [{"role": "user", "content": content}]}
    response = site.api.call("teacher", "POST", "/v1/chat/completions", json=body)
    assert refusal(response)[0] == [field]

# -- the fuzz ------------------------------------------------------------------------------


def test_the_walk_knows_how_to_fill_every_route(site: Site) -> None:
    """A new route with a body, a body it reads itself or a query parameter fails here until
    the fuzz knows a valid value for it."""
    routes = route_table(site.api.app)
    modelled = {r.key for r in routes if r.body is not None}
    assert modelled <= set(BODIES), f"give these a valid body: {modelled - set(BODIES)}"
    unmodelled = {r.key for r in routes if r.method in ("POST", "PUT", "PATCH")
                  and r.body is None}
    assert unmodelled == HAND_PARSED | BODYLESS, (
        "a route that reads its body itself must validate it and be fuzzed: "
        f"{unmodelled ^ (HAND_PARSED | BODYLESS)}")
    declared = {(r.key, q) for r in routes for q in r.query_params if r.key != SIGNED}
    known = {(k, q) for k, params in QUERIES.items() for q in params}
    assert declared == known, f"valid values for these query parameters: {declared ^ known}"


def test_every_field_of_every_route_is_fuzzed(site: Site) -> None:
    report = run(site)
    print(f"\nroute fuzz: {report.requests} requests over {report.routes} routes in "
          f"{report.seconds:.1f} s")
    assert not report.failures, "\n".join(report.failures[:40]) + (
        f"\n({len(report.failures)} in all)")
