"""LTI registrations, tool keys, nonces, users, links and scores in every store (SQLite,
PostgreSQL): one contract, one suite."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from coursetutor.api.access import authenticate, mint_key
from coursetutor.errors import AuthenticationError, ConflictError, NotFoundError
from coursetutor.store import Store
from coursetutor.store.lti import LtiLink, LtiUser, Platform, SentScore, ToolKey

from .support import open_backend

T, T_B = "default", "uni-b"
C = "calculus"


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    s = open_backend(request.param, lambda: request.getfixturevalue("postgres_url"), tmp_path)
    for tenant in (T, T_B):
        s.ensure_tenant(tenant)
        s.ensure_course(tenant, C, "Calculus", "en")
    yield s
    s.close()


def platform(pid: str = "p1", tenant: str = T, client_id: str = "c1") -> Platform:
    return Platform(pid, tenant, "https://lms.example", client_id, ("d1", "d2"),
                    "https://lms.example/jwks", "https://lms.example/auth",
                    "https://lms.example/token", ("https://lms.example",), 100.0)


def test_platforms_are_stored_found_and_kept_per_tenant(store: Store) -> None:
    first = store.lti.add_platform(platform())
    second = store.lti.add_platform(platform("p2", T_B, "c2"))
    assert store.lti.get_platform(T, "p1") == first
    assert store.lti.find_platforms("https://lms.example") == [first, second]
    assert store.lti.find_platforms("https://lms.example", "c2") == [second]
    assert store.lti.list_platforms(T) == [first] and store.lti.list_platforms() == [first,
                                                                                    second]
    with pytest.raises(NotFoundError):
        store.lti.get_platform(T, "p2")  # another tenant's
    with pytest.raises(ConflictError):
        store.lti.add_platform(platform("p3", T_B, "c1"))
    store.lti.remove_platform(T, "p1")
    assert store.lti.list_platforms() == [second]


def test_a_nonce_is_used_once(store: Store) -> None:
    later = time.time() + 60
    assert store.lti.use_nonce("https://lms.example", "n1", later)
    assert not store.lti.use_nonce("https://lms.example", "n1", later)
    assert store.lti.use_nonce("https://other.example", "n1", later)


def test_tool_keys_rotate(store: Store) -> None:
    store.lti.add_tool_key(ToolKey("old", "pem-old", 10.0))
    store.lti.add_tool_key(ToolKey("new", "pem-new", 20.0))
    assert store.lti.retire_tool_keys("new", 30.0) == 1
    assert store.lti.tool_keys() == [ToolKey("new", "pem-new", 20.0),
                                     ToolKey("old", "pem-old", 10.0, 30.0)]
    assert store.lti.remove_tool_keys(31.0) == 1
    assert [k.kid for k in store.lti.tool_keys()] == ["new"]


def test_users_links_and_scores(store: Store) -> None:
    store.lti.add_platform(platform())
    store.lti.set_user("p1", "sub-7", T, "lti-p1-sub-7")
    assert store.lti.user_sub(T, "p1", "lti-p1-sub-7") == "sub-7"
    assert store.lti.user_sub(T_B, "p1", "lti-p1-sub-7") is None
    link = store.lti.set_link(LtiLink("p1", "ctx", "rl", T, C, "https://lms.example/m",
                                      "https://lms.example/li", True, "limits"))
    assert store.lti.find_link("p1", "ctx", "rl") == link and link.updated > 0
    changed = store.lti.set_link(LtiLink("p1", "ctx", "rl", T, C, grades=False))
    assert store.lti.course_links(T, C) == [changed] and not changed.grades
    assert store.lti.course_links(T_B, C) == []
    assert store.lti.last_score("https://lms.example/li", "s") is None
    store.lti.set_score("https://lms.example/li", T, C, "s", 40.0)
    store.lti.set_score("https://lms.example/li", T, C, "s", 55.5)
    assert store.lti.last_score("https://lms.example/li", "s") == 55.5
    store.remove_course(T, C)  # a course's links go with it
    assert store.lti.find_link("p1", "ctx", "rl") is None


def test_users_links_and_scores_are_read_back_for_a_copy(store: Store) -> None:
    store.lti.add_platform(platform())
    for sub in ("9", "10"):
        store.lti.set_user("p1", sub, T, f"lti-p1-{sub}")
    assert store.lti.users("p1") == [LtiUser("p1", "10", T, "lti-p1-10"),
                                     LtiUser("p1", "9", T, "lti-p1-9")]
    assert store.lti.users("p2") == []
    kept = store.lti.set_link(LtiLink("p1", "ctx", "", T, C, updated=12.5), keep_updated=True)
    assert kept.updated == 12.5 and store.lti.find_link("p1", "ctx", "") == kept
    store.lti.set_score("https://lms.example/li", T, C, "s", 40.0, sent=7.0)
    assert store.lti.scores(T, C) == [SentScore("https://lms.example/li", T, C, "s", 40.0, 7.0)]
    assert store.lti.scores(T_B, C) == []


def test_a_key_expires(store: Store) -> None:
    key, secret = mint_key(store, T, "student", "ana", seconds=60)
    assert key.expires is not None and store.find_key(key.id) == key
    assert authenticate(store, secret) == key
    _, old = mint_key(store, T, "student", "bob", seconds=-1)
    with pytest.raises(AuthenticationError, match="expired"):
        authenticate(store, old)
    assert store.lti.remove_expired_keys(time.time()) == 1
    assert [k.student for k in store.list_keys(T)] == ["ana"]
