"""Vector search against the memory-bandwidth floor (issue 3).

Question: how close does ``Store.search(mode="vector")`` come to the time it takes
merely to read every float32 vector once, and how does it compare with plain
sqlite-vec (``engine="vec0"``) and a bare NumPy scan, all measured in this run?

Setup: a file of N random unit vectors (384 dims) with short texts, 100 per
source, written through ``Store.write_source`` with the vectors precomputed, many
sources per transaction (the vec0 table is filled by its triggers as it always
is; ``write_s`` includes it). Queries are random unit
vectors, looked up by an embedder that costs microseconds, so the timings are
the search itself: the read transaction, the index sync, the scan, top-k and the
result rows fetched from SQLite.

Figures (median over many queries; the machine is shared, so only ratios to the
baselines measured in the same run mean anything):
- floor: the fastest of three single-pass NumPy reductions over an array of
  the same byte size (float32 sum, int64-view sum, max);
- numpy: ``M @ q`` + argpartition on a bare matrix (no store);
- memory exact / approximate: ``store.search`` with ``exact=True`` / ``False``,
  with OpenBLAS at its default thread count and at 1 thread;
- vec0: ``store.search(engine="vec0")``;
- start-up: opening the store, and the first search (which loads the index);
- cold start, in fresh processes: opening the store and its first exact top-10
  search (which loads the index from vec0's packed blobs), against the time to
  read the same number of bytes once from the file in the page cache (``preadv``
  into a fresh buffer, also in a fresh process), timed interleaved; the cold
  results are checked identical to the same search run again warm;
- memory: bytes the index holds and resident-set growth when it loads, against
  the vectors' float32 size.
Approximate recall@10 against exact search is measured on real embeddings: the
default local embedder (MiniLM) over the SciFact abstracts, cached as .npy under
/tmp (built once with ``--embed-real``; skipped when absent); a 100k set tiled
from them with small perturbations gives its timing at scale (recall is reported
there too, but the real set is the honest one).

Run: ``.venv/bin/python -m benchmarks.bench_vector`` (10k and 100k; ``--quick``
for 10k only; ``--full`` adds 1M, without vec0 timings unless ``--vec0-1m``;
``--cold-only`` builds each size and measures the cold start alone).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.harness import (
    CACHE,
    DIM,
    FASTEST,
    FLOOR_KERNEL,
    PAIRED_FLOOR,
    Blas,
    SeededEmbedder,
    per_query_ms,
    repeated_ms,
    rss_bytes,
    run_module,
    unit_rows,
)
from remembrances import Store
from remembrances.storage import vec0_storage
from remembrances.store import Prepared, PreparedChunk, content_hash

WRITE_BATCH = 50_000
PER_SOURCE = 100
SCIFACT = Path("/work/shared/eval/scifact")


# -- data --------------------------------------------------------------------------


def build_store(
    path: Path,
    vectors: Iterator[np.ndarray],
    text_of: Callable[[int], str],
    embedder: SeededEmbedder,
    *,
    compact: bool = True,
) -> dict[str, float]:
    """Write the chunks through the store, 100 per source, one transaction per block;
    returns timings (s). Chunk ``i`` gets id ``i + 1``; its source decides its kind
    (70% "kb", 30% "events") and collection (one of four). ``compact=False`` drops
    the int8 copy first (a file as written before it existed)."""
    start = time.perf_counter()
    store = Store(path, embedder=embedder)
    if not compact:
        with store.db.write() as conn:
            for trigger in vec0_storage.COMPACT_TRIGGERS:
                conn.execute(f"DROP TRIGGER {trigger}")
            conn.execute(f"DROP TABLE {vec0_storage.COMPACT}")
    done = 0
    for block in vectors:
        with store.transaction():
            for first in range(0, len(block), PER_SOURCE):
                source = (done + first) // PER_SOURCE
                chunks = []
                for j, vec in enumerate(block[first : first + PER_SOURCE]):
                    text = text_of(done + first + j)
                    blob = vec.astype("<f4").tobytes()
                    ts = float(done + first + j)
                    chunks.append(PreparedChunk(text, "{}", None, content_hash(text), ts, blob))
                kind = "kb" if source % 10 < 7 else "events"
                store.write_source(kind, f"c{source % 4}", f"s{source}", Prepared(chunks))
        done += len(block)
    store.close()
    return {"write_s": time.perf_counter() - start}


def random_blocks(n: int, seed: int = 1) -> Iterator[np.ndarray]:
    rng = np.random.default_rng(seed)
    for start in range(0, n, WRITE_BATCH):
        yield unit_rows(rng, min(WRITE_BATCH, n - start))


def short_text(i: int) -> str:
    return f"chunk {i}"


# -- measuring ---------------------------------------------------------------------


def floor_ms(n: int, repeats: int) -> tuple[float, dict[str, float]]:
    """Time to read n x 384 float32 once: the fastest of three NumPy reductions."""
    array = np.ones((n, DIM), dtype=np.float32)  # written, so every page is resident
    as_int = array.reshape(-1).view(np.int64)
    kernels = {
        "sum(float32)": lambda: array.sum(),
        "sum(int64 view)": lambda: as_int.sum(),
        "max(float32)": lambda: array.max(),
    }
    FLOOR_KERNEL.clear()
    found = {name: repeated_ms(fn, repeats, f"floor {name}") for name, fn in kernels.items()}
    FASTEST["floor"] = min(FASTEST[f"floor {name}"] for name in kernels)
    FLOOR_KERNEL.append(kernels[min(found, key=found.__getitem__)])
    return min(found.values()), found


def recall(got: Sequence[int], expected: Sequence[int]) -> float:
    return len(set(got) & set(expected)) / max(len(expected), 1)


# -- the benchmark for one size ----------------------------------------------------


def cold_child(path: str, loader: str = "int8") -> None:
    """In a fresh process: open, the first exact search, the same search warm (JSON out).

    ``loader``: "int8" (the default path: the first search scans the compact int8
    copy and re-scores exactly, the index loads in a thread), "float32" (the compact
    copy ignored: the first search loads the index from vec0's float32 blobs, the
    path before the copy existed) or "rows" (the index loaded row by row from
    ``chunks``, the loader before vec0's blobs were read; still the last fallback).
    """
    from remembrances.storage import vec0_storage

    if loader != "int8":
        vec0_storage.compact_blocks = lambda *args, **kwargs: None  # type: ignore[assignment]
    if loader == "rows":
        vec0_storage.read = lambda *args, **kwargs: None  # type: ignore[assignment]
    started = time.perf_counter()
    store = Store(path, embedder=SeededEmbedder())
    opened = time.perf_counter()
    first = store.search("q0", mode="vector", limit=10)
    searched = time.perf_counter()
    index = store.vector_index()  # waits for the background load, if one runs
    ready = time.perf_counter()
    warm = store.search("q0", mode="vector", limit=10)
    warm_s = time.perf_counter() - ready
    print(
        json.dumps(
            {
                "open_ms": (opened - started) * 1e3,
                "first_ms": (searched - opened) * 1e3,
                "ready_ms": (ready - searched) * 1e3,
                "warm_ms": warm_s * 1e3,
                "identical": [(h.id, h.score) for h in first] == [(h.id, h.score) for h in warm],
                "path": "int8 copy" if store.engine.cold_searches else "index",  # type: ignore[attr-defined]
                "loaded_from": index.loaded_from,
            }
        )
    )
    store.close()


def floor_child(path: str, nbytes: int) -> None:
    """In a fresh process: read ``nbytes`` of the file once into a fresh buffer."""
    buffer = np.empty(nbytes, dtype=np.uint8)
    fd = os.open(path, os.O_RDONLY)
    started = time.perf_counter()
    done = 0
    while done < nbytes:
        got = os.preadv(fd, [memoryview(buffer)[done:]], done)
        if got <= 0:
            break
        done += got
    elapsed = time.perf_counter() - started
    os.close(fd)
    print(json.dumps({"floor_ms": elapsed * 1e3, "bytes": done}))


def cold_start(path: Path, n: int, repeats: int = 5) -> dict[str, Any]:
    """Fresh-process cold start against the fresh-process read floor, interleaved.

    The floor is the issue's: reading the float32 vectors' bytes (N x 384 x 4) once.
    The compact copy's own bytes (N x 392) are read once too, for reference."""
    nbytes = n * DIM * 4
    compact_bytes = n * (DIM + 8)

    def child(*args: str) -> dict[str, Any]:
        done = run_module("bench_vector", *args, check=True)
        return dict(json.loads(done.stdout.strip().splitlines()[-1]))

    child("--floor-child", str(path), str(nbytes))  # the file into the page cache
    child("--cold-child", str(path))
    runs: list[dict[str, Any]] = []
    float32: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    floors: list[float] = []
    compact_floors: list[float] = []
    for _ in range(repeats):
        floors.append(child("--floor-child", str(path), str(nbytes))["floor_ms"])
        runs.append(child("--cold-child", str(path)))
        compact_floors.append(child("--floor-child", str(path), str(compact_bytes))["floor_ms"])
        float32.append(child("--cold-child", str(path), "--cold-loader", "float32"))
        if n <= 100_000:  # 7.5 s a run at 1M, measured before (results/vector.md)
            rows.append(child("--cold-child", str(path), "--cold-loader", "rows"))
    med = statistics.median
    floor = med(floors)
    out = {
        "cold_floor_ms": floor,
        "cold_compact_floor_ms": med(compact_floors),
        "cold_open_ms": med(r["open_ms"] for r in runs),
        "cold_first_ms": med(r["first_ms"] for r in runs),
        "cold_first_max_ms": max(r["first_ms"] for r in runs),
        "cold_open_first_ms": med(r["open_ms"] + r["first_ms"] for r in runs),
        "cold_ready_ms": med(r["ready_ms"] for r in runs),
        "cold_warm_ms": med(r["warm_ms"] for r in runs),
        "cold_identical": all(r["identical"] for r in runs + float32 + rows),
        "cold_paths": sorted({r["path"] for r in runs}),
        "cold_loaded_from": sorted({r["loaded_from"] for r in runs}),
        "cold_ratio": med(r["first_ms"] for r in runs) / floor,
        "cold_open_first_ratio": med(r["open_ms"] + r["first_ms"] for r in runs) / floor,
        "cold_float32_first_ms": med(r["first_ms"] for r in float32),
        "cold_float32_warm_ms": med(r["warm_ms"] for r in float32),
        "cold_repeats": repeats,
    }
    if rows:
        out["cold_rows_first_ms"] = med(r["first_ms"] for r in rows)
    return out


def cold_report(sizes: list[dict[str, Any]]) -> str:
    lines = [
        "Cold start, fresh processes (median of the runs, interleaved with the floor): "
        "the floor reads the float32 vectors' byte count (N x 384 x 4) once from the file "
        "in the page cache; the int8 floor reads the compact copy's (N x 392).",
        "",
        "| N | read floor ms (int8 floor) | open ms | first exact top-10 ms (max) "
        "| first ÷ floor | open + first ÷ floor | index ready ms later | warm ms "
        "| cold = warm results | first search from | float32 loader: first ms (÷ floor) "
        "| row loader: first ms (÷ floor) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in sizes:
        if "cold_floor_ms" not in r:
            continue
        floor = r["cold_floor_ms"]
        rows = r.get("cold_rows_first_ms")
        lines.append(
            f"| {r['n']:,} | {floor:.1f} ({r['cold_compact_floor_ms']:.1f}) "
            f"| {r['cold_open_ms']:.1f} | {r['cold_first_ms']:.1f} ({r['cold_first_max_ms']:.1f}) "
            f"| **{r['cold_ratio']:.2f}×** | {r['cold_open_first_ratio']:.2f}× "
            f"| {r['cold_ready_ms']:.0f} | {r['cold_warm_ms']:.2f} "
            f"| {r['cold_identical']} | {', '.join(r['cold_paths'])} "
            f"| {r['cold_float32_first_ms']:.1f} ({r['cold_float32_first_ms'] / floor:.2f}×) "
            + (f"| {rows:.1f} ({rows / floor:.1f}×) |" if rows else "| not run |")
        )
    return "\n".join(lines)


def ingest_cost(workdir: Path, n: int) -> dict[str, Any]:
    """What the compact copy costs: writes/s and file size with and without it, built
    alternately (with, without, without, with) in this run, and the migration that
    gives a file without it its copy (the first writable open with its embedder)."""
    times: dict[str, list[float]] = {"with": [], "without": []}
    sizes: dict[str, int] = {}
    for label in ("with", "without", "without", "with"):
        path = workdir / f"ingest-{label}.db"
        for file in workdir.glob(f"ingest-{label}.db*"):
            file.unlink()
        times[label].append(
            build_store(
                path, random_blocks(n), short_text, SeededEmbedder(), compact=label == "with"
            )["write_s"]
        )
        sizes[label] = sum(f.stat().st_size for f in workdir.glob(f"ingest-{label}.db*"))
    started = time.perf_counter()
    Store(workdir / "ingest-without.db", embedder=SeededEmbedder()).close()
    migration_s = time.perf_counter() - started
    best = {label: min(t) for label, t in times.items()}
    return {
        "n": n,
        "writes_per_s_with": n / best["with"],
        "writes_per_s_without": n / best["without"],
        "write_ratio": best["with"] / best["without"],
        "bytes_with": sizes["with"],
        "bytes_without": sizes["without"],
        "size_ratio": sizes["with"] / sizes["without"],
        "migration_s": migration_s,
        "migrated_bytes": sum(f.stat().st_size for f in workdir.glob("ingest-without.db*")),
    }


def bench_size(
    n: int,
    workdir: Path,
    *,
    vec0: bool,
    blas: Blas,
    cold_only: bool = False,
    store_dir: Path | None = None,
) -> dict[str, Any]:
    out: dict[str, Any] = {"n": n}
    FASTEST.clear()
    PAIRED_FLOOR.clear()
    path = (store_dir or workdir) / f"vectors-{n}.db"
    queries = 60 if n <= 100_000 else 25
    # Query vectors looked up, not computed: the timings are the search alone.
    embedder = SeededEmbedder(
        table={f"q{q}": SeededEmbedder().embed_query(f"q{q}") for q in range(queries)}
    )
    if store_dir is None or not path.exists():
        out.update(build_store(path, random_blocks(n), short_text, embedder))
    else:  # built by an earlier run with --store-dir; opening it adds the int8 copy if missing
        Store(path, embedder=embedder).close()
        out["reused"] = str(path)
    out.update(cold_start(path, n))
    if cold_only:
        return out
    repeats = 60 if n <= 100_000 else 20

    out["floor_ms"], out["floor_kernels"] = floor_ms(n, repeats)

    matrix = np.concatenate(list(random_blocks(n)))
    qvecs = [embedder.embed_query(f"q{q}").astype(np.float32) for q in range(queries)]

    def numpy_top10(q: int) -> np.ndarray:
        scores = matrix @ qvecs[q]
        top = np.argpartition(scores, n - 10)[n - 10 :]
        return top[np.argsort(-scores[top])]

    start = time.perf_counter()
    store = Store(path, embedder=embedder)
    out["open_ms"] = (time.perf_counter() - start) * 1e3
    rss0 = rss_bytes()
    start = time.perf_counter()
    store.search("q0", mode="vector", limit=10)  # from the int8 copy; the index loads
    out["first_search_ms"] = (time.perf_counter() - start) * 1e3
    index = store.vector_index()  # waits for the load
    out["rss_growth_bytes"] = rss_bytes() - rss0
    out["vector_bytes"] = n * DIM * 4
    out["index_bytes_exact"] = index.nbytes

    def search(q: int, **kw: Any) -> list[Any]:
        return store.search(f"q{q}", mode="vector", limit=10, **kw)

    # Exact equals brute force on every query (a benchmark of wrong answers is worthless).
    for q in range(queries):
        got = search(q)
        expected = numpy_top10(q)
        assert [r.id for r in got] == [int(i) + 1 for i in expected] or np.allclose(
            [r.score for r in got], np.clip(matrix[expected] @ qvecs[q], 0, 1), atol=1e-6
        )

    for threads in sorted({blas.default, 1}, reverse=True):
        blas.set(threads)
        out[f"numpy_ms_blas{threads}"] = per_query_ms(
            numpy_top10, queries, key=f"numpy_ms_blas{threads}"
        )
    blas.set(blas.default)
    out["blas_default_threads"] = blas.default
    out["scan_threads_default"] = index.threads
    for threads in sorted({index.threads, 1}, reverse=True):
        index.threads = threads
        out[f"exact_ms_threads{threads}"] = per_query_ms(
            search, queries, key=f"exact_ms_threads{threads}"
        )
    index.threads = out["scan_threads_default"]

    exact_top = [[r.id for r in search(q)] for q in range(queries)]
    search(0, exact=False)  # builds the sign bits
    out["index_bytes_approx"] = index.nbytes
    out["approx_ms"] = per_query_ms(lambda q: search(q, exact=False), queries, key="approx_ms")
    out["approx_recall_random"] = statistics.mean(
        recall([r.id for r in search(q, exact=False)], exact_top[q]) for q in range(queries)
    )
    out["filtered_kind_ms"] = per_query_ms(
        lambda q: search(q, kind="events"), queries, key="filtered_kind_ms"
    )
    # source / metadata filters go through SQL for the ids (a table scan without an index)
    out["filtered_source_ms"] = per_query_ms(
        lambda q: search(q, source=[f"s{j}" for j in range(0, n // 100, 10)]),
        queries if n <= 100_000 else 5,
    )
    if vec0:
        vec0_queries = 20 if n <= 100_000 else 5
        out["vec0_ms"] = per_query_ms(
            lambda q: search(q, engine="vec0"), vec0_queries, key="vec0_ms"
        )
    store.close()
    out["fastest"] = dict(FASTEST)
    out["paired_floor"] = dict(PAIRED_FLOOR)
    FLOOR_KERNEL.clear()
    out["file_bytes"] = sum(
        os.path.getsize(f"{path}{suffix}")
        for suffix in ("", "-wal")
        if os.path.exists(f"{path}{suffix}")
    )
    return out


# -- approximate mode on real embeddings -------------------------------------------


def scifact_vectors(embed: bool) -> tuple[np.ndarray, np.ndarray] | None:
    """MiniLM vectors of the SciFact abstracts and queries, embedded once and cached.

    Embedding the 5,183 abstracts takes 10-40 minutes on 2 cores, so it only
    happens with ``--embed-real``; without the cache the real part is skipped.
    """
    docs_file = CACHE / "scifact-local-docs.npy"
    queries_file = CACHE / "scifact-local-queries.npy"
    if not docs_file.exists() or not queries_file.exists():
        if not embed:
            print(
                f"no cached SciFact vectors in {CACHE}: real-embedding part skipped "
                "(run once with --embed-real to build the cache)",
                flush=True,
            )
            return None
        if not (SCIFACT / "corpus.jsonl").exists():
            return None
        from remembrances.embeddings.local import LocalEmbedder

        print("embedding SciFact once with the local embedder (cached in /tmp)...", flush=True)
        embedder = LocalEmbedder()
        CACHE.mkdir(parents=True, exist_ok=True)
        with open(SCIFACT / "queries.jsonl") as f:
            queries = [json.loads(line)["text"] for line in f]
        np.save(queries_file, np.stack([embedder.embed_query(q) for q in queries]))
        with open(SCIFACT / "corpus.jsonl") as f:
            docs = [json.loads(line) for line in f]
        texts = [(d.get("title", "") + "\n" + d.get("text", "")).strip() for d in docs]
        np.save(docs_file, np.asarray(embedder.embed_documents(texts), dtype=np.float32))
    return np.load(docs_file).astype(np.float32), np.load(queries_file).astype(np.float32)


def bench_real(workdir: Path, tiled_n: int, embed: bool) -> dict[str, Any] | None:
    loaded = scifact_vectors(embed)
    if loaded is None:
        return None
    docs, queries = loaded
    out: dict[str, Any] = {"docs": len(docs), "queries": len(queries)}
    FASTEST.clear()
    table = {f"q{i}": v for i, v in enumerate(queries)}
    rng = np.random.default_rng(3)

    def measure(name: str, vectors: np.ndarray, timing_queries: int) -> None:
        path = workdir / f"real-{name}.db"
        embedder = SeededEmbedder(table=table)

        def blocks() -> Iterator[np.ndarray]:
            for start in range(0, len(vectors), WRITE_BATCH):
                yield vectors[start : start + WRITE_BATCH]

        build_store(path, blocks(), short_text, embedder)
        store = Store(path, embedder=embedder)
        try:

            def ids(q: int, exact: bool) -> list[int]:
                return [r.id for r in store.search(f"q{q}", mode="vector", limit=10, exact=exact)]

            out[f"{name}_recall"] = statistics.mean(
                recall(ids(q, False), ids(q, True)) for q in range(len(queries))
            )
            out[f"{name}_exact_ms"] = per_query_ms(
                lambda q: ids(q, True), timing_queries, key=f"{name}_exact_ms"
            )
            out[f"{name}_approx_ms"] = per_query_ms(
                lambda q: ids(q, False), timing_queries, key=f"{name}_approx_ms"
            )
        finally:
            store.close()

    measure("scifact", docs, len(queries))
    copies = -(-tiled_n // len(docs))
    tiled = np.concatenate(
        [docs]
        + [
            docs + 0.02 * rng.standard_normal(docs.shape, dtype=np.float32)
            for _ in range(copies - 1)
        ]
    )[:tiled_n]
    tiled /= np.linalg.norm(tiled, axis=1, keepdims=True)
    out["tiled_n"] = len(tiled)
    out["tiled_floor_ms"], _ = floor_ms(len(tiled), 60)
    PAIRED_FLOOR.clear()
    measure("tiled", tiled, 200)
    out["fastest"] = dict(FASTEST)
    out["paired_floor"] = dict(PAIRED_FLOOR)
    FLOOR_KERNEL.clear()
    return out


# -- report ------------------------------------------------------------------------


def _pair(r: dict[str, Any], key: str, floor: float, floor_min: float) -> str:
    """``median (ratio to the floor's median) / fastest (ratio to the floor's fastest)``,
    then the ratio to the floor timed interleaved with this figure, when it was."""
    fast = r["fastest"][key]
    text = f"{r[key]:.2f} ({r[key] / floor:.2f}×) / {fast:.2f} ({fast / floor_min:.2f}×)"
    paired = r.get("paired_floor", {}).get(key)
    if paired:
        text += f"; **{r[key] / paired:.2f}×** paired"
    return text


def report(sizes: list[dict[str, Any]], real: dict[str, Any] | None) -> str:
    lines = [
        "Each cell: median ms (ratio to the floor's median) / fastest ms (ratio to the "
        "floor's fastest); paired: median ÷ the median of the floor kernel timed just "
        "before each call (the same load for both; the fairest ratio on a shared machine).",
        "",
        "| N | floor | NumPy BLAS gemv, 1 thread | NumPy BLAS gemv, default threads "
        "| store exact, 1 scan thread | store exact, default scan threads "
        "| store approximate | vec0 | vec0 ÷ store exact (medians / fastest) "
        "| approx recall@10, random vectors |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in sizes:
        floor, floor_min = r["floor_ms"], r["fastest"]["floor"]
        d = r["scan_threads_default"]
        exact = f"exact_ms_threads{d}"
        cells = [
            f"{floor:.2f} / {floor_min:.2f}",
            _pair(r, "numpy_ms_blas1", floor, floor_min),
            _pair(r, f"numpy_ms_blas{r['blas_default_threads']}", floor, floor_min),
            _pair(r, "exact_ms_threads1", floor, floor_min),
            _pair(r, exact, floor, floor_min) + f" [{d} threads]",
            _pair(r, "approx_ms", floor, floor_min),
        ]
        if "vec0_ms" in r:
            cells.append(_pair(r, "vec0_ms", floor, floor_min))
            cells.append(
                f"{r['vec0_ms'] / min(r[exact], r['exact_ms_threads1']):.1f}× / "
                f"{r['fastest']['vec0_ms'] / min(r['fastest'][exact], r['fastest']['exact_ms_threads1']):.1f}×"
            )
        else:
            cells += ["not run", "-"]
        cells.append(f"{r['approx_recall_random']:.2f}")
        lines.append(f"| {r['n']:,} | " + " | ".join(cells) + " |")
    text = "\n".join(lines)
    if real:
        floor, floor_min = real["tiled_floor_ms"], real["fastest"]["floor"]
        text += (
            f"\n\nReal MiniLM embeddings (SciFact, {real['docs']:,} abstracts, "
            f"{real['queries']:,} queries): approximate recall@10 vs exact "
            f"**{real['scifact_recall']:.3f}**. Tiled to {real['tiled_n']:,} vectors "
            f"(perturbed copies of the real ones): recall@10 {real['tiled_recall']:.3f}; "
            f"approximate {_pair(real, 'tiled_approx_ms', floor, floor_min)}; "
            f"exact {_pair(real, 'tiled_exact_ms', floor, floor_min)}; "
            f"floor {floor:.2f} / {floor_min:.2f} ms."
        )
    for r in sizes:
        text += "\n\n" + json.dumps(r, default=float)
    if real:
        text += "\n\nreal embeddings: " + json.dumps(real, default=float)
    return text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="10k only")
    parser.add_argument("--full", action="store_true", help="add 1M (slow to build)")
    parser.add_argument("--vec0-1m", action="store_true", help="also fill and time vec0 at 1M")
    parser.add_argument("--no-real", action="store_true", help="skip the real-embedding part")
    parser.add_argument(
        "--embed-real", action="store_true", help="embed SciFact if not cached (slow, once)"
    )
    parser.add_argument("--sizes", type=int, nargs="*", help="explicit sizes")
    parser.add_argument("--cold-only", action="store_true", help="build, then cold start only")
    parser.add_argument("--cold-child", help=argparse.SUPPRESS)
    parser.add_argument("--cold-loader", default="int8", help=argparse.SUPPRESS)
    parser.add_argument(
        "--store-dir",
        type=Path,
        help="keep the built stores here (outside the repository) and reuse them next time",
    )
    parser.add_argument(
        "--ingest-cost", type=int, metavar="N", help="only: writes/s and file size of the int8 copy"
    )
    parser.add_argument("--floor-child", nargs=2, help=argparse.SUPPRESS)
    args, _ = parser.parse_known_args()
    if args.cold_child:
        cold_child(args.cold_child, args.cold_loader)
        return 0
    if args.ingest_cost:
        with tempfile.TemporaryDirectory(prefix="bench-vector-") as tmp:
            print(json.dumps(ingest_cost(Path(tmp), args.ingest_cost)), flush=True)
        return 0
    if args.floor_child:
        floor_child(args.floor_child[0], int(args.floor_child[1]))
        return 0
    sizes = args.sizes or ([10_000] if args.quick else [10_000, 100_000])
    if args.full and not args.sizes:
        sizes.append(1_000_000)
    blas = Blas()
    print(
        f"numpy {np.__version__}, OpenBLAS threads by default: {blas.default}, "
        f"cores: {os.cpu_count()}, load average: {os.getloadavg()}",
        flush=True,
    )
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-vector-") as tmp:
        workdir = Path(tmp)
        for n in sizes:
            result = bench_size(
                n,
                workdir,
                vec0=n <= 100_000 or args.vec0_1m,
                blas=blas,
                cold_only=args.cold_only,
                store_dir=args.store_dir,
            )
            print(json.dumps(result, default=float), flush=True)
            results.append(result)
            for file in workdir.glob("*.db*"):
                file.unlink()
        real = None
        if not args.no_real and not args.cold_only:
            real = bench_real(workdir, 10_000 if args.quick else 100_000, args.embed_real)
            print("real embeddings:", json.dumps(real, default=float), flush=True)
    print()
    if not args.cold_only:
        print(report(results, real))
        print()
    print(cold_report(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
