"""What the HTTP backends share: one client, retries, streamed lines and error translation."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, ClassVar, Self

import httpx

from ..config import Settings
from ..errors import BackendError, BackendTimeoutError, ConfigError, IncompleteAnswerError
from .base import LLM, Delta, Message, Usage
from .retry import RetryPolicy, TransientError, is_retryable_status, parse_retry_after

Parse = Callable[[Iterator[str]], Iterable[Delta]]


class HTTPLLM(LLM):
    """A model served over HTTP; subclasses build requests and parse the streamed lines."""

    #: how messages name the server, e.g. "Ollama"
    label: ClassVar[str] = "the server"
    default_base_url: ClassVar[str] = ""
    #: the model used when none is configured ("" : resolved by the subclass later)
    default_model: ClassVar[str] = ""

    def __init__(
        self,
        model: str = "",
        base_url: str = "",
        *,
        api_key: str = "",
        timeout: float = 120.0,
        retry: RetryPolicy | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        super().__init__(model or self.default_model)
        self.base_url = (base_url or self.default_base_url).rstrip("/")
        if not self.base_url.startswith(("http://", "https://")):
            raise ConfigError(f"llm_base_url must start with http:// or https://, got {base_url!r}")
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(
            base_url=self.base_url,
            headers=headers,
            timeout=httpx.Timeout(timeout, connect=min(10.0, timeout)),
            transport=transport,
        )

    @classmethod
    def from_settings(cls, settings: Settings, model: str) -> Self:
        return cls(
            model,
            settings.llm_base_url,
            api_key=settings.llm_api_key,
            timeout=settings.llm_timeout,
            retry=RetryPolicy(retries=settings.llm_retries),
        )

    def close(self) -> None:
        self._client.close()

    # -- what subclasses say about their server ---------------------------------------------

    def unreachable_message(self) -> str:
        """The one line shown when nothing answers at the base URL."""
        return f"cannot reach {self.label} at {self.base_url}"

    def status_error(self, status: int, detail: str) -> BackendError:
        """The error for a status that retrying will not fix."""
        if status in (401, 403):
            return BackendError(
                f"{self.label} at {self.base_url} refused the API key (llm_api_key): "
                f"HTTP {status}: {detail}"
            )
        return BackendError(f"HTTP {status} from {self.label} at {self.base_url}: {detail}")

    # -- plumbing ---------------------------------------------------------------------------

    def get_json(self, path: str) -> Any:
        """GET `path` and decode its JSON body, retrying transient failures."""
        return self.retry.call(lambda: self._get_once(path))

    def post_stream(self, path: str, body: dict[str, Any], parse: Parse) -> Iterator[Delta]:
        """POST `body` and yield the deltas `parse` reads from the reply's lines.

        Retries only while nothing has been yielded; then a break becomes IncompleteAnswerError.
        """
        return self.retry.stream(lambda: self._stream_once(path, body, parse))

    def estimate_usage(self, messages: Sequence[Message], completion: str) -> Usage:
        """Usage counted with `count_tokens`, for servers that report none."""
        prompt = sum(self.count_tokens(m.content) for m in messages)
        return Usage(prompt, self.count_tokens(completion) if completion else 0)

    def json_object(self, text: str) -> dict[str, Any]:
        """Decode one JSON object the server sent."""
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise BackendError(
                f"{self.label} sent something that is not JSON: {text[:200]!r}"
            ) from exc
        if not isinstance(data, dict):
            raise BackendError(f"{self.label} sent JSON that is not an object: {text[:200]!r}")
        return data

    def _get_once(self, path: str) -> Any:
        response = self._open("GET", path, None)
        try:
            response.read()
        except httpx.TimeoutException as exc:
            raise BackendTimeoutError(self._silent_message()) from exc
        except httpx.TransportError as exc:
            raise TransientError(self._dropped_message(exc)) from exc
        finally:
            response.close()
        return self.json_object(response.text)

    def _stream_once(self, path: str, body: dict[str, Any], parse: Parse) -> Iterator[Delta]:
        text: list[str] = []
        finished = False
        response = self._open("POST", path, body)
        try:
            for delta in parse(response.iter_lines()):
                finished = delta.finish is not None
                if delta.text or finished:
                    text.append(delta.text)
                    yield delta
        except httpx.TimeoutException as exc:
            if text:
                message = f"{self.label} sent nothing for {self.timeout:g} s mid-answer"
                raise IncompleteAnswerError(message, "".join(text)) from exc
            raise BackendTimeoutError(self._silent_message()) from exc
        except httpx.TransportError as exc:
            if text:
                raise IncompleteAnswerError(self._dropped_message(exc), "".join(text)) from exc
            raise TransientError(self._dropped_message(exc)) from exc
        except BackendError as exc:
            if text and not isinstance(exc, IncompleteAnswerError):
                raise IncompleteAnswerError(str(exc), "".join(text)) from exc
            raise
        finally:
            response.close()
        if not finished:
            reason = f"{self.label} at {self.base_url} ended the reply before its end"
            if text:
                raise IncompleteAnswerError(reason, "".join(text))
            raise TransientError(reason)

    def _open(self, method: str, path: str, body: dict[str, Any] | None) -> httpx.Response:
        """Send a request and return the open response, or raise the translated error."""
        request = self._client.build_request(method, path, json=body)
        try:
            response = self._client.send(request, stream=True)
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            raise TransientError(self.unreachable_message()) from exc
        except httpx.TimeoutException as exc:
            raise BackendTimeoutError(self._silent_message()) from exc
        except httpx.TransportError as exc:
            raise TransientError(self._dropped_message(exc)) from exc
        if response.status_code < 400:
            return response
        try:
            detail = error_text(response)
        finally:
            response.close()
        status = response.status_code
        if is_retryable_status(status):
            retry_after = parse_retry_after(response.headers.get("Retry-After"))
            message = f"HTTP {status} from {self.label} at {self.base_url}: {detail}"
            raise TransientError(message, retry_after)
        raise self.status_error(status, detail)

    def _silent_message(self) -> str:
        return f"{self.label} at {self.base_url} sent nothing for {self.timeout:g} s (llm_timeout)"

    def _dropped_message(self, exc: Exception) -> str:
        why = str(exc) or type(exc).__name__
        return f"{self.label} at {self.base_url} dropped the connection: {why}"


def error_text(response: httpx.Response, limit: int = 300) -> str:
    """The server's own words about an error status, on one line."""
    try:
        raw = response.read().decode("utf-8", "replace")
    except httpx.HTTPError:
        raw = ""
    try:
        data = json.loads(raw)
    except ValueError:
        data = None
    if isinstance(data, dict):
        found = data.get("error") or data.get("detail") or data.get("message")
        if isinstance(found, dict):
            found = found.get("message")
        if found:
            raw = str(found)
    text = " ".join(raw.split()) or response.reason_phrase or "no detail"
    return text if len(text) <= limit else text[: limit - 1] + "…"
