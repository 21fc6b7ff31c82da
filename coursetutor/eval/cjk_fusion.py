"""The CJK keyword weight chosen with leave-one-dataset-out validation (`eval fusion`).

Each CJK set (DRCD, KorQuAD, XQuAD-R zh, the course pack's Chinese notes) is loaded as a
course once and, for every question, the keyword and vector candidate lists are saved exactly
as a hybrid search gathers them (scores, keyword evidence, language; whether each candidate
is a hit and its text's hash). Every rule of `GRID` is then replayed on the saved lists
through the product's own fusion (`scoring.fusion.fuse`), and for each set in turn the rule
is chosen on the other sets alone and read on the set held back.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from ..retrieval.retriever import CJK_LANGUAGES, Retriever, SearchTrace
from ..scoring import fusion
from ..scoring.fusion import CjkRule
from ..types import Hit, SearchFilters
from ..workspace import Workspace
from . import datasets
from .answer_data import load_coursepack
from .datasets import UnitSet
from .metrics import mrr_at, recall_at
from .retrieval import K, Prepared, dataset_language, prepare_units

BAR = 0.002  # the hybrid may fall below BM25 alone by at most this much R@1 on any set
PACK_SET = "pack-zh"
PACK_COURSE = "shuxue"  # the course pack's Chinese course: the notes of 数学分析 I
GRID = tuple(
    CjkRule(gain, lift, cap)
    for gain, lift, cap in itertools.product(
        (1.0, 1.5, 2.0, 3.0, 4.0, 6.0), (0.0, 0.25, 0.5, 1.0), (1.0, 1.5, 2.0, 3.0, 5.0))
    if not (cap == 1.0 and lift > 0 and gain >= 3.0)  # capped at 1 from the start: no lift
)
Row = dict[str, Any]
Progress = Callable[[int, int], None]


def sample_articles(units: UnitSet, paragraphs: int | None) -> UnitSet:
    """Whole articles, in the order of a hash of their titles, until they hold `paragraphs`
    paragraphs; their questions only. The same sample on every run and machine."""
    if paragraphs is None:
        return units
    articles: dict[str, list[str]] = {}
    for u in units.units:
        articles.setdefault(u.title, []).append(u.id)
    order = sorted(articles, key=lambda t: hashlib.sha256(t.encode("utf-8")).hexdigest())
    kept: set[str] = set()
    for title in order:
        if len(kept) >= paragraphs:
            break
        kept.update(articles[title])
    return UnitSet(units.language, [u for u in units.units if u.id in kept],
                   [q for q in units.questions if q.gold & kept])


def gather(ws: Workspace, prepared: Prepared, progress: Progress | None = None) -> list[Row]:
    """For every question, both candidate lists as the hybrid search gathers them."""
    retriever = Retriever(ws.store, ws.embedder, ws.settings)
    filters = SearchFilters(ws.tenant, prepared.course)
    n = max(K * ws.settings.candidate_factor, ws.settings.min_candidates, K)
    rows: list[Row] = []
    for i, q in enumerate(prepared.questions):
        text = prepared.text_of(q)
        trace = SearchTrace()
        lists = retriever.candidates(text, filters, n, trace)
        ids = list(dict.fromkeys(cid for scored in lists.values() for cid, _ in scored))
        chunks = ws.store.get_chunks(filters, ids)
        hits = retriever.as_hits([(cid, 0.0) for cid in ids], chunks, {}, {}, text,
                                 trace.language)
        flags = prepared.judge(q, hits)
        rows.append({
            "id": str(getattr(q, "id", i)), "language": trace.language,
            "translated": trace.translated, "evidence": trace.keyword_evidence,
            "lists": {name: [[cid, float(s)] for cid, s in scored]
                      for name, scored in lists.items()},
            "hit": {h.chunk.id: f for h, f in zip(hits, flags, strict=True)},
            "hash": {h.chunk.id: h.chunk.content_hash for h in hits},
        })
        if progress:
            progress(i + 1, len(prepared.questions))
    return rows


def prepare_pack(ws: Workspace, questions: Path, pack: Path) -> Prepared:
    """The course pack's Chinese course, ingested as a teacher would (the notes with their
    source), and its questions; a hit is a chunk on a gold page."""
    started = time.perf_counter()
    courses, asked = load_coursepack(questions, pack)
    course = next(c for c in courses if c.id == PACK_COURSE)
    course_id = f"eval-{PACK_SET}"
    ws.create_course(course_id, course.title, course.language)
    ws.ingest(course_id, course.files)
    chosen = [q for q in asked if q.course == PACK_COURSE and q.answerable]

    def judge(q: Any, hits: list[Hit]) -> list[bool]:
        return [any(s.pages and h.chunk.locator.page in s.pages for s in q.gold) for h in hits]

    units = sum(d.chunks for d in ws.documents(course_id))
    return Prepared(PACK_SET, course_id, chosen, lambda q: q.text, judge, units, started,
                    {"language": course.language})


def save(path: Path, name: str, language: str, units: int, sample: str,
         rows: list[Row]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"set": name, "language": language, "units": units,
                                "sample": sample, "questions": rows}), encoding="utf-8")


def load(path: Path, sample: str) -> dict[str, Any] | None:
    """The saved lists of a set, or None when absent or saved from another sample."""
    if not path.is_file():
        return None
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data if data.get("sample") == sample else None


def ranked_flags(row: Row, fused: Sequence[tuple[object, float]]) -> list[bool]:
    """Hit flags of the first `K` results after identical texts are dropped, as the search
    drops them."""
    seen: set[str] = set()
    flags: list[bool] = []
    for cid, _ in fused:
        h = row["hash"].get(cid)
        if h is None or h in seen:
            continue
        seen.add(h)
        flags.append(bool(row["hit"][cid]))
        if len(flags) == K:
            break
    return flags


def replay(row: Row, course_language: str, mode: str, rule: CjkRule) -> list[bool]:
    """The hit flags of `mode` ("bm25", "vector" or "hybrid" under `rule`) on one question."""
    lists = {name: [(c, float(s)) for c, s in scored] for name, scored in row["lists"].items()}
    if mode != "hybrid":
        return ranked_flags(row, lists.get(mode, []))
    features = fusion.Features(
        evidence=row["evidence"], translated=row["translated"],
        cjk=row["language"] in CJK_LANGUAGES and course_language in CJK_LANGUAGES)
    return ranked_flags(row, fusion.fuse(lists, features, rule))


@dataclasses.dataclass(frozen=True)
class Score:
    r1: float
    mrr: float


def score(data: dict[str, Any], mode: str, rule: CjkRule = fusion.CJK_RULE) -> Score:
    """R@1 and MRR@10 of `mode` on one saved set."""
    flags = [replay(r, data["language"], mode, rule) for r in data["questions"]]
    return Score(recall_at(flags, 1), mrr_at(flags, K))


@dataclasses.dataclass(frozen=True)
class Fold:
    held_back: str
    rule: CjkRule
    bm25: Score
    vector: Score
    hybrid: Score  # the chosen rule on the held-back set
    default: Score  # the default rule (`fusion.CJK_RULE`) on the held-back set
    train_met: int  # training sets where the chosen rule meets the bar
    train_sets: int

    @property
    def margin(self) -> float:
        """Hybrid R@1 minus BM25 R@1 on the held-back set."""
        return self.hybrid.r1 - self.bm25.r1

    @property
    def met(self) -> bool:
        return self.margin >= -BAR - 1e-12


def objective(rows: Iterable[tuple[Score, Score]]) -> tuple[int, float, float]:
    """How a rule is ranked on training sets, given (hybrid, BM25) per set, larger first:
    the sets where it meets the bar, then its mean R@1 lead over BM25, then its mean MRR@10
    (each set counts once, whatever its size)."""
    pairs = list(rows)
    met = sum(h.r1 - b.r1 >= -BAR - 1e-12 for h, b in pairs)
    lead = sum(h.r1 - b.r1 for h, b in pairs) / len(pairs)
    mrr = sum(h.mrr for h, _ in pairs) / len(pairs)
    return met, round(lead, 9), round(mrr, 9)


def choose(table: dict[CjkRule, dict[str, Score]], bm25: dict[str, Score],
           sets: Sequence[str]) -> CjkRule:
    """The rule of `table` that ranks first by `objective` on `sets` (the earlier in `GRID`
    on a tie)."""
    best = max(enumerate(table), key=lambda ir: (
        objective((table[ir[1]][s], bm25[s]) for s in sets), -ir[0]))
    return best[1]


@dataclasses.dataclass(frozen=True)
class Replayed:
    """Every saved set's figures: each single retriever and each rule of the grid."""

    bm25: dict[str, Score]
    vector: dict[str, Score]
    default: dict[str, Score]
    table: dict[CjkRule, dict[str, Score]]


def replay_grid(saved: dict[str, dict[str, Any]], grid: Sequence[CjkRule] = GRID,
                progress: Callable[[str], None] | None = None) -> Replayed:
    """Replay BM25, vectors, the default rule and every rule of `grid` on every saved set."""
    names = list(saved)
    table: dict[CjkRule, dict[str, Score]] = {}
    for i, rule in enumerate(grid):
        table[rule] = {n: score(saved[n], "hybrid", rule) for n in names}
        if progress and (i + 1) % 20 == 0:
            progress(f"{i + 1}/{len(grid)} rules replayed")
    return Replayed({n: score(saved[n], "bm25") for n in names},
                    {n: score(saved[n], "vector") for n in names},
                    {n: score(saved[n], "hybrid") for n in names}, table)


def leave_one_out(r: Replayed) -> list[Fold]:
    """For each set, the rule chosen on the others and its figures on that set."""
    names = list(r.bm25)
    folds = []
    for held in names:
        train = [n for n in names if n != held]
        rule = choose(r.table, r.bm25, train)
        met = objective((r.table[rule][s], r.bm25[s]) for s in train)[0]
        folds.append(Fold(held, rule, r.bm25[held], r.vector[held], r.table[rule][held],
                          r.default[held], met, len(train)))
    return folds


def report(folds: Sequence[Fold], saved: dict[str, dict[str, Any]],
           chosen_on_all: CjkRule) -> dict[str, Any]:
    """The leave-one-dataset-out table as JSON."""
    return {
        "bar": BAR, "rule": "w_bm25 = min(cap, gain * evidence^0.7 * (1 + lift * standout))",
        "default": dataclasses.asdict(fusion.CJK_RULE),
        "chosen_on_all_sets": dataclasses.asdict(chosen_on_all),
        "folds": [{
            "held_back": f.held_back, "questions": len(saved[f.held_back]["questions"]),
            "units": saved[f.held_back]["units"], "sample": saved[f.held_back]["sample"],
            "rule": dataclasses.asdict(f.rule),
            "train_sets_meeting_bar": f"{f.train_met}/{f.train_sets}",
            **{m: {"R@1": round(s.r1, 4), "MRR@10": round(s.mrr, 4)}
               for m, s in (("bm25", f.bm25), ("vector", f.vector), ("hybrid", f.hybrid),
                            ("default", f.default))},
            "hybrid_minus_bm25": round(f.margin, 4), "met": f.met,
        } for f in folds],
        "all_met": all(f.met for f in folds),
    }


def table(result: dict[str, Any]) -> str:
    """The report as a plain-text table."""
    lines = [f"{'held back':12}{'n':>6}  {'rule (gain/lift/cap)':22}{'BM25':>13}"
             f"{'vectors':>13}{'hybrid':>13}{'default':>13}{'Δ R@1':>9}  bar"]
    for f in result["folds"]:
        r = f["rule"]
        cells = "".join(f"{f[m]['R@1']:>7.3f}/{f[m]['MRR@10']:.3f}"
                        for m in ("bm25", "vector", "hybrid", "default"))
        lines.append(f"{f['held_back']:12}{f['questions']:>6}  "
                     f"{r['gain']:g}/{r['lift']:g}/{r['cap']:g}".ljust(42)[:42]
                     + f"{cells}{f['hybrid_minus_bm25']:>+8.4f}  "
                     + ("met" if f["met"] else f"MISSED by {-BAR - f['hybrid_minus_bm25']:.4f}"))
    c = result["chosen_on_all_sets"]
    lines.append(f"R@1/MRR@10 per set; the rule chosen on all sets: gain {c['gain']:g}, "
                 f"lift {c['lift']:g}, cap {c['cap']:g}; default: "
                 f"{'/'.join(f'{v:g}' for v in result['default'].values())}")
    return "\n".join(lines)


@dataclasses.dataclass(frozen=True)
class CjkSet:
    """One CJK set of `eval fusion`: a SQuAD-format or XQuAD-R file of the datasets folder."""

    name: str
    dataset: str
    path: str


CJK_SETS = (
    CjkSet("drcd-zh", "squad", "drcd-dev-zh.json"),
    CjkSet("korquad-ko", "squad", "korquad-dev-ko.json"),
    CjkSet("xquadr-zh", "xquadr", "xquadr-zh.json"),
)


def prepare_set(ws: Workspace, folder: Path, spec: CjkSet, paragraphs: int | None) -> Prepared:
    """A CJK set loaded as a course; SQuAD-format sets sampled by `sample_articles`."""
    path = folder / spec.path
    language, _ = dataset_language(spec.dataset, path, None)
    if spec.dataset == "xquadr":
        units = datasets.load_xquadr(path, language)
    else:
        units = sample_articles(datasets.load_squad(path, language), paragraphs)
    return prepare_units(ws, spec.name, units)
