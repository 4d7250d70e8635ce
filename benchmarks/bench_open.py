"""What the check that a file is a memory (not another program's) adds to opening one.

Question: ``Store(path)`` looks at the file before its first write so that a
foreign or empty file is refused untouched. Does that make opening an existing
memory slower? Baseline: the same open and close with the check switched off,
measured in the same run, interleaved round by round so both see the same noise.

Setup: a small memory in a temporary directory, the hashing test embedder.

Run: ``.venv/bin/python benchmarks/bench_open.py`` (``--rounds N``, default 300).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from remembrances import store as store_module
from remembrances.embeddings import HashEmbedder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-open-") as folder:
        path = Path(folder) / "memory.db"
        store_module.Store(path, embedder=HashEmbedder(64)).close()
        check = store_module._admit
        off: Callable[..., Any] = lambda *_args, **_kwargs: None  # noqa: E731
        times: dict[str, list[float]] = {"with the check": [], "without it": []}
        for _ in range(20):  # warm-up: imports, page cache
            store_module.Store(path, embedder=HashEmbedder(64)).close()
        for _ in range(args.rounds):
            for name, admit in (("with the check", check), ("without it", off)):
                store_module._admit = admit  # type: ignore[assignment]
                started = time.perf_counter()
                store_module.Store(path, embedder=HashEmbedder(64)).close()
                times[name].append(time.perf_counter() - started)
        store_module._admit = check  # type: ignore[assignment]
    medians = {name: statistics.median(values) for name, values in times.items()}
    for name, value in medians.items():
        print(f"open + close, {name}: median {value * 1000:.2f} ms over {args.rounds} rounds")
    print(f"ratio (with ÷ without): {medians['with the check'] / medians['without it']:.2f}")


if __name__ == "__main__":
    main()
