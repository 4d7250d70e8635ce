"""The PostgreSQL + pgvector store against the SQLite store: same run, same data.

Question: what does moving a memory to PostgreSQL cost per write and per search,
how much recall does the HNSW index give up against an exact scan, and do
concurrent writers lose anything?

Setup: the chunks of benchmarks/bench_store.py (30 Zipf-distributed words, a
random unit vector of 384 dims each, precomputed: the write rates exclude
embedding), written through ``Store.write_source`` (1000 chunks per source, 10
sources per transaction) into a SQLite file, then moved into a PostgreSQL memory
(the bundled pgserver: PostgreSQL 16.2 + pgvector 0.6.2, started in a temporary
folder, unless ``--url`` names a server) by ``remembrances copy``, the bulk path:
the chunks first, then one HNSW build. Queries: 3-5 words, vectors looked up.

Figures (median ms over the queries; the machine is shared, so read ratios):
- ingest chunks/s: SQLite's write_source; PostgreSQL's bulk copy (with the index
  build, also timed alone); and both engines appending a further slice of
  ``--live`` chunks through write_source with every index live (PostgreSQL's HNSW
  insert per row: the rate of day-to-day writes);
- vector, text and hybrid top-10 latency on each engine, and PostgreSQL ÷ SQLite
  (issue 16's target: PostgreSQL hybrid within 3x of SQLite hybrid);
- HNSW recall@10 against an exact scan of the same table (target >= 0.95): through
  the engine's search path (the size rule decides), and of the index itself per
  ``ef_search``; with ``--real-vectors MEMORY.db``, on a real embedder's vectors
  too; and a filtered search's result count (never fewer than 10 while 10 match);
- the size rule's crossover: an exact scan of n chunks (a filter on n/1000
  sources; n = all: unfiltered) against an HNSW search of the whole table;
- 8 writer processes x 1,000 writes on each engine: errors and lost rows (must be
  0 and 0) and the wall time.

``--real-corpus OUT.npy`` (made by ``--embed-real``) puts real code texts and their
local-model vectors in place of the synthetic chunks, with queries of 3-5 words
from held-out texts: the same figures on a memory that is not random.

Run: ``.venv/bin/python -m benchmarks.bench_postgres`` (``--quick``: 10k chunks,
8 x 200 writes; ``--sizes 100000``; ``--writers 8 --writes 1000``; ``--live 5000``).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.bench_quality import EVAL_DIR
from benchmarks.bench_store import (
    PER_SOURCE,
    QUERIES,
    Transactions,
    corpus,
    in_transactions,
    ingest,
)
from benchmarks.harness import SeededEmbedder, per_query_ms
from remembrances import Chunk, Store
from remembrances.fts_query import STOP_WORDS
from remembrances.memory_copy import copy_memory
from remembrances.storage.filters import ChunkFilter

#: hnsw.ef_search values whose recall and latency are measured on the index itself.
EF_SEARCHES = [40, 100, 200, 400, 1000]
#: Chunk counts whose exact scan is timed against the index (the size rule's crossover).
EXACT_SIZES = [1_000, 5_000, 10_000, 20_000, 50_000, 100_000]


def start_server(folder: str) -> Any:
    import pgserver

    return pgserver.get_server(folder, cleanup_mode="stop")


def memory_url(server_url: str, name: str) -> str:
    return f"{server_url}{'&' if '?' in server_url else '?'}memory={name}"


def latencies(store: Store, queries: list[str], prefix: str) -> dict[str, float]:
    out = {}
    for mode in ("vector", "text", "hybrid"):
        store.search(queries[0], mode=mode)  # warm: caches, the in-memory index
        out[f"{prefix}_{mode}_ms"] = per_query_ms(
            lambda q, m=mode: store.search(queries[q], mode=m, limit=10), len(queries)
        )
    return out


def index_top(tx: Any, vector: np.ndarray[Any, Any], ef_search: int, k: int = 10) -> set[int]:
    """The HNSW index's top ``k`` at ``ef_search`` (an unfiltered ORDER BY ... LIMIT,
    which the planner answers with the index)."""
    tx.execute("SELECT set_config('hnsw.ef_search', ?, true)", (str(ef_search),))
    found = tx.execute(
        "SELECT c.id AS id FROM chunks c WHERE c.embedding IS NOT NULL "
        "ORDER BY c.embedding <=> ? LIMIT ?",
        (vector, k),
    )
    return {int(r[0]) for r in found}


def ef_sweep(
    tx: Any, vectors: list[np.ndarray[Any, Any]], exact: list[set[int]], efs: list[int]
) -> list[dict[str, float]]:
    """Recall@10 against ``exact`` and median latency of the index at each ``ef_search``."""
    rows = []
    for ef in efs:
        got = [index_top(tx, v, ef) for v in vectors]
        ms = per_query_ms(lambda q, ef=ef: index_top(tx, vectors[q], ef), len(vectors))
        found = np.mean([len(g & e) / 10 for g, e in zip(got, exact, strict=True)])
        rows.append({"ef_search": ef, "recall_at_10": float(found), "index_ms": round(ms, 2)})
    return rows


def recall(store: Store, queries: list[str], embedder: SeededEmbedder) -> dict[str, Any]:
    """Top-10 through the engine's vector leg (the size rule decides: exact or the
    index) and through the index alone, against an exact scan; and the fewest
    results of a filtered top-10, by either path."""
    engine: Any = store.engine
    vectors = [np.asarray(embedder.embed_query(t), dtype=np.float32) for t in queries]
    rule = engine.exact_below
    found: list[float] = []
    forced: list[float] = []
    filtered: list[int] = []
    with store.snapshot() as tx:
        for vector in vectors:
            exact = {i for i, _ in engine.vector_leg(tx, vector, 10, ChunkFilter(), exact=True)}
            for limit, into in ((rule, found), (0, forced)):
                engine.exact_below = limit  # 0: always the index first
                approx = engine.vector_leg(tx, vector, 10, ChunkFilter())
                into.append(len({i for i, _ in approx} & exact) / 10)
                # 1 chunk in 100 has shard 7: far fewer than the index's candidate list.
                hits = engine.vector_leg(tx, vector, 10, ChunkFilter.of(where={"shard": 7}))
                filtered.append(len(hits))
            engine.exact_below = rule
    return {
        "engine_recall_at_10": float(np.mean(found)),
        "hnsw_recall_at_10": float(np.mean(forced)),
        "filtered_min_results": min(filtered),
        "exact_below": rule,
        "exact_rows_unfiltered": engine.exact_rows(engine.ef_search),
    }


def crossover(
    store: Store, queries: list[str], embedder: SeededEmbedder, sizes: list[int]
) -> dict[str, Any]:
    """The size rule's measurement: the engine's exact scan of n chunks (those of the
    first n/1000 sources, by filter; all of them unfiltered) against the HNSW index
    over the whole table at each ``ef_search`` (its recall too)."""
    engine: Any = store.engine
    vectors = [np.asarray(embedder.embed_query(t), dtype=np.float32) for t in queries]
    out: dict[str, Any] = {"exact": [], "index": []}
    with store.snapshot() as tx:
        total = int(tx.execute("SELECT count(*) AS n FROM chunks").scalar())
        sources = [
            str(r[0])
            for r in tx.execute(
                "SELECT source, min(id) AS first FROM chunks GROUP BY source ORDER BY first"
            )
        ]
        for n in [s for s in sizes if s < total] + [total]:
            where = (
                ChunkFilter() if n >= total else ChunkFilter.of(source=sources[: n // PER_SOURCE])
            )
            ms = per_query_ms(lambda q, w=where: engine._exact(tx, vectors[q], 10, w), len(vectors))
            out["exact"].append({"chunks": n, "exact_ms": round(ms, 2)})
            print(json.dumps({"exact_scan": out["exact"][-1]}), flush=True)
        exact = [{i for i, _ in engine._exact(tx, v, 10, ChunkFilter())} for v in vectors]
        out["index"] = ef_sweep(tx, vectors, exact, EF_SEARCHES)
        out["index_chunks"] = total
    print(json.dumps({"crossover": out}), flush=True)
    return out


def real_matrix(source: Path) -> tuple[np.ndarray[Any, Any], str | None]:
    """The vectors of a SQLite memory (its embedder's name too), or of a ``.npy``
    matrix (one row a vector, e.g. 100k MiniLM vectors embedded outside any memory,
    which is faster to load than a memory's rows). Duplicate rows are dropped: a
    tie in the exact top-10 would count against the index for no fault of its own."""
    if source.suffix == ".npy":
        matrix: np.ndarray[Any, Any] = np.load(source).astype("<f4")
        name = None
    else:
        with Store(source, read_only=True) as memory, memory.snapshot() as tx:
            blobs = [
                bytes(r[0])
                for r in tx.execute(
                    "SELECT embedding FROM chunks c WHERE c.embedding IS NOT NULL ORDER BY c.id"
                )
            ]
            name = memory.embedder_name
        matrix = np.stack([np.frombuffer(b, dtype="<f4") for b in blobs])
    _, first = np.unique(matrix, axis=0, return_index=True)
    return matrix[np.sort(first)], name


def real_recall(server_url: str, source: Path, queries: int = 50) -> dict[str, Any]:
    """HNSW recall@10 on a real embedder's vectors: a SQLite memory's chunks (e.g.
    SciFact with all-MiniLM-L6-v2 from ``bench_quality.py --cache``) or a ``.npy``
    matrix, ``queries`` of them held out and used as queries. No text is embedded."""
    from remembrances.storage.engine import NewChunk
    from remembrances.storage.filters import ChunkFilter

    matrix, name = real_matrix(source)
    blobs = [row.tobytes() for row in matrix]
    held = set(np.random.default_rng(3).choice(len(matrix), queries, replace=False).tolist())
    engine: Any = None
    target = Store(memory_url(server_url, "bench_real"))
    try:
        engine = target.engine
        with engine.write() as tx:  # the chunks first, then one index build
            engine.insert_chunks(
                tx,
                [
                    NewChunk(
                        "kb", "default", f"d{i}", 0, "x", "{}", f"h{i}", None, None, 0.0, blobs[i]
                    )
                    for i in range(len(matrix))
                    if i not in held
                ],
            )
            engine.create_vector_table(tx, matrix.shape[1], fill=True)
            tx.execute("ANALYZE chunks")
        engine.exact_below = 0  # the index itself, whatever the memory's size
        found = []
        with engine.read() as tx:
            asked = [matrix[i] for i in sorted(held)]
            exact = []
            for vector in asked:
                approx = engine.vector_leg(tx, vector, 10, ChunkFilter(), exact=False)
                best = engine.vector_leg(tx, vector, 10, ChunkFilter(), exact=True)
                exact.append({e for e, _ in best})
                found.append(len({a for a, _ in approx} & exact[-1]) / 10)
            sweep = ef_sweep(tx, asked, exact, EF_SEARCHES)
    finally:
        target.close()
    return {
        "embedder": name,
        "chunks": len(matrix) - len(held),
        "queries": len(held),
        "hnsw_recall_at_10": float(np.mean(found)),
        "index": sweep,
    }


def hnsw_sweep(
    server_url: str,
    n: int,
    builds: list[tuple[int, int]],
    ef_searches: list[int],
    queries: int = 100,
    dim: int = 384,
) -> list[dict[str, Any]]:
    """HNSW recall@10 and latency per index build (m, ef_construction) and ``ef_search``,
    on ``n`` random unit vectors (no structure: the hardest case for a graph index),
    against an exact scan of the same table, with ``queries`` random query vectors.

    The vectors are written once without the index; each build is timed on the
    full table (CREATE INDEX), then every ``ef_search`` is measured on it."""
    from remembrances.storage.engine import NewChunk

    rng = np.random.default_rng(11)
    matrix = rng.standard_normal((n, dim)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    asked = rng.standard_normal((queries, dim)).astype(np.float32)
    asked /= np.linalg.norm(asked, axis=1, keepdims=True)
    store = Store(memory_url(server_url, "bench_hnsw"))
    engine: Any = store.engine
    rows: list[dict[str, Any]] = []
    try:
        with engine.write() as tx:
            engine.create_vector_table(tx, dim, fill=False)
            tx.execute("DROP INDEX IF EXISTS chunks_embedding")
        for start in range(0, n, 5000):
            with engine.write() as tx:
                engine.insert_chunks(
                    tx,
                    [
                        NewChunk(
                            "kb",
                            "d",
                            f"s{i}",
                            0,
                            "x",
                            "{}",
                            f"h{i}",
                            None,
                            None,
                            0.0,
                            matrix[i].astype("<f4").tobytes(),
                        )
                        for i in range(start, min(start + 5000, n))
                    ],
                )
        with engine.write() as tx:
            tx.execute("ANALYZE chunks")
        with engine.read() as tx:
            exact = [
                {i for i, _ in engine.vector_leg(tx, q, 10, ChunkFilter(), exact=True)}
                for q in asked
            ]
            exact_ms = per_query_ms(
                lambda k: engine.vector_leg(tx, asked[k], 10, ChunkFilter(), exact=True),
                len(asked),
            )
        for m, construction in builds:
            with engine.write() as tx:
                tx.execute("DROP INDEX IF EXISTS chunks_embedding")
                started = time.perf_counter()
                tx.execute(
                    "CREATE INDEX chunks_embedding ON chunks USING hnsw "
                    f"(embedding vector_cosine_ops) WITH (m = {int(m)}, "
                    f"ef_construction = {int(construction)})"
                )
                build_s = time.perf_counter() - started
            for ef in ef_searches:
                with engine.read() as tx:
                    tx.execute("SELECT set_config('hnsw.ef_search', ?, true)", (str(ef),))

                    def top(k: int, tx: Any = tx) -> set[int]:
                        found = tx.execute(
                            "SELECT c.id AS id FROM chunks c WHERE c.embedding IS NOT NULL "
                            "ORDER BY c.embedding <=> ? LIMIT 10",
                            (asked[k],),
                        )
                        return {int(r[0]) for r in found}

                    got = [top(k) for k in range(len(asked))]
                    ms = per_query_ms(top, len(asked))
                row = {
                    "n": n,
                    "m": m,
                    "ef_construction": construction,
                    "build_s": round(build_s, 1),
                    "ef_search": ef,
                    "recall_at_10": float(
                        np.mean([len(g & e) / 10 for g, e in zip(got, exact, strict=True)])
                    ),
                    "hnsw_ms": round(ms, 2),
                    "exact_ms": round(exact_ms, 2),
                }
                print(json.dumps({"hnsw": row}), flush=True)
                rows.append(row)
    finally:
        store.close()
    return rows


def embed_real(out: Path, n: int, memory: str, folder: str, word_pieces: int) -> None:
    """``n`` real vectors for ``--real-vectors`` and ``--real-corpus``: the local
    embedder (all-MiniLM-L6-v2) over real code, each text cut to ``word_pieces`` word
    pieces (a time budget: the model's 256 took ~10 texts/s on the shared 2 cores,
    32 took ~135/s). Texts: the chunks of a code memory (e.g. the CPython stdlib
    indexed by ``remembrances code index``; read only; ``-`` for none), then 25-line
    windows of the ``.py`` files under ``folder`` (several: joined by ``os.pathsep``),
    each text once. The texts are saved beside the vectors (``OUT.texts.json``)."""
    import glob
    import sqlite3

    from remembrances.embeddings.local import LocalEmbedder

    texts: list[str] = []
    if memory != "-":
        with sqlite3.connect(f"file:{memory}?immutable=1", uri=True) as db:
            texts = [
                r[0]
                for r in db.execute("SELECT coalesce(embed_text, text) FROM chunks ORDER BY id")
            ]
    seen = set(texts)
    files = [
        name
        for root in folder.split(os.pathsep)
        for name in sorted(glob.glob(f"{root}/**/*.py", recursive=True))
    ]
    for name in files:
        if len(texts) >= n:
            break
        try:
            lines = Path(name).read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            continue
        for start in range(0, len(lines), 25):
            window = "\n".join(lines[start : start + 25]).strip()
            if len(window) > 80 and window not in seen:
                seen.add(window)
                texts.append(window)
    texts = texts[:n]
    embedder = LocalEmbedder(batch_size=16)
    embedder.load()
    embedder._tokenizer.enable_truncation(max_length=word_pieces)
    np.save(out, embedder.embed_documents(texts))
    texts_file(out).write_text(json.dumps(texts), encoding="utf-8")


def texts_file(vectors: Path) -> Path:
    return vectors.with_suffix(".texts.json")


def real_corpus(
    vectors: Path, n: int, seed: int = 5
) -> tuple[Transactions, list[str], SeededEmbedder]:
    """``n`` real chunks (texts and their vectors from ``--embed-real``) prepared as
    :func:`benchmarks.bench_store.corpus` prepares its synthetic ones (1,000 a source,
    a shard in the metadata), the query texts, and an embedder that knows their
    vectors. Queries: 3-5 consecutive words of held-out texts (not in the memory),
    embedded by the same local model at full length; query embedding is not timed."""
    from remembrances.embeddings.local import LocalEmbedder
    from remembrances.store import PreparedChunk, content_hash

    matrix = np.load(vectors).astype("<f4")
    texts = json.loads(texts_file(vectors).read_text(encoding="utf-8"))
    if len(texts) < n + QUERIES:
        raise SystemExit(f"{vectors} holds {len(texts)} texts: {n} chunks and {QUERIES} queries")
    rng = np.random.default_rng(seed)
    queries: list[str] = []
    for text in texts[n:]:
        words = [w for w in re.findall(r"[A-Za-z_]{3,}", text) if w.lower() not in STOP_WORDS]
        if len(words) >= 5:
            start = int(rng.integers(0, len(words) - 4))
            queries.append(" ".join(words[start : start + int(rng.integers(3, 6))]))
        if len(queries) == QUERIES:
            break
    model = LocalEmbedder()
    table = dict(zip(queries, model.embed_documents(queries), strict=True))
    chunks = [
        PreparedChunk(
            texts[i],
            json.dumps({"shard": i % 100}),
            None,
            content_hash(texts[i]),
            None,
            matrix[i].tobytes(),
        )
        for i in range(n)
    ]
    transactions = in_transactions(chunks)
    return transactions, queries, SeededEmbedder(table=table)


def scifact(server_url: str, memory_file: Path, workdir: Path, eval_dir: Path) -> dict[str, Any]:
    """SciFact (test split) nDCG@10 per search mode on both engines: the chunks and
    vectors of a SQLite memory built by ``bench_quality.py --cache`` are copied into
    PostgreSQL (nothing re-embedded); only the 300 queries are embedded (locally)."""
    import shutil as copying

    from remembrances.embeddings import create
    from remembrances.evaluation import load_beir, rankings_for, score_rankings

    data = load_beir(eval_dir / "scifact", split="test")
    local = workdir / "scifact.db"
    copying.copy(memory_file, local)
    location = memory_url(server_url, "bench_scifact")
    copy_memory(local, location)  # chunks and vectors as they are: nothing re-embedded
    embedder = create("local")
    out: dict[str, Any] = {"queries": len(data.queries)}
    sqlite = Store(local, embedder=embedder)
    postgres = Store(location, embedder=embedder)
    try:
        out["chunks"] = postgres.count()
        for name, store in (("sqlite", sqlite), ("postgres", postgres)):
            for mode in ("text", "vector", "hybrid"):
                ranks = rankings_for(
                    store, data.queries, mode=mode, kind="kb", collection="scifact"
                )  # type: ignore[arg-type]
                out[f"{name}_{mode}_ndcg10"] = score_rankings(ranks, data.qrels).ndcg
    finally:
        sqlite.close()
        postgres.close()
    return out


def _writer(location: str, worker: int, writes: int, queue: Any) -> None:
    errors: list[str] = []
    store = Store(location, embedder=SeededEmbedder())
    try:
        for i in range(writes):
            try:
                store.put_source("kb", f"w{worker}-{i}", [Chunk(f"writer {worker} write {i}")])
            except Exception as exc:  # counted, not raised: the figure is the count
                errors.append(f"{type(exc).__name__}: {exc}")
    finally:
        store.close()
    queue.put((worker, errors))


def writers(location: str, processes: int, writes: int) -> dict[str, Any]:
    Store(location, embedder=SeededEmbedder()).close()  # schema and model first
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    start = time.perf_counter()
    procs = [
        ctx.Process(target=_writer, args=(location, w, writes, queue)) for w in range(processes)
    ]
    for p in procs:
        p.start()
    results = [queue.get() for _ in procs]
    for p in procs:
        p.join()
    wall = time.perf_counter() - start
    errors = [e for _, errs in results for e in errs]
    with Store(location) as store:
        stored = store.count(kind="kb")
    return {
        "writes": processes * writes,
        "errors": len(errors),
        "first_error": errors[0] if errors else None,
        "lost_rows": processes * writes - len(errors) - stored,
        "wall_s": wall,
    }


def renamed(transactions: Transactions, prefix: str) -> Transactions:
    """The same chunks under other source names (a slice appended, not replacing)."""
    return [[(prefix + source, prepared) for source, prepared in txn] for txn in transactions]


def bulk_copy(sqlite_file: Path, location: str) -> dict[str, float]:
    """``remembrances copy`` into PostgreSQL, timed; the time after the last chunk
    batch is the HNSW build (and the commit)."""
    marks: list[float] = []
    start = time.perf_counter()
    copy_memory(sqlite_file, location, progress=lambda *_: marks.append(time.perf_counter()))
    end = time.perf_counter()
    return {"copy_s": end - start, "index_build_s": end - (marks[-1] if marks else start)}


def run_size(args: argparse.Namespace, n: int, server_url: str, workdir: Path) -> dict[str, Any]:
    if args.real_corpus:
        transactions, queries, embedder = real_corpus(args.real_corpus, n)
    else:
        transactions, queries, _ = corpus(n, shards=True)
        seeded = SeededEmbedder()
        embedder = SeededEmbedder(table={t: seeded.embed_query(t) for t in queries})
    live, _, _ = corpus(args.live, seed=6, shards=True) if args.live else ([], [], None)
    live = renamed(live, "live-")
    out: dict[str, Any] = {"n": n, "load_average_start": os.getloadavg()}
    sqlite_file = workdir / f"bench-{n}.db"
    location = memory_url(server_url, f"bench_{n}") + "".join(f"&{p}" for p in args.memory_params)
    sqlite = Store(sqlite_file, embedder=embedder)
    postgres: Store | None = None
    try:
        out["sqlite_ingest_per_s"] = n / ingest(sqlite, transactions)
        copied = bulk_copy(sqlite_file, location)
        out["postgres_copy_per_s"] = n / copied["copy_s"]
        out["postgres_index_build_s"] = copied["index_build_s"]
        out["postgres_copy_s"] = copied["copy_s"]
        print(json.dumps(out), flush=True)
        postgres = Store(location, embedder=embedder)
        with postgres.transaction() as tx:  # fresh planner statistics after a bulk load
            tx.execute("ANALYZE chunks")
        out.update(latencies(sqlite, queries, "sqlite"))
        out.update(latencies(postgres, queries, "postgres"))
        for mode in ("vector", "text", "hybrid"):
            out[f"{mode}_pg_over_sqlite"] = out[f"postgres_{mode}_ms"] / out[f"sqlite_{mode}_ms"]
        print(json.dumps(out), flush=True)
        out.update(recall(postgres, queries, embedder))
        print(json.dumps(out), flush=True)
        if args.crossover:
            out["crossover"] = crossover(postgres, queries, embedder, EXACT_SIZES)
        if live:  # day-to-day writes: every index live, into the loaded memory
            out["live_chunks"] = args.live
            out["sqlite_live_per_s"] = args.live / ingest(sqlite, live)
            out["postgres_live_per_s"] = args.live / ingest(postgres, live)
            out["live_pg_over_sqlite"] = out["postgres_live_per_s"] / out["sqlite_live_per_s"]
        out["load_average_end"] = os.getloadavg()
    finally:
        sqlite.close()
        if postgres is not None:
            postgres.close()
    return out


def run(args: argparse.Namespace, server_url: str, workdir: Path) -> dict[str, Any]:
    results: dict[str, Any] = {}
    if args.embed_real:
        out, n, memory, folder = args.embed_real
        embed_real(Path(out), int(n), memory, folder, args.word_pieces)
    for n in args.sizes:
        out = run_size(args, n, server_url, workdir)
        print(json.dumps(out), flush=True)
        results[str(n)] = out
    if args.real_vectors:
        figures = real_recall(server_url, args.real_vectors, args.real_queries)
        print(json.dumps({"real_vectors": figures}), flush=True)
        results["real_vectors"] = figures
    if args.scifact:
        figures = scifact(server_url, args.scifact, workdir, args.eval)
        print(json.dumps({"scifact": figures}), flush=True)
        results["scifact"] = figures
    if args.hnsw:
        builds = [tuple(int(x) for x in b.split(",")) for b in args.hnsw_builds]
        results["hnsw"] = hnsw_sweep(
            server_url,
            args.hnsw,
            builds,
            args.ef_search,  # type: ignore[arg-type]
        )
    if args.writers:
        for name, location in (
            ("sqlite", str(workdir / "writers.db")),
            ("postgres", memory_url(server_url, "bench_writers")),
        ):
            figures = writers(location, args.writers, args.writes)
            print(json.dumps({name: figures}), flush=True)
            results[f"writers_{name}"] = figures
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="10k chunks, 8 x 200 writes")
    parser.add_argument("--sizes", type=int, nargs="*", help="chunk counts (default 100000)")
    parser.add_argument("--writers", type=int, default=8, help="writer processes (0: skip)")
    parser.add_argument("--writes", type=int, help="writes per process (default 1000)")
    parser.add_argument("--url", help="a PostgreSQL server to use instead of pgserver")
    parser.add_argument(
        "--memory-params",
        nargs="*",
        default=[],
        help="URL parameters of the PostgreSQL memory, e.g. ef_search=100",
    )
    parser.add_argument(
        "--live", type=int, default=5000, help="chunks appended with every index live (0: skip)"
    )
    parser.add_argument(
        "--no-crossover",
        dest="crossover",
        action="store_false",
        help="skip the size rule's exact-scan-against-index measurement",
    )
    parser.add_argument(
        "--eval", type=Path, default=EVAL_DIR, help="the eval sets' folder (for --scifact)"
    )
    parser.add_argument(
        "--scifact", type=Path, help="SciFact memory from bench_quality --cache: nDCG@10 on both"
    )
    parser.add_argument(
        "--real-vectors",
        type=Path,
        help="a SQLite memory (or a .npy matrix) whose vectors measure HNSW recall too",
    )
    parser.add_argument(
        "--embed-real",
        nargs=4,
        metavar=("OUT.npy", "N", "CODE_MEMORY.db|-", "FOLDERS"),
        help="first embed N real code texts with the local model into OUT.npy",
    )
    parser.add_argument(
        "--real-corpus",
        type=Path,
        help="an --embed-real OUT.npy: the --sizes runs use its texts and vectors",
    )
    parser.add_argument(
        "--word-pieces", type=int, default=32, help="--embed-real: word pieces per text"
    )
    parser.add_argument(
        "--real-queries", type=int, default=50, help="vectors held out as queries (--real-vectors)"
    )
    parser.add_argument(
        "--hnsw", type=int, default=0, help="HNSW recall/latency sweep on N random vectors"
    )
    parser.add_argument(
        "--hnsw-builds",
        nargs="*",
        default=["16,64", "16,200", "32,200"],
        help="index builds for --hnsw, each M,EF_CONSTRUCTION",
    )
    parser.add_argument(
        "--ef-search",
        type=int,
        nargs="*",
        default=[100, 200, 400, 800, 1000],
        help="hnsw.ef_search values for --hnsw",
    )
    args, _ = parser.parse_known_args()
    args.sizes = (
        [] if args.sizes == [0] else (args.sizes or ([10_000] if args.quick else [100_000]))
    )
    args.writes = args.writes or (200 if args.quick else 1000)
    print(f"cores: {os.cpu_count()}, load average: {os.getloadavg()}", flush=True)
    workdir = Path(tempfile.mkdtemp(prefix="bench-postgres-"))
    server = None
    server_dir = ""
    try:
        if args.url:
            url = args.url
        else:
            # Its own folder: as root, pgserver runs the server as another user.
            server_dir = tempfile.mkdtemp(prefix="bench-pg-")
            server = start_server(server_dir)
            url = server.get_uri()
        results = run(args, url, workdir)
    finally:
        if server is not None:
            server.cleanup()
            shutil.rmtree(server_dir, ignore_errors=True)
        shutil.rmtree(workdir, ignore_errors=True)
    print(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
