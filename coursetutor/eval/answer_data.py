"""Datasets for the answer evaluation: ClapNQ abstention sets and MRBench dialogues."""

from __future__ import annotations

import dataclasses
import itertools
import re
from pathlib import Path

from .datasets import Unit, UnitSet, _read_json, _read_jsonl, pool_passages


@dataclasses.dataclass(frozen=True)
class Asked:
    id: str
    text: str
    gold: frozenset[str]  # unit ids holding the answer (empty: unanswerable)


def load_clapnq_abstention(folder: Path) -> tuple[UnitSet, list[Asked], list[Asked]]:
    """Answerable passages pooled as the course; answerable and unanswerable questions."""
    pooled: dict[str, Unit] = {}
    answerable: list[Asked] = []
    for row in _read_jsonl(folder / "clapnq-ans.jsonl"):
        gold = pool_passages(pooled, row["passages"])
        if any(o.get("answer") for o in row.get("output", [])):
            answerable.append(Asked(row["id"], row["input"], frozenset(gold)))
    unanswerable = [Asked(r["id"], r["input"], frozenset())
                    for r in _read_jsonl(folder / "clapnq-unans.jsonl")]
    return UnitSet("en", list(pooled.values()), []), answerable, unanswerable


@dataclasses.dataclass(frozen=True)
class Dialogue:
    """An MRBench tutoring dialogue: the problem, its solution and the conversation so far."""

    id: str
    problem: str
    solution: str
    final_answer: str
    turns: list[tuple[str, str]]  # (student, tutor) pairs before the last student message
    last_student: str


_SPEAKER = re.compile(r"(?:^|\n)\s*(Tutor|Student):\s*", re.IGNORECASE)


def _utterances(history: str) -> list[tuple[str, str]]:
    parts = _SPEAKER.split(history.replace("\u00a0", " "))
    return [(parts[i].lower(), parts[i + 1].strip()) for i in range(1, len(parts) - 1, 2)]


def load_mrbench(path: Path) -> list[Dialogue]:
    """Dialogues whose history ends with a student message (the tutor speaks next)."""
    out: list[Dialogue] = []
    for row in _read_json(path):
        said = _utterances(row["conversation_history"])
        if len(said) < 2 or said[-1][0] != "student":
            continue
        opening = said[0][1]
        problem = opening.split("The question is:", 1)[-1].strip()
        solution = row["Ground_Truth_Solution"].strip()
        final = solution.splitlines()[-1].strip()
        pairs: list[tuple[str, str]] = []
        for (who, text), (nxt, reply) in itertools.pairwise(said[1:]):
            if who == "student" and nxt == "tutor":
                pairs.append((text, reply))
        out.append(Dialogue(row["conversation_id"], problem, solution, final, pairs,
                            said[-1][1]))
    return out
