"""The answer check re-run on saved drafts: how its settings move faithfulness, offline.

`coursetutor eval answers --suite coursepack --json` keeps, for every answer, the text streamed
before the check (`draft`) and the passages the model was shown (`context_ids`). This script
reads those records back, rebuilds each answer's sources from the same data directory, runs the
answer check on every draft again under each variant of its settings, and scores the result the
way `eval answers` does (faithfulness, unsupported terms, quote-first replies, removed claims).
The model judge is called through the configured backend, its verdicts cached per claim, so
the variants are compared on the same verdicts.

    python bench/check_tune.py RESULT.json --data-dir DIR [--no-judge]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
from pathlib import Path
from typing import Any

from coursetutor.config import load_settings
from coursetutor.eval.faithfulness import AnswerScorer
from coursetutor.llm.router import Router
from coursetutor.tutor import check as check_module
from coursetutor.tutor.check import AnswerChecker, CheckInput, Judge, model_judge
from coursetutor.tutor.context import Source
from coursetutor.tutor.markers import cited_numbers
from coursetutor.tutor.replies import reply
from coursetutor.types import Hit, SearchFilters
from coursetutor.workspace import Workspace

VARIANTS: dict[str, dict[str, float]] = {
    "as set": {},
    "numbers may come from several passages": {"SPLIT_NUMBERS": False},
    "keep 0.90": {"SIMILARITY_KEEP": 0.90},
    "keep 0.92": {"SIMILARITY_KEEP": 0.92},
    "keep 0.92, overlap 0.65": {"SIMILARITY_KEEP": 0.92, "OVERLAP_KEEP": 0.65},
    "keep 0.92, across 0.86": {"SIMILARITY_KEEP": 0.92, "SIMILARITY_ACROSS": 0.86},
    "across 0.83": {"SIMILARITY_ACROSS": 0.83},
    "across 0.86": {"SIMILARITY_ACROSS": 0.86},
    "keep 0.90, across 0.83": {"SIMILARITY_KEEP": 0.90, "SIMILARITY_ACROSS": 0.83},
}


def load_records(path: Path) -> list[dict[str, Any]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    part = data.get("coursepack", data)
    return [r for r in part["records"] if r.get("draft") and r["outcome"] != "declined"]


def sources_of(ws: Workspace, record: dict[str, Any]) -> list[Source]:
    course = f"eval-pack-{record['course']}"
    ids = record["context_ids"]
    chunks = ws.store.get_chunks(SearchFilters("eval", course), ids)
    return [Source(n, Hit(chunks[i], 1.0, {}, {}, chunks[i].locator), chunks[i].text, 0)
            for n, i in enumerate(ids, start=1) if i in chunks]


def cached(judge: Judge | None, memo: dict[tuple[str, str], bool | None]) -> Judge | None:
    if judge is None:
        return None

    def ask(claim: str, evidence: str) -> bool | None:
        if (claim, evidence) not in memo:
            memo[claim, evidence] = judge(claim, evidence)
        return memo[claim, evidence]

    return ask


def score(scorer: AnswerScorer, record: dict[str, Any], text: str,
          sources: list[Source]) -> tuple[float | None, int]:
    cited = [sources[n - 1].hit.chunk.text for n in dict.fromkeys(cited_numbers(text))
             if 0 < n <= len(sources)]
    checks = scorer.check_claims(text, cited or [s.hit.chunk.text for s in sources],
                                 record["question"], record["language"])
    if not checks:
        return None, 0
    return sum(c.supported for c in checks) / len(checks), sum(len(c.missing) for c in checks)


def run(args: argparse.Namespace) -> dict[str, Any]:
    settings = load_settings(data_dir=Path(args.data_dir))
    ws = Workspace(settings)
    ws.tenant = "eval"
    records = load_records(Path(args.result))
    router = None if args.no_judge else Router(settings)
    memo: dict[tuple[str, str], bool | None] = {}
    scorer = AnswerScorer(ws.embedder)
    defaults = {k: getattr(check_module, k) for v in VARIANTS.values() for k in v}
    out: dict[str, Any] = {}
    for name, values in VARIANTS.items():
        for key, value in {**defaults, **values}.items():
            setattr(check_module, key, value)
        faith: list[float] = []
        terms = answers_with_terms = quote_first = removed = 0
        for record in records:
            sources = sources_of(ws, record)
            judge = cached(model_judge(router, []) if router else None, memo)
            checker = AnswerChecker(ws.embedder, judge, settings.answer_check_max_judged,
                                    reply("quote_first", record["language"]))
            result = checker.check(CheckInput(record["draft"], record["question"], sources,
                                              record["language"]))
            f, missing = score(scorer, record, result.text, sources)
            if f is not None:
                faith.append(f)
            terms += missing
            answers_with_terms += bool(missing)
            quote_first += result.quote_first
            removed += len(result.removed)
        out[name] = {"answers": len(records), "faithfulness": round(statistics.mean(faith), 4),
                     "unsupported_terms": terms, "answers_with_unsupported_terms":
                     answers_with_terms, "quote_first": quote_first, "removed": removed}
        print(f"{name}: {out[name]}", file=sys.stderr)
    for key, value in defaults.items():
        setattr(check_module, key, value)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("result", help="the JSON that eval answers --json printed")
    parser.add_argument("--data-dir", required=True, help="the data directory of that run")
    parser.add_argument("--no-judge", action="store_true", help="scores only, no model judge")
    result = run(parser.parse_args())
    print(json.dumps({"variants": result, **dataclasses.asdict(_Meta())}, indent=2))


@dataclasses.dataclass(frozen=True)
class _Meta:
    note: str = "same drafts, same cached judge verdicts, one check setting per variant"


if __name__ == "__main__":
    main()
