"""Request ids, access logs and request metrics, as plain ASGI middleware (streams pass
through untouched, so a client's disconnect still reaches the response)."""

from __future__ import annotations

import logging
import time
import uuid
from typing import Any

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .errors import body
from .metrics import Metrics

log = logging.getLogger("coursetutor.api")


class RequestContext:
    """Give every request an id (or keep a sane incoming X-Request-ID), log it, count it."""

    def __init__(self, app: ASGIApp, metrics: Metrics, reconnect_every: int = 0) -> None:
        self.app = app
        self.metrics = metrics
        self.reconnect_every = reconnect_every
        self._responses = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        incoming = dict(scope["headers"]).get(b"x-request-id", b"").decode("latin-1")
        request_id = incoming if 0 < len(incoming) <= 64 and incoming.isprintable() else (
            uuid.uuid4().hex[:16])
        scope.setdefault("state", {})["request_id"] = request_id
        started = time.perf_counter()
        status = 500
        sent = False

        async def send_with_id(message: Message) -> None:
            nonlocal status, sent
            if message["type"] == "http.response.start":
                status, sent = message["status"], True
                message.setdefault("headers", [])
                extra = [(b"x-request-id", request_id.encode())]
                if self._reconnect():
                    extra.append((b"connection", b"close"))
                message["headers"] = [*message["headers"], *extra]
                self._observe(scope, status, started)
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        except Exception as exc:
            # an unexpected error: answered here, so it too carries the request id and is
            # counted (Starlette's own last-resort handler sits outside this middleware)
            log.error("unexpected error", exc_info=exc, extra={"request_id": request_id})
            if sent:
                raise
            response = JSONResponse(body(exc, request_id), 500)
            await response(scope, receive, send_with_id)
        finally:
            self._log(scope, status, started, request_id)

    def _reconnect(self) -> bool:
        """Whether this response closes its keep-alive connection: one in `reconnect_every`.

        Keep-alive connections stay with the process that accepted them; with several
        processes on one port an uneven split lets one saturate while another idles. A client
        that reconnects now and then is accepted by whichever process is free first."""
        if self.reconnect_every <= 0:
            return False
        self._responses += 1
        return self._responses % self.reconnect_every == 0

    @staticmethod
    def _route(scope: Scope) -> str:
        route: Any = scope.get("route")
        path = getattr(route, "path", None)
        return str(path) if path else "unmatched"

    def _observe(self, scope: Scope, status: int, started: float) -> None:
        route = self._route(scope)
        self.metrics.requests.labels(scope["method"], route, str(status)).inc()
        self.metrics.request_seconds.labels(route).observe(time.perf_counter() - started)

    def _log(self, scope: Scope, status: int, started: float, request_id: str) -> None:
        key = scope.get("state", {}).get("key_id", "")
        log.info("request", extra={
            "request_id": request_id, "method": scope["method"], "route": self._route(scope),
            "status": status, "ms": round((time.perf_counter() - started) * 1000, 1),
            "key": key})
