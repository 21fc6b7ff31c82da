"""Readers for the public evaluation sets: XQuAD-R, SQuAD-it, ClapNQ and TutorialVQA."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..retrieval.language import UNKNOWN, detect_language, language_script

DATASETS = ("xquadr", "squad", "clapnq", "tvqa")


@dataclasses.dataclass(frozen=True)
class Unit:
    """One retrievable unit of a dataset (a sentence, a paragraph, a passage)."""

    id: str
    document: str
    title: str
    text: str


@dataclasses.dataclass(frozen=True)
class Question:
    id: str
    text: str
    gold: frozenset[str]


@dataclasses.dataclass
class UnitSet:
    """Units grouped in documents plus questions with their gold unit ids."""

    language: str
    units: list[Unit]
    questions: list[Question]


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise InputError(f"{path}: cannot read dataset ({exc})") from exc


def _read_jsonl(path: Path) -> list[Any]:
    try:
        return [json.loads(ln) for ln in path.read_text(encoding="utf-8").splitlines() if ln]
    except (OSError, json.JSONDecodeError) as exc:
        raise InputError(f"{path}: cannot read dataset ({exc})") from exc


def xquadr_questions(path: Path) -> dict[str, str]:
    """Question id -> question text of an XQuAD-R file."""
    data = _read_json(path)
    return {
        qa["id"]: qa["question"]
        for art in data["data"] for par in art["paragraphs"] for qa in par["qas"]
    }


def load_xquadr(path: Path, language: str) -> UnitSet:
    """Every sentence is a unit; the gold unit holds the answer's first character."""
    data = _read_json(path)
    units: list[Unit] = []
    questions: list[Question] = []
    for a, art in enumerate(data["data"]):
        for p, par in enumerate(art["paragraphs"]):
            doc = f"a{a}-p{p}"
            breaks = par["sentence_breaks"]
            for s, sentence in enumerate(par["sentences"]):
                units.append(Unit(f"{doc}-s{s}", doc, art.get("title", ""), sentence))
            for qa in par["qas"]:
                start = qa["answers"][0]["answer_start"]
                gold = {f"{doc}-s{s}" for s, (b0, b1) in enumerate(breaks) if b0 <= start <= b1}
                if gold:
                    questions.append(Question(qa["id"], qa["question"], frozenset(gold)))
    return UnitSet(language, units, share_gold(units, questions))


def load_squad(path: Path, language: str = "it") -> UnitSet:
    """Paragraph retrieval: every paragraph is a unit."""
    data = _read_json(path)
    units: list[Unit] = []
    questions: list[Question] = []
    for a, art in enumerate(data["data"]):
        for p, par in enumerate(art["paragraphs"]):
            uid = f"a{a}-p{p}"
            units.append(Unit(uid, uid, art.get("title", ""), par["context"]))
            questions.extend(Question(qa["id"], qa["question"], frozenset({uid}))
                             for qa in par["qas"])
    return UnitSet(language, units, share_gold(units, questions))


def share_gold(units: list[Unit], questions: list[Question]) -> list[Question]:
    """Questions whose gold also holds every unit with the same text as a gold unit.

    The search shows one of several identical texts (the first it ranks), so finding any
    of them finds the answer.
    """
    same: dict[str, set[str]] = {}
    for u in units:
        same.setdefault(u.text.strip(), set()).add(u.id)
    twins = {u.id: same[u.text.strip()] for u in units}
    return [
        dataclasses.replace(q, gold=frozenset().union(*(twins.get(g, {g}) for g in q.gold)))
        for q in questions
    ]


def text_language(path: Path) -> str:
    """The language of a SQuAD-format file (XQuAD-R is one), detected from the text of its
    first paragraphs as ingest detects a document's; `UNKNOWN` when nothing decides."""
    data = _read_json(path)
    try:
        sample = " ".join(par["context"] for art in data["data"][:3]
                          for par in art["paragraphs"][:3])
    except (KeyError, TypeError, IndexError) as exc:
        raise InputError(f"{path}: not a SQuAD-format dataset file (missing {exc})") from exc
    return detect_language(sample[:4000])


def suffix_language(path: Path) -> str | None:
    """The language a file name's `-xx` suffix names (`korquad-dev-ko.json`: ko), if any."""
    tail = path.stem.rsplit("-", 1)[-1]
    return tail.lower() if len(tail) == 2 and tail.isalpha() and "-" in path.stem else None


def suffix_disagrees(suffix: str | None, detected: str) -> bool:
    """True when a name's suffix and the detected language are in different scripts.

    Only the script is compared (a suffix the detector does not know counts as Latin): the
    guess between languages of one script is too weak to contradict a name, and text of no
    known language contradicts nothing.
    """
    if suffix is None or detected == UNKNOWN:
        return False
    return (language_script(suffix) or "latin") != (language_script(detected) or "latin")


def pool_passages(pooled: dict[str, Unit], passages: list[dict[str, str]]) -> set[str]:
    """Add ClapNQ `passages` to `pooled` (one unit per distinct text); return their unit ids."""
    ids = set()
    for passage in passages:
        key = passage["text"].strip()
        if key not in pooled:
            pooled[key] = Unit(f"u{len(pooled)}", f"u{len(pooled)}", passage["title"], key)
        ids.add(pooled[key].id)
    return ids


def load_clapnq(path: Path) -> UnitSet:
    """All passages of the answerable and unanswerable files pooled; answerable questions."""
    pooled: dict[str, Unit] = {}
    files = [path]
    sibling = path.with_name(path.name.replace("-ans", "-unans"))
    if sibling != path and sibling.is_file():
        files.append(sibling)
    questions: list[Question] = []
    for f in files:
        for row in _read_jsonl(f):
            gold = pool_passages(pooled, row["passages"])
            answers = [o for o in row.get("output", []) if o.get("answer")]
            if f == path and answers:
                questions.append(Question(row["id"], row["input"], frozenset(gold)))
    return UnitSet("en", list(pooled.values()), questions)
