"""One place that maps the exception tree to HTTP statuses and JSON error bodies."""

from __future__ import annotations

import logging
import re
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from .. import errors as e
from .validate import VALIDATION, describe

log = logging.getLogger("coursetutor.api")

# most specific first: the first class an error is an instance of decides its status
STATUS: tuple[tuple[type[e.CoursetutorError], int], ...] = (
    (e.AuthenticationError, 401),
    (e.PermissionDeniedError, 403),
    (e.RateLimitError, 429),
    (e.NotFoundError, 404),
    (e.ConflictError, 409),
    (e.PayloadTooLargeError, 413),
    (e.UnsupportedFileError, 415),
    (e.InputError, 400),
    (e.DocumentError, 400),
    (e.ConfigError, 503),
    (e.MissingDependencyError, 503),
    (e.BackendTimeoutError, 504),
    (e.BackendError, 503),
    (e.StoreError, 503),
    (e.RedisUnavailableError, 503),
    (e.PlatformError, 502),
)


def status_of(exc: BaseException) -> int:
    for cls, status in STATUS:
        if isinstance(exc, cls):
            return status
    return 500


def error_type(exc: BaseException) -> str:
    """A stable snake_case name for the error's class (`not_found`, `rate_limit`, ...)."""
    return e.class_code(type(exc))


# the codes of errors answered outside the exception tree: a request that fails validation, a
# route or method that does not exist, another HTTP error, and an unexpected error
HTTP_CODES = {404: "not_found", 405: "method_not_allowed"}
OTHER_HTTP = "http"
INTERNAL = "internal"
PLAIN_CODES = (VALIDATION, *HTTP_CODES.values(), OTHER_HTTP, INTERNAL)


# an absolute file path (not a URL's path): keep only its last part
_PATH = re.compile(r"(?<![\w:/.])/(?:[^\s'\"/]+/)+([^\s'\"/]+)")


def scrub(message: str) -> str:
    """`message` without the server's directories (`/srv/models/x.gguf` -> `x.gguf`)."""
    return _PATH.sub(r"\1", message)


def body(exc: BaseException, request_id: str) -> dict[str, Any]:
    """The JSON error body; unexpected errors say nothing about the server's insides."""
    error: dict[str, Any] = {"type": error_type(exc), "request_id": request_id}
    if isinstance(exc, e.CoursetutorError):
        error.update(message=scrub(str(exc)), code=exc.code, params=dict(exc.params))
    else:
        error.update(message="internal error; the server log has the details under this "
                     "request id", code=INTERNAL, params={})
    if isinstance(exc, e.LaunchError | e.RegistrationError | e.RegisteredError):
        error["reason"] = exc.reason
    return {"error": error}


def log_stream_error(exc: BaseException, request_id: str) -> None:
    """Log an error that ended a stream after its head was sent (5xx only; a client's
    mistake is not the server's concern)."""
    status = status_of(exc)
    if status == 500:
        log.error("stream failed", exc_info=exc, extra={"request_id": request_id})
    elif status >= 500:
        log.warning("stream failed: %s", exc, extra={"request_id": request_id,
                                                     "status": status})


def _request_id(request: Request) -> str:
    return str(getattr(request.state, "request_id", ""))


def install(app: FastAPI) -> None:
    """Register the handlers on `app`."""

    @app.exception_handler(e.CoursetutorError)
    async def library_error(request: Request, exc: e.CoursetutorError) -> JSONResponse:
        status = status_of(exc)
        headers = {}
        if isinstance(exc, e.RateLimitError):
            headers["Retry-After"] = str(exc.retry_after)
        if status >= 500:
            log.warning("request failed: %s", exc,
                        extra={"request_id": _request_id(request), "status": status})
        return JSONResponse(body(exc, _request_id(request)), status, headers=headers)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse({"error": {**describe(exc), "request_id": _request_id(request)}},
                            422)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        kind = HTTP_CODES.get(exc.status_code, OTHER_HTTP)
        return JSONResponse({"error": {"type": kind, "message": str(exc.detail),
                                       "code": kind, "params": {},
                                       "request_id": _request_id(request)}},
                            exc.status_code, headers=getattr(exc, "headers", None))
    # unexpected errors are answered by the RequestContext middleware, inside the request's
    # context (request id, metrics), not by a handler here
