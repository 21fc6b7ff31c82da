"""The generation backend contract: one small base class, streaming first.

Every backend implements `stream`; `complete` and usage accounting are built on it.
"""

from __future__ import annotations

import abc
import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from ..config import Settings

Role = Literal["system", "user", "assistant"]
TASKS = ("answer", "categorize", "grade", "summarize")


@dataclasses.dataclass(frozen=True)
class Message:
    """One chat message."""

    role: Role
    content: str


@dataclasses.dataclass(frozen=True)
class GenParams:
    """How to generate: sampling, length and output format."""

    temperature: float = 0.2
    max_tokens: int = 320
    stop: tuple[str, ...] = ()
    json: bool = False  # ask the backend for a JSON object where it supports it
    seed: int = 0
    # a JSON schema the reply must follow: a grammar on llama.cpp, `format` on Ollama,
    # `response_format` on OpenAI-compatible servers (implies `json`)
    schema: Mapping[str, Any] | None = None
    # False: an in-process model whose contexts are all taken raises ModelBusyError at once
    # instead of waiting (a judge asked while the same turn's answer stream is paused)
    wait: bool = True


@dataclasses.dataclass(frozen=True)
class Usage:
    """Tokens a call consumed, as the backend counted them."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
        )


@dataclasses.dataclass(frozen=True)
class Delta:
    """A piece of a streamed reply; the last one carries usage and why generation stopped."""

    text: str = ""
    usage: Usage | None = None
    finish: str | None = None  # "stop", "length" or None while streaming


@dataclasses.dataclass(frozen=True)
class Completion:
    """A whole reply."""

    text: str
    usage: Usage
    finish: str


class LLM(abc.ABC):
    """A chat model behind some backend (llama.cpp, Ollama, an OpenAI-compatible server)."""

    backend: str = ""
    #: tokens of context the tutor may fill by default with this kind of backend
    default_context_budget: int = 2600

    def __init__(self, model: str) -> None:
        self.model = model

    @classmethod
    @abc.abstractmethod
    def from_settings(cls, settings: Settings, model: str) -> LLM:
        """Build the backend for `model` (empty: the backend's default) from settings."""

    @abc.abstractmethod
    def stream(self, messages: Sequence[Message], params: GenParams) -> Iterator[Delta]:
        """Yield the reply as it is generated; the last delta carries usage and `finish`."""

    def check(self) -> None:  # noqa: B027 - optional hook, a no-op for in-process models
        """Raise BackendError unless the backend is reachable and the model is there."""

    def count_tokens(self, text: str) -> int:
        """Tokens `text` takes for this model (an estimate where the backend cannot tell)."""
        return max(1, (len(text) + 2) // 3)

    def complete(self, messages: Sequence[Message], params: GenParams) -> Completion:
        """Generate the whole reply at once."""
        parts: list[str] = []
        usage = Usage()
        finish = "stop"
        for delta in self.stream(messages, params):
            parts.append(delta.text)
            if delta.usage is not None:
                usage = delta.usage
            if delta.finish is not None:
                finish = delta.finish
        return Completion("".join(parts), usage, finish)

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release the model or connections."""

