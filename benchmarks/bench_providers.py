"""What bounded concurrency buys against a provider with per-request latency.

Question: cloud embedding calls are dominated by network and queueing latency,
not by our CPU. How much faster does a batch of texts get embedded with 2, 4 or
8 requests in flight than one at a time, and what does the client itself cost
(SDK, JSON/base64, validation) per request when the server answers at once?

Setup: the OpenAI wire-format server from the test suite
(``tests/embeddings/wire_servers.py``, on 127.0.0.1) driven through the real
``openai`` SDK; 512 texts of ~60 characters, 32 texts per request (16 requests),
16-dimensional vectors. The server holds each answer for ``--latency`` seconds
(default 0.1 s, a typical embedding round trip). Baseline: concurrency 1 in the
same run. Each figure is the median of ``--repeat`` runs.

Second question: does an ingest through the Store use those request slots? 1,024
chunks go through ``Store.put_source`` with the OpenAI defaults (``concurrency=4``;
the store hands the embedder its ``call_size`` per call), against a baseline in the
same run that embeds the way the store did before ``call_size``: one request of 64
texts at a time (``batch_size=64, concurrency=1``).

Run: ``.venv/bin/python -m benchmarks.bench_providers``. Writes
benchmarks/results/providers.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from remembrances import Chunk, Store
from remembrances.embeddings import RetryPolicy, create
from tests.embeddings.wire_servers import KEY, OpenAIServer

ROOT = Path(__file__).resolve().parent.parent

TEXTS = [f"note {i}: something an agent wanted to remember, number {i}" for i in range(512)]
BATCH = 32


def timed(server: OpenAIServer, concurrency: int, repeat: int) -> float:
    embedder = create(
        "openai:text-embedding-3-small@16",
        api_key=KEY,
        base_url=server.base_url,
        batch_size=BATCH,
        concurrency=concurrency,
        retry=RetryPolicy(attempts=1),
    )
    embedder.embed_documents(TEXTS[:BATCH])  # warm up: connection, SDK paths
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        embedder.embed_documents(TEXTS)
        runs.append(time.perf_counter() - start)
    return statistics.median(runs)


def ingest_timed(server: OpenAIServer, repeat: int, **options: Any) -> tuple[float, int]:
    """Median seconds to put 1,024 new chunks into a fresh store, and requests per run."""
    chunks = [Chunk(t) for t in TEXTS + [t + " (again)" for t in TEXTS]]
    runs, requests = [], 0
    for _ in range(repeat):
        embedder = create(
            "openai:text-embedding-3-small@16",
            api_key=KEY,
            base_url=server.base_url,
            retry=RetryPolicy(attempts=1),
            **options,
        )
        with (
            tempfile.TemporaryDirectory() as tmp,
            Store(Path(tmp) / "m.db", embedder=embedder) as store,
        ):
            before = len(server.embed_requests)
            start = time.perf_counter()
            store.put_source("kb", "notes", chunks)
            runs.append(time.perf_counter() - start)
            requests = len(server.embed_requests) - before
    return statistics.median(runs), requests


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    command = " ".join([".venv/bin/python -m benchmarks.bench_providers", *sys.argv[1:]])
    rows = []
    with OpenAIServer(16) as server:
        server.delay = 0.0
        overhead = timed(server, 1, args.repeat)
        server.delay = args.latency
        baseline = timed(server, 1, args.repeat)
        for concurrency in (1, 2, 4, 8):
            seconds = baseline if concurrency == 1 else timed(server, concurrency, args.repeat)
            rows.append((concurrency, seconds, baseline / seconds))
        old, old_requests = ingest_timed(server, args.repeat, batch_size=64, concurrency=1)
        new, new_requests = ingest_timed(server, args.repeat)
    requests = len(TEXTS) // BATCH
    lines = [
        "# Embedding providers: bounded concurrency",
        "",
        f"Command: `{command}` (run from the repository root).",
        "",
        f"{len(TEXTS)} texts, {BATCH} per request ({requests} requests), OpenAI wire format "
        f"through the real SDK against a local server holding each answer {args.latency:g} s; "
        f"median of {args.repeat} runs. Baseline: concurrency 1, same run.",
        "",
        "| concurrency | seconds | speed-up vs 1 |",
        "|---|---|---|",
        *[f"| {c} | {s:.3f} | {r:.2f}x |" for c, s, r in rows],
        "",
        f"Round trip with an instant server (concurrency 1): {overhead:.3f} s for {requests} "
        f"requests, {overhead / requests * 1000:.1f} ms per request of {BATCH} texts. This "
        "counts the client (SDK, JSON, base64 decoding, validation) and the Python test "
        "server, which runs in the same process, on a shared 2-core machine "
        f"(load average {os.getloadavg()[0]:.1f} at the end of the run).",
        "",
        "## Ingest through the Store",
        "",
        f"1,024 chunks through `Store.put_source` into a fresh file, server holding each "
        f"answer {args.latency:g} s, median of {args.repeat} runs:",
        "",
        "| embedding | seconds | requests | speed-up |",
        "|---|---|---|---|",
        f"| baseline: 64 texts per request, one at a time | {old:.3f} | {old_requests} | 1.00x |",
        f"| defaults: the store's call_size, 4 slots | {new:.3f} | {new_requests} | "
        f"{old / new:.2f}x |",
        "",
    ]
    out = ROOT / "benchmarks" / "results" / "providers.md"
    out.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
