"""Speech in: real-time factor and word error rate of `coursetutor class listen`'s recogniser.

    python bench/listen_wer.py [--words 450] [--threads 1] [--stream] [--json OUT]

Speaks course texts of the sample course with espeak-ng (English: the root-finding lecture;
Italian: its Italian summary), transcribes the WAV files with Whisper base through
`live.listen.Listener` (faster-whisper, int8, voice-activity segmentation, the language fixed
as a course would fix it) and compares the words with the text spoken. Real-time factor:
seconds spent transcribing over seconds of audio (below 1: faster than speech). Word error
rate: word-level edit distance over the words spoken, after case folding and dropping
punctuation. With `--stream`, the same audio is also sent as a live microphone would send it
(`Listener.stream`: raw 16 kHz samples, a tenth of a second at a time, at the speed of speech)
and each utterance's lag is measured: from the moment its last word was sent to the moment its
text came out (p50 and p95). espeak-ng's voice is synthetic, steady and noiseless, so these
rates flatter what a lecture hall's microphone will give. Needs the `listen` extra and
espeak-ng; exits 0 with a message when either is missing.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unicodedata
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TEXTS = {"en": ROOT / "coursetutor/sample_course/lecture-01-root-finding.md",
         "it": ROOT / "coursetutor/sample_course/lecture-01-riassunto-it.md"}
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def spoken_text(path: Path, words: int) -> str:
    """The prose of a Markdown file (no headings, code or formulas), its first `words` words."""
    lines = [ln for ln in path.read_text(encoding="utf-8").splitlines()
             if ln.strip() and not ln.startswith(("#", "```", "|", "$$"))]
    text = re.sub(r"\$[^$]*\$|`[^`]*`|[*_>\[\]()]", " ", " ".join(lines))
    return " ".join(text.split()[:words])


def words_of(text: str) -> list[str]:
    folded = unicodedata.normalize("NFKC", text).casefold()
    return _WORD.findall(folded)


def wer(reference: list[str], hypothesis: list[str]) -> float:
    """Word error rate: edit distance over the reference's length."""
    prev = list(range(len(hypothesis) + 1))
    for i, r in enumerate(reference, 1):
        cur = [i] + [0] * len(hypothesis)
        for j, h in enumerate(hypothesis, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (r != h))
        prev = cur
    return prev[-1] / max(len(reference), 1)


def run(language: str, words: int, threads: int, models: Path, work: Path) -> dict[str, Any]:
    from coursetutor.live.listen import Listener, model_folder

    text = spoken_text(TEXTS[language], words)
    wav = work / f"{language}.wav"
    subprocess.run(["espeak-ng", "-v", language, "-w", str(wav), text], check=True)
    listener = Listener(model_folder(models), language, threads)
    started = time.perf_counter()
    heard = " ".join(e.text for e in listener.events(str(wav)))
    spent = time.perf_counter() - started
    return {"language": language, "words": len(words_of(text)),
            "audio_seconds": round(listener.duration, 1), "seconds": round(spent, 1),
            "real_time_factor": round(spent / listener.duration, 3),
            "wer": round(wer(words_of(text), words_of(heard)), 3)}


def run_stream(language: str, words: int, threads: int, models: Path,
               work: Path) -> dict[str, Any]:
    """The same audio sent in real time as raw samples; word error rate and lags."""
    from faster_whisper import decode_audio

    from coursetutor.live.listen import RATE, Listener, model_folder

    text = spoken_text(TEXTS[language], words)
    wav = work / f"{language}.wav"
    subprocess.run(["espeak-ng", "-v", language, "-w", str(wav), text], check=True)
    data = (decode_audio(str(wav)) * 32767).astype("<i2").tobytes()
    listener = Listener(model_folder(models), language, threads)
    began = time.monotonic()

    def blocks() -> Any:
        for i in range(0, len(data), 3200):
            wait = began + i / 2 / RATE - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            yield data[i : i + 3200]

    heard, lags = [], []
    for event in listener.stream(blocks()):
        lags.append(time.monotonic() - (began + event.end))
        heard.append(event.text)
    lags.sort()
    return {"language": f"{language} (stream)", "words": len(words_of(text)),
            "audio_seconds": round(listener.duration, 1), "seconds": round(listener.busy, 1),
            "real_time_factor": round(listener.busy / listener.duration, 3),
            "wer": round(wer(words_of(text), words_of(" ".join(heard))), 3),
            "utterances": len(lags),
            "lag_p50": round(lags[len(lags) // 2], 2) if lags else None,
            "lag_p95": round(lags[min(len(lags) - 1, int(0.95 * len(lags)))], 2)
            if lags else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--words", type=int, default=450)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--stream", action="store_true",
                        help="also send the audio as a live stream and measure the lag")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    try:
        import faster_whisper  # noqa: F401
    except ImportError:
        print("skipped: the listen extra is not installed (pip install 'coursetutor[listen]')")
        return
    if shutil.which("espeak-ng") is None:
        print("skipped: espeak-ng is not installed (apt-get install espeak-ng)")
        return
    with tempfile.TemporaryDirectory() as tmp:
        rows = [run(lang, args.words, args.threads, Path(tmp) / "models", Path(tmp))
                for lang in TEXTS]
        if args.stream:
            rows += [run_stream(lang, args.words, args.threads, Path(tmp) / "models",
                                Path(tmp)) for lang in TEXTS]
    print(f"{'language':14}{'words':>7}{'audio s':>9}{'seconds':>9}{'RTF':>7}{'WER':>7}"
          f"{'lag p50':>9}{'lag p95':>9}")
    for r in rows:
        print(f"{r['language']:14}{r['words']:>7}{r['audio_seconds']:>9}{r['seconds']:>9}"
              f"{r['real_time_factor']:>7}{r['wer']:>7}{r.get('lag_p50') or '':>9}"
              f"{r.get('lag_p95') or '':>9}")
    print("espeak-ng's synthetic voice flatters these word error rates.")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
