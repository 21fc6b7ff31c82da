"""Which generation backends are ready, for `coursetutor models` and the readiness probe."""

from __future__ import annotations

import dataclasses
import importlib.util
from pathlib import Path

from ..config import Settings
from ..errors import CoursetutorError
from . import backend_class, backend_names, model_for_task
from .bundled import DEFAULT_MODEL, INSTALL_HINT, part_files


@dataclasses.dataclass(frozen=True)
class BackendStatus:
    name: str
    model: str
    configured: bool
    ready: bool
    detail: str


def _local(settings: Settings, model: str) -> tuple[bool, str, str]:
    if importlib.util.find_spec("llama_cpp") is None:
        return False, model or DEFAULT_MODEL.name, f"llama-cpp-python missing; {INSTALL_HINT}"
    if model:
        path = Path(model).expanduser()
        return path.is_file(), str(path), "GGUF file found" if path.is_file() else "no such file"
    joined = settings.data_dir / "models" / DEFAULT_MODEL.filename
    if joined.is_file():
        return True, DEFAULT_MODEL.name, f"bundled model at {joined}"
    try:
        part_files(DEFAULT_MODEL)
    except CoursetutorError as exc:
        return False, DEFAULT_MODEL.name, str(exc)
    return True, DEFAULT_MODEL.name, "bundled model installed (joined on first use)"


def backend_status(settings: Settings, only_configured: bool = False) -> list[BackendStatus]:
    """The state of every installed backend (the configured one first)."""
    out: list[BackendStatus] = []
    names = [settings.llm_backend] if only_configured else backend_names()
    for name in sorted(names, key=lambda n: n != settings.llm_backend):
        configured = name == settings.llm_backend
        model = model_for_task(settings, "answer") if configured else ""
        if name == "none":
            out.append(BackendStatus(name, "", configured, True, "passages only, no generation"))
            continue
        if name == "local":
            ready, shown, detail = _local(settings, model)
            out.append(BackendStatus(name, shown, configured, ready, detail))
            continue
        quick = dataclasses.replace(settings, llm_retries=0, llm_timeout=3.0)
        try:
            llm = backend_class(name).from_settings(quick if configured else dataclasses.replace(
                quick, llm_base_url="", llm_api_key=""), model)
            llm.check()
            out.append(BackendStatus(name, llm.model, configured, True, "reachable"))
            llm.close()
        except CoursetutorError as exc:
            out.append(BackendStatus(name, model, configured, False, str(exc)))
    if not only_configured and settings.llm_backend != "none":
        out.append(BackendStatus("none", "", False, True, "passages only, no generation"))
    return out
