"""What the benchmarks share: timing, the machine's state, seeded data, scratch space.

Benchmarks run as modules from the repository's root (``python -m
benchmarks.bench_store``, as ``make bench`` does), so they import the installed
``remembrances`` package, this module and the test fixtures they reuse without
touching ``sys.path``. They reach the memory through its public API only: no SQL
into its tables, no private attributes, so a benchmark measures what a user gets.
"""

from __future__ import annotations

import ctypes
import glob
import hashlib
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

T = TypeVar("T")

REPO = Path(__file__).resolve().parent.parent
#: Files kept between runs (built stores, embedded vectors): rebuilding them costs minutes.
CACHE = Path(tempfile.gettempdir()) / "remembrances-bench"
DIM = 384


# -- timing ------------------------------------------------------------------------


def timed(fn: Callable[[], T]) -> tuple[float, T]:
    """Seconds one call took, and what it returned."""
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def samples(fn: Callable[[], Any], repeat: int) -> list[float]:
    """Seconds of each of ``repeat`` calls."""
    return [timed(fn)[0] for _ in range(repeat)]


def best_of(runs: int, fn: Callable[[], Any]) -> float:
    """The fastest of ``runs`` calls, in seconds: the cost without another process's noise."""
    return min(samples(fn, runs))


def median_ms(values: Sequence[float]) -> float:
    return statistics.median(values) * 1000


def p95_ms(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))] * 1000


#: The fastest run of each keyed figure, next to its median. On a shared machine a
#: run longer than a scheduler slice is often preempted; the minimum shows the cost
#: without that, the median what a caller saw.
FASTEST: dict[str, float] = {}
#: When set, each keyed call is paired with one run of this floor kernel just
#: before it, so that the floor and the figure see the same load (PAIRED_FLOOR[key]).
FLOOR_KERNEL: list[Callable[[], Any]] = []
PAIRED_FLOOR: dict[str, float] = {}


def per_query_ms(fn: Callable[[int], Any], queries: int, key: str = "") -> float:
    """Median ms of ``fn(q)`` for each query number; ``key`` records the fastest too."""
    times, floors = [], []
    for q in range(queries):
        if FLOOR_KERNEL and key:
            start = time.perf_counter()
            FLOOR_KERNEL[0]()
            floors.append(time.perf_counter() - start)
        start = time.perf_counter()
        fn(q)
        times.append(time.perf_counter() - start)
    if key:
        FASTEST[key] = min(times) * 1e3
        if floors:
            PAIRED_FLOOR[key] = statistics.median(floors) * 1e3
    return statistics.median(times) * 1e3


def repeated_ms(fn: Callable[[], Any], repeats: int, key: str = "") -> float:
    """Median ms of ``repeats`` calls of ``fn`` (see :func:`per_query_ms`)."""
    return per_query_ms(lambda _: fn(), repeats, key)


# -- the machine -------------------------------------------------------------------


def cpu_seconds() -> float:
    """CPU time of this process and its finished children (parse workers, say)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def load_average() -> str:
    """The 1, 5 and 15 minute load averages, printed beside figures from a shared machine."""
    return ", ".join(f"{x:.1f}" for x in os.getloadavg())


def rss_bytes() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


class Blas:
    """OpenBLAS's thread count, set through its C API (numpy bundles scipy-openblas)."""

    def __init__(self) -> None:
        self.lib: Any = None
        libs = glob.glob(str(Path(np.__file__).parent.parent / "numpy.libs" / "libscipy_openblas*"))
        if libs:
            self.lib = ctypes.CDLL(libs[0])
        self.default = self.get()

    def get(self) -> int:
        return int(self.lib.scipy_openblas_get_num_threads64_()) if self.lib else 0

    def set(self, threads: int) -> None:
        if self.lib:
            self.lib.scipy_openblas_set_num_threads64_(threads)


def run_module(module: str, *args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """``python -m benchmarks.<module> args`` in a fresh process, from the repository root."""
    return subprocess.run(
        [sys.executable, "-m", f"benchmarks.{module}", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        **kwargs,
    )


# -- seeded data -------------------------------------------------------------------


def unit_rows(rng: np.random.Generator, count: int, dim: int = DIM) -> np.ndarray:
    rows = rng.standard_normal((count, dim), dtype=np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return rows


class SeededEmbedder:
    """Any text -> a fixed random unit vector (seeded by the text): microseconds per query."""

    def __init__(self, dim: int = DIM, table: dict[str, np.ndarray] | None = None) -> None:
        self.name = f"bench-seeded:{dim}"
        self.dim = dim
        self.table = table or {}

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self.embed_query(t) for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        known = self.table.get(text)
        if known is not None:
            return known
        rng = np.random.default_rng(zlib.crc32(text.encode()))
        vec = rng.standard_normal(self.dim)
        return vec / np.linalg.norm(vec)


def read_and_hash(paths: Iterable[str | os.PathLike[str]]) -> tuple[float, int, int]:
    """Seconds to read and SHA-256 every file (the floor under any incremental ingest),
    how many files, and their bytes."""
    start = time.perf_counter()
    files = total = 0
    for path in paths:
        with open(path, "rb") as handle:
            data = handle.read()
        hashlib.sha256(data).hexdigest()
        files += 1
        total += len(data)
    return time.perf_counter() - start, files, total
