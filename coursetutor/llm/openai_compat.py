"""Any OpenAI-compatible chat server (vLLM, llama.cpp server, LM Studio, hosted APIs)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import partial
from typing import Any

from ..errors import BackendError, ModelNotFoundError
from .base import Delta, GenParams, Message, Usage
from .http import HTTPLLM


class OpenAICompatLLM(HTTPLLM):
    """A model behind `POST /chat/completions` with server-sent events.

    An empty model name means the first model the server lists, looked up on first use.
    """

    backend = "openai"
    label = "the OpenAI-compatible server"
    default_base_url = "http://127.0.0.1:8000/v1"

    def unreachable_message(self) -> str:
        return (
            f"cannot reach the OpenAI-compatible server at {self.base_url}; start the server "
            "or fix llm_base_url"
        )

    def status_error(self, status: int, detail: str) -> BackendError:
        if status == 404 and "model" in detail.lower():
            return ModelNotFoundError(
                f"model {self.model} is not served at {self.base_url}: {detail}"
            )
        if status == 404:
            return BackendError(
                f"HTTP 404 from {self.base_url}: {detail}; is llm_base_url right "
                "(it usually ends in /v1)?"
            )
        return super().status_error(status, detail)

    def models(self) -> list[str]:
        """The model ids the server lists at `GET /models`."""
        data = self.get_json("/models")
        return [str(m["id"]) for m in data.get("data") or [] if isinstance(m, dict) and "id" in m]

    def check(self) -> None:
        available = self.models()
        if not available:
            raise ModelNotFoundError(f"the server at {self.base_url} lists no models")
        if not self.model:
            self.model = available[0]
        elif self.model not in available:
            raise ModelNotFoundError(
                f"model {self.model} is not served at {self.base_url}; "
                f"available: {', '.join(available)}"
            )

    def stream(self, messages: Sequence[Message], params: GenParams) -> Iterator[Delta]:
        if not self.model:
            self.check()
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "stream": True,
            "stream_options": {"include_usage": True},
            "temperature": params.temperature,
            "max_tokens": params.max_tokens,
            "seed": params.seed,
        }
        if params.stop:
            body["stop"] = list(params.stop)
        if params.schema is not None:
            body["response_format"] = {"type": "json_schema", "json_schema": {
                "name": "reply", "schema": dict(params.schema)}}
        elif params.json:
            body["response_format"] = {"type": "json_object"}
        yield from self.post_stream("/chat/completions", body, partial(self._deltas, messages))

    def _deltas(self, messages: Sequence[Message], lines: Iterator[str]) -> Iterator[Delta]:
        """Read `data: {...}` events up to `data: [DONE]`; usage arrives in a last chunk."""
        text: list[str] = []
        finish: str | None = None
        usage: Usage | None = None
        done = False
        for line in lines:
            if not line.startswith("data:"):
                continue  # blank separators, `: keep-alive` comments, `event:` names
            payload = line[len("data:") :].strip()
            if payload == "[DONE]":
                done = True
                break
            data = self.json_object(payload)
            if data.get("error"):
                error = data["error"]
                message = error.get("message", error) if isinstance(error, dict) else error
                raise BackendError(f"{self.label}: {message}")
            if isinstance(data.get("usage"), dict):
                u = data["usage"]
                usage = Usage(
                    int(u.get("prompt_tokens") or 0), int(u.get("completion_tokens") or 0)
                )
            for choice in (data.get("choices") or [])[:1]:
                piece = str((choice.get("delta") or {}).get("content") or "")
                finish = choice.get("finish_reason") or finish
                text.append(piece)
                yield Delta(piece)
        if done or finish is not None:
            final = usage or self.estimate_usage(messages, "".join(text))
            yield Delta("", final, "length" if finish == "length" else "stop")
