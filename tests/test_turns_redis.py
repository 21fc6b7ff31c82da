"""Sessions' recent turns in Redis: round trips, trimming, expiry, read-through to the store,
and a tutor that goes on with a conversation whether Redis holds it or not."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from coursetutor.config import Settings
from coursetutor.memory import NoTurnCache, turn_cache
from coursetutor.memory.recent_redis import RedisTurnCache
from coursetutor.retrieval import EmbeddingModel
from coursetutor.store import SQLiteStore
from coursetutor.store.redis import connect
from coursetutor.tutor import Tutor
from coursetutor.types import Citation, Locator, Turn
from coursetutor.workspace import Workspace

from .support import SAMPLE_COURSE

T, C, S = "default", "calculus", "s_1"


def turn(n: int, session: str = S) -> Turn:
    """A turn with a citation of every locator kind."""
    sources = (
        Citation(1, "c1", "lecture-01", "Root finding", "lecture", Locator(page=3), "Bisection"),
        Citation(2, "c2", "video-01", "Video — Newton", "transcript",
                 Locator(start=61.5, end=150.25), "Newton's «method»"),
        Citation(3, "c3", "ex-01", "Exercises", "exercise", Locator(anchor="ex-2"), "x² = 2"),
    )
    return Turn(session, n, T, C, "ana", f"question {n}?", f"answer {n} [1]", "lecture",
                "concept", "correct", "hint" if n % 2 else "", "ex-2" if n % 2 else "",
                n != 3, sources[: n % 4], 1000.5 + n)


@pytest.fixture
def settings(redis_url: str) -> Settings:
    return Settings(redis=redis_url, redis_prefix="t", history_turns=3)


@pytest.fixture
def cache(settings: Settings) -> RedisTurnCache:
    built = turn_cache(settings)
    assert isinstance(built, RedisTurnCache)
    return built


def test_turns_round_trip(cache: RedisTurnCache) -> None:
    turns = [turn(1), turn(2), turn(3)]
    assert cache.get(T, C, S) is None
    cache.put(T, C, S, turns)
    assert cache.get(T, C, S) == turns
    assert cache.get(T, C, "s_other") is None


def test_put_and_append_keep_the_last_turns(cache: RedisTurnCache) -> None:
    cache.put(T, C, S, [turn(1), turn(2), turn(3), turn(4)])
    assert cache.get(T, C, S) == [turn(2), turn(3), turn(4)]
    cache.append(turn(5))
    assert cache.get(T, C, S) == [turn(3), turn(4), turn(5)]


def test_append_to_a_session_not_cached_adds_nothing(cache: RedisTurnCache) -> None:
    cache.append(turn(7))  # the store has turns 1-7: the next read must fetch them all
    assert cache.get(T, C, S) is None


def test_an_empty_session_is_cached_too(cache: RedisTurnCache) -> None:
    cache.put(T, C, S, [])
    assert cache.get(T, C, S) == []
    cache.append(turn(1))
    assert cache.get(T, C, S) == [turn(1)]


def test_keys_live_under_the_prefix_and_expire(settings: Settings) -> None:
    cache = RedisTurnCache(connect(settings), ttl_seconds=1, keep=3)
    cache.put(T, C, S, [turn(1)])
    client = connect(settings).client
    assert client.keys("*") == [f"t:turns:{T}:{C}:{S}".encode()]
    assert 0 < client.pttl(f"t:turns:{T}:{C}:{S}") <= 1000
    time.sleep(1.1)
    assert cache.get(T, C, S) is None


def test_without_redis_nothing_is_cached() -> None:
    cache = turn_cache(Settings())
    assert isinstance(cache, NoTurnCache)
    cache.put(T, C, S, [turn(1)])
    assert cache.get(T, C, S) is None


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteStore]:
    s = SQLiteStore(tmp_path / "turns.db")
    s.ensure_course(T, C, "Calculus", "en")
    yield s
    s.close()


def test_recent_reads_the_store_on_a_miss_then_redis(cache: RedisTurnCache,
                                                     store: SQLiteStore,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    session = store.start_session(T, C, "ana")
    stored = [store.add_turn(turn(n, session.id)) for n in (1, 2, 3, 4)]
    assert cache.recent(store, T, C, session.id, 3) == stored[1:]
    assert cache.recent(store, T, C, session.id, 2) == stored[2:]

    def no_database(*args: object, **kwargs: object) -> list[Turn]:
        raise AssertionError("read the store")

    monkeypatch.setattr(store, "list_turns", no_database)
    assert cache.recent(store, T, C, session.id, 3) == stored[1:]


# -- the tutor -------------------------------------------------------------------------------


@pytest.fixture
def workspaces(sample_store: SQLiteStore, embedder: EmbeddingModel, tmp_path: Path,
               redis_url: str) -> tuple[Workspace, Workspace]:
    """Two API processes over one store and one Redis (passages only, no model)."""
    settings = Settings(data_dir=tmp_path, llm_backend="none", redis=redis_url,
                        redis_prefix="t")
    return (Workspace(settings, store=sample_store, embedder=embedder),
            Workspace(settings, store=sample_store, embedder=embedder))


def test_a_conversation_goes_on_in_another_process_from_redis(
        workspaces: tuple[Workspace, Workspace], monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = workspaces
    answer = Tutor(first).ask("How does the bisection method work?", SAMPLE_COURSE, "ana")
    stored = first.store.list_turns(T, SAMPLE_COURSE, answer.session_id)
    assert first.turns.get(T, SAMPLE_COURSE, answer.session_id) == stored

    def no_database(*args: object, **kwargs: object) -> list[Turn]:
        raise AssertionError("read the store")

    with monkeypatch.context() as m:
        m.setattr(second.store, "list_turns", no_database)
        Tutor(second).ask("And Newton's method?", SAMPLE_COURSE, "ana", answer.session_id)
    stored = first.store.list_turns(T, SAMPLE_COURSE, answer.session_id)
    assert [t.question for t in stored] == ["How does the bisection method work?",
                                            "And Newton's method?"]
    assert second.turns.get(T, SAMPLE_COURSE, answer.session_id) == stored


def test_the_tutor_goes_on_when_redis_has_nothing(
        workspaces: tuple[Workspace, Workspace]) -> None:
    first, second = workspaces
    answer = Tutor(first).ask("How does the bisection method work?", SAMPLE_COURSE, "ana")
    connect(first.settings).client.flushdb()  # the session expired or was evicted
    again = Tutor(second).ask("And Newton's method?", SAMPLE_COURSE, "ana", answer.session_id)
    assert again.session_id == answer.session_id
    stored = second.store.list_turns(T, SAMPLE_COURSE, answer.session_id)
    assert len(stored) == 2
    assert second.turns.get(T, SAMPLE_COURSE, answer.session_id) == stored
