"""What one API process holds: settings, the workspace, the models and its bookkeeping."""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from starlette.concurrency import run_in_threadpool

from ..config import Settings
from ..live.session import LiveClasses
from ..llm.router import Router
from ..lti.tool import LtiTool
from ..workspace import Workspace
from .budget import ComputeBudget, MemoryComputeBudget
from .checks import CourseChecks
from .fair_turns import FairSlots
from .jobs import IngestJobs
from .metrics import Metrics
from .pump import AskPool
from .ratelimit import RateLimiter
from .signing import Signer

MEDIA_SECONDS = 30.0
T = TypeVar("T")


@dataclasses.dataclass
class AppState:
    """Built once by `create_app` and shared by every request."""

    settings: Settings
    workspace: Workspace
    router: Router
    limiter: RateLimiter
    metrics: Metrics
    signer: Signer
    asks: AskPool
    jobs: IngestJobs
    budget: ComputeBudget = dataclasses.field(default_factory=MemoryComputeBudget)
    checks: CourseChecks = dataclasses.field(default_factory=CourseChecks)
    live: LiveClasses | None = None  # live classes and their serial queues (live/session.py)
    lti: LtiTool | None = None  # LTI 1.3: platforms' key sets, services, grades (lti/tool.py)
    # searches compute a few at a time, round-robin between tenants (fair_turns.py)
    searches: FairSlots = dataclasses.field(default_factory=lambda: FairSlots(1))
    _views: dict[str, Workspace] = dataclasses.field(default_factory=dict)
    _media: dict[tuple[str, str], tuple[float, dict[str, str]]] = dataclasses.field(
        default_factory=dict)
    _lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)

    @property
    def networked(self) -> bool:
        """Whether the store or the limiter is a server: their calls then leave the event
        loop (a slow database or Redis must not stall every other request)."""
        return not self.settings.store_url.startswith("sqlite") or bool(self.settings.redis)

    async def call(self, fn: Callable[..., T], *args: Any) -> T:
        """`fn(*args)`: on the event loop for the embedded store (a local primary-key read is
        cheaper than a hop to a thread), on a worker thread when it talks to a server."""
        if self.networked:
            return await run_in_threadpool(fn, *args)
        return fn(*args)

    def turn_done(self, tenant: str, course: str, role: str, student: str) -> None:
        """After a student's turn: their mastery may have changed, so the LMS grade books that
        take it get the new score (on a thread of its own)."""
        if self.lti is not None and role == "student":
            self.lti.grades.after_turn(tenant, course, student)

    def media_links(self, tenant: str, course: str) -> dict[str, str]:
        """Document id -> the video or audio of the course's transcripts that have one
        (kept for MEDIA_SECONDS: a changed link shows up in citations within that time)."""
        now = time.monotonic()
        with self._lock:
            cached = self._media.get((tenant, course))
        if cached is not None and now - cached[0] < MEDIA_SECONDS:
            return cached[1]
        links = {d.id: d.media_url for d in self.workspace.store.list_documents(tenant, course)
                 if d.media_url}
        with self._lock:
            self._media[(tenant, course)] = (now, links)
        return links

    def workspace_for(self, tenant: str) -> Workspace:
        """The workspace scoped to `tenant` (store and embedder shared)."""
        with self._lock:
            if tenant not in self._views:
                self._views[tenant] = self.workspace.for_tenant(tenant)
            return self._views[tenant]
