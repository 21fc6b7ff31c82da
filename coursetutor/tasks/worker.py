"""The RQ worker of `coursetutor worker`: one process, its workspace loaded once.

Each tenant's files go to one of LANES queues (by a hash of the tenant), and workers take the
lanes round-robin: one tenant's 500-file upload then waits its turn between the files of
tenants in other lanes instead of holding them all up.

RQ calls a task by its import path with the arguments it was enqueued with; the workspace the
worker loaded (store connection, embedding model) reaches the task through a context variable
set while the worker works, instead of a global.
"""

from __future__ import annotations

import contextvars
import dataclasses
import zlib
from typing import Any

from rq import Queue, SimpleWorker

from ..config import Settings
from ..errors import ConfigError
from ..store.redis import RedisLink
from ..workspace import Workspace

LANES = 16  # tenants hash to lanes; workers take the lanes in turn
_CONTEXT: contextvars.ContextVar[WorkerContext] = contextvars.ContextVar("coursetutor_worker")


@dataclasses.dataclass(frozen=True)
class WorkerContext:
    """What the tasks of one worker share."""

    workspace: Workspace
    link: RedisLink


def queue_name(settings: Settings) -> str:
    """The ingest queue of the deployment: `<redis_prefix>:ingest`."""
    return f"{settings.redis_prefix}:ingest"


def lane(settings: Settings, tenant: str) -> str:
    """The queue a tenant's files go to: one of LANES, `<redis_prefix>:ingest:N`."""
    return f"{queue_name(settings)}:{zlib.crc32(tenant.encode()) % LANES}"


def lanes(settings: Settings) -> list[str]:
    """Every ingest queue a worker takes tasks from (the bare one holds tasks queued by
    versions without lanes)."""
    return [queue_name(settings), *(f"{queue_name(settings)}:{i}" for i in range(LANES))]


def current() -> WorkerContext:
    """The context of the worker running this task."""
    try:
        return _CONTEXT.get()
    except LookupError:
        raise ConfigError("ingest tasks run in `coursetutor worker`, which loads the "
                          "workspace they need") from None


class IngestWorker(SimpleWorker):
    """A SimpleWorker (no fork: the embedding model stays loaded) that hands its workspace to
    the tasks it runs. It takes tasks from the lanes round-robin (as RQ's RoundRobinWorker),
    so tenants in different lanes take turns file by file."""

    def __init__(self, context: WorkerContext, queue: str | None = None,
                 **kwargs: Any) -> None:
        client = context.link.client
        names = [queue] if queue else lanes(context.workspace.settings)
        with context.link.reached():  # it registers itself in Redis
            super().__init__([Queue(n, connection=client) for n in names], connection=client,
                             **kwargs)
        self.context = context

    def reorder_queues(self, reference_queue: Queue) -> None:
        """After a task from `reference_queue`, the next lane is asked first."""
        pos = self._ordered_queues.index(reference_queue)
        self._ordered_queues = self._ordered_queues[pos + 1:] + self._ordered_queues[:pos + 1]

    def work(self, *args: Any, **kwargs: Any) -> bool:
        token = _CONTEXT.set(self.context)
        try:
            with self.context.link.reached():
                return bool(super().work(*args, **kwargs))
        finally:
            _CONTEXT.reset(token)
