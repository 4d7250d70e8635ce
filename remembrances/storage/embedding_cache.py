"""The embedding cache and changing a memory's model.

Vectors are kept by (embedder name, content hash) in ``embedding_cache``:
re-ingesting unchanged text costs no embedding call, an interrupted ingest
resumes without paying twice, and moving to another model fills the cache for
the new model first (slow, resumable, outside any write) and then swaps every
chunk's vector in one short transaction. The SQL here is portable; the swap of
the vector index itself is the engine's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from ..embeddings.base import Embedder, as_matrix, to_blob, vectors_done
from ..progress import Progress
from .engine import Engine
from .in_lists import in_lists

#: Texts per embedder call, unless the embedder asks for another size (its
#: ``call_size``); each batch is cached as soon as it returns.
EMBED_BATCH = 64


def embed_call_size(embedder: Embedder) -> int:
    """Texts per embedder call: the embedder's ``call_size`` when it has one.

    A remote embedder sizes it to keep all its concurrent requests busy; one
    call of EMBED_BATCH would leave a cloud provider with one request at a time.
    """
    size = getattr(embedder, "call_size", EMBED_BATCH)
    return (
        size if isinstance(size, int) and not isinstance(size, bool) and size >= 1 else EMBED_BATCH
    )


#: The cached vectors whose text no chunk holds. NOT EXISTS, not NOT IN: PostgreSQL plans
#: NOT IN over a large table as a scan of every chunk per cache row (10 minutes at
#: 160,000 chunks).
UNUSED = (
    "FROM embedding_cache WHERE NOT EXISTS "
    "(SELECT 1 FROM chunks c WHERE c.content_hash = embedding_cache.content_hash)"
)


class EmbeddingCache:
    """Vectors by (embedder, content hash), in the memory's own database."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def cached(self, embedder: str, hashes: Sequence[str]) -> dict[str, bytes]:
        """The cached blobs of ``embedder`` among ``hashes``."""
        found: dict[str, bytes] = {}
        with self.engine.read() as tx:
            for part, marks in in_lists(hashes):
                for row in tx.execute(
                    "SELECT content_hash, embedding FROM embedding_cache "
                    f"WHERE embedder = ? AND content_hash IN ({marks})",
                    (embedder, *part),
                ):
                    found[row["content_hash"]] = row["embedding"]
        return found

    def vectors_for(
        self,
        embedder: Embedder,
        texts: Mapping[str, str],
        progress: Progress | None = None,
    ) -> tuple[dict[str, bytes], int]:
        """Blobs for ``{content_hash: text}``: cached ones, then newly embedded ones.

        Returns the blobs and how many texts needed the embedder; ``progress("embedding",
        done, total)`` counts those.
        """
        found = self.cached(embedder.name, list(texts))
        missing = {h: texts[h] for h in texts if h not in found}
        step: Callable[[int], None] | None = None
        if progress is not None and missing:
            done = [0]
            report = progress
            report("embedding", 0, len(missing))

            def advance(n: int) -> None:
                done[0] += n
                report("embedding", done[0], len(missing))

            step = advance
        found.update(self.embed(embedder, missing, progress=step))
        return found, len(missing)

    def embed(
        self,
        embedder: Embedder,
        texts: Mapping[str, str],
        *,
        batch_size: int | None = None,
        progress: Callable[[int], None] | None = None,
        keep: bool = True,
    ) -> dict[str, bytes]:
        """Embed ``{content_hash: text}`` batch by batch, caching each batch at once."""
        batch_size = batch_size or embed_call_size(embedder)
        hashes = list(texts)
        kept: dict[str, bytes] = {}
        for start in range(0, len(hashes), batch_size):
            batch = hashes[start : start + batch_size]
            try:
                raw = embedder.embed_documents([texts[h] for h in batch])
            except Exception as exc:
                # A provider embedder splits a call over requests at once: those that
                # answered before one failed are cached, not paid for again.
                done = vectors_done(exc)
                if done:
                    rows = sorted(done)
                    vectors = as_matrix([done[i] for i in rows], count=len(rows), dim=embedder.dim)
                    self._keep(
                        embedder.name,
                        {batch[i]: to_blob(v) for i, v in zip(rows, vectors, strict=True)},
                    )
                raise
            matrix = as_matrix(
                raw, count=len(batch), dim=embedder.dim, who=f"embedder {embedder.name!r}"
            )
            blobs = {h: to_blob(v) for h, v in zip(batch, matrix, strict=True)}
            self._keep(embedder.name, blobs)
            if keep:
                kept.update(blobs)
            if progress is not None:
                progress(len(batch))
        return kept

    def _keep(self, embedder: str, blobs: Mapping[str, bytes]) -> None:
        if not self.engine.read_only:
            with self.engine.write() as tx:
                tx.executemany(
                    "INSERT INTO embedding_cache (embedder, content_hash, embedding) "
                    "VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                    [(embedder, h, b) for h, b in blobs.items()],
                )

    def forget(self, hashes: Iterable[str]) -> int:
        """Drop the vectors of ``hashes`` that no chunk uses any more; returns how many."""
        dropped = 0
        with self.engine.write() as tx:
            for part, part_marks in in_lists(sorted(set(hashes))):
                tx.execute(
                    f"DELETE FROM embedding_cache WHERE content_hash IN ({part_marks}) "
                    "AND NOT EXISTS (SELECT 1 FROM chunks c "
                    "WHERE c.content_hash = embedding_cache.content_hash)",
                    part,
                )
                dropped += tx.changes()
        return dropped

    def drop_unused(self) -> int:
        """Drop every vector whose text no chunk holds, of any model; returns how many."""
        with self.engine.write() as tx:
            tx.execute("DELETE " + UNUSED)
            return tx.changes()

    def count(self) -> int:
        with self.engine.read() as tx:
            return int(tx.execute("SELECT count(*) AS n FROM embedding_cache").scalar())

    # -- changing the model ------------------------------------------------------------

    def embedded_texts(self) -> dict[str, str]:
        """Every distinct embedded text of the memory, by content hash."""
        with self.engine.read() as tx:
            rows = tx.execute(
                "SELECT content_hash, min(coalesce(embed_text, text)) AS text FROM chunks "
                "GROUP BY content_hash"
            ).fetchall()
        return {str(r["content_hash"]): str(r["text"]) for r in rows}

    def fill(
        self,
        embedder: Embedder,
        texts: Mapping[str, str],
        *,
        batch_size: int | None = None,
        progress: Progress | None = None,
    ) -> int:
        """Cache vectors from ``embedder`` for ``texts``; returns how many were new.

        Resumable: texts already cached for that embedder are skipped. ``progress`` is
        called as ``("embedding", texts done, texts in all)``, cached ones counting as done.
        """
        with self.engine.read() as tx:
            cached = {
                str(r["content_hash"])
                for r in tx.execute(
                    "SELECT content_hash FROM embedding_cache WHERE embedder = ?", (embedder.name,)
                )
            }
        missing = {h: t for h, t in texts.items() if h not in cached}
        done = len(texts) - len(missing)

        def step(count: int) -> None:
            nonlocal done
            done += count
            if progress is not None:
                progress("embedding", done, len(texts))

        step(0)
        self.embed(embedder, missing, batch_size=batch_size, progress=step, keep=False)
        return len(missing)

    def switch(self, embedder: Embedder) -> None:
        """Make ``embedder`` the memory's model, with the vectors it left in the cache.

        One transaction swaps every chunk's vector, rebuilds the vector index for the
        new dimension and records the model. Chunks whose text is not cached for the
        new model lose their vector and wait for a backfill.
        """
        with self.engine.write() as tx:
            self.engine.switch_vectors(tx, embedder.name, embedder.dim)
            tx.execute(
                "INSERT INTO meta (key, value) VALUES ('embedder', ?), ('dim', ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (embedder.name, str(embedder.dim)),
            )
        self.engine.forget_vectors()
