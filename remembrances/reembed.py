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
from dataclasses import asdict, dataclass
from typing import Any

from .embeddings.base import Embedder
from .progress import Progress
from .store import Store


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
    batch_size: int | None = None,
    progress: Progress | None = None,
) -> ReembedReport:
    """Re-embed every chunk of the file at ``path`` with ``embedder`` and switch to it.

    ``progress("embedding", done, total)`` after each batch of texts is embedded.
    """
    store = Store(path)  # no embedder: the model guard would refuse the new one
    try:
        store.check_width(embedder)  # before the embedding work, not at the switch
        old = store.embedder_name
        texts = store.embedded_texts()
        embedded = store.cache_embeddings(embedder, texts, batch_size=batch_size, progress=progress)
        store.switch_embedder(embedder)
        stats = store.stats()
        return ReembedReport(
            path=store.path,
            old_embedder=old,
            new_embedder=embedder.name,
            dim=embedder.dim,
            chunks=int(stats["chunks"]),
            texts=len(texts),
            embedded=embedded,
            cached=len(texts) - embedded,
            pending=int(stats["pending_embeddings"]),
        )
    finally:
        store.close()
