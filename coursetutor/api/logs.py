"""Structured JSON logs: one object a line, with the request id when there is one."""

from __future__ import annotations

import json
import logging
import time
from typing import Any

FIELDS = ("request_id", "method", "route", "status", "ms", "key", "course", "job")


class JsonFormatter(logging.Formatter):
    """Formats a record as JSON; never carries API keys or students' messages."""

    def format(self, record: logging.LogRecord) -> str:
        data: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(), "logger": record.name,
            "msg": record.getMessage()}
        for name in FIELDS:
            if hasattr(record, name):
                data[name] = getattr(record, name)
        if record.exc_info:
            data["error"] = self.formatException(record.exc_info)
        return json.dumps(data, ensure_ascii=False)


def setup(level: str) -> None:
    """JSON logs on stderr for coursetutor and uvicorn's own loggers."""
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter())
    for name in ("coursetutor", "uvicorn", "uvicorn.error"):
        logger = logging.getLogger(name)
        logger.handlers = [handler]
        logger.setLevel(level.upper())
        logger.propagate = False
    logging.getLogger("uvicorn.access").disabled = True  # our middleware logs requests
