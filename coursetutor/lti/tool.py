"""What one process holds for LTI: the HTTP client to the platforms, their cached key sets,
service tokens, the grade sender and the origins that may frame the pages."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import httpx

from ..store import Store
from . import registry
from .grades import GradeSync
from .keyset import KeySets
from .services import Services

log = logging.getLogger("coursetutor.lti")

HTTP_TIMEOUT_SECONDS = 10.0
ORIGINS_SECONDS = 30.0  # a registration made by another process frames the pages within this


class LtiTool:
    """Built once by the API over its store; `http` (a client with a MockTransport, in tests)
    is what every call to a platform goes through."""

    def __init__(self, store: Store, secret: bytes, http: httpx.Client | None = None) -> None:
        self.store = store
        self.secret = secret
        self.http = http or httpx.Client(timeout=HTTP_TIMEOUT_SECONDS)
        self.keys = KeySets(self.http)
        self.services = Services(store.lti, self.http)
        self.grades = GradeSync(store, self.services)
        self._origins: tuple[float, tuple[str, ...]] | None = None
        self._lock = threading.Lock()
        self._roster = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lti-roster")
        self.last_roster: Future[Any] | None = None

    def roster_soon(self, sync: Callable[[], Any]) -> Future[Any]:
        """Run a roster sync on a thread of its own (a launch does not wait for the LMS);
        a failure is logged."""
        def run() -> Any:
            try:
                return sync()
            except Exception as exc:  # the LMS's roster failing never fails the launch
                log.warning("roster sync after a launch failed: %s", exc)
                return None

        self.last_roster = self._roster.submit(run)
        return self.last_roster

    def frame_origins(self) -> tuple[str, ...]:
        """The registered platforms' frame origins (re-read every ORIGINS_SECONDS)."""
        now = time.monotonic()
        with self._lock:
            cached = self._origins
        if cached is None or now - cached[0] > ORIGINS_SECONDS:
            cached = (now, registry.frame_origins(self.store.lti))
            with self._lock:
                self._origins = cached
        return cached[1]

    def forget_origins(self) -> None:
        """Re-read the origins at the next page (a registration changed)."""
        with self._lock:
            self._origins = None

    def close(self) -> None:
        self.grades.shutdown()
        self._roster.shutdown(wait=False, cancel_futures=True)
        self.http.close()
