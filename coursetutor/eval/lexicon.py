"""The course lexicon on MaViLS transcripts: what it changes in speech it should mostly leave.

Each lecture's lexicon is built from its own slide deck; every transcript sentence goes through
`Lexicon.correct`. The transcripts are edited captions, so nearly every word in them is right
and a correction is an error unless a reader finds the caption wrong: the command lists every
correction to be checked by hand. It also puts right what a recogniser typically breaks, made
from the same sentences: each course term the sentence holds split in two ("eigen vector") or
with one letter changed, and counts how many come back as they were.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..ingest.ocr import OcrFn
from ..live.lexicon import Lexicon, fold
from .slides import lecture_names, load_lecture

_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)


@dataclasses.dataclass(frozen=True)
class Found:
    lecture: str
    sentence: int
    raw: str
    replacement: str
    rule: str
    context: str


def _stable(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big")


def mangle(word: str) -> str:
    """A recogniser's kind of mistake, chosen by a hash of the word: the word split in two
    near its middle, or one inner letter doubled or dropped."""
    h = _stable(word)
    mid = len(word) // 2
    if h % 3 == 0:
        return f"{word[:mid]} {word[mid:].lower()}"
    i = 1 + h % (len(word) - 2)
    return word[:i] + word[i] + word[i:] if h % 3 == 1 else word[:i] + word[i + 1 :]


def lecture_result(name: str, pages: Sequence[str], sentences: Sequence[str]
                   ) -> tuple[list[Found], int, int, int]:
    """(corrections of the captions, words, terms mangled, terms restored) for one lecture."""
    lexicon = Lexicon.from_texts(pages)
    found: list[Found] = []
    words = mangled = restored = 0
    for i, sentence in enumerate(sentences):
        words += len(_WORD.findall(sentence))
        _, fixes = lexicon.correct(sentence)
        for f in fixes:
            context = sentence[max(0, f.start - 40) : f.end + 40]
            found.append(Found(name, i, f.raw, f.replacement, f.rule, context))
        for m in _WORD.finditer(sentence):
            if not lexicon.is_term(fold(m.group())) or len(m.group()) < 7:
                continue
            mangled += 1
            broken = sentence[: m.start()] + mangle(m.group()) + sentence[m.end() :]
            restored += lexicon.correct(broken)[0].casefold() == sentence.casefold()
    return found, words, mangled, restored


def evaluate(folder: Path, ocr: OcrFn | None, names: Sequence[str] = (),
             progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Corrections on each lecture's captions and the restored share of mangled terms."""
    rows: list[dict[str, Any]] = []
    every: list[Found] = []
    for name in names or lecture_names(folder):
        if progress:
            progress(name)
        lecture = load_lecture(folder / name, ocr)
        found, words, mangled, restored = lecture_result(name, lecture.pages,
                                                         lecture.sentences)
        every.extend(found)
        rows.append({"lecture": name, "words": words, "corrections": len(found),
                     "mangled_terms": mangled, "restored": restored})
    words = sum(r["words"] for r in rows)
    mangled = sum(r["mangled_terms"] for r in rows)
    return {
        "lectures": rows, "words": words, "corrections": len(every),
        "corrections_per_1000_words": round(1000 * len(every) / max(words, 1), 3),
        "mangled_terms": mangled,
        "restored_share": round(sum(r["restored"] for r in rows) / max(mangled, 1), 3),
        "found": [dataclasses.asdict(f) for f in every],
    }


def table(result: dict[str, Any]) -> str:
    """The result as plain text: per lecture, then every correction for a reader to check."""
    lines = [f"{'lecture':24}{'words':>8}{'corrections':>13}{'mangled':>9}{'restored':>10}"]
    for r in result["lectures"]:
        lines.append(f"{r['lecture']:24}{r['words']:>8}{r['corrections']:>13}"
                     f"{r['mangled_terms']:>9}{r['restored']:>10}")
    lines.append(f"{'all':24}{result['words']:>8}{result['corrections']:>13}"
                 f"{result['mangled_terms']:>9}{result['restored_share']:>10.3f}")
    lines.append(f"\n{result['corrections']} corrections of the captions "
                 f"({result['corrections_per_1000_words']} per 1,000 words); each to check:")
    for f in result["found"]:
        lines.append(f"  {f['lecture']} #{f['sentence']} [{f['rule']}] {f['raw']!r} -> "
                     f"{f['replacement']!r}: ...{f['context']}...")
    return "\n".join(lines)
