"""Retrieval quality of the SQLite and PostgreSQL stores side by side on the development sets.

    python bench/store_quality.py [--data-dir DIR] [--pg-url URL | --pg-folder DIR]
                                  [--sets xquadr-en,...] [--json OUT]

Runs `coursetutor eval retrieval --json` for every set on the embedded SQLite store (which
embeds the units once into DIR), copies that store into an empty PostgreSQL database with
`coursetutor copy` (no re-embedding), runs the same evaluations on PostgreSQL and prints
R@1 / R@5 / MRR@10 per mode with the difference (PostgreSQL minus SQLite). Without --pg-url a
throwaway server is started with `coursetutor.dev.servers` in --pg-folder.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

from _common import SHARED, log

D = SHARED / "datasets"
SETS: dict[str, list[str]] = {
    "xquadr-en": ["--dataset", "xquadr", "--path", str(D / "xquadr-en.json")],
    "xquadr-de": ["--dataset", "xquadr", "--path", str(D / "xquadr-de.json")],
    "xquadr-zh": ["--dataset", "xquadr", "--path", str(D / "xquadr-zh.json")],
    "xquadr-zh-en": ["--dataset", "xquadr", "--path", str(D / "xquadr-en.json"),
                     "--query-lang", str(D / "xquadr-zh.json")],
    "squad-it": ["--dataset", "squad", "--path", str(D / "squadit-dev.json")],
    "clapnq": ["--dataset", "clapnq", "--path", str(D / "clapnq-ans.jsonl")],
    "tvqa-dev": ["--dataset", "tvqa", "--path", str(D / "tvqa-dev.json"),
                 "--videos", str(D / "tvqa-videos.json")],
}
MODES = ("bm25", "vector", "hybrid")
METRICS = ("R@1", "R@5", "MRR@10")


def _cli(args: list[str], env: dict[str, str]) -> str:
    done = subprocess.run([sys.executable, "-m", "coursetutor", *args], env=env,
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"coursetutor {' '.join(args[:3])} failed: {done.stderr.strip()}")
    return done.stdout


def _evaluate(name: str, env: dict[str, str]) -> dict[str, Any]:
    out = json.loads(_cli(["eval", "retrieval", *SETS[name], "--json"], env))
    return {mode: {m: out[mode][m] for m in METRICS} for mode in MODES}


def _fresh_database(server_url: str) -> str:
    import psycopg

    name = f"quality_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return server_url.rsplit("/", 1)[0] + "/" + name


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data-dir", type=Path, default=Path("/tmp/coursetutor-store-quality"))
    p.add_argument("--pg-url", default="", help="a PostgreSQL server URL (a database is made)")
    p.add_argument("--pg-folder", type=Path, default=Path("/tmp/coursetutor-store-quality-pg"))
    p.add_argument("--sets", default=",".join(SETS))
    p.add_argument("--json", type=Path, default=None)
    p.add_argument("--sqlite-from", type=Path, default=None,
                   help="the SQLite figures of an earlier run's --json (its --data-dir kept)")
    args = p.parse_args()
    if not D.exists():
        raise SystemExit(f"no datasets at {D}")
    names = [s for s in args.sets.split(",") if s]
    base = {k: v for k, v in os.environ.items() if not k.startswith("COURSETUTOR_")}
    base["COURSETUTOR_DATA_DIR"] = str(args.data_dir)
    results: dict[str, dict[str, Any]] = {}
    earlier = json.loads(args.sqlite_from.read_text()) if args.sqlite_from else {}
    for name in names:
        if name in earlier:
            results[name] = {"sqlite": earlier[name]["sqlite"]}
            continue
        log(f"sqlite: {name}")
        results[name] = {"sqlite": _evaluate(name, base)}
    started = None
    if not args.pg_url:
        from coursetutor.dev.servers import start_postgres

        started = args.pg_folder
        args.pg_url = start_postgres(started)
    try:
        pg = _fresh_database(args.pg_url)
        log("copying the evaluation store into PostgreSQL")
        log(_cli(["copy", "--from", f"sqlite:///{args.data_dir / 'coursetutor.db'}",
                  "--to", pg], base).strip())
        for name in names:
            log(f"postgresql: {name}")
            results[name]["postgresql"] = _evaluate(name, base | {"COURSETUTOR_STORE": pg})
    finally:
        if started is not None:
            from coursetutor.dev.servers import stop_postgres

            stop_postgres(started)
    print("| set | mode | SQLite R@1 / R@5 / MRR@10 | PostgreSQL R@1 / R@5 / MRR@10 | ΔR@1 |")
    print("|---|---|---|---|---|")
    for name in names:
        for mode in MODES:
            s, g = results[name]["sqlite"][mode], results[name]["postgresql"][mode]
            print(f"| {name} | {mode} | " + " / ".join(f"{s[m]:.3f}" for m in METRICS)
                  + " | " + " / ".join(f"{g[m]:.3f}" for m in METRICS)
                  + f" | {g['R@1'] - s['R@1']:+.3f} |")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
