"""The embedding cache on disk: what it costs per chunk, forgetting deleted text, compacting.

Question: how much of a memory file is the embedding cache, how long does forgetting
the cached vectors of deleted text take (``forget_embeddings``, which ``forget_user``
and ``events.delete`` call), and what does ``compact`` cost?

Setup: N chunks of 30 made-up words, 384-dim seeded vectors (microseconds a text),
written with ``put_source`` 1,000 to a source, so that the cache is filled as by a real
ingest. Then 2,000 chunks (two sources) are deleted.

Figures, each against a baseline measured in the same run:
- file bytes per chunk, and the share of the file the cache's table and index take
  (SQLite's ``dbstat``);
- forgetting the deleted texts' vectors ÷ deleting their chunks;
- ``compact()`` ÷ copying the file once (``shutil.copyfile``: the disk's floor for
  a rewrite), and the file's size after ÷ before.

Run: ``.venv/bin/python -m benchmarks.bench_cache`` (``--sizes 20000 100000``;
``--quick`` for 20k only).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import apsw
import numpy as np

from benchmarks.harness import DIM, SeededEmbedder, load_average
from remembrances import Chunk, Store

PER_SOURCE = 1000
DELETED_SOURCES = 2


def words(rng: np.random.Generator, count: int) -> list[str]:
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    return ["".join(rng.choice(letters, rng.integers(3, 10))) for _ in range(count)]


def cache_share(path: Path) -> float:
    conn = apsw.Connection(str(path))
    try:
        total, cache = conn.execute(
            "SELECT sum(pgsize), sum(CASE WHEN name LIKE '%embedding_cache%' THEN pgsize END) "
            "FROM dbstat"
        ).fetchone()
    finally:
        conn.close()
    return float(cache or 0) / float(total)


def bench_size(n: int, workdir: Path) -> dict[str, Any]:
    rng = np.random.default_rng(n)
    vocabulary = words(rng, 5000)
    path = workdir / f"cache-{n}.db"
    out: dict[str, Any] = {"n": n}
    with Store(path, embedder=SeededEmbedder(DIM)) as store:
        for s in range(0, n, PER_SOURCE):
            texts = [" ".join(rng.choice(vocabulary, 30)) for _ in range(PER_SOURCE)]
            store.put_source("kb", f"doc{s // PER_SOURCE}", [Chunk(t) for t in texts])
    out["bytes_per_chunk"] = path.stat().st_size / n
    out["cache_share"] = cache_share(path)

    with Store(path, embedder=SeededEmbedder(DIM)) as store:
        doomed = [f"doc{i}" for i in range(DELETED_SOURCES)]
        hashes = [c.content_hash for s in doomed for c in store.get_source("kb", s)]
        start = time.perf_counter()
        for source in doomed:
            store.delete_source("kb", source)
        deleting = time.perf_counter() - start
        start = time.perf_counter()
        forgotten = store.forget_embeddings(hashes)
        forgetting = time.perf_counter() - start
        out.update(forgotten=forgotten, delete_s=deleting, forget_s=forgetting)
        out["forget_over_delete"] = forgetting / deleting

        compact = getattr(store, "compact", None)
        if compact is not None:  # (versions before it had none)
            store.put_source("kb", "gone", [Chunk(f"gone {i}") for i in range(PER_SOURCE)])
            store.delete_source("kb", "gone")
            before = store.engine.size_bytes()
            copy = workdir / "copy.db"
            start = time.perf_counter()
            shutil.copyfile(path, copy)
            copying = time.perf_counter() - start
            copy.unlink()
            start = time.perf_counter()
            report = compact()
            compacting = time.perf_counter() - start
            out.update(compact_s=compacting, copy_s=copying, dropped=report.vectors_dropped)
            out["compact_over_copy"] = compacting / copying
            out["size_after_over_before"] = report.bytes_after / before
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[20_000, 100_000])
    parser.add_argument("--quick", action="store_true", help="20k chunks only")
    args = parser.parse_args(argv)
    sizes = [20_000] if args.quick else args.sizes
    print(f"load average {load_average()}")
    with tempfile.TemporaryDirectory(prefix="bench-cache-") as tmp:
        for n in sizes:
            r = bench_size(n, Path(tmp))
            print(
                f"N={n:,}: {r['bytes_per_chunk']:,.0f} bytes/chunk, cache {r['cache_share']:.0%} "
                f"of the file; forgetting {r['forgotten']:,} vectors {r['forget_s'] * 1000:.1f} ms "
                f"= {r['forget_over_delete']:.2f}x deleting their chunks "
                f"({r['delete_s'] * 1000:.1f} ms)",
                flush=True,
            )
            if "compact_s" in r:
                print(
                    f"  compact {r['compact_s']:.2f} s = {r['compact_over_copy']:.1f}x copying "
                    f"the file ({r['copy_s']:.2f} s); dropped {r['dropped']:,}; size after "
                    f"{r['size_after_over_before']:.2f}x before",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
