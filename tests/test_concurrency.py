"""Several processes writing one memory at once: no error reaches them, no row is lost.

On SQLite the processes share a file; on PostgreSQL a server (each process is
another client, as another host would be).
"""

from __future__ import annotations

import multiprocessing

import pytest

from remembrances import Chunk, Store
from remembrances.embeddings import HashEmbedder

WRITERS = 4
WRITES = 40

pytestmark = pytest.mark.backends("sqlite", "postgresql")


def _writer(path: str, worker: int, errors: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    try:
        store = Store(path, embedder=HashEmbedder(64))
        for i in range(WRITES):
            store.put_source(
                "kb", f"w{worker}-{i}", [Chunk(f"worker {worker} note {i}"), Chunk(f"part two {i}")]
            )
            if i % 10 == 0:
                store.search(f"note {i}", limit=3)
        store.close()
    except BaseException as exc:  # report anything to the parent
        errors.put(f"{worker}: {exc!r}")


def test_four_processes_write_one_memory(location: str) -> None:
    path = location
    Store(path, embedder=HashEmbedder(64)).close()
    ctx = multiprocessing.get_context("spawn")
    errors = ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(path, w, errors)) for w in range(WRITERS)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=240)
    assert all(p.exitcode == 0 for p in procs)
    assert errors.empty(), errors.get()
    store = Store(path, embedder=HashEmbedder(64))
    assert store.count() == WRITERS * WRITES * 2
    with store.snapshot() as conn:
        sources = conn.execute("SELECT count(DISTINCT source) FROM chunks").fetchone()[0]
        if conn.dialect == "sqlite":
            fts = conn.execute("SELECT count(*) FROM chunks_fts").fetchone()[0]
            vec = conn.execute("SELECT count(*) FROM chunks_vec").fetchone()[0]
        else:  # the word statistics count every chunk; every vector is in the column
            fts = conn.execute("SELECT chunks FROM text_totals").fetchone()[0]
            vec = conn.execute("SELECT count(embedding) FROM chunks").fetchone()[0]
    assert sources == WRITERS * WRITES
    assert fts == vec == WRITERS * WRITES * 2
    # A fresh reader sees every row through the vector index too.
    hits = store.search("worker 3 note 39", mode="vector", limit=1)
    assert hits[0].source == "w3-39"
    store.close()
