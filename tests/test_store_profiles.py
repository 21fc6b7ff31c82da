"""Student profiles, studied topics, topic lists and retention in every store: one suite."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from coursetutor.errors import InputError, NotFoundError
from coursetutor.store import ChunkRow, Store, profiles
from coursetutor.store.profiles import Profile, StudiedTopic, TopicSource
from coursetutor.types import Document, Locator

from .support import Clock, open_backend

T = "default"
C = "calculus"


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path,
          monkeypatch: pytest.MonkeyPatch) -> Iterator[Store]:
    """Two courses of one tenant and one of another, in a fresh store of each backend."""
    monkeypatch.setattr(profiles, "time", Clock())
    s = open_backend(request.param, lambda: request.getfixturevalue("postgres_url"), tmp_path)
    for tenant, course in [(T, C), (T, "algebra"), ("other-tenant", C)]:
        s.ensure_course(tenant, course, course.title(), "en")
    yield s
    s.close()


def test_a_student_without_a_profile_gets_an_empty_one(store: Store) -> None:
    assert store.profiles.get(T, C, "alice") == Profile(T, C, "alice")
    assert store.profiles.for_course(T, C) == []


def test_update_sets_only_the_given_fields(store: Store) -> None:
    store.profiles.update(T, C, "alice", level=4, style="examples first")
    got = store.profiles.update(T, C, "alice", goals="  exam on 12 March ", language="it")
    assert (got.level, got.style, got.goals, got.language) == (
        4, "examples first", "exam on 12 March", "it")
    assert got.created == 1000.0 and got.updated > got.created
    cleared = store.profiles.update(T, C, "alice", level=0, style="")
    assert (cleared.level, cleared.style, cleared.goals) == (0, "", "exam on 12 March")


@pytest.mark.parametrize(("field", "value", "message"), [
    ("level", 6, "level must be 1-5"),
    ("level", -1, "level must be 1-5"),
    ("style", "songs first", "unknown learning style 'songs first'"),
])
def test_update_refuses_bad_values_and_stores_nothing(store: Store, field: str, value: object,
                                                     message: str) -> None:
    with pytest.raises(InputError, match=message):
        store.profiles.update(T, C, "alice", **{field: value})  # type: ignore[arg-type]
    assert store.profiles.for_course(T, C) == []


def test_update_of_a_missing_course_is_not_found(store: Store) -> None:
    with pytest.raises(NotFoundError):
        store.profiles.update(T, "nope", "alice", level=3)


def test_record_topics_counts_each_turn_once_and_keeps_its_id(store: Store) -> None:
    store.profiles.record_topics(T, C, "alice", ["limits", "derivatives"], "s1:1", when=10.0)
    store.profiles.record_topics(T, C, "alice", ["limits"], "s1:2", when=20.0)
    store.profiles.record_topics(T, C, "alice", ["limits"], "s1:2", when=30.0)  # the same turn
    got = store.profiles.get(T, C, "alice")
    assert got.topics == (
        StudiedTopic("limits", 10.0, 30.0, 2, ("s1:1", "s1:2")),
        StudiedTopic("derivatives", 10.0, 10.0, 1, ("s1:1",)),
    )
    assert [p.student for p in store.profiles.for_course(T, C)] == ["alice"]


def test_record_topics_is_per_tenant_course_and_student(store: Store) -> None:
    store.profiles.record_topics(T, C, "alice", ["limits"], "s1:1", when=10.0)
    store.profiles.record_topics(T, C, "bob", ["series"], "s2:1", when=11.0)
    store.profiles.record_topics(T, "algebra", "alice", ["groups"], "s3:1", when=12.0)
    store.profiles.record_topics("other-tenant", C, "alice", ["vectors"], "s4:1", when=13.0)
    assert [t.topic for t in store.profiles.get(T, C, "alice").topics] == ["limits"]
    assert [t.topic for t in store.profiles.get(T, "algebra", "alice").topics] == ["groups"]
    assert [t.topic for t in store.profiles.get("other-tenant", C, "alice").topics] == [
        "vectors"]
    assert [p.student for p in store.profiles.for_course(T, C)] == ["alice", "bob"]


def test_studied_topics_keep_the_latest_turn_ids(store: Store) -> None:
    for i in range(profiles.KEPT_TURN_IDS + 5):
        store.profiles.record_topics(T, C, "alice", ["limits"], f"s:{i}", when=float(i))
    (topic,) = store.profiles.get(T, C, "alice").topics
    assert topic.turns == profiles.KEPT_TURN_IDS + 5
    assert len(topic.turn_ids) == profiles.KEPT_TURN_IDS and topic.turn_ids[-1] == "s:204"


def test_a_student_removes_a_studied_topic(store: Store) -> None:
    store.profiles.record_topics(T, C, "alice", ["limits", "series"], "s1:1", when=10.0)
    assert store.profiles.remove_topic(T, C, "alice", "limits") is True
    assert store.profiles.remove_topic(T, C, "alice", "limits") is False
    assert [t.topic for t in store.profiles.get(T, C, "alice").topics] == ["series"]


def test_topic_list_is_stored_cleaned_and_cleared(store: Store) -> None:
    assert store.profiles.topic_list(T, C) is None
    store.profiles.set_topic_list(T, C, ["  Limits ", "limits", "", "Series  and sums"])
    assert store.profiles.topic_list(T, C) == ["Limits", "Series and sums"]
    assert store.profiles.topic_list(T, "algebra") is None
    store.profiles.set_topic_list(T, C, [])
    assert store.profiles.topic_list(T, C) == []
    store.profiles.set_topic_list(T, C, None)
    assert store.profiles.topic_list(T, C) is None
    with pytest.raises(NotFoundError):
        store.profiles.set_topic_list(T, "nope", ["x"])


def _chunk(cid: str, ordinal: int, *path: str) -> ChunkRow:
    return ChunkRow(id=cid, text=f"text {cid}", section_path=path, locator=Locator(page=1),
                    ordinal=ordinal, n_tokens=2, terms=("text", cid), vector_key=f"vk-{cid}",
                    content_hash=f"h-{cid}")


def _document(doc_id: str, topic: str, doc_type: str = "lecture") -> Document:
    return Document(T, C, doc_id, doc_id.title(), doc_type, topic, 2, "en",  # type: ignore[arg-type]
                    f"{doc_id}.md", doc_id, 1, 0)


def test_topic_sources_list_documents_in_ingest_order(store: Store) -> None:
    store.replace_document(_document("b", "", "textbook"), [
        _chunk("b1", 0, "1 Limits", "1.1 Definition"),
        _chunk("b2", 1, "1 Limits", "1.1 Definition"),
        _chunk("b3", 2, "2 Series")])
    store.replace_document(_document("a", "derivatives"), [_chunk("a1", 0)])
    assert store.profiles.topic_sources(T, C) == [
        TopicSource("b", "textbook", "", (("1 Limits", "1.1 Definition"), ("2 Series",))),
        TopicSource("a", "lecture", "derivatives", ()),
    ]
    assert store.profiles.topic_sources(T, "algebra") == []


def test_retention_days_default_to_forever_and_are_checked(store: Store) -> None:
    assert store.profiles.retention_days(T, C) == 0
    store.profiles.set_retention_days(T, C, 30)
    assert store.profiles.retention_days(T, C) == 30
    assert store.profiles.retention_days(T, "algebra") == 0
    with pytest.raises(InputError, match="retention_days must be 0"):
        store.profiles.set_retention_days(T, C, -1)
    with pytest.raises(NotFoundError):
        store.profiles.retention_days(T, "nope")


def test_removing_a_course_removes_its_profiles_and_topic_list(store: Store) -> None:
    store.profiles.record_topics(T, C, "alice", ["limits"], "s1:1", when=10.0)
    store.profiles.update(T, C, "alice", level=2)
    store.profiles.set_topic_list(T, C, ["limits"])
    store.remove_course(T, C)
    store.ensure_course(T, C, "Calculus", "en")
    assert store.profiles.get(T, C, "alice") == Profile(T, C, "alice")
    assert store.profiles.topic_list(T, C) is None
