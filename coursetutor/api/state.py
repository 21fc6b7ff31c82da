"""What one API process holds: settings, the workspace, the models and its bookkeeping."""

from __future__ import annotations

import dataclasses
import threading
import time

from ..config import Settings
from ..llm.router import Router
from ..workspace import Workspace
from .jobs import IngestJobs
from .metrics import Metrics
from .pump import AskPool
from .ratelimit import RateLimiter
from .signing import Signer

MEDIA_SECONDS = 30.0


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
    _views: dict[str, Workspace] = dataclasses.field(default_factory=dict)
    _media: dict[tuple[str, str], tuple[float, dict[str, str]]] = dataclasses.field(
        default_factory=dict)
    _lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)

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
