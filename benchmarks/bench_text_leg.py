"""The text leg asking for rare words first in hybrid search, on CPython's ``Lib/``.

Question: in a large code memory, how much faster is hybrid code search when its
text leg first asks for the chunks holding the query's rare words
(``storage.search.COMMON_SHARE``; docs/search.md, "The text leg"), and do the
results stay the same?

Setup: the ``Lib/`` of the Python running this script indexed with the hashing
test embedder (``hash:384``, as bench_code does; ``--store`` reuses a file made
by an earlier run). Sixteen plain-language code questions run through
``code.search`` (hybrid, top 10), three rounds, each query once with the rule and
once without it (``COMMON_SHARE`` set to -1 so that no word counts as rare),
interleaved so that both see the same machine. The baseline is the same search
without the rule, in the same run.

Run: ``.venv/bin/python -m benchmarks.bench_text_leg [--store PATH]``
"""

from __future__ import annotations

import argparse
import statistics
import sysconfig
import tempfile
import time
from pathlib import Path

import remembrances
from benchmarks.harness import load_average
from remembrances.storage import search

QUERIES = [
    "self return value",
    "open a file and read lines",
    "encode unicode string to bytes",
    "parse command line arguments",
    "join path components",
    "compress data with zlib",
    "send an email with smtp",
    "read a csv file into rows",
    "get the current working directory",
    "wait for a subprocess to finish and return its exit code",
    "format a date as iso string",
    "check if a string is a valid identifier",
    "copy a directory tree recursively",
    "decode base64 data",
    "create a temporary file that is deleted on close",
    "split a url into its components",
]
ROUNDS = 3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--store", type=Path, help="index into (or reuse) this file")
    parser.add_argument("--root", default=sysconfig.get_paths()["stdlib"])
    parser.add_argument("--quick", action="store_true", help="accepted for `make bench`; no-op")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        path = args.store or Path(scratch) / "stdlib.db"
        service = remembrances.open(path, embedder="hash:384")
        try:
            started = time.perf_counter()
            report = service.code.index(args.root, project="stdlib")
            chunks = service.store.count(kind="code")
            print(
                f"{chunks:,} chunks ({report.files_indexed} files indexed now) in "
                f"{time.perf_counter() - started:.0f} s"
            )
            run(service)
        finally:
            service.close()


def run(service: remembrances.RemembrancesService) -> None:
    shares = {"rare words first": search.COMMON_SHARE, "every word": -1.0}
    times: dict[str, list[float]] = {name: [] for name in shares}
    tops: dict[str, dict[str, list[tuple[str, str]]]] = {name: {} for name in shares}
    service.code.search("warm up", project="stdlib")
    try:
        for _ in range(ROUNDS):
            for query in QUERIES:
                for name, share in shares.items():
                    search.COMMON_SHARE = share
                    started = time.perf_counter()
                    hits = service.code.search(query, project="stdlib", limit=10)
                    times[name].append(1000 * (time.perf_counter() - started))
                    tops[name][query] = [(h.path, h.qualified_name) for h in hits]
    finally:
        search.COMMON_SHARE = shares["rare words first"]
    rule, base = (tops[name] for name in shares)
    median = {name: statistics.median(t) for name, t in times.items()}
    p90 = {name: statistics.quantiles(t, n=10)[-1] for name, t in times.items()}
    print(f"\nload average {load_average()}; {len(QUERIES)} queries x {ROUNDS} rounds, top 10\n")
    print("| text leg | median ms | p90 ms |\n|---|---|---|")
    for name in shares:
        print(f"| {name} | {median[name]:.1f} | {p90[name]:.1f} |")
    ratio = median["rare words first"] / median["every word"]
    print(f"\nmedian, rare words first / every word: {ratio:.2f}x")
    same = sum(rule[q] == base[q] for q in QUERIES)
    first = sum(rule[q][:1] == base[q][:1] for q in QUERIES)
    overlap = statistics.mean(len(set(rule[q]) & set(base[q])) / 10 for q in QUERIES)
    print(
        f"same top-10 for {same}/{len(QUERIES)} queries, same first hit for "
        f"{first}/{len(QUERIES)}, mean top-10 overlap {overlap:.3f}"
    )


if __name__ == "__main__":
    main()
