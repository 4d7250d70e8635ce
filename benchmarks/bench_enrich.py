"""enrich_context latency at 100k chunks with the heuristic planner.

Question: how much does ``enrich_context`` add to a model turn beyond the model
calls themselves (the query embeddings)? Target: under 30 ms.

Setup: one file with 100k chunks of 384-dim vectors (60% KB, 25% events, 15%
code), built fast: text from a Zipf-distributed vocabulary, vectors from the
hashing embedder (``hash:384``, cached per word so building takes seconds), KB
and code chunks written straight through ``Store.put_source`` in big batches,
events through ``EventLog.log_many``; plus the test corpus (real documents,
events and an indexed code project) through the layers.

Measured, median of repeated calls over a set of prompts:
- baseline: one hybrid ``Store.search`` over the KB kind (the cost of a single search);
- planning: ``HeuristicPlanner.plan``;
- enrich overhead: ``enrich_context`` with the hashing embedder, whose query
  embedding costs microseconds, so this is planning + three parallel searches +
  filtering + formatting: everything except model calls;
- embedding: the default local embedder (MiniLM int8) embedding the planned
  queries, sequentially and in parallel threads; and as the enricher's threads ask
  for them, through a store's query cache (``storage.search.QueryVectors``, emptied
  before each ask): the three sources' queries are often the same words.

Run: ``.venv/bin/python -m benchmarks.bench_enrich`` (``--quick`` for 10k chunks).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import numpy as np

import remembrances
from benchmarks.harness import median_ms, p95_ms, samples
from remembrances.embeddings import HashEmbedder
from remembrances.embeddings.base import to_blob
from remembrances.enrichment import (
    ContextEnricher,
    EnricherConfig,
    EnrichmentPlan,
    HeuristicPlanner,
)
from remembrances.records import Chunk
from remembrances.storage.search import QueryVectors
from tests.enrichment.corpus import NOW, populate

DIM = 384
BATCH = 5000
PROMPTS = [
    "how should we handle HTTP 429 rate limits from the payment API?",
    "can you explain fetch_with_retry and RetryPolicy.delay?",
    "how do I roll back a database migration?",
    "what did we decide about the orders table migration yesterday?",
    "why is order_total wrong for discounted orders in shop/orders.py?",
    "please summarise the deploy incidents from the last 3 days",
    "how many vacation days do I get?",
    "what is the capital of Australia?",
]
TECH_WORDS = [
    "retry",
    "backoff",
    "migration",
    "database",
    "deploy",
    "payment",
    "order",
    "total",
    "discount",
    "cart",
    "rate",
    "limit",
    "schema",
    "rollback",
    "transaction",
    "service",
    "latency",
    "incident",
    "vacation",
    "engineer",
    "onboarding",
    "cache",
    "index",
    "search",
    "query",
    "vector",
    "token",
    "error",
    "timeout",
    "request",
    "response",
    "client",
    "server",
]


class CachedHashEmbedder:
    """``hash:384`` vectors summed from a per-word cache: the same vectors, built much faster.

    A hashing vector is 0.01 in its first bucket plus one term per word, so a
    text's vector is the sum of its words' (each from ``HashEmbedder.embed_query``
    once) without the repeated 0.01.
    """

    def __init__(self, dim: int) -> None:
        self._hash = HashEmbedder(dim)
        self.name = self._hash.name
        self.dim = dim
        self._words: dict[str, np.ndarray] = {}

    def embed_query(self, text: str) -> np.ndarray:
        vec = np.zeros(self.dim, dtype=np.float32)
        vec[0] = 0.01
        for word in text.lower().split():
            word = "".join(ch for ch in word if ch.isalnum() or ch == "_")
            if not word:
                continue
            cached = self._words.get(word)
            if cached is None:
                cached = np.array(self._hash.embed_query(word), dtype=np.float32)
                cached[0] -= 0.01
                self._words[word] = cached
            vec += cached
        return vec

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self.embed_query(t) for t in texts])


def vocabulary(rng: np.random.Generator, size: int = 8000) -> list[str]:
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    words = {"".join(rng.choice(letters, rng.integers(3, 10))) for _ in range(size)}
    # Query words sit at middling frequency (Zipf ranks 300+), as real topic words do;
    # at the top of the ranking they would match nearly every chunk.
    ordered = sorted(words)
    return ordered[:300] + TECH_WORDS + ordered[300:]


def sentences(rng: np.random.Generator, vocab: list[str], count: int) -> list[str]:
    ranks = np.minimum(rng.zipf(1.3, size=(count, 60)) - 1, len(vocab) - 1)
    lengths = rng.integers(25, 60, size=count)
    return [
        " ".join(vocab[i] for i in row[:n]) + "." for row, n in zip(ranks, lengths, strict=True)
    ]


def vectors(embedder: CachedHashEmbedder, texts: list[str]) -> list[bytes]:
    matrix = embedder.embed_documents(texts)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    return [to_blob(v) for v in matrix]


def build(
    path: Path, total: int, rng: np.random.Generator
) -> tuple[remembrances.RemembrancesService, float]:
    started = time.perf_counter()
    embedder = CachedHashEmbedder(DIM)
    svc = remembrances.open(path, embedder=embedder)
    populate(svc, path.parent / "code")
    vocab = vocabulary(rng)
    store = svc.store
    kb_count, event_count = int(total * 0.60), int(total * 0.25)
    code_count = total - kb_count - event_count
    for kind, collection, count in (("kb", "default", kb_count), ("code", "filler", code_count)):
        for start in range(0, count, BATCH):
            n = min(BATCH, count - start)
            texts = sentences(rng, vocab, n)
            chunks = [
                Chunk(
                    text,
                    metadata={"heading_path": f"Section {i % 7}"}
                    if kind == "kb"
                    else {
                        "language": "python",
                        "kind": "function",
                        "name": f"f{start + i}",
                        "qualified_name": f"mod{(start + i) // 50}.f{start + i}",
                        "start_line": 1 + i % 400,
                        "end_line": 20 + i % 400,
                    },
                )
                for i, text in enumerate(texts)
            ]
            prepared = store.prepare(chunks, embed=False)
            blobs = vectors(embedder, texts)
            prepared = replace(
                prepared,
                chunks=[
                    replace(c, embedding=b) for c, b in zip(prepared.chunks, blobs, strict=True)
                ],
            )
            store.write_source(kind, collection, f"filler/{kind}-{start}", prepared)
    base = NOW - timedelta(days=60)
    for start in range(0, event_count, BATCH):
        n = min(BATCH, event_count - start)
        texts = sentences(rng, vocab, n)
        svc.events.log_many(
            {
                "subject": f"subject-{(start + i) % 40}",
                "content": text,
                "at": base + timedelta(minutes=int(rng.integers(0, 60 * 24 * 60))),
            }
            for i, text in enumerate(texts)
        )
    return svc, time.perf_counter() - started


def layer_searches(svc: remembrances.RemembrancesService, plan: EnrichmentPlan) -> None:
    """What the enricher asks of the layers, called directly (the baseline)."""
    if plan.kb_query:
        svc.kb.search(plan.kb_query, limit=plan.kb_limit)
    if plan.events_query or plan.has_time_window:
        svc.events.search(
            plan.events_query or None,
            since=plan.events_since,
            until=plan.events_until,
            limit=plan.events_limit,
        )
    if plan.code_query:
        svc.code.search(plan.code_query, limit=plan.code_limit)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="10k chunks instead of 100k")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--write", type=Path, default=None, help="write a Markdown report here")
    args = parser.parse_args()
    total = 10_000 if args.quick else 100_000
    rng = np.random.default_rng(7)
    repeat = args.repeat

    with tempfile.TemporaryDirectory() as tmp:
        svc, build_s = build(Path(tmp) / "bench.db", total, rng)
        chunks = svc.store.count()
        print(f"built {chunks:,} chunks in {build_s:.1f} s", flush=True)
        planner = HeuristicPlanner(now=lambda: NOW)
        enricher = ContextEnricher(svc, EnricherConfig(timeout=30.0), planner=planner)
        plans = [planner.plan(p) for p in PROMPTS]

        # Warm up: the in-memory vector index loads on the first search.
        for prompt in PROMPTS:
            enricher.enrich_context(prompt)

        baseline, layers = [], []
        for plan in plans:
            query = plan.kb_query or "retry backoff"
            baseline += samples(lambda q=query: svc.store.search(q, kind="kb", limit=4), repeat)
            layers += samples(lambda p=plan: layer_searches(svc, p), repeat)
        planning = []
        for prompt in PROMPTS:
            planning += samples(lambda p=prompt: planner.plan(p), repeat * 5)
        overhead: list[float] = []
        parts: dict[str, list[float]] = {"plan_ms": [], "search_ms": [], "format_ms": []}
        without_context: list[str] = []
        for prompt in PROMPTS:
            for _ in range(repeat):
                start = time.perf_counter()
                result = enricher.enrich(prompt)
                overhead.append(time.perf_counter() - start)
                for key in parts:
                    parts[key].append(result.timings.get(key, 0.0))
            if not result.text:
                without_context.append(prompt)
        hash_embed = []
        for plan in plans:
            hash_embed += samples(
                lambda q=plan.kb_query or "x": svc.store.embedder.embed_query(q), repeat
            )

        from remembrances.embeddings.local import LocalEmbedder

        local = LocalEmbedder()
        local.load()
        queries_per_plan = [
            [q for q in (p.kb_query, p.events_query, p.code_query) if q] for p in plans
        ]
        for queries in queries_per_plan:
            for q in queries:
                local.embed_query(q)
        sequential, parallel = [], []
        with ThreadPoolExecutor(max_workers=3) as pool:
            for queries in queries_per_plan:
                if not queries:
                    continue
                sequential += samples(lambda qs=queries: [local.embed_query(q) for q in qs], repeat)
                parallel += samples(
                    lambda qs=queries: list(pool.map(local.embed_query, qs)), repeat
                )
        first_ask = []
        with ThreadPoolExecutor(max_workers=3) as pool:
            for queries in queries_per_plan:
                if not queries:
                    continue

                def ask(qs: list[str] = queries) -> None:
                    cache = QueryVectors()
                    list(pool.map(lambda q: cache.get(local, q), qs))

                first_ask += samples(ask, repeat)
        single = []
        for queries in queries_per_plan:
            for q in queries:
                single += samples(lambda q=q: local.embed_query(q), repeat)
        svc.close()
        enricher.close()

    rows = [
        (
            "baseline: one hybrid Store.search (KB kind, limit 4)",
            median_ms(baseline),
            p95_ms(baseline),
        ),
        (
            "the plan's KB, events and code searches, one after another",
            median_ms(layers),
            p95_ms(layers),
        ),
        ("planning: HeuristicPlanner.plan", median_ms(planning), p95_ms(planning)),
        (
            "enrich_context beyond model calls (hash:384 query vectors)",
            median_ms(overhead),
            p95_ms(overhead),
        ),
        ("  of which plan (from Enrichment.timings)", statistics.median(parts["plan_ms"]), None),
        ("  of which parallel searches", statistics.median(parts["search_ms"]), None),
        ("  of which filter + budget + format", statistics.median(parts["format_ms"]), None),
        ("  of which hash:384 query embedding, per query", median_ms(hash_embed), None),
        ("local MiniLM int8: one query embedding", median_ms(single), p95_ms(single)),
        (
            "local MiniLM int8: a plan's queries, sequential",
            median_ms(sequential),
            p95_ms(sequential),
        ),
        ("local MiniLM int8: a plan's queries, 3 threads", median_ms(parallel), p95_ms(parallel)),
        (
            "local MiniLM int8: a plan's queries, 3 threads through a query cache (first ask)",
            median_ms(first_ask),
            p95_ms(first_ask),
        ),
    ]
    over = median_ms(overhead)
    base = median_ms(baseline)
    lines = [
        f"chunks: {chunks:,} ({DIM} dims); prompts: {len(PROMPTS)}; repeats per prompt: {repeat}; "
        f"build: {build_s:.1f} s; prompts with context: "
        f"{len(PROMPTS) - len(without_context)}/{len(PROMPTS)}"
        + (f" (none for: {'; '.join(without_context)})" if without_context else ""),
        "",
        "| step | median ms | p95 ms |",
        "|---|---|---|",
        *(f"| {name} | {m:.2f} | {'' if p is None else f'{p:.2f}'} |" for name, m, p in rows),
        "",
        f"enrich overhead / one search (baseline): {over / base:.2f}x",
        f"enrich overhead / the same searches run sequentially by hand: "
        f"{over / median_ms(layers):.2f}x",
        f"enrich overhead / 30 ms target: {over / 30:.2f}",
        f"estimated total with the local embedder (overhead + parallel query embeddings): "
        f"{over + median_ms(first_ask):.1f} ms",
        f"a plan's queries through the query cache / each embedded in its own thread: "
        f"{median_ms(first_ask) / median_ms(parallel):.2f}x",
    ]
    report = "\n".join(lines)
    print(report)
    if args.write is not None:
        args.write.write_text(report + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
