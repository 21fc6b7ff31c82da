"""llama.cpp through llama-cpp-python: the bundled default model or any GGUF file."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, cast

from ..config import Settings
from ..errors import BackendError, MissingDependencyError, ModelNotFoundError
from .base import LLM, Delta, GenParams, Message, Usage
from .bundled import INSTALL_HINT, bundled_model_path
from .prompt_cache import prompt_cache

# llama.cpp keeps the evaluated prompt; two RAM caches also keep the states of earlier prompts,
# so the fixed start of each (the system prompt and task of answers, a judge's worked examples)
# is evaluated once: one for answers and one for the short tasks, which would otherwise push
# the answers' states out (each state holds ~300 MB of logits with the bundled model)
PROMPT_CACHE_BYTES = 1 << 30
TASK_CACHE_BYTES = 700 << 20


_PARAMS_LOCK = threading.Lock()


def cpu_has_amx(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """Does the processor report Intel AMX tiles?"""
    try:
        flags = next((line for line in cpuinfo.read_text().splitlines()
                      if line.startswith("flags")), "")
    except OSError:
        return False
    return "amx_tile" in flags.split()


@contextlib.contextmanager
def _weight_repacking(repack: bool | None) -> Iterator[None]:
    """Load models with llama.cpp's extra weight buffers (repacking, AMX) on or off; None:
    off where the processor has AMX. Its AMX kernels crash on the first batch of a prompt in
    virtual machines that do not grant the tile state, and llama-cpp-python exposes the
    switch only through the default model parameters."""
    import importlib

    module: Any = importlib.import_module("llama_cpp.llama")
    use = (not cpu_has_amx()) if repack is None else repack
    default = module.llama_cpp.llama_model_default_params

    def params() -> Any:
        p = default()
        p.use_extra_bufts = use
        return p

    with _PARAMS_LOCK:
        module.llama_cpp.llama_model_default_params = params
        try:
            yield
        finally:
            module.llama_cpp.llama_model_default_params = default


def _prompt_caches() -> tuple[Any, Any]:
    """The prompt-state caches of answers and of the short tasks."""
    return prompt_cache(PROMPT_CACHE_BYTES), prompt_cache(TASK_CACHE_BYTES)


class LocalLLM(LLM):
    """A GGUF model run in-process by llama.cpp (one generation at a time)."""

    backend = "local"
    default_context_budget = 1500

    def __init__(self, model_path: Path, threads: int = 0, context_tokens: int = 4096,
                 repack: bool | None = None) -> None:
        super().__init__(str(model_path))
        try:
            import llama_cpp
        except ImportError as exc:
            raise MissingDependencyError(f"the local backend needs llama-cpp-python; "
                                         f"{INSTALL_HINT}") from exc
        if not model_path.is_file():
            raise ModelNotFoundError(f"no model file at {model_path} (llm_model)")
        try:
            with _weight_repacking(repack):
                self._llama = llama_cpp.Llama(
                    model_path=str(model_path),
                    n_ctx=context_tokens,
                    n_threads=threads or os.cpu_count() or 1,  # llama.cpp's default is half
                    verbose=False,
                )
        except ValueError as exc:  # llama-cpp-python's way of saying the file is not a model
            raise ModelNotFoundError(f"cannot load {model_path} as a GGUF model") from exc
        self._caches = _prompt_caches()
        self._llama.set_cache(self._caches[0])
        self._lock = threading.Lock()
        self.context_tokens = context_tokens

    @classmethod
    def from_settings(cls, settings: Settings, model: str) -> LocalLLM:
        models = settings.data_dir / "models"
        path = Path(model).expanduser() if model else bundled_model_path(models)
        repack = {"on": True, "off": False}.get(settings.llm_repack)
        return cls(path, settings.llm_threads, settings.llm_context_tokens, repack)

    def forget_prompts(self) -> None:
        """Drop every evaluated prompt (the context and the prompt cache): a cold start."""
        with self._lock:
            self._llama.reset()  # type: ignore[no-untyped-call]
            self._caches = _prompt_caches()
            self._llama.set_cache(self._caches[0])

    def count_tokens(self, text: str) -> int:
        return len(self._llama.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def stream(self, messages: Sequence[Message], params: GenParams) -> Iterator[Delta]:
        kwargs: dict[str, Any] = {
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "temperature": params.temperature,
            "max_tokens": params.max_tokens,
            "stop": list(params.stop) or None,
            "seed": params.seed,
            "stream": True,
        }
        if params.schema is not None:  # llama.cpp turns the schema into a grammar
            kwargs["response_format"] = {"type": "json_object", "schema": dict(params.schema)}
        elif params.json:
            kwargs["response_format"] = {"type": "json_object"}
        with self._lock:
            # answers (with the system prompt) and the short tasks (a judge, a translation)
            # keep their states apart: each state is hundreds of MB, and the tasks after an
            # answer would push out the prefix the next answer reuses
            answer = bool(messages) and messages[0].role == "system"
            self._llama.cache = self._caches[0 if answer else 1]
            yield from self._generate(kwargs)

    def _generate(self, kwargs: dict[str, Any]) -> Iterator[Delta]:
        pieces = 0
        finish = "stop"
        try:
            chunks = cast(Iterator[dict[str, Any]], self._llama.create_chat_completion(**kwargs))
            for chunk in chunks:
                choice = chunk["choices"][0]
                text = str(choice.get("delta", {}).get("content") or "")
                if text:
                    pieces += 1
                    yield Delta(text)
                if choice.get("finish_reason"):
                    finish = str(choice["finish_reason"])
        except ValueError as exc:  # e.g. the prompt exceeds the context window
            raise BackendError(f"local model: {exc}") from exc
        # llama.cpp keeps prompt + sampled tokens, except the last one of a reply cut by length
        evaluated = self._llama.n_tokens + (1 if finish == "length" else 0)
        prompt = max(0, evaluated - pieces)
        yield Delta(usage=Usage(prompt, pieces), finish=finish)
