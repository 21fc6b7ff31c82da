"""Speech in: the Whisper weights joined and checked once, and a spoken sentence fed to a class
(skips without the listen extra or espeak-ng)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from coursetutor.cli import cli
from coursetutor.errors import MissingDependencyError
from coursetutor.live import listen
from coursetutor.store import SQLiteStore


def test_missing_weights_name_the_extra(monkeypatch: pytest.MonkeyPatch,
                                        tmp_path: Path) -> None:
    monkeypatch.setattr(listen, "PARTS", ("no_such_whisper_part1", "no_such_whisper_part2"))
    with pytest.raises(MissingDependencyError, match=r"coursetutor\[listen\]"):
        listen.model_folder(tmp_path)


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
    runner = CliRunner()
    assert runner.invoke(cli, ["--data-dir", str(data), "courses"]).exit_code == 0
    store = SQLiteStore(data / "coursetutor.db")
    store.ensure_course("default", "c1")
    store.close()
    result = runner.invoke(cli, ["--data-dir", str(data), "class", "listen", str(wav),
                                 "--course", "c1", "--json"])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    assert figures["events"] >= 1 and figures["language"] == "en"
    store = SQLiteStore(data / "coursetutor.db")
    try:
        (document,) = store.list_documents("default", "c1")
        text = " ".join(r.text for r in store.export_chunks("default", "c1", document.id))
    finally:
        store.close()
    assert document.id.startswith("class-") and "bisection" in text.lower()
