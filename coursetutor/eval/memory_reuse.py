"""`coursetutor eval memory --reuse`: reuse of past answers measured on XQuAD-R.

The English questions are the course's answered questions. The same question in German or
Chinese (the same id in `xquadr-de.json` / `xquadr-zh.json`) is a true paraphrase: the share
reused is reported. Two different questions about the same paragraph are hard negatives, in
each language against the English one: reusing one for the other is a false reuse (target at
most 0.5%). Pairs whose answers overlap, or whose English texts are the same question word
for word (XQuAD has such twins), are not negatives and are left out (counted in the report).

The thresholds are chosen on 70% of the articles (a stable hash of the title) as the lowest
cosine, in steps of 0.005, whose false reuse stays within the target on every language pair
of its kind (one script: en-en, de-en; two scripts: zh-en); the figures are then reported on
the other 30% and on all. A course-sized run follows, as the tutor looks up (the nearest
`reuse_candidates` entries, the first the gate passes), with the thresholds configured.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ..config import Settings
from ..errors import InputError
from ..retrieval.embed import EmbeddingModel
from ..tutor.reuse import refusal
from ..tutor.reuse_key import Meaning, meaning, question_key

LANGUAGES = ("en", "de", "zh")
TARGET = 0.005  # false reuse at most
# the thresholds are chosen within half the target on the tuning articles: about 3,900 pairs
# per language leave a binomial error of about 0.1% at 0.5%, and the held-out articles must
# stay within the target itself
CHOOSE_WITHIN = TARGET / 2
GRID = tuple(round(0.80 + 0.005 * i, 3) for i in range(40))
Progress = Callable[[str, int, int], None]


@dataclasses.dataclass(frozen=True)
class XQuestion:
    """One XQuAD-R question: its paragraph, article and answer span."""

    id: str
    paragraph: str
    article: str
    text: str
    answer: tuple[int, int]


def load(folder: Path, limit: int | None = None) -> dict[str, list[XQuestion]]:
    """The questions of each language, aligned by id (English order; the first `limit`
    English questions and the rest of their last paragraph)."""
    by_language: dict[str, dict[str, XQuestion]] = {}
    for language in LANGUAGES:
        path = folder / f"xquadr-{language}.json"
        if not path.is_file():
            raise InputError(f"{path}: no such file (the XQuAD-R files are needed for --reuse)")
        data = json.loads(path.read_text(encoding="utf-8"))
        found: dict[str, XQuestion] = {}
        for a, art in enumerate(data["data"]):
            for p, par in enumerate(art["paragraphs"]):
                for qa in par["qas"]:
                    start = int(qa["answers"][0]["answer_start"])
                    end = start + len(qa["answers"][0]["text"])
                    found[qa["id"]] = XQuestion(qa["id"], f"a{a}-p{p}", str(art.get(
                        "title", a)), qa["question"].strip(), (start, end))
        by_language[language] = found
    english = list(by_language["en"].values())
    if limit:
        last = english[min(limit, len(english)) - 1].paragraph
        english = english[:limit] + [q for q in english[limit:] if q.paragraph == last]
    ids = [q.id for q in english if all(q.id in by_language[lang] for lang in LANGUAGES)]
    return {lang: [by_language[lang][i] for i in ids] for lang in LANGUAGES}


def held_out(article: str) -> bool:
    """30% of the articles, by a stable hash of the title."""
    return int(hashlib.sha1(article.encode("utf-8")).hexdigest(), 16) % 10 < 3


@dataclasses.dataclass
class Side:
    """One language's questions: texts, meanings and key embeddings."""

    questions: list[XQuestion]
    meanings: list[Meaning]
    vectors: npt.NDArray[np.float32]


def embed_side(embedder: EmbeddingModel, language: str, questions: list[XQuestion],
               progress: Progress | None = None, batch: int = 32) -> Side:
    """Meanings and key embeddings, the tutor's own (question_key, embed_query's encoding)."""
    parts = []
    keys = [question_key(q.text) for q in questions]
    for start in range(0, len(keys), batch):
        parts.append(embedder.embed_batch(keys[start:start + batch], is_query=True))
        if progress:
            progress(f"embed {language}", min(start + batch, len(keys)), len(keys))
    return Side(questions, [meaning(q.text, language) for q in questions], np.vstack(parts))


def _overlap(a: XQuestion, b: XQuestion) -> bool:
    return a.answer[0] < b.answer[1] and b.answer[0] < a.answer[1]


def negative_pairs(english: Side) -> tuple[list[tuple[int, int]], dict[str, int]]:
    """(asked, stored) index pairs of different questions on one paragraph, and how many
    pairs were left out as the same question."""
    keys = [question_key(q.text) for q in english.questions]
    by_paragraph: dict[str, list[int]] = {}
    for i, q in enumerate(english.questions):
        by_paragraph.setdefault(q.paragraph, []).append(i)
    pairs, same_answer, twins = [], 0, 0
    for members in by_paragraph.values():
        for i in members:
            for j in members:
                if i == j:
                    continue
                if _overlap(english.questions[i], english.questions[j]):
                    same_answer += 1
                elif keys[i] == keys[j]:
                    twins += 1
                else:
                    pairs.append((i, j))
    return pairs, {"same_answer": same_answer, "same_text": twins}


@dataclasses.dataclass(frozen=True)
class Scored:
    """A pair's cosine and whether the meaning gate passes it, for the threshold sweep."""

    score: float
    gate: str  # "" when the gate passes it
    held_out: bool


def score_pairs(asked: Side, stored: Side, pairs: list[tuple[int, int]]) -> list[Scored]:
    return [Scored(float(asked.vectors[i] @ stored.vectors[j]),
                   _gate(asked.meanings[i], stored.meanings[j]),
                   held_out(stored.questions[j].article)) for i, j in pairs]


def _gate(a: Meaning, b: Meaning) -> str:
    """The gate alone (no threshold)."""
    return refusal(Settings(reuse_threshold=1e-9, reuse_threshold_cross_script=1e-9), a, b, 1.0)


def rate(pairs: list[Scored], threshold: float, gate: bool = True,
         part: bool | None = None) -> float:
    """The share of pairs reused at `threshold` (in one part of the split, or all)."""
    chosen = [p for p in pairs if part is None or p.held_out == part]
    if not chosen:
        return 0.0
    return sum(p.score > threshold and (not gate or not p.gate) for p in chosen) / len(chosen)


def choose(negatives: list[list[Scored]], within: float = CHOOSE_WITHIN) -> float:
    """The lowest threshold of the grid whose false reuse on the tuning articles stays
    within `within` for every one of `negatives`."""
    for threshold in GRID:
        if all(rate(n, threshold, part=False) <= within for n in negatives):
            return threshold
    return GRID[-1]


def gate_reasons(pairs: list[Scored]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for p in pairs:
        counts[p.gate or "passes"] = counts.get(p.gate or "passes", 0) + 1
    return dict(sorted(counts.items()))


def sweep(sides: dict[str, Side]) -> dict[str, Any]:
    """Pairs, thresholds chosen on the tuning articles, figures on the held-out ones."""
    english = sides["en"]
    pairs, left_out = negative_pairs(english)
    negatives = {f"{lang}-en": score_pairs(sides[lang], english, pairs) for lang in LANGUAGES}
    same = range(len(english.questions))
    positives = {f"{lang}-en": score_pairs(sides[lang], english, [(i, i) for i in same])
                 for lang in ("de", "zh")}
    one_script = choose([negatives["en-en"], negatives["de-en"]])
    two_scripts = choose([negatives["zh-en"]])
    chosen = {"en-en": one_script, "de-en": one_script, "zh-en": two_scripts}

    def figures(part: bool | None) -> dict[str, Any]:
        return {
            "false_reuse": {k: round(rate(v, chosen[k], part=part), 4)
                            for k, v in negatives.items()},
            "reused": {k: round(rate(v, chosen[k], part=part), 4) for k, v in positives.items()},
        }

    return {
        "pairs": {"negatives_per_language": len(pairs), "positives_per_language": len(same),
                  "left_out": left_out},
        "chosen": {"threshold": one_script, "threshold_cross_script": two_scripts,
                   "rule": f"lowest of {GRID[0]}..{GRID[-1]} (step 0.005) with false reuse "
                           f"<= {CHOOSE_WITHIN:.2%} on every language pair of its kind, tuning "
                           "articles"},
        "held_out": figures(True), "all": figures(None),
        "start_0.85_without_gate": {
            "false_reuse": {k: round(rate(v, 0.85, gate=False), 4) for k, v in negatives.items()},
            "reused": {k: round(rate(v, 0.85, gate=False), 4) for k, v in positives.items()}},
        "start_0.85_with_gate": {
            "false_reuse": {k: round(rate(v, 0.85), 4) for k, v in negatives.items()},
            "reused": {k: round(rate(v, 0.85), 4) for k, v in positives.items()}},
        "curve": {f"{t:.2f}": {**{f"false {k}": round(rate(v, t), 4)
                                   for k, v in negatives.items()},
                                **{f"reused {k}": round(rate(v, t), 4)
                                   for k, v in positives.items()}}
                  for t in GRID if abs(t * 100 - round(t * 100)) < 1e-6},
        "gate_on_positives": {k: gate_reasons(v) for k, v in positives.items()},
        "gate_on_negatives": {k: gate_reasons(v) for k, v in negatives.items()},
    }


def course_run(settings: Settings, sides: dict[str, Side]) -> dict[str, Any]:
    """As the tutor looks up, with the configured thresholds: every English question is
    stored; each question asked takes the first of its `reuse_candidates` nearest entries
    the threshold and gate pass (an English question never finds itself)."""
    english = sides["en"]
    keys = [question_key(q.text) for q in english.questions]
    out: dict[str, Any] = {"entries": len(english.questions),
                           "threshold": settings.reuse_threshold,
                           "threshold_cross_script": settings.reuse_threshold_cross_script}
    for lang in LANGUAGES:
        asked = sides[lang]
        scores = asked.vectors @ english.vectors.T
        right = wrong = 0
        for i in range(len(asked.questions)):
            if lang == "en":
                scores[i, i] = -1.0  # the entry of the question itself
            taken = _take(settings, asked.meanings[i], english, scores[i])
            if taken is None:
                continue
            t, q = english.questions[taken], english.questions[i]
            same = taken == i or keys[taken] == keys[i] or (
                t.paragraph == q.paragraph and _overlap(t, q))
            right, wrong = right + same, wrong + (not same)
        n = len(asked.questions)
        out[lang] = {"asked": n, "reused_right": round(right / n, 4),
                     "reused_wrong": round(wrong / n, 4)}
    return out


def _take(settings: Settings, asked: Meaning, english: Side,
          scores: npt.NDArray[np.float32]) -> int | None:
    for j in np.argsort(-scores, kind="stable")[:settings.reuse_candidates]:
        if not refusal(settings, asked, english.meanings[int(j)], float(scores[j])):
            return int(j)
    return None
