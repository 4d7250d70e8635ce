"""Run the development suite: ``python -m benchmarks.devsuite [options]`` from the repo root.

The first run downloads the pinned sdists and embeds every corpus (tens of minutes on
a busy 2-core machine); later runs reuse the cache and only search again.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from .report import corpus_table, markdown
from .suite import SYSTEMS, Results, all_sets, run

RESULTS = Path(__file__).resolve().parent.parent / "results" / "devsuite.md"


def misses(results: Results, system: str = "rem-hybrid") -> str:
    """Questions where ``system`` ranks the answer lower than the best naive system."""
    out = []
    for (name, sys_name), detail in results.per_question.items():
        if sys_name != system:
            continue
        others = [results.per_question.get((name, s), []) for s in ("bm25", "embed", "rrf")]
        for i, (question, half, rank) in enumerate(detail):
            naive = [o[i][2] for o in others if o and o[i][2]]
            best = min(naive, default=0)
            if best and (rank == 0 or rank > best):
                out.append(f"{name} [{half}] {system} {rank or '-'} vs naive {best}: {question}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.devsuite", description=__doc__)
    parser.add_argument("--sets", nargs="*", help=f"default: all ({', '.join(all_sets())})")
    parser.add_argument("--split", choices=["fit", "test", "both"], default="both")
    parser.add_argument("--systems", nargs="*", choices=SYSTEMS, help="default: all")
    parser.add_argument(
        "--cache", help="default: $REMEMBRANCES_DEVSUITE_CACHE or ~/.cache/remembrances/devsuite"
    )
    parser.add_argument("--embedder", default="local", help="embedder spec (default: local)")
    parser.add_argument(
        "--rebuild",
        action="store_true",
        help="rebuild remembrances' stores (after an indexing change)",
    )
    parser.add_argument("--misses", action="store_true", help="list where rem-hybrid trails naive")
    parser.add_argument("--write", action="store_true", help="write benchmarks/results/devsuite.md")
    args = parser.parse_args(argv)

    start = time.perf_counter()
    results = run(
        args.sets,
        args.split,
        args.systems,
        cache=args.cache,
        embedder=args.embedder,
        rebuild=args.rebuild,
        log=lambda m: print(m, file=sys.stderr, flush=True),
    )
    elapsed = time.perf_counter() - start
    body = markdown(results) + "\n#### Corpora\n\n" + corpus_table(results) + "\n"
    if args.misses:
        body += (
            "\n#### Where rem-hybrid ranks the answer below the best naive system\n\n"
            "(`set [half] rem-hybrid rank vs best naive rank: question`; - = not in the top 10)\n\n"
            "```\n" + misses(results) + "\n```\n"
        )
    print(body)
    print(f"{elapsed:.0f} s", file=sys.stderr)
    if args.write:
        command = "python -m benchmarks.devsuite " + " ".join(
            argv if argv is not None else sys.argv[1:]
        )
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
        ).stdout.strip()
        RESULTS.write_text(
            "# Development suite: results\n\n"
            "What the sets are and how they are made: `benchmarks/devsuite/README.md`.\n\n"
            f"`{command.strip()}` at commit `{head}` "
            f"({datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {elapsed:.0f} s; "
            f"load average {os.getloadavg()[0]:.1f})\n\n" + body
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
