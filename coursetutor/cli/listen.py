"""`coursetutor class listen`: speech in, transcribed offline and fed to a class as it is heard."""

from __future__ import annotations

import io
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import click

from ..errors import InputError
from ..live.listen import Listener, model_folder
from .classes import _live


@click.command("listen")
@click.argument("audio")
@click.option("--course", required=True)
@click.option("--class", "class_id", default=None, help="The class (default: the course's "
              "running class, else a new one named after the audio, ended when it is heard).")
@click.option("--language", default=None, help="The language spoken (default: the course's "
              "when it set one, else detected).")
@click.option("--raw", is_flag=True, help="Standard input is a live stream of raw samples "
              "(16 kHz, mono, 16-bit little-endian, e.g. from a microphone), transcribed "
              "utterance by utterance as it arrives, until it ends.")
@click.option("--threads", type=click.IntRange(1), default=1, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
@click.pass_context
def listen(ctx: click.Context, audio: str, course: str, class_id: str | None,
           language: str | None, raw: bool, threads: int, as_json: bool) -> None:
    """Transcribe AUDIO (a file, or - for audio on standard input, e.g. from ffmpeg; with
    --raw, a live microphone) with Whisper and feed each utterance to the class as it is
    transcribed."""
    settings = ctx.obj
    tenant = settings.tenant
    source: str | io.BytesIO | None = None
    if raw and audio != "-":
        raise InputError("--raw reads standard input: give - as AUDIO")
    if audio == "-":
        source = None if raw else io.BytesIO(sys.stdin.buffer.read())
    elif Path(audio).is_file():
        source = audio
    else:
        raise InputError(f"{audio}: no such audio file")
    with _live(ctx) as live:
        info = live.workspace.store.get_course(tenant, course)
        listener = Listener(model_folder(settings.data_dir / "models"),
                            language or info.language or None, threads)
        running = live.workspace.store.classes.list_classes(tenant, course, running=True)
        started = None
        if class_id is None and not running:
            started = live.start(tenant, course, Path(audio).stem if audio != "-" else "")
        target = class_id or (started.id if started else live.current(tenant, course).id)
        spent, events = 0.0, 0  # seconds spent transcribing a file (posting left out)
        stream = (listener.events(source) if source is not None
                  else listener.stream(_blocks(sys.stdin.buffer)))
        while True:
            began = time.monotonic()
            event = next(stream, None)
            spent += time.monotonic() - began
            if event is None:
                break
            live.post(tenant, course, target, [event], received=time.time())
            events += 1
            if not as_json:
                click.echo(f"[{event.start:7.1f}-{event.end:7.1f}] {event.text}", err=True)
        if started is not None:
            live.end(tenant, course, target)
    if source is None:  # a live stream: waiting for the audio is not transcribing it
        spent = listener.busy
    figures = {"class": target, "events": events, "language": listener.detected,
               "audio_seconds": round(listener.duration, 1),
               "real_time_factor": round(spent / listener.duration, 3)
               if listener.duration else None}
    click.echo(json.dumps(figures) if as_json else
               f"fed {events} utterances ({figures['audio_seconds']} s of {figures['language']} "
               f"audio) to class {target}; transcribed at {figures['real_time_factor']}x "
               "real time")


def _blocks(stream: BinaryIO, size: int = 3200) -> Iterator[bytes]:
    """What a live stream has sent, a tenth of a second (16 kHz, 16-bit) at a time."""
    while True:
        block = stream.read1(size) if hasattr(stream, "read1") else stream.read(size)
        if not block:
            return
        yield block
