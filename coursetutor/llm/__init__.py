"""Generation backends, found by name through the `coursetutor.llm` entry-point group."""

from __future__ import annotations

from importlib.metadata import entry_points

from ..config import Settings
from ..errors import ConfigError
from .base import LLM, TASKS, Completion, Delta, GenParams, Message, Usage

__all__ = [
    "LLM",
    "TASKS",
    "Completion",
    "Delta",
    "GenParams",
    "Message",
    "Usage",
    "backend_class",
    "backend_names",
    "model_for_task",
]


def backend_names() -> list[str]:
    """Every installed backend name (built-in and third-party plugins)."""
    return sorted({ep.name for ep in entry_points(group="coursetutor.llm")})


def backend_class(name: str) -> type[LLM]:
    """The LLM class registered under `name`."""
    for ep in entry_points(group="coursetutor.llm"):
        if ep.name == name:
            cls = ep.load()
            if not (isinstance(cls, type) and issubclass(cls, LLM)):
                raise ConfigError(f"backend {name!r} does not name an LLM class")
            return cls
    raise ConfigError(f"unknown llm_backend {name!r}; valid: {', '.join(backend_names())}, none")


def model_for_task(settings: Settings, task: str) -> str:
    """The model configured for `task` (answer, categorize, grade, summarize)."""
    if task not in TASKS:
        raise ConfigError(f"unknown task {task!r}; valid: {', '.join(TASKS)}")
    specific: str = getattr(settings, f"llm_model_{task}")
    return specific or settings.llm_model
