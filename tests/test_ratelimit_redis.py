"""Rate limits in Redis: shared by processes, with MemoryRateLimiter's windows and messages,
leased stream slots, and a Redis that is down answered 503."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from coursetutor.api.ratelimit import Limits
from coursetutor.api.ratelimit_redis import RedisRateLimiter
from coursetutor.config import Settings
from coursetutor.errors import RateLimitError, RedisUnavailableError
from coursetutor.retrieval import EmbeddingModel
from coursetutor.store.redis import RedisLink, connect

from .api_support import error_of, open_api
from .support import Sample
from .test_ratelimit import Clock, hits

DOWN = "redis://127.0.0.1:1/0"  # nothing listens on port 1


@pytest.fixture
def link(redis_url: str) -> RedisLink:
    return connect(Settings(redis=redis_url, redis_prefix="t"))


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def two(link: RedisLink, clock: Clock) -> Iterator[tuple[RedisRateLimiter, RedisRateLimiter]]:
    """Two limiters on one Redis and one clock: two API processes."""
    first, second = RedisRateLimiter(link, clock), RedisRateLimiter(link, clock)
    yield first, second
    first.close()
    second.close()


@pytest.mark.parametrize(("times", "expected"), [
    ([0, 10, 20, 30], [None, None, None, 30]),
    ([0, 10, 20, 59.5], [None, None, None, 1]),
    ([0, 10, 20, 59.99], [None, None, None, 1]),
    ([0, 10, 20, 20.5], [None, None, None, 40]),
    ([0, 10, 20, 60], [None, None, None, None]),
    ([0, 10, 20, 30, 60, 61], [None, None, None, 30, None, 9]),
    ([0, 0, 0, 0, 0], [None, None, None, 60, 60]),
])
def test_the_minute_window_slides_like_in_memory(
        two: tuple[RedisRateLimiter, RedisRateLimiter], clock: Clock,
        times: list[float], expected: list[int | None]) -> None:
    assert hits(two[0], clock, Limits(3, 0, 0), [1000 + t for t in times]) == expected


def test_both_windows_count_only_accepted_requests(
        two: tuple[RedisRateLimiter, RedisRateLimiter], clock: Clock) -> None:
    found = hits(two[0], clock, Limits(3, 4, 0), [0, 1, 2, 3, 61, 62, 122, 3600])
    assert found == [None, None, None, 57, None, 3538, 3478, None]


def test_two_processes_share_the_windows(two: tuple[RedisRateLimiter, RedisRateLimiter],
                                         clock: Clock) -> None:
    first, second = two
    limits = Limits(3, 0, 0)
    assert hits(first, clock, limits, [0, 10]) == [None, None]
    assert hits(second, clock, limits, [20, 30]) == [None, 30]
    assert hits(first, clock, limits, [31, 60]) == [29, None]
    assert hits(second, clock, limits, [60], "other key") == [None]


def test_the_messages_are_the_in_memory_ones(two: tuple[RedisRateLimiter, RedisRateLimiter],
                                             clock: Clock) -> None:
    first, second = two
    first.hit("k", Limits(1, 0, 0))
    with pytest.raises(RateLimitError) as minute:
        second.hit("k", Limits(1, 0, 0))
    first.hit("h", Limits(0, 1, 0))
    with pytest.raises(RateLimitError) as hour:
        second.hit("h", Limits(0, 1, 0))
    assert (str(minute.value), minute.value.retry_after) == (
        "rate limit: 1 requests per minute for this key; retry in 60 s", 60)
    assert (str(hour.value), hour.value.retry_after) == (
        "rate limit: 1 requests per hour for this key; retry in 3600 s", 3600)


def test_redis_time_counts_when_no_clock_is_given(link: RedisLink) -> None:
    limiter = RedisRateLimiter(link)
    limiter.hit("k", Limits(2, 0, 0))
    limiter.hit("k", Limits(2, 0, 0))
    with pytest.raises(RateLimitError) as full:
        limiter.hit("k", Limits(2, 0, 0))
    assert full.value.retry_after in (59, 60)


def test_keys_live_under_the_prefix(two: tuple[RedisRateLimiter, RedisRateLimiter],
                                    link: RedisLink) -> None:
    two[0].hit("k1", Limits(5, 5, 0))
    two[0].open_stream("k1", Limits(0, 0, 1))
    assert sorted(link.client.keys("*")) == [b"t:rate:{k1}:hour", b"t:rate:{k1}:minute",
                                            b"t:rate:{k1}:streams"]
    assert 0 < link.client.pttl("t:rate:{k1}:minute") <= 60_000


def test_stream_slots_are_shared(two: tuple[RedisRateLimiter, RedisRateLimiter]) -> None:
    first, second = two
    limits = Limits(0, 0, 2)
    first.open_stream("k", limits)
    second.open_stream("k", limits)
    with pytest.raises(RateLimitError) as full:
        first.open_stream("k", limits)
    assert (str(full.value), full.value.retry_after) == (
        "rate limit: 2 answers at a time for this key; wait for one to finish", 1)
    second.open_stream("other", limits)
    second.close_stream("k")
    first.open_stream("k", limits)
    with pytest.raises(RateLimitError):
        second.open_stream("k", limits)


def test_closing_a_slot_this_process_never_took_frees_nothing(
        two: tuple[RedisRateLimiter, RedisRateLimiter]) -> None:
    first, second = two
    limits = Limits(0, 0, 1)
    first.open_stream("k", limits)
    for _ in range(3):
        second.close_stream("k")
    with pytest.raises(RateLimitError):
        second.open_stream("k", limits)


def test_an_expired_lease_frees_its_slot(link: RedisLink, clock: Clock) -> None:
    limits = Limits(0, 0, 1)
    dead = RedisRateLimiter(link, clock, lease_seconds=30)
    dead.open_stream("k", limits)
    dead.close()  # the process dies mid-stream: nobody closes or renews the slot
    alive = RedisRateLimiter(link, clock, lease_seconds=30)
    clock.now += 29.5
    with pytest.raises(RateLimitError):
        alive.open_stream("k", limits)
    clock.now += 0.5
    alive.open_stream("k", limits)
    alive.close()


def test_a_renewed_lease_keeps_its_slot(link: RedisLink, clock: Clock) -> None:
    limits = Limits(0, 0, 1)
    running = RedisRateLimiter(link, clock, lease_seconds=30)
    other = RedisRateLimiter(link, clock, lease_seconds=30)
    running.open_stream("k", limits)
    for _ in range(4):  # a long answer: 80 s, renewed every 20 s
        clock.now += 20
        running.renew()
    with pytest.raises(RateLimitError):
        other.open_stream("k", limits)
    running.close_stream("k")
    other.open_stream("k", limits)
    running.close()
    other.close()


def test_the_lease_thread_renews_open_slots(link: RedisLink) -> None:
    limiter = RedisRateLimiter(link, lease_seconds=0.3)
    limiter.open_stream("k", Limits(0, 0, 1))
    score = link.client.zrange("t:rate:{k}:streams", 0, 0, withscores=True)[0][1]
    try:
        for _ in range(50):
            if link.client.zrange("t:rate:{k}:streams", 0, 0, withscores=True)[0][1] > score:
                break
            limiter._stop.wait(0.05)
        else:
            pytest.fail("the lease was not renewed")
    finally:
        limiter.close()


@pytest.fixture
def down() -> RedisRateLimiter:
    return RedisRateLimiter(connect(Settings(redis=DOWN)))


def test_a_redis_that_is_down_raises_naming_it(down: RedisRateLimiter) -> None:
    with pytest.raises(RedisUnavailableError, match=r"^Redis at 127\.0\.0\.1:1/0 cannot be "
                                                    r"reached: "):
        down.hit("k", Limits(1, 1, 1))
    with pytest.raises(RedisUnavailableError):
        down.open_stream("k", Limits(1, 1, 1))


def test_a_redis_that_is_down_is_503_not_a_silent_fallback(
        sample: Sample, embedder: EmbeddingModel, tmp_path: Path,
        down: RedisRateLimiter) -> None:
    with open_api(sample, embedder, tmp_path / "data", limiter=down) as api:
        refused = api.call("student", "GET", "/v1/me")
    found = error_of(refused)
    assert (refused.status_code, found["type"]) == (503, "redis_unavailable")
    assert found["message"].startswith("Redis at 127.0.0.1:1/0 cannot be reached: ")


def test_create_app_picks_the_redis_limiter(sample: Sample, embedder: EmbeddingModel,
                                            tmp_path: Path, redis_url: str) -> None:
    with open_api(sample, embedder, tmp_path / "data", redis=redis_url,
                  redis_prefix="app", api_rate_student_per_minute=2) as api:
        assert isinstance(api.app.state.coursetutor.limiter, RedisRateLimiter)
        codes = [api.call("student", "GET", "/v1/me").status_code for _ in range(3)]
        link = connect(api.settings)
        # a student's requests count against the student, whichever key sends them
        assert link.client.exists("app:rate:{student:default:ana}:minute")
    assert codes == [200, 200, 429]
