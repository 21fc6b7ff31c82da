"""llama.cpp through llama-cpp-python: the bundled default model or any GGUF file."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, cast

from ..config import Settings
from ..errors import BackendError, MissingDependencyError, ModelBusyError, ModelNotFoundError
from . import lazy_grammar
from .base import LLM, Delta, GenParams, Message, Usage
from .bundled import INSTALL_HINT, bundled_model_path
from .prompt_cache import lean_states, prompt_cache

# each context keeps its evaluated prompt; a RAM cache shared by the contexts also keeps the
# states of earlier prompts, so the fixed start of each (the system prompt and task of answers,
# a judge's worked examples, a translation's instructions) is evaluated once, in whichever
# context it ran first: a translation runs in the answers' context when it is free and in the
# tasks' while an answer is being written (each state holds ~30 KB per token)
PROMPT_CACHE_BYTES = (1 << 30) + (700 << 20)


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


@dataclasses.dataclass
class _Context:
    """One llama.cpp context over the model: its evaluated prompt (and, in `llama.cache`, the
    prompt-state cache it shares with the model's other context), and the lock held while it
    generates (a paused stream keeps holding it)."""

    llama: Any
    lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)

    def forget(self, cache: Any) -> None:
        self.llama.reset()
        self.llama.set_cache(cache)


class LocalLLM(LLM):
    """A GGUF model run in-process by llama.cpp, with two contexts over the one model: the
    answers' and the short tasks' (a judge, a translation). Each keeps its own evaluated
    prompt, so the tasks after an answer leave the next answer's prefix in place, and a task
    can run while an answer's stream is paused (the tutor judges a statement while the model
    has more to write). A context generates one reply at a time."""

    backend = "local"
    default_context_budget = 1500

    def __init__(self, model_path: Path, threads: int = 0, context_tokens: int = 4096,
                 repack: bool | None = None) -> None:
        super().__init__(str(model_path))
        try:
            import llama_cpp  # noqa: F401 - fail early with the install hint
        except ImportError as exc:
            raise MissingDependencyError(f"the local backend needs llama-cpp-python; "
                                         f"{INSTALL_HINT}") from exc
        if not model_path.is_file():
            raise ModelNotFoundError(f"no model file at {model_path} (llm_model)")
        self._path, self._threads, self._repack = model_path, threads, repack
        self.context_tokens = context_tokens
        self._cache = prompt_cache(PROMPT_CACHE_BYTES)
        self._contexts = [_Context(self._load(self._repack))]
        self._building = threading.Lock()

    def _load(self, repack: bool | None) -> Any:
        import llama_cpp

        try:
            with _weight_repacking(repack):
                llama = llama_cpp.Llama(
                    model_path=str(self._path),
                    n_ctx=self.context_tokens,
                    n_threads=self._threads or os.cpu_count() or 1,  # llama.cpp's is half
                    verbose=False,
                )
        except ValueError as exc:  # llama-cpp-python's way of saying the file is not a model
            raise ModelNotFoundError(f"cannot load {self._path} as a GGUF model") from exc
        lazy_grammar.install(llama)  # a statement's grammar checked on its likeliest tokens
        llama.set_cache(self._cache)  # one cache for both contexts
        lean_states(llama)  # cached prompt states without the unused logits table
        return llama

    def _context(self, index: int) -> _Context:
        """Context 0 (answers) or 1 (short tasks), the second loaded on first use. The second
        reads its weights from the mapped file rather than a repacked copy of its own: the
        file's pages are shared and can be reclaimed, and llama.cpp's plain kernels evaluate
        a prompt (most of a judge's work) no slower, at some cost in tokens written."""
        with self._building:
            if index >= len(self._contexts):
                self._contexts.append(_Context(self._load(False)))
            return self._contexts[index]

    @classmethod
    def from_settings(cls, settings: Settings, model: str) -> LocalLLM:
        models = settings.data_dir / "models"
        path = Path(model).expanduser() if model else bundled_model_path(models)
        repack = {"on": True, "off": False}.get(settings.llm_repack)
        return cls(path, settings.llm_threads, settings.llm_context_tokens, repack)

    def forget_prompts(self) -> None:
        """Drop every evaluated prompt (the contexts and their caches): a cold start."""
        self._cache = prompt_cache(PROMPT_CACHE_BYTES)
        for context in list(self._contexts):
            with context.lock:
                context.forget(self._cache)

    def count_tokens(self, text: str) -> int:
        tokens = self._contexts[0].llama.tokenize(text.encode("utf-8"), add_bos=False,
                                                  special=False)
        return len(tokens)

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
        # answers (with their system prompt and the task's instructions) go to the first
        # context, the short tasks to the second; either takes the other when its own is busy
        own = 0 if messages and messages[0].role == "system" else 1
        context = self._acquire(own, params.wait)
        try:
            yield from self._generate(context.llama, kwargs)
        finally:
            context.lock.release()

    def _acquire(self, own: int, wait: bool) -> _Context:
        for index in (own, 1 - own):
            context = self._context(index)
            if context.lock.acquire(blocking=False):
                return context
        if not wait:
            raise ModelBusyError("both contexts of the local model are generating")
        context = self._context(own)
        context.lock.acquire()
        return context

    def _generate(self, llama: Any, kwargs: dict[str, Any]) -> Iterator[Delta]:
        pieces = 0
        finish = "stop"
        try:
            chunks = cast(Iterator[dict[str, Any]], llama.create_chat_completion(**kwargs))
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
        evaluated = llama.n_tokens + (1 if finish == "length" else 0)
        prompt = max(0, evaluated - pieces)
        yield Delta(usage=Usage(prompt, pieces), finish=finish)
