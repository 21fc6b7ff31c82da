"""Answer evaluation data: ClapNQ abstention sets, MRBench dialogues, the course-pack questions."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any, cast

from ..errors import InputError
from ..types import DocType, FileMeta
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
    """The speakers' turns, each speaker's messages in a row joined into one ("Tutor: Next,
    we have to multiply 6 and 26. Tutor: What is the product of 26 and 6?")."""
    parts = _SPEAKER.split(history.replace("\u00a0", " "))
    said: list[tuple[str, str]] = []
    for i in range(1, len(parts) - 1, 2):
        who, text = parts[i].lower(), parts[i + 1].strip()
        if said and said[-1][0] == who:
            said[-1] = (who, f"{said[-1][1]} {text}".strip())
        else:
            said.append((who, text))
    return said


_OPENING = "The question is:"


def load_mrbench(path: Path) -> list[Dialogue]:
    """Dialogues whose history ends with a student message (the tutor speaks next). A
    MathDial dialogue opens with the tutor's request and the problem ("The question is:
    …"); a Bridge dialogue is a lesson under way with no problem stated, so its problem is
    what the tutor last said, the question the student's last message answers ("How many
    milliliters are in one liter?" before "is that a 20"), and a tutor's message with no
    student message before it is a turn of its own."""
    out: list[Dialogue] = []
    for row in _read_json(path):
        said = _utterances(row["conversation_history"])
        if len(said) < 2 or said[-1][0] != "student":
            continue
        opening = said[0][1]
        if _OPENING in opening:
            problem, body = opening.split(_OPENING, 1)[-1].strip(), said[1:]
        else:
            problem, body = said[-2][1], said
        solution = row["Ground_Truth_Solution"].strip()
        final = solution.splitlines()[-1].strip()
        pairs: list[tuple[str, str]] = []
        student = ""
        for who, text in body[:-1]:
            if who == "student":
                student = text
            else:
                pairs.append((student, text))
                student = ""
        out.append(Dialogue(row["conversation_id"], problem, solution, final, pairs,
                            said[-1][1]))
    return out


# The course-pack question set: questions written for the pack's PDFs and transcript, each with
# the pages (or seconds) that answer it. The pack itself is not part of this repository.

KINDS = ("concept", "formula", "exercise_why", "exercise_answer", "unanswerable")
PACK_TYPES = ("lecture", "exercise", "solution", "transcript", "summary")


@dataclasses.dataclass(frozen=True)
class Spot:
    """Where an answer is: pages of a PDF, or a span of seconds of a transcript."""

    file: str  # the file's name in the pack
    pages: frozenset[int] = frozenset()  # physical 1-based pages
    seconds: tuple[float, float] | None = None

    def holds(self, source_name: str, page: int | None, start: float | None,
              end: float | None) -> bool:
        """Is a chunk of `source_name` at this page (or overlapping this span) a gold one?"""
        if Path(source_name).name != Path(self.file).name:
            return False
        if self.seconds is not None:
            return (start is not None and end is not None
                    and start < self.seconds[1] and end > self.seconds[0])
        return page in self.pages


@dataclasses.dataclass(frozen=True)
class PackQuestion:
    id: str
    course: str
    language: str
    kind: str
    text: str
    gold: tuple[Spot, ...]  # empty: the pack does not answer it
    answer: str  # a short gold answer, in our own words
    terms: tuple[str, ...]  # strings a correct answer contains (a result, for exercise_answer)
    # what a correct and complete answer says: each fact a tuple of alternatives (key_facts.py)
    key_facts: tuple[tuple[str, ...], ...] = ()

    @property
    def answerable(self) -> bool:
        return bool(self.gold)


@dataclasses.dataclass(frozen=True)
class PackCourse:
    id: str
    title: str
    language: str
    files: list[tuple[Path, FileMeta]]


def load_coursepack(questions: Path, pack: Path) -> tuple[list[PackCourse], list[PackQuestion]]:
    """The courses (files found in `pack`) and the questions of a course-pack question set."""
    if not pack.is_dir():
        raise InputError(f"{pack}: no course pack folder")
    try:
        data = _read_json(questions)
    except (OSError, ValueError) as exc:
        raise InputError(f"{questions}: cannot read the question set ({exc})") from exc
    try:
        courses = [_pack_course(cid, c, pack) for cid, c in data["courses"].items()]
        asked = [_pack_question(row) for row in data["questions"]]
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"{questions}: not a course-pack question set ({exc})") from exc
    known = {c.id for c in courses}
    stray = sorted({q.course for q in asked} - known)
    if stray:
        raise InputError(f"{questions}: questions for unknown course(s) {', '.join(stray)}")
    return courses, asked


def _pack_course(cid: str, raw: dict[str, Any], pack: Path) -> PackCourse:
    files: list[tuple[Path, FileMeta]] = []
    language = str(raw["language"])
    for entry in raw["files"]:
        path = pack / entry["path"]
        if not path.is_file():
            raise InputError(f"{path}: a file of the course pack is missing")
        doc_type = entry.get("type", "lecture")
        if doc_type not in PACK_TYPES:
            raise ValueError(f"file type {doc_type!r}")
        source = ""
        if entry.get("source"):  # the LaTeX or Markdown file the PDF was made from
            origin = pack / entry["source"]
            if not origin.is_file():
                raise InputError(f"{origin}: the source of a file of the course pack is missing")
            source = str(origin.resolve())
        files.append((path, FileMeta(doc_type=cast(DocType, doc_type),
                                     language=entry.get("language", language),
                                     source_name=path.name, source=source)))
    return PackCourse(cid, str(raw.get("title", cid)), language, files)


def _pack_question(row: dict[str, Any]) -> PackQuestion:
    if row["kind"] not in KINDS:
        raise ValueError(f"question {row['id']}: kind {row['kind']!r}")
    gold = tuple(
        Spot(g["file"], frozenset(int(p) for p in g.get("pages", ())),
             (float(g["seconds"][0]), float(g["seconds"][1])) if "seconds" in g else None)
        for g in row["gold"]
    )
    if (row["kind"] == "unanswerable") == bool(gold):
        raise ValueError(f"question {row['id']}: gold places and kind disagree")
    return PackQuestion(row["id"], row["course"], row["language"], row["kind"], row["question"],
                        gold, row.get("answer", ""), tuple(row.get("terms", ())),
                        tuple(tuple(str(a) for a in fact) for fact in row.get("key_facts", ())))
