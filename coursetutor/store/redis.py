"""The Redis that several processes share: a client built from settings, keys under the
deployment's prefix, and Redis errors translated at the boundary into RedisUnavailableError.

Without `redis` in the settings nothing here is used: one process keeps everything in memory.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
from collections.abc import Iterator
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from ..config import Settings
from ..errors import ConfigError, MissingDependencyError, RedisUnavailableError

if TYPE_CHECKING:
    from redis import Redis

__all__ = ["RedisLink", "connect", "need_rq", "where"]

# a Redis that is down must fail a request within seconds, not hang it
CONNECT_TIMEOUT = 2.0
SOCKET_TIMEOUT = 5.0
INSTALL_HINT = "pip install 'coursetutor[redis]'"


def where(url: str) -> str:
    """`host:port/db` of a Redis URL, without its password."""
    parts = urlsplit(url)
    if parts.scheme == "unix":
        return parts.path
    return f"{parts.hostname or 'localhost'}:{parts.port or 6379}{parts.path or ''}"


@dataclasses.dataclass(frozen=True)
class RedisLink:
    """A Redis client with the deployment's key prefix and a readable address."""

    client: Redis
    prefix: str
    address: str

    def key(self, *parts: str) -> str:
        """A key under the prefix: `coursetutor:rate:...`."""
        return ":".join((self.prefix, *parts))

    @contextlib.contextmanager
    def reached(self) -> Iterator[None]:
        """Raise RedisUnavailableError, naming Redis, for any Redis failure inside."""
        from redis.exceptions import ConnectionError, RedisError, TimeoutError

        try:
            yield
        except (ConnectionError, TimeoutError) as exc:
            raise RedisUnavailableError(
                f"Redis at {self.address} cannot be reached: {exc}") from exc
        except RedisError as exc:
            raise RedisUnavailableError(f"Redis at {self.address} failed: {exc}") from exc


def connect(settings: Settings) -> RedisLink:
    """A client for `settings.redis` (it connects on first use)."""
    if not settings.redis:
        raise ConfigError("redis is not set: give COURSETUTOR_REDIS=redis://host:6379/0")
    try:
        import redis
    except ImportError as exc:
        raise MissingDependencyError(
            f"redis is set but the redis package is not installed: {INSTALL_HINT}") from exc
    try:
        client = redis.Redis.from_url(settings.redis, socket_connect_timeout=CONNECT_TIMEOUT,
                                      socket_timeout=SOCKET_TIMEOUT, health_check_interval=30)
    except ValueError as exc:
        raise ConfigError(f"redis: {exc}") from exc
    return RedisLink(client, settings.redis_prefix, where(settings.redis))


def need_rq() -> None:
    """Raise MissingDependencyError unless rq (the ingest queue) is installed."""
    if importlib.util.find_spec("rq") is None:
        raise MissingDependencyError(f"redis is set but rq is not installed: {INSTALL_HINT}")
