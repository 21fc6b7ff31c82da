"""Task routing: a model per task, each call's usage and estimated cost recorded."""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Generator, Sequence

from ..config import Settings
from ..errors import ConfigError
from . import backend_class, model_for_task
from .base import LLM, Completion, Delta, GenParams, Message, Usage

Factory = Callable[[str, str], LLM]  # (task, model) -> LLM


@dataclasses.dataclass(frozen=True)
class CallRecord:
    """One model call: what it was for, which model, tokens, cost and time."""

    task: str
    backend: str
    model: str
    usage: Usage
    cost: float
    seconds: float


class Router:
    """Hands out the model configured for each task and books every call."""

    def __init__(self, settings: Settings, factory: Factory | None = None) -> None:
        self.settings = settings
        self._factory = factory or self._build
        self._models: dict[str, LLM] = {}
        self._building = threading.Lock()  # API workers ask at once; build each model once

    @property
    def enabled(self) -> bool:
        """False with llm_backend = none: the tutor then returns passages only."""
        return self.settings.llm_backend != "none"

    def _build(self, task: str, model: str) -> LLM:
        if not self.enabled:
            raise ConfigError("llm_backend is 'none': no model to run")
        return backend_class(self.settings.llm_backend).from_settings(self.settings, model)

    def llm(self, task: str) -> LLM:
        """The model for `task`, built on first use and shared by tasks naming the same model."""
        model = model_for_task(self.settings, task)
        with self._building:
            if model not in self._models:
                llm = self._factory(task, model)
                llm.check()  # a configured backend that is down is an error, never a downgrade
                self._models[model] = llm
            return self._models[model]

    def cost(self, usage: Usage) -> float:
        """Estimated cost of `usage` from the configured prices per million tokens."""
        return (usage.prompt_tokens * self.settings.llm_price_input
                + usage.completion_tokens * self.settings.llm_price_output) / 1_000_000

    def stream(self, task: str, messages: Sequence[Message], params: GenParams,
               log: list[CallRecord]) -> Generator[Delta, None, None]:
        """Stream from the task's model; the call is booked in `log` when it ends."""
        llm = self.llm(task)
        started = time.perf_counter()
        usage: Usage | None = None
        written: list[str] = []
        try:
            for delta in llm.stream(messages, params):
                if delta.usage is not None:
                    usage = delta.usage
                written.append(delta.text)
                yield delta
        finally:
            if usage is None:  # the caller stopped the stream (a loop) before its usage came
                usage = Usage(sum(llm.count_tokens(m.content) for m in messages),
                              llm.count_tokens("".join(written))) if written else Usage()
            log.append(CallRecord(task, llm.backend, llm.model, usage, self.cost(usage),
                                  time.perf_counter() - started))

    def complete(self, task: str, messages: Sequence[Message], params: GenParams,
                 log: list[CallRecord]) -> Completion:
        parts: list[str] = []
        usage, finish = Usage(), "stop"
        for delta in self.stream(task, messages, params, log):
            parts.append(delta.text)
            usage = delta.usage or usage
            finish = delta.finish or finish
        return Completion("".join(parts), usage, finish)

    def close(self) -> None:
        for llm in self._models.values():
            llm.close()
        self._models.clear()
