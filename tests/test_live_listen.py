"""Speech in: the Whisper weights joined and checked once, and a spoken sentence fed to a class
(skips without the listen extra or espeak-ng)."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from coursetutor.cli import cli
from coursetutor.errors import InputError, MissingDependencyError
from coursetutor.live import listen
from coursetutor.store import SQLiteStore
from coursetutor.store.classes import TranscriptEvent
from coursetutor.types import Document


def test_missing_weights_name_the_extra(monkeypatch: pytest.MonkeyPatch,
                                        tmp_path: Path) -> None:
    monkeypatch.setattr(listen, "PARTS", ("no_such_whisper_part1", "no_such_whisper_part2"))
    with pytest.raises(MissingDependencyError, match=r"coursetutor\[listen\]"):
        listen.model_folder(tmp_path)


def course_c1(data: Path) -> CliRunner:
    """A data folder with an empty course c1; the runner to call the CLI on it."""
    runner = CliRunner()
    assert runner.invoke(cli, ["--data-dir", str(data), "courses"]).exit_code == 0
    store = SQLiteStore(data / "coursetutor.db")
    store.ensure_course("default", "c1")
    store.close()
    return runner


def class_text(data: Path) -> tuple[Document, str]:
    """Course c1's one document (the class) and the text of its chunks."""
    store = SQLiteStore(data / "coursetutor.db")
    try:
        (document,) = store.list_documents("default", "c1")
        return document, " ".join(r.text for r in store.export_chunks("default", "c1",
                                                                        document.id))
    finally:
        store.close()


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng is not installed")
def test_a_spoken_sentence_reaches_the_class(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("faster_whisper", reason="the listen extra is not installed")
    monkeypatch.chdir(tmp_path)
    folder = listen.model_folder(tmp_path / "data" / "models")
    assert listen._sha256(folder / "model.bin") == listen.MODEL_SHA256
    assert listen.model_folder(tmp_path / "data" / "models") == folder  # joined once
    wav = tmp_path / "bisection.wav"
    subprocess.run(["espeak-ng", "-v", "en", "-w", str(wav),
                    "The bisection method halves the interval at every step."], check=True)
    data = tmp_path / "data"
    runner = course_c1(data)
    result = runner.invoke(cli, ["--data-dir", str(data), "class", "listen", str(wav),
                                 "--course", "c1", "--json"])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    assert figures["events"] >= 1 and figures["language"] == "en"
    document, text = class_text(data)
    assert document.id.startswith("class-") and "bisection" in text.lower()


# -- a live stream, utterance by utterance -------------------------------------------------


def loud(seconds: float) -> np.ndarray:
    t = np.arange(int(seconds * listen.RATE)) / listen.RATE
    return (0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32)


def quiet(seconds: float) -> np.ndarray:
    return np.zeros(int(seconds * listen.RATE), dtype=np.float32)


def raw(audio: np.ndarray) -> bytes:
    return (audio * 32767).astype("<i2").tobytes()


def by_energy(audio: np.ndarray) -> list[tuple[int, int]]:
    """A stand-in for the voice detection: 10 ms frames above a level are speech."""
    frames = len(audio) // 160
    on = [float(np.abs(audio[i * 160:(i + 1) * 160]).mean()) > 0.01 for i in range(frames)]
    spans: list[tuple[int, int]] = []
    for i, speech in enumerate(on):
        if speech and spans and spans[-1][1] == i * 160:
            spans[-1] = (spans[-1][0], (i + 1) * 160)
        elif speech:
            spans.append((i * 160, (i + 1) * 160))
    return spans


def fed(utterances: listen.Utterances, data: bytes, block: int = 3200
        ) -> list[tuple[float, float, float]]:
    """(when it came out, in seconds of the stream; its start; its length) per utterance."""
    out = []
    for i in range(0, len(data), block):
        for start, audio in utterances.feed(data[i:i + block]):
            out.append((utterances.seconds, start, len(audio) / listen.RATE))
    out += [(utterances.seconds, s, len(a) / listen.RATE) for s, a in utterances.close()]
    return out


def test_a_pause_closes_an_utterance_as_the_stream_goes_on() -> None:
    data = raw(np.concatenate([quiet(0.5), loud(1.5), quiet(1.5), loud(2.0), quiet(0.3)]))
    got = fed(listen.Utterances(by_energy), data)
    assert [(round(s, 2), round(n, 2)) for _, s, n in got] == [(0.5, 1.5), (3.5, 2.0)]
    first_out, second_out = got[0][0], got[1][0]
    assert first_out <= 2.0 + 0.8 + 1.0 + 0.1  # its end, a pause, at most one look later
    assert second_out == pytest.approx(5.8)  # the stream's end


def test_pauses_shorter_than_the_cut_stay_inside_one_utterance() -> None:
    data = raw(np.concatenate([loud(1.0), quiet(0.3), loud(1.0), quiet(2.0)]))
    got = fed(listen.Utterances(by_energy), data)
    assert [(round(s, 2), round(n, 2)) for _, s, n in got] == [(0.0, 2.3)]


def test_a_long_utterance_is_cut_where_it_stands() -> None:
    data = raw(np.concatenate([loud(45.0), quiet(1.0)]))
    got = fed(listen.Utterances(by_energy, listen.Cutting(longest=20.0)), data)
    assert len(got) == 3 and all(n <= 21.0 for _, _, n in got)
    assert sum(n for _, _, n in got) == pytest.approx(45.0, abs=0.01)
    assert [s for _, s, _ in got] == sorted(s for _, s, _ in got)


def test_silence_is_not_kept() -> None:
    utterances = listen.Utterances(by_energy)
    data = raw(quiet(60.0))
    assert fed(utterances, data) == []
    assert len(utterances.buffer) <= (0.8 + 1.0) * listen.RATE
    assert utterances.seconds == pytest.approx(60.0)


def test_samples_split_across_blocks_are_joined() -> None:
    data = raw(np.concatenate([loud(1.0), quiet(1.0)]))
    got = fed(listen.Utterances(by_energy), data, block=3201)  # every block ends mid-sample
    assert [(round(s, 2), round(n, 2)) for _, s, n in got] == [(0.0, 1.0)]
    half = listen.Utterances(by_energy)
    half.feed(data[:101])
    with pytest.raises(InputError, match="middle of a sample"):
        half.close()


class ToneListener:
    """Orchestration only: the real utterance cutting, a made-up transcription."""

    def __init__(self, folder: Path, language: str | None, threads: int) -> None:
        self.detected, self.duration, self.busy = language or "en", 0.0, 0.0

    def stream(self, blocks: Iterator[bytes]) -> Iterator[TranscriptEvent]:
        utterances = listen.Utterances(by_energy)
        n = 0
        for block in blocks:
            for start, audio in utterances.feed(block):
                n += 1
                yield TranscriptEvent(start, start + len(audio) / listen.RATE,
                                      f"utterance number {n} about bisection")
            self.duration = utterances.seconds
        for start, audio in utterances.close():
            n += 1
            yield TranscriptEvent(start, start + len(audio) / listen.RATE,
                                  f"utterance number {n} about bisection")


def test_a_raw_stream_on_standard_input_feeds_the_class(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from coursetutor.cli import listen as cli_listen
    monkeypatch.setattr(cli_listen, "Listener", ToneListener)
    monkeypatch.setattr(cli_listen, "model_folder", lambda models: models)
    data = tmp_path / "data"
    runner = course_c1(data)
    audio = raw(np.concatenate([loud(1.0), quiet(1.5), loud(1.0), quiet(0.2)]))
    result = runner.invoke(cli, ["--data-dir", str(data), "class", "listen", "-", "--raw",
                                 "--course", "c1", "--json"], input=audio)
    assert result.exit_code == 0, result.output
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    assert (figures["events"], figures["audio_seconds"]) == (2, 3.7)
    document, text = class_text(data)
    assert document.id.startswith("class-")
    assert "utterance number 1" in text and "utterance number 2" in text


def test_raw_needs_standard_input(tmp_path: Path) -> None:
    wav = tmp_path / "a.wav"
    wav.write_bytes(b"RIFF")
    result = CliRunner().invoke(cli, ["--data-dir", str(tmp_path / "data"), "class", "listen",
                                      str(wav), "--raw", "--course", "c1"])
    assert result.exit_code != 0 and "--raw reads standard input" in result.output


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng is not installed")
def test_a_live_stream_is_transcribed_utterance_by_utterance(tmp_path: Path) -> None:
    faster_whisper = pytest.importorskip("faster_whisper",
                                         reason="the listen extra is not installed")
    said = ["The bisection method halves the interval.", "Newton's method uses the derivative."]
    parts = []
    for i, sentence in enumerate(said):
        wav = tmp_path / f"{i}.wav"
        subprocess.run(["espeak-ng", "-v", "en", "-w", str(wav), sentence], check=True)
        parts += [faster_whisper.decode_audio(str(wav)), quiet(2.0)]
    folder = listen.model_folder(tmp_path / "models")
    listener = listen.Listener(folder, "en")
    data = raw(np.concatenate(parts))
    events = list(listener.stream(data[i:i + 3200] for i in range(0, len(data), 3200)))
    assert len(events) == 2
    # synthetic speech cut tight: "bisection" may come out as "my section"
    assert "section method" in events[0].text.lower()
    assert "derivative" in events[1].text.lower()
    assert events[0].end < events[1].start
    assert listener.duration == pytest.approx(len(data) / 2 / listen.RATE)
