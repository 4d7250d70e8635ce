"""The Store at 10k and 100k chunks x 384 dims: writes, and vector/text/hybrid search.

Question: how fast does the Store write chunks, and what does a top-10 search cost
in each mode, against plain sqlite-vec (``engine="vec0"``) and a bare NumPy scan
measured in the same run?

Setup: chunks of 30 words drawn from a Zipf-distributed vocabulary whose most
frequent ranks are the English stop words and the rest made-up words (so FTS5
sees common and rare terms as in prose, and the query builder drops the stop
words as it would in English), each with a random unit vector
(vectors are precomputed: the write rate is the Store's, not an embedder's).
Writes go through ``Store.write_source`` (1000 chunks per source, 10 sources per
transaction), with every trigger live: FTS5, vec0 and the vector log. Queries
are 3-5 words from the same vocabulary, at least two of them not stop words; their vectors are looked up, so search
timings exclude embedding.

Figures (median over the queries; the machine is shared, so compare ratios):
- write rate in chunks/s;
- vector top-10: in-memory exact (default), approximate, vec0, NumPy ``M @ q``
  (OpenBLAS at 1 thread; also at its default thread count);
- text top-10 (FTS5 BM25) and hybrid top-10 (both legs + RRF), with the ratio
  hybrid / vector that issue 3 bounds at 3x.

Run: ``.venv/bin/python -m benchmarks.bench_store`` (``--quick`` for 10k only).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.harness import DIM, FASTEST, Blas, SeededEmbedder, per_query_ms, unit_rows
from remembrances import Store
from remembrances.fts_query import STOP_WORDS
from remembrances.store import Prepared, PreparedChunk, content_hash

PER_SOURCE = 1000
SOURCES_PER_TXN = 10
VOCABULARY = 30_000
QUERIES = 40


def vocabulary(rng: np.random.Generator) -> list[str]:
    """Words by frequency rank: the stop words first (as in English), then made-up words."""
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    stop = sorted(STOP_WORDS)
    words: set[str] = set()
    while len(words) < VOCABULARY - len(stop):
        word = "".join(rng.choice(letters, rng.integers(3, 10)))
        if word not in STOP_WORDS:
            words.add(word)
    return stop + sorted(words)


def zipf_words(rng: np.random.Generator, words: list[str], count: int) -> list[str]:
    """Words with probability ~ 1 / rank^1.07 (English-like; no clipped tail)."""
    weights = np.arange(1, len(words) + 1, dtype=np.float64) ** -1.07
    ranks = rng.choice(len(words), size=count, p=weights / weights.sum())
    return [words[r] for r in ranks]


Transactions = list[list[tuple[str, Prepared]]]


def in_transactions(chunks: Sequence[PreparedChunk]) -> Transactions:
    """``chunks`` as sources of ``PER_SOURCE`` (``doc<first index>``), ``SOURCES_PER_TXN``
    sources a transaction."""
    sources = [
        (f"doc{s}", Prepared(list(chunks[s : s + PER_SOURCE])))
        for s in range(0, len(chunks), PER_SOURCE)
    ]
    return [sources[t : t + SOURCES_PER_TXN] for t in range(0, len(sources), SOURCES_PER_TXN)]


def corpus(
    n: int, *, seed: int = 5, shards: bool = False
) -> tuple[Transactions, list[str], np.ndarray]:
    """``n`` prepared chunks in transactions of sources, the query texts, and every vector.

    ``shards``: each chunk's metadata names one of 100 shards (for filtered searches).
    """
    rng = np.random.default_rng(seed)
    words = vocabulary(rng)
    queries: list[str] = []
    while len(queries) < QUERIES:  # questions name things: at least two content words
        query = zipf_words(rng, words, int(rng.integers(3, 6)))
        if sum(w not in STOP_WORDS for w in query) >= 2:
            queries.append(" ".join(query))
    matrix = np.zeros((n, DIM), dtype=np.float32)
    chunks = []
    for s in range(0, n, PER_SOURCE):
        count = min(PER_SOURCE, n - s)
        vectors = unit_rows(rng, count)
        matrix[s : s + count] = vectors
        for i, v in enumerate(vectors):
            text = " ".join(zipf_words(rng, words, 30))
            meta = json.dumps({"shard": (s + i) % 100}) if shards else "{}"
            chunks.append(PreparedChunk(text, meta, None, content_hash(text), None, v.tobytes()))
    transactions = in_transactions(chunks)
    return transactions, queries, matrix


def ingest(store: Store, transactions: Transactions) -> float:
    """Seconds spent writing ``transactions`` (one store transaction each)."""
    elapsed = 0.0
    for batches in transactions:
        start = time.perf_counter()
        with store.transaction():
            for source, prepared in batches:
                store.write_source("kb", "default", source, prepared)
        elapsed += time.perf_counter() - start
    return elapsed


def bench_size(n: int, workdir: Path) -> dict[str, Any]:
    transactions, query_texts, matrix = corpus(n)
    seeded = SeededEmbedder()
    embedder = SeededEmbedder(table={t: seeded.embed_query(t) for t in query_texts})
    out: dict[str, Any] = {"n": n}
    store = Store(workdir / f"store-{n}.db", embedder=embedder)
    write_s = ingest(store, transactions)
    out["write_chunks_per_s"] = n / write_s

    start = time.perf_counter()
    store.search(query_texts[0], mode="vector")
    out["first_vector_search_ms"] = (time.perf_counter() - start) * 1e3
    qvecs = [embedder.embed_query(t).astype(np.float32) for t in query_texts]

    def numpy_top10(q: int) -> np.ndarray:
        scores = matrix @ qvecs[q]
        top = np.argpartition(scores, n - 10)[n - 10 :]
        return top[np.argsort(-scores[top])]

    def run(mode: str, **kw: Any) -> Any:
        return lambda q: store.search(query_texts[q], mode=mode, limit=10, **kw)

    blas = Blas()
    blas.set(1)
    out["numpy_ms"] = per_query_ms(numpy_top10, QUERIES, key="numpy_ms")
    blas.set(blas.default)
    out[f"numpy_ms_blas{blas.default}"] = per_query_ms(
        numpy_top10, QUERIES, key=f"numpy_ms_blas{blas.default}"
    )
    out["vector_ms"] = per_query_ms(run("vector"), QUERIES, key="vector_ms")
    out["vector_approx_ms"] = per_query_ms(
        run("vector", exact=False), QUERIES, key="vector_approx_ms"
    )
    out["vector_vec0_ms"] = per_query_ms(
        run("vector", engine="vec0"), min(QUERIES, 20), key="vector_vec0_ms"
    )
    out["text_ms"] = per_query_ms(run("text"), QUERIES, key="text_ms")
    out["hybrid_ms"] = per_query_ms(run("hybrid"), QUERIES, key="hybrid_ms")
    out["hybrid_vec0_ms"] = per_query_ms(
        run("hybrid", engine="vec0"), min(QUERIES, 20), key="hybrid_vec0_ms"
    )
    out["fastest"] = dict(FASTEST)
    FASTEST.clear()
    out["file_bytes"] = store.stats()["file_bytes"]
    store.close()
    return out


def _cell(r: dict[str, Any], key: str, base: str | None = None) -> str:
    f = r["fastest"]
    text = f"{r[key]:.2f} / {f[key]:.2f}"
    if base:
        text += f" ({r[key] / r[base]:.2f}× / {f[key] / f[base]:.2f}×)"
    return text


def report(results: list[dict[str, Any]]) -> str:
    lines = [
        "Each cell: median ms / fastest ms; ratios in brackets are median / fastest.",
        "",
        "| N | write chunks/s | NumPy (1 BLAS thread) | vector (÷ NumPy) | vector approximate "
        "| vec0 vector (÷ memory vector) | text | hybrid (÷ vector) | hybrid on vec0 |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        cell = partial(_cell, r)

        lines.append(
            f"| {r['n']:,} | {r['write_chunks_per_s']:,.0f} | {cell('numpy_ms')} "
            f"| {cell('vector_ms', 'numpy_ms')} | {cell('vector_approx_ms')} "
            f"| {cell('vector_vec0_ms', 'vector_ms')} | {cell('text_ms')} "
            f"| {cell('hybrid_ms', 'vector_ms')} | {cell('hybrid_vec0_ms')} |"
        )
    return "\n".join(lines) + "".join("\n\n" + json.dumps(r, default=float) for r in results)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="10k only")
    parser.add_argument("--sizes", type=int, nargs="*", help="explicit sizes")
    args, _ = parser.parse_known_args()
    sizes = args.sizes or ([10_000] if args.quick else [10_000, 100_000])
    print(f"cores: {os.cpu_count()}, load average: {os.getloadavg()}", flush=True)
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-store-") as tmp:
        for n in sizes:
            result = bench_size(n, Path(tmp))
            print(json.dumps(result, default=float), flush=True)
            results.append(result)
    print()
    print(report(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
