"""Moving a memory file to another embedding model without losing anything.

Vectors from two models cannot be mixed (the model guard refuses it), so changing
model means re-embedding every chunk. Done in two phases so that it is safe:

1. Embed every distinct chunk text with the new model, outside any write
   transaction, into the embedding cache (keyed by model). This is the slow part;
   it can be interrupted and resumed, and the file stays usable with the old
   model meanwhile.
2. In one short write transaction: swap every chunk's vector for the new one,
   rebuild the vector index table for the new dimension, and record the new model.
   Either all of it happens or none of it.

Chunks written by other processes between the phases get no vector and show up as
pending embeddings, which ``Store.backfill_embeddings`` fills in. Processes that
have the file open with the old model must be restarted afterwards.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from .embeddings.base import Embedder, as_matrix, to_blob
from .schema import vec0_script
from .store import EMBED_BATCH, Store

#: ``progress(done, total)`` after each batch of texts is embedded.
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class ReembedReport:
    path: str
    old_embedder: str | None
    new_embedder: str
    dim: int
    chunks: int
    texts: int
    embedded: int
    cached: int
    pending: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def reembed(
    path: str | os.PathLike[str],
    embedder: Embedder,
    *,
    batch_size: int = EMBED_BATCH,
    progress: Progress | None = None,
) -> ReembedReport:
    """Re-embed every chunk of the file at ``path`` with ``embedder`` and switch to it."""
    store = Store(path)  # no embedder: the model guard would refuse the new one
    try:
        old = store.embedder_name
        texts = _texts(store)
        cached = _cached_hashes(store, embedder.name)
        missing = [h for h in texts if h not in cached]
        done = len(texts) - len(missing)
        if progress is not None:
            progress(done, len(texts))
        for start in range(0, len(missing), batch_size):
            batch = missing[start : start + batch_size]
            vectors = as_matrix(
                embedder.embed_documents([texts[h] for h in batch]),
                count=len(batch),
                dim=embedder.dim,
                who=f"embedder {embedder.name!r}",
            )
            with store.transaction() as conn:
                conn.executemany(
                    "INSERT OR IGNORE INTO embedding_cache (embedder, content_hash, embedding) "
                    "VALUES (?, ?, ?)",
                    [(embedder.name, h, to_blob(v)) for h, v in zip(batch, vectors, strict=True)],
                )
            done += len(batch)
            if progress is not None:
                progress(done, len(texts))
        _swap(store, embedder)
        stats = store.stats()
        return ReembedReport(
            path=store.path,
            old_embedder=old,
            new_embedder=embedder.name,
            dim=embedder.dim,
            chunks=int(stats["chunks"]),
            texts=len(texts),
            embedded=len(missing),
            cached=len(texts) - len(missing),
            pending=int(stats["pending_embeddings"]),
        )
    finally:
        store.close()


def _texts(store: Store) -> dict[str, str]:
    """Every distinct embedded text, by content hash (what the cache is keyed by)."""
    with store.snapshot() as conn:
        rows = conn.execute(
            "SELECT content_hash, coalesce(embed_text, text) FROM chunks GROUP BY content_hash"
        ).fetchall()
    return {str(h): str(t) for h, t in rows}


def _cached_hashes(store: Store, embedder: str) -> set[str]:
    with store.snapshot() as conn:
        rows = conn.execute(
            "SELECT content_hash FROM embedding_cache WHERE embedder = ?", (embedder,)
        ).fetchall()
    return {str(r[0]) for r in rows}


def _swap(store: Store, embedder: Embedder) -> None:
    """Phase 2: one transaction swaps the vectors, the vector table and the recorded model."""
    with store.transaction() as conn:
        # The vec0 table has the old dimension: drop it (and its triggers) first, so the
        # vector updates below do not try to write new-size vectors into it.
        for trigger in ("chunks_vec_insert", "chunks_vec_delete", "chunks_vec_update"):
            conn.execute(f"DROP TRIGGER IF EXISTS {trigger}")
        conn.execute("DROP TABLE IF EXISTS chunks_vec")
        conn.execute(
            "UPDATE chunks SET embedding = (SELECT e.embedding FROM embedding_cache e "
            "WHERE e.embedder = ? AND e.content_hash = chunks.content_hash)",
            (embedder.name,),
        )
        conn.execute(
            "INSERT INTO meta (key, value) VALUES ('embedder', ?), ('dim', ?) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (embedder.name, str(embedder.dim)),
        )
        conn.execute(vec0_script(embedder.dim))
        conn.execute(
            "INSERT INTO chunks_vec (chunk_id, embedding, kind, collection) "
            "SELECT id, embedding, kind, collection FROM chunks WHERE embedding IS NOT NULL"
        )
