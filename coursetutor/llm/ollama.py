"""Ollama's native chat API (`POST /api/chat`, newline-delimited JSON)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import partial
from typing import Any

from ..errors import BackendError, ModelNotFoundError
from .base import Delta, GenParams, Message, Usage
from .http import HTTPLLM

DEFAULT_MODEL = "qwen2.5:1.5b"


class OllamaLLM(HTTPLLM):
    """A model pulled into a local (or remote) Ollama server."""

    backend = "ollama"
    label = "Ollama"
    default_base_url = "http://127.0.0.1:11434"
    default_model = DEFAULT_MODEL

    def unreachable_message(self) -> str:
        return f"cannot reach Ollama at {self.base_url}; start it with `ollama serve`"

    def status_error(self, status: int, detail: str) -> BackendError:
        lowered = detail.lower()
        if status == 404 and "model" in lowered and "not found" in lowered:
            return ModelNotFoundError(self._pull_hint())
        return super().status_error(status, detail)

    def check(self) -> None:
        data = self.get_json("/api/tags")
        names: set[str] = set()
        for entry in data.get("models") or []:
            if isinstance(entry, dict):
                names.update(str(entry[k]) for k in ("name", "model") if k in entry)
        if self.model not in names and f"{self.model}:latest" not in names:
            raise ModelNotFoundError(self._pull_hint())

    def stream(self, messages: Sequence[Message], params: GenParams) -> Iterator[Delta]:
        options: dict[str, Any] = {
            "temperature": params.temperature,
            "num_predict": params.max_tokens,
            "seed": params.seed,
        }
        if params.stop:
            options["stop"] = list(params.stop)
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "stream": True,
            "options": options,
        }
        if params.schema is not None:  # Ollama 0.5 and later: structured outputs
            body["format"] = dict(params.schema)
        elif params.json:
            body["format"] = "json"
        return self.post_stream("/api/chat", body, partial(self._deltas, messages))

    def _deltas(self, messages: Sequence[Message], lines: Iterator[str]) -> Iterator[Delta]:
        """Read Ollama's NDJSON: one object per token batch, the last with `done` and counts."""
        text: list[str] = []
        for line in lines:
            if not line.strip():
                continue
            data = self.json_object(line)
            if data.get("error"):
                raise BackendError(f"Ollama: {data['error']}")
            piece = str((data.get("message") or {}).get("content") or "")
            text.append(piece)
            if not data.get("done"):
                yield Delta(piece)
                continue
            estimate = self.estimate_usage(messages, "".join(text))
            # Ollama omits prompt_eval_count when the whole prompt came from its cache.
            usage = Usage(
                int(data.get("prompt_eval_count") or estimate.prompt_tokens),
                int(data.get("eval_count") or estimate.completion_tokens),
            )
            finish = "length" if data.get("done_reason") == "length" else "stop"
            yield Delta(piece, usage, finish)
            return

    def _pull_hint(self) -> str:
        return f"model {self.model} is not pulled; run `ollama pull {self.model}`"
