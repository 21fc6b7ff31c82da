"""Request ids, access logs and request metrics, and the size and depth limits of JSON
bodies, as plain ASGI middleware (streams pass through untouched, so a client's disconnect
still reaches the response)."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import numpy as np
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
                allowed = scope["state"].get("allowed_location", "")
                message["headers"] = [*relative_location(message["headers"], allowed), *extra]
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


def relative_location(headers: list[tuple[bytes, bytes]],
                      allowed: str = "") -> list[tuple[bytes, bytes]]:
    """Headers with an absolute `Location` made relative: a redirect built from the request's
    `Host` header (trailing-slash redirects) must never send a client to another host. A route
    that sends the client elsewhere on purpose (the LTI login, to the LMS) names that very
    `allowed` location in `request.state.allowed_location`."""
    out = []
    for name, value in headers:
        if name.lower() == b"location" and not (allowed and value.decode("latin-1") == allowed):
            parts = urlsplit(value.decode("latin-1"))
            if parts.scheme or parts.netloc:
                path = "/" + parts.path.lstrip("/")  # '//evil' would be another host again
                value = (path + (f"?{parts.query}" if parts.query else "")).encode("latin-1")
        out.append((name, value))
    return out


def json_depth(body: bytes) -> int:
    """How deeply the arrays and objects of a JSON text nest (brackets in strings skipped).

    Linear and vectorised: escaped backslashes, then escaped quotes go; a bracket counts when
    an even number of quotes precede it (a regular expression for strings can rescan from
    every quote of a `"\\"\\"...` body: quadratic)."""
    unescaped = body.replace(b"\\\\", b"").replace(b'\\"', b"")
    chars = np.frombuffer(unescaped, dtype=np.uint8)
    outside = np.cumsum(chars == ord('"')) % 2 == 0
    opening = ((chars == ord("[")) | (chars == ord("{"))) & outside
    closing = ((chars == ord("]")) | (chars == ord("}"))) & outside
    steps = opening.astype(np.int32) - closing.astype(np.int32)
    return max(0, int(np.cumsum(steps).max())) if len(steps) else 0


class BodyLimits:
    """Refuse a request body larger than `max_bytes` (413) or, JSON, nested deeper than
    `max_depth` (422 naming the body) before any parser sees it: a 100,000-deep `[[[...` would
    exhaust the parser's recursion. Multipart uploads have their own limit and pass through."""

    def __init__(self, app: ASGIApp, max_bytes: int, max_depth: int) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.max_depth = max_depth

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = dict(scope.get("headers", ())) if scope["type"] == "http" else {}
        kind = headers.get(b"content-type", b"").lower()
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS") or (
                kind.startswith(b"multipart/")):
            await self.app(scope, receive, send)
            return
        declared = headers.get(b"content-length", b"0")
        if declared.isdigit() and int(declared) > self.max_bytes:
            await self._refuse(scope, receive, send, 413, "payload_too_large")
            return
        body, more = bytearray(), True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > self.max_bytes:
                await self._refuse(scope, receive, send, 413, "payload_too_large")
                return
        # fewer opening brackets than the limit cannot nest past it: most bodies skip the scan
        opening = body.count(b"[") + body.count(b"{")
        if opening > self.max_depth and json_depth(bytes(body)) > self.max_depth:
            await self._refuse(scope, receive, send, 422, "validation")
            return
        await self.app(scope, _replay(bytes(body), receive), send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send, status: int,
                      kind: str) -> None:
        if status == 413:
            message = (f"the request body is larger than {self.max_bytes} bytes "
                       "(api_max_json_bytes)")
            extra: dict[str, Any] = {}
        else:
            reason = f"JSON nested deeper than {self.max_depth} levels (api_max_json_depth)"
            message, extra = f"body: {reason}", {"fields": [{"field": "body",
                                                              "reason": reason}]}
        request_id = scope.get("state", {}).get("request_id", "")
        response = JSONResponse({"error": {"type": kind, "message": message, **extra,
                                           "request_id": request_id}}, status)
        await response(scope, receive, send)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A `receive` that hands the app the body read already, then the client's messages
    (a disconnect) as they come."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


# Pages and API answers: scripts, styles and requests from this server only, nothing inline;
# cited PDFs open in a frame of this server's own; a class video may come from elsewhere.
PAGE_POLICY = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
               "media-src 'self' https: http:; frame-src 'self'; connect-src 'self'; "
               "object-src 'none'; base-uri 'none'; form-action 'self'; "
               "frame-ancestors 'self'")
# A course file (a PDF shown in the page's frame) keeps the browser's own viewer working:
# only who may frame it is said.
FILE_POLICY = "frame-ancestors 'self'"
SECURITY_HEADERS = (
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"SAMEORIGIN"),
)


# the pages an LMS opens in its frame (LTI): the registered platforms' origins may frame them
FRAMED_PAGES = ("/", "/teacher", "/lti/login", "/lti/launch", "/lti/deep-link")


def page_policy(framers: tuple[str, ...] = (), form_targets: tuple[str, ...] = ()) -> str:
    """PAGE_POLICY with more origins that may frame the page or receive its forms."""
    policy = PAGE_POLICY
    if form_targets:
        policy = policy.replace("form-action 'self'",
                                "form-action 'self' " + " ".join(form_targets))
    if framers:
        policy = policy.replace("frame-ancestors 'self'",
                                "frame-ancestors 'self' " + " ".join(framers))
    return policy


class SecurityHeaders:
    """A content security policy, no type sniffing, no referrer and framing by this server only
    on every response (a route that sets one of these keeps its own); the pages an LMS frames
    may be framed by the origins `framers()` gives (the registered LTI platforms')."""

    def __init__(self, app: ASGIApp,
                 framers: Callable[[], tuple[str, ...]] = lambda: ()) -> None:
        self.app = app
        self.framers = framers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = str(scope.get("path", ""))
        policy = FILE_POLICY if path.endswith("/file") else PAGE_POLICY
        framers = self.framers() if path in FRAMED_PAGES else ()
        if framers:
            policy = page_policy(framers)

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
                # frame-ancestors decides (X-Frame-Options cannot name origins) where
                # platforms may frame the page, or where a route set its own policy
                if framers or b"content-security-policy" in present:
                    present.add(b"x-frame-options")
                extra = [(b"content-security-policy", policy.encode()), *SECURITY_HEADERS]
                message["headers"] = headers + [(n, v) for n, v in extra if n not in present]
            await send(message)

        await self.app(scope, receive, send_with_headers)
