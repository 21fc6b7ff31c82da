"""The RQ worker of `coursetutor worker`: one process, its workspace loaded once.

RQ calls a task by its import path with the arguments it was enqueued with; the workspace the
worker loaded (store connection, embedding model) reaches the task through a context variable
set while the worker works, instead of a global.
"""

from __future__ import annotations

import contextvars
import dataclasses
from typing import Any

from rq import Queue, SimpleWorker

from ..config import Settings
from ..errors import ConfigError
from ..redisconn import RedisLink
from ..workspace import Workspace

_CONTEXT: contextvars.ContextVar[WorkerContext] = contextvars.ContextVar("coursetutor_worker")


@dataclasses.dataclass(frozen=True)
class WorkerContext:
    """What the tasks of one worker share."""

    workspace: Workspace
    link: RedisLink


def queue_name(settings: Settings) -> str:
    """The ingest queue of the deployment: `<redis_prefix>:ingest`."""
    return f"{settings.redis_prefix}:ingest"


def current() -> WorkerContext:
    """The context of the worker running this task."""
    try:
        return _CONTEXT.get()
    except LookupError:
        raise ConfigError("ingest tasks run in `coursetutor worker`, which loads the "
                          "workspace they need") from None


class IngestWorker(SimpleWorker):
    """A SimpleWorker (no fork: the embedding model stays loaded) that hands its workspace to
    the tasks it runs."""

    def __init__(self, context: WorkerContext, queue: str | None = None,
                 **kwargs: Any) -> None:
        client = context.link.client
        name = queue or queue_name(context.workspace.settings)
        with context.link.reached():  # it registers itself in Redis
            super().__init__([Queue(name, connection=client)], connection=client, **kwargs)
        self.context = context

    def work(self, *args: Any, **kwargs: Any) -> bool:
        token = _CONTEXT.set(self.context)
        try:
            with self.context.link.reached():
                return bool(super().work(*args, **kwargs))
        finally:
            _CONTEXT.reset(token)
