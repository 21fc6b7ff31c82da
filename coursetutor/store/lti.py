"""LTI 1.3: the contract and the SQL both stores share (migration 0015).

A platform (an LMS: Moodle, Canvas, ...) is registered by one tenant, under its issuer and the
client id it gave the tool; that pair names one registration in the whole deployment, so a
launch always lands in the tenant that registered its platform. The tool's signing keys are the
deployment's own: the newest active one signs, retired ones stay published for a while.
"""

from __future__ import annotations

import abc
import dataclasses
import json
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from ..errors import ConflictError, NotFoundError
from .sql import Executor

__all__ = ["LtiLink", "LtiStore", "LtiUser", "Platform", "SQLLti", "SentScore", "ToolKey"]

PLATFORM_COLUMNS = ("id, tenant, issuer, client_id, deployment_ids, jwks_url, auth_login_url, "
                    "token_url, frame_origins, created")
LINK_COLUMNS = ("platform, context, resource_link, tenant, course, memberships_url, "
                "lineitem_url, grades, topic, updated")


@dataclasses.dataclass(frozen=True)
class Platform:
    """A tenant's registration of an LMS: who signs its launches and where its services are."""

    id: str
    tenant: str
    issuer: str
    client_id: str
    deployment_ids: tuple[str, ...]
    jwks_url: str
    auth_login_url: str
    token_url: str
    frame_origins: tuple[str, ...]  # the origins whose pages may frame the tool's
    created: float


@dataclasses.dataclass(frozen=True)
class ToolKey:
    """One of the tool's RSA signing keys (PEM, PKCS#8); `retired` once a newer one signs."""

    kid: str
    private_pem: str
    created: float
    retired: float | None = None


@dataclasses.dataclass(frozen=True)
class LtiLink:
    """An LMS course (context), or one link in it, and the course it opens.

    `resource_link` is empty for the context as a whole (what deep linking chose); a link's own
    row holds its services: the roster (NRPS) and the grade book column (AGS) it sends to."""

    platform: str
    context: str
    resource_link: str
    tenant: str
    course: str
    memberships_url: str = ""
    lineitem_url: str = ""
    grades: bool = False  # send each student's mastery to `lineitem_url`
    topic: str = ""  # the one topic whose mastery is the grade; empty: every topic's mean
    updated: float = 0.0


@dataclasses.dataclass(frozen=True)
class LtiUser:
    """Which student of the tenant an LMS user (`sub` of a platform) is."""

    platform: str
    sub: str
    tenant: str
    student: str


@dataclasses.dataclass(frozen=True)
class SentScore:
    """The last score sent to a grade book column for a student."""

    lineitem: str
    tenant: str
    course: str
    student: str
    score: float
    sent: float


def _platform(row: Any) -> Platform:
    values = list(row)
    values[4] = tuple(json.loads(values[4]))
    values[8] = tuple(json.loads(values[8]))
    return Platform(*values)


def _link(row: Any) -> LtiLink:
    values = list(row)
    values[7] = bool(values[7])
    return LtiLink(*values)


class LtiStore(abc.ABC):
    """Platforms, tool keys, nonces, LMS users, course links and sent scores."""

    @abc.abstractmethod
    def add_platform(self, platform: Platform) -> Platform:
        """Store a registration (ConflictError when its issuer and client id are taken)."""

    @abc.abstractmethod
    def get_platform(self, tenant: str, platform_id: str) -> Platform: ...

    @abc.abstractmethod
    def find_platforms(self, issuer: str, client_id: str | None = None) -> list[Platform]:
        """The registrations of `issuer` (with `client_id`, if given), in every tenant."""

    @abc.abstractmethod
    def list_platforms(self, tenant: str | None = None) -> list[Platform]: ...

    @abc.abstractmethod
    def remove_platform(self, tenant: str, platform_id: str) -> None: ...

    @abc.abstractmethod
    def use_nonce(self, issuer: str, nonce: str, expires: float) -> bool:
        """Record a launch's nonce; False when it was used already (a replay)."""

    @abc.abstractmethod
    def add_tool_key(self, key: ToolKey) -> ToolKey: ...

    @abc.abstractmethod
    def tool_keys(self) -> list[ToolKey]:
        """Every stored tool key, newest first."""

    @abc.abstractmethod
    def retire_tool_keys(self, except_kid: str, at: float) -> int:
        """Mark every active key but `except_kid` retired at `at`; return how many."""

    @abc.abstractmethod
    def remove_tool_keys(self, retired_before: float) -> int:
        """Drop keys retired before then; return how many."""

    @abc.abstractmethod
    def set_user(self, platform: str, sub: str, tenant: str, student: str) -> None:
        """Remember which LMS user (`sub`) a student of the tenant is."""

    @abc.abstractmethod
    def user_sub(self, tenant: str, platform: str, student: str) -> str | None: ...

    @abc.abstractmethod
    def users(self, platform: str) -> list[LtiUser]:
        """The LMS users of a platform, by sub."""

    @abc.abstractmethod
    def set_link(self, link: LtiLink, keep_updated: bool = False) -> LtiLink:
        """Store a link (the course it opens, its services), replacing the one it updates;
        stamped now unless `keep_updated` (a copy keeps the link's own time)."""

    @abc.abstractmethod
    def find_link(self, platform: str, context: str, resource_link: str) -> LtiLink | None: ...

    @abc.abstractmethod
    def course_links(self, tenant: str, course: str) -> list[LtiLink]: ...

    @abc.abstractmethod
    def last_score(self, lineitem: str, student: str) -> float | None: ...

    @abc.abstractmethod
    def set_score(self, lineitem: str, tenant: str, course: str, student: str,
                  score: float, sent: float | None = None) -> None:
        """Record the score sent (at `sent`, default now)."""

    @abc.abstractmethod
    def scores(self, tenant: str, course: str) -> list[SentScore]:
        """The last score sent to each column for each student of the course."""

    @abc.abstractmethod
    def remove_expired_keys(self, before: float) -> int:
        """Drop API keys that expired before then (the launches' short-lived keys)."""


class SQLLti(LtiStore):
    """The SQL both stores run (`?` placeholders, bound values only)."""

    def __init__(self, read: Callable[[], Executor],
                 tx: Callable[[], AbstractContextManager[Executor]],
                 integrity_errors: tuple[type[Exception], ...]) -> None:
        self._read = read
        self._tx = tx
        self._integrity = integrity_errors

    # -- platforms --------------------------------------------------------------------------
    def add_platform(self, platform: Platform) -> Platform:
        values = dataclasses.astuple(platform)
        row = (*values[:4], json.dumps(list(platform.deployment_ids)), *values[5:8],
               json.dumps(list(platform.frame_origins)), platform.created)
        try:
            with self._tx() as db:
                db.execute(f"INSERT INTO lti_platforms ({PLATFORM_COLUMNS}) VALUES "
                           "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", row)
        except self._integrity as exc:
            raise ConflictError(f"a platform with issuer {platform.issuer!r} and client id "
                                f"{platform.client_id!r} is registered already") from exc
        return platform

    def get_platform(self, tenant: str, platform_id: str) -> Platform:
        row = self._read().execute(
            f"SELECT {PLATFORM_COLUMNS} FROM lti_platforms WHERE tenant = ? AND id = ?",
            (tenant, platform_id)).fetchone()
        if row is None:
            raise NotFoundError(f"LTI platform {platform_id!r} does not exist")
        return _platform(row)

    def find_platforms(self, issuer: str, client_id: str | None = None) -> list[Platform]:
        if client_id is None:
            rows = self._read().execute(
                f"SELECT {PLATFORM_COLUMNS} FROM lti_platforms WHERE issuer = ? ORDER BY id",
                (issuer,)).fetchall()
        else:
            rows = self._read().execute(
                f"SELECT {PLATFORM_COLUMNS} FROM lti_platforms WHERE issuer = ? AND "
                "client_id = ?", (issuer, client_id)).fetchall()
        return [_platform(r) for r in rows]

    def list_platforms(self, tenant: str | None = None) -> list[Platform]:
        if tenant is None:
            rows = self._read().execute(
                f"SELECT {PLATFORM_COLUMNS} FROM lti_platforms ORDER BY created, id").fetchall()
        else:
            rows = self._read().execute(
                f"SELECT {PLATFORM_COLUMNS} FROM lti_platforms WHERE tenant = ? "
                "ORDER BY created, id", (tenant,)).fetchall()
        return [_platform(r) for r in rows]

    def remove_platform(self, tenant: str, platform_id: str) -> None:
        self.get_platform(tenant, platform_id)
        with self._tx() as db:
            for table in ("lti_links", "lti_users"):  # a fixed list: no name from outside
                db.execute(f"DELETE FROM {table} WHERE platform = ?", (platform_id,))
            db.execute("DELETE FROM lti_platforms WHERE tenant = ? AND id = ?",
                       (tenant, platform_id))

    # -- nonces -----------------------------------------------------------------------------
    def use_nonce(self, issuer: str, nonce: str, expires: float) -> bool:
        try:
            with self._tx() as db:
                db.execute("DELETE FROM lti_nonces WHERE expires < ?", (time.time(),))
                db.execute("INSERT INTO lti_nonces (issuer, nonce, expires) VALUES (?, ?, ?)",
                           (issuer, nonce, expires))
        except self._integrity:
            return False
        return True

    # -- the tool's keys --------------------------------------------------------------------
    def add_tool_key(self, key: ToolKey) -> ToolKey:
        with self._tx() as db:
            db.execute("INSERT INTO lti_tool_keys (kid, private_pem, created, retired) "
                       "VALUES (?, ?, ?, ?)", dataclasses.astuple(key))
        return key

    def tool_keys(self) -> list[ToolKey]:
        rows = self._read().execute("SELECT kid, private_pem, created, retired FROM "
                                    "lti_tool_keys ORDER BY created DESC, kid").fetchall()
        return [ToolKey(*r) for r in rows]

    def retire_tool_keys(self, except_kid: str, at: float) -> int:
        with self._tx() as db:
            return db.execute("UPDATE lti_tool_keys SET retired = ? WHERE retired IS NULL "
                              "AND kid <> ?", (at, except_kid)).rowcount

    def remove_tool_keys(self, retired_before: float) -> int:
        with self._tx() as db:
            return db.execute("DELETE FROM lti_tool_keys WHERE retired < ?",
                              (retired_before,)).rowcount

    # -- LMS users and links ----------------------------------------------------------------
    def set_user(self, platform: str, sub: str, tenant: str, student: str) -> None:
        with self._tx() as db:
            db.execute("INSERT INTO lti_users (platform, sub, tenant, student) "
                       "VALUES (?, ?, ?, ?) ON CONFLICT (platform, sub) DO UPDATE SET "
                       "student = excluded.student", (platform, sub, tenant, student))

    def user_sub(self, tenant: str, platform: str, student: str) -> str | None:
        row = self._read().execute(
            "SELECT sub FROM lti_users WHERE tenant = ? AND platform = ? AND student = ?",
            (tenant, platform, student)).fetchone()
        return str(row[0]) if row else None

    def users(self, platform: str) -> list[LtiUser]:
        rows = self._read().execute(
            "SELECT platform, sub, tenant, student FROM lti_users WHERE platform = ? "
            "ORDER BY sub", (platform,)).fetchall()
        return [LtiUser(*r) for r in rows]

    def set_link(self, link: LtiLink, keep_updated: bool = False) -> LtiLink:
        stored = link if keep_updated else dataclasses.replace(link, updated=time.time())
        values = dataclasses.astuple(stored)
        with self._tx() as db:
            db.execute(f"INSERT INTO lti_links ({LINK_COLUMNS}) VALUES "
                       "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (platform, context, "
                       "resource_link) DO UPDATE SET tenant = excluded.tenant, "
                       "course = excluded.course, memberships_url = excluded.memberships_url, "
                       "lineitem_url = excluded.lineitem_url, grades = excluded.grades, "
                       "topic = excluded.topic, updated = excluded.updated",
                       (*values[:7], int(stored.grades), *values[8:]))
        return stored

    def find_link(self, platform: str, context: str, resource_link: str) -> LtiLink | None:
        row = self._read().execute(
            f"SELECT {LINK_COLUMNS} FROM lti_links WHERE platform = ? AND context = ? AND "
            "resource_link = ?", (platform, context, resource_link)).fetchone()
        return _link(row) if row else None

    def course_links(self, tenant: str, course: str) -> list[LtiLink]:
        rows = self._read().execute(
            f"SELECT {LINK_COLUMNS} FROM lti_links WHERE tenant = ? AND course = ? "
            "ORDER BY platform, context, resource_link", (tenant, course)).fetchall()
        return [_link(r) for r in rows]

    # -- scores -----------------------------------------------------------------------------
    def last_score(self, lineitem: str, student: str) -> float | None:
        row = self._read().execute(
            "SELECT score FROM lti_scores WHERE lineitem = ? AND student = ?",
            (lineitem, student)).fetchone()
        return float(row[0]) if row else None

    def set_score(self, lineitem: str, tenant: str, course: str, student: str,
                  score: float, sent: float | None = None) -> None:
        with self._tx() as db:
            db.execute("INSERT INTO lti_scores (lineitem, tenant, course, student, score, sent) "
                       "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (lineitem, student) DO UPDATE "
                       "SET score = excluded.score, sent = excluded.sent",
                       (lineitem, tenant, course, student, score,
                        time.time() if sent is None else sent))

    def scores(self, tenant: str, course: str) -> list[SentScore]:
        rows = self._read().execute(
            "SELECT lineitem, tenant, course, student, score, sent FROM lti_scores WHERE "
            "tenant = ? AND course = ? ORDER BY lineitem, student", (tenant, course)).fetchall()
        return [SentScore(r[0], r[1], r[2], r[3], float(r[4]), float(r[5])) for r in rows]

    def remove_expired_keys(self, before: float) -> int:
        with self._tx() as db:
            return db.execute("DELETE FROM api_keys WHERE expires IS NOT NULL AND expires < ?",
                              (before,)).rowcount
