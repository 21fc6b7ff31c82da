"""Per-key rate limits: sliding windows with an injected clock, stream slots, and the 429."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from coursetutor.api.ratelimit import Limits, MemoryRateLimiter
from coursetutor.config import Settings
from coursetutor.errors import RateLimitError
from coursetutor.retrieval import EmbeddingModel

from .api_support import COURSE, STUDENT, Api, error_of, open_api
from .support import Sample


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def hits(limiter: MemoryRateLimiter, clock: Clock, limits: Limits,
         times: Sequence[float], key: str = "k") -> list[int | None]:
    """For each time, None when the request was counted, else its retry_after."""
    out: list[int | None] = []
    for t in times:
        clock.now = t
        try:
            limiter.hit(key, limits)
            out.append(None)
        except RateLimitError as exc:
            out.append(exc.retry_after)
    return out


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def limiter(clock: Clock) -> MemoryRateLimiter:
    return MemoryRateLimiter(clock)


@pytest.mark.parametrize(("times", "expected"), [
    # three a minute: the fourth waits for the first to leave the window
    ([0, 10, 20, 30], [None, None, None, 30]),
    ([0, 10, 20, 59.5], [None, None, None, 1]),
    ([0, 10, 20, 59.99], [None, None, None, 1]),  # never less than a second
    ([0, 10, 20, 20.5], [None, None, None, 40]),  # 39.5 rounds up
    ([0, 10, 20, 60], [None, None, None, None]),  # the window slides: t=0 is out at 60
    # a refused request does not take a slot
    ([0, 10, 20, 30, 60, 61], [None, None, None, 30, None, 9]),
    ([0, 0, 0, 0, 0], [None, None, None, 60, 60]),
])
def test_the_minute_window_slides(limiter: MemoryRateLimiter, clock: Clock,
                                  times: list[float], expected: list[int | None]) -> None:
    assert hits(limiter, clock, Limits(3, 0, 0), [1000 + t for t in times]) == expected


def test_the_hour_window(limiter: MemoryRateLimiter, clock: Clock) -> None:
    times = [0, 100, 200, 3599, 3600, 3650, 3700]
    assert hits(limiter, clock, Limits(0, 2, 0), times) == [None, None, 3400, 1, None, 50, None]


def test_both_windows_count_only_accepted_requests(limiter: MemoryRateLimiter,
                                                   clock: Clock) -> None:
    # the minute is full at t=3; t=61 takes the hour's last slot, so t=62 and t=122 are
    # refused by the hour although their minute has room, and neither is counted
    found = hits(limiter, clock, Limits(3, 4, 0), [0, 1, 2, 3, 61, 62, 122, 3600])
    assert found == [None, None, None, 57, None, 3538, 3478, None]


def test_the_messages_name_the_window(limiter: MemoryRateLimiter, clock: Clock) -> None:
    limiter.hit("k", Limits(1, 0, 0))
    with pytest.raises(RateLimitError) as minute:
        limiter.hit("k", Limits(1, 0, 0))
    limiter.hit("h", Limits(0, 1, 0))
    with pytest.raises(RateLimitError) as hour:
        limiter.hit("h", Limits(0, 1, 0))
    assert (str(minute.value), minute.value.retry_after) == (
        "rate limit: 1 requests per minute for this key; retry in 60 s", 60)
    assert (str(hour.value), hour.value.retry_after) == (
        "rate limit: 1 requests per hour for this key; retry in 3600 s", 3600)


def test_keys_are_counted_apart(limiter: MemoryRateLimiter, clock: Clock) -> None:
    limits = Limits(1, 0, 0)
    assert hits(limiter, clock, limits, [0], "a") == [None]
    assert hits(limiter, clock, limits, [0], "b") == [None]
    assert hits(limiter, clock, limits, [1], "a") == [59]


def test_zero_means_unlimited(limiter: MemoryRateLimiter, clock: Clock) -> None:
    assert hits(limiter, clock, Limits(0, 0, 0), [0.0] * 5000) == [None] * 5000
    for _ in range(100):
        limiter.open_stream("k", Limits(0, 0, 0))


def test_stream_slots(limiter: MemoryRateLimiter) -> None:
    limits = Limits(0, 0, 2)
    limiter.open_stream("k", limits)
    limiter.open_stream("k", limits)
    with pytest.raises(RateLimitError) as full:
        limiter.open_stream("k", limits)
    assert (str(full.value), full.value.retry_after) == (
        "rate limit: 2 answers at a time for this key; wait for one to finish", 1)
    limiter.open_stream("other", limits)  # another key has its own slots
    limiter.close_stream("k")
    limiter.open_stream("k", limits)
    with pytest.raises(RateLimitError):
        limiter.open_stream("k", limits)


def test_closing_more_streams_than_opened_frees_no_extra_slot(
        limiter: MemoryRateLimiter) -> None:
    limits = Limits(0, 0, 1)
    for _ in range(3):
        limiter.close_stream("k")
    limiter.open_stream("k", limits)
    with pytest.raises(RateLimitError):
        limiter.open_stream("k", limits)


@pytest.mark.parametrize(("role", "limits"), [
    ("student", Limits(60, 600, 2)),
    ("teacher", Limits(300, 10_000, 4)),
    ("admin", Limits(600, 20_000, 8)),
])
def test_default_limits_by_role(role: str, limits: Limits) -> None:
    assert Limits.for_role(Settings(), role) == limits  # type: ignore[arg-type]


def test_limits_come_from_the_settings() -> None:
    settings = Settings(api_rate_teacher_per_minute=7, api_rate_teacher_per_hour=70,
                        api_rate_teacher_streams=1)
    assert Limits.for_role(settings, "teacher") == Limits(7, 70, 1)


# -- over HTTP -----------------------------------------------------------------------------


@pytest.fixture
def limited(sample: Sample, embedder: EmbeddingModel,
            tmp_path: Path) -> Iterator[tuple[Api, Clock]]:
    """Students may make 3 requests a minute; the limiter's clock is the test's."""
    clock = Clock()
    with open_api(sample, embedder, tmp_path / "data", limiter=MemoryRateLimiter(clock),
                  api_rate_student_per_minute=3) as api:
        yield api, clock


def test_the_fourth_request_in_a_minute_is_429(limited: tuple[Api, Clock]) -> None:
    api, clock = limited
    assert [api.call("student", "GET", "/v1/me").status_code for _ in range(3)] == [200] * 3
    clock.now += 15
    refused = api.ask("student")
    assert (refused.status_code, refused.headers["retry-after"], error_of(refused)) == (
        429, "45", {"type": "rate_limit",
                    "message": "rate limit: 3 requests per minute for this student; "
                               "retry in 45 s", "code": "rate_limit", "params": {}})
    assert api.store.list_sessions("default", COURSE, STUDENT) == []  # no turn was started
    assert api.metric('coursetutor_rate_limited_total{role="student"}') == 1
    counted = ('coursetutor_http_requests_total{method="POST",'
               'route="/v1/courses/{course}/ask",status="429"}')
    assert api.metric(counted) == 1

    # other keys are not limited by it
    assert api.call("outsider", "GET", "/v1/me").status_code == 200
    assert [api.call("teacher", "GET", "/v1/me").status_code for _ in range(5)] == [200] * 5

    clock.now += 44.5
    again = api.call("student", "GET", "/v1/me")
    assert (again.status_code, again.headers["retry-after"]) == (429, "1")
    assert api.metric('coursetutor_rate_limited_total{role="student"}') == 2
    clock.now += 0.5
    assert api.ask("student").status_code == 200


def test_requests_without_a_valid_key_are_not_counted(limited: tuple[Api, Clock]) -> None:
    api, _ = limited
    for _ in range(5):
        assert api.call("revoked", "GET", "/v1/me").status_code == 401
    assert [api.call("student", "GET", "/v1/me").status_code for _ in range(3)] == [200] * 3


def test_a_signed_file_url_is_not_counted(limited: tuple[Api, Clock]) -> None:
    api, _ = limited
    hit = api.call("student", "GET", f"/v1/courses/{COURSE}/search",
                   params={"q": "bisection", "k": 1}).json()["hits"][0]
    url = hit["url"].split("#")[0]
    assert [api.client.get(url).status_code for _ in range(5)] == [200] * 5
    assert [api.call("student", "GET", "/v1/me").status_code for _ in range(3)] == [200, 200,
                                                                                     429]
