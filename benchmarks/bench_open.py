"""What the check that a file is a memory (not another program's) adds to opening one.

Question: ``Store(path)`` looks at the file before its first write so that a
foreign or empty file is refused untouched. Does that make opening an existing
memory slower?

Method, public API only: the check is :func:`remembrances.storage.sqlite_connection.kind_of` on
the connection being opened. Its cost is measured as a fresh apsw connection to
the file loading its schema (as every open does: the store reads its tables next)
and then ``kind_of``, minus the same connection loading only its schema; the baseline is
``Store(path)`` + ``close()`` (which includes the check), all three interleaved
round by round so they see the same noise. "With ÷ without" is the open + close
time divided by the same time less the check's cost.

Setup: a small memory in a temporary directory, the hashing test embedder.

Run: ``.venv/bin/python -m benchmarks.bench_open`` (``--rounds N``, default 300).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import apsw

from remembrances import Store
from remembrances.embeddings import HashEmbedder
from remembrances.storage.sqlite_connection import kind_of


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--rounds", type=int, default=300)
    args, _ = parser.parse_known_args()  # make bench passes its flags to every benchmark
    with tempfile.TemporaryDirectory(prefix="bench-open-") as folder:
        path = Path(folder) / "memory.db"
        Store(path, embedder=HashEmbedder(64)).close()

        def store() -> None:
            Store(path, embedder=HashEmbedder(64)).close()

        def connection(check: bool) -> Callable[[], None]:
            def run() -> None:
                conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
                # Any open reads the header and the schema (the store's own tables
                # next); the check's share is what it does beyond that.
                conn.execute("SELECT 1 FROM meta WHERE 0").fetchall()
                if check:
                    kind_of(conn)
                conn.close()

            return run

        calls = {
            "Store open + close": store,
            "connection with the check": connection(True),
            "connection without it": connection(False),
        }
        times: dict[str, list[float]] = {name: [] for name in calls}
        for _ in range(20):  # warm-up: imports, page cache
            store()
        for _ in range(args.rounds):
            for name, call in calls.items():
                started = time.perf_counter()
                call()
                times[name].append(time.perf_counter() - started)
    medians = {name: statistics.median(values) for name, values in times.items()}
    for name, value in medians.items():
        print(f"{name}: median {value * 1000:.3f} ms over {args.rounds} rounds")
    check = medians["connection with the check"] - medians["connection without it"]
    opened = medians["Store open + close"]
    print(f"the check: {check * 1000:.3f} ms ({check / opened:.1%} of open + close)")
    print(f"ratio (open + close with the check ÷ without it): {opened / (opened - check):.2f}")


if __name__ == "__main__":
    main()
