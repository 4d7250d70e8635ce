"""The Store: chunks, their vectors and their text index, in one memory.

Every domain layer (KB, events, code) stores its searchable text here and
searches through :meth:`Store.search`, so there is one search engine, not three.
The store itself opens the memory, guards its model, validates and writes
chunks and reads them back; the rest has a module of its own:

- ``storage/search.py``: the search pipeline (legs, fusion, MMR, rerank, query cache);
- ``storage/filters.py``: filters as a SQL fragment (a pure function);
- ``storage/embedding_cache.py``: the embedding cache and changing the model;
- ``storage/sqlite_engine.py``: every SQLite-specific statement (FTS5, vec0, pragmas);
- ``storage/transaction.py``: the transaction the domain layers write their SQL through.

The schema is described in docs/storage.md.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .embeddings.base import Embedder, Vectors
from .errors import (
    EmbedderMismatchError,
    EmbedderUnavailableError,
    InvalidInputError,
    NotFoundError,
    ReadOnlyError,
    RerankerNotConfiguredError,
    StorageError,
)
from .postgres.url import is_postgres_url
from .progress import Progress
from .records import Chunk, SearchResult, StoredChunk, WriteReport
from .storage import search as pipeline
from .storage.embedding_cache import EMBED_BATCH as EMBED_BATCH
from .storage.embedding_cache import UNUSED as UNUSED_EMBEDDINGS
from .storage.embedding_cache import EmbeddingCache
from .storage.embedding_cache import embed_call_size as embed_call_size
from .storage.engine import Engine, NewChunk, VectorIndexKind
from .storage.filters import ChunkFilter, as_timestamp
from .storage.filters import Where as Where
from .storage.reports import CompactReport
from .storage.schema import check_read_only, migrate
from .storage.search import Fuse as Fuse
from .storage.search import QueryVectors, SearchRequest
from .storage.search import Reranker as Reranker
from .storage.search import SearchMode as SearchMode
from .storage.sqlite_connection import Database
from .storage.sqlite_engine import SqliteEngine
from .storage.transaction import Dialect, Row, Transaction
from .storage.vector_index import VectorIndex
from .validation import (
    check_id,
    check_limit,
    check_min_score,
    check_name,
    check_text,
    check_unicode,
    encode_metadata,
)

log = logging.getLogger(__name__)

MAX_CHUNK_CHARS = 1_000_000
MAX_QUERY_CHARS = 100_000
MAX_LIMIT = 1000


@dataclass(frozen=True)
class PreparedChunk:
    """A validated chunk with its vector (or None when embedding was deferred)."""

    text: str
    metadata_json: str
    embed_text: str | None
    content_hash: str
    ts: float | None
    embedding: bytes | None


@dataclass(frozen=True)
class Prepared:
    """Chunks ready to write, and how many vectors were new versus cached."""

    chunks: list[PreparedChunk]
    embedded: int = 0
    cached: int = 0

    @property
    def pending(self) -> int:
        return sum(1 for c in self.chunks if c.embedding is None)


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _check_text(value: Any, what: str, *, limit: int = MAX_CHUNK_CHARS) -> str:
    return check_text(value, what, limit=limit)


def _stored(row: Row) -> StoredChunk:
    return StoredChunk(
        id=row["id"],
        kind=row["kind"],
        collection=row["collection"],
        source=row["source"],
        position=row["position"],
        text=row["text"],
        metadata=json.loads(row["metadata"]),
        content_hash=row["content_hash"],
        ts=row["ts"],
        created_at=row["created_at"],
        has_embedding=bool(row["has_embedding"]),
    )


class Store:
    """Chunks of text with vectors and a BM25 index, searchable by meaning and words.

    Open one per process and share it between threads. Several processes may
    open the same file; every search sees all writes committed before it began.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        embedder: Embedder | None = None,
        read_only: bool = False,
        reranker: Reranker | None = None,
        create: bool | None = None,
        engine: Engine | None = None,
    ) -> None:
        """Open the memory at ``path``.

        ``create``: None (default) makes a memory of a new path or an empty file and
        refuses a file holding anything else; True also turns another program's
        SQLite file into a memory (the user asked for one there); False opens only
        an existing memory. Nothing is written to a file that is refused.
        ``engine``: an already opened engine (``path`` then only names it);
        by default the SQLite engine opens the file at ``path``, and the
        PostgreSQL engine a ``postgresql://`` URL (docs/scale-out.md).
        """
        if engine is None and is_postgres_url(path):
            from .postgres.engine import PostgresEngine  # needs the postgres extra

            engine = PostgresEngine(str(path), read_only=read_only, create=create)
        self.engine: Engine = (
            engine if engine is not None else SqliteEngine(path, read_only=read_only, create=create)
        )
        self.path = self.engine.location
        self.embedder: Embedder | None = None
        self.reranker = reranker
        self.cache = EmbeddingCache(self.engine)
        self._query_vectors = QueryVectors()
        try:
            self.engine.prepare_schema()
            if embedder is not None:
                self.attach_embedder(embedder)
        except BaseException:
            self.engine.close()
            raise

    # -- lifecycle and the model guard ---------------------------------------------------

    def close(self) -> None:
        self.engine.close()

    @property
    def closed(self) -> bool:
        return self.engine.closed

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def db(self) -> Database:
        """The SQLite engine's connections (SQLite only: tests and file-level repairs)."""
        if not isinstance(self.engine, SqliteEngine):
            raise AttributeError("this store is not a SQLite file")
        return self.engine.db

    @property
    def _index(self) -> VectorIndex | None:
        """The SQLite engine's in-memory vector index, once loaded (for tests)."""
        return self.engine.index if isinstance(self.engine, SqliteEngine) else None

    def meta(self, key: str) -> str | None:
        with self.engine.read() as tx:
            value = tx.execute("SELECT value FROM meta WHERE key = ?", (key,)).scalar()
        return None if value is None else str(value)

    @property
    def read_only(self) -> bool:
        """True when writes are refused (opened read-only, or the file is not writable)."""
        return self.engine.read_only

    def check_writable(self, action: str) -> None:
        """Refuse up front (before any embedding) what a read-only file would refuse later."""
        if self.engine.read_only:
            raise ReadOnlyError(
                f"cannot {action}: {self.path!r} is read-only ({self.engine.read_only_reason})"
            )

    @property
    def embedder_name(self) -> str | None:
        """The embedder recorded in the file (None for a file without vectors yet)."""
        return self.meta("embedder")

    @property
    def dim(self) -> int | None:
        value = self.meta("dim")
        return None if value is None else int(value)

    def check_width(self, embedder: Embedder) -> None:
        """Refuse, before anything is embedded or recorded, vectors wider than the
        engine's vector index takes (sqlite-vec, pgvector's HNSW)."""
        if not 1 <= embedder.dim <= self.engine.max_dimensions:
            raise EmbedderUnavailableError(
                f"embedder {embedder.name!r} makes {embedder.dim}-dimensional vectors; "
                f"{self.path} can index 1 to {self.engine.max_dimensions} dimensions "
                "(a provider's dimensions= option shortens its vectors)"
            )

    def attach_embedder(self, embedder: Embedder) -> None:
        """Search and write with ``embedder`` from now on: the model guard.

        A memory without vectors yet records it; one written with another model (or
        dimension) refuses it with a message that says how to re-embed.
        """
        name, dim = self.embedder_name, self.dim
        if name == embedder.name and dim is not None and getattr(embedder, "known_dim", 0) is None:
            # The file knows this model's dimension: asking the provider cost a request
            # on every open, and while it was down no command opened the file at all.
            embedder.dim = dim
        self.check_width(embedder)
        if name is None:
            if not self.engine.read_only:
                with self.engine.write() as tx:
                    recorded = tx.execute("SELECT value FROM meta WHERE key = 'embedder'").scalar()
                    if recorded is None:
                        tx.execute(
                            "INSERT INTO meta (key, value) VALUES ('embedder', ?), ('dim', ?)",
                            (embedder.name, str(embedder.dim)),
                        )
                        self.engine.create_vector_table(tx, embedder.dim, fill=False)
                name, dim = self.embedder_name, self.dim
            else:
                name, dim = embedder.name, embedder.dim  # nothing to guard yet
        elif name == embedder.name and dim == embedder.dim and not self.engine.read_only:
            with self.engine.read() as tx:
                has_table = self.engine.has_vector_table(tx)
            if not has_table:  # a file from before vec0 existed, or a damaged one
                with self.engine.write() as tx:
                    self.engine.create_vector_table(tx, embedder.dim, fill=True)
        if name != embedder.name or dim != embedder.dim:
            raise EmbedderMismatchError(
                f"{self.path} was written with embedder {name!r} ({dim} dims) but was opened "
                f"with {embedder.name!r} ({embedder.dim} dims). Open it with that embedder "
                f"(--embedder {name}, or embedder={name!r} in Python), or re-embed it for the "
                f"new model with: remembrances --db {self.path} reembed --embedder {embedder.name}"
            )
        self.embedder = embedder

    def _require_embedder(self) -> Embedder:
        if self.embedder is None:
            raise EmbedderUnavailableError(
                "this store was opened without an embedder; pass embedder=... (or use mode='text')"
            )
        return self.embedder

    # -- transactions for the domain layers ------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[Transaction]:
        """A write :class:`Transaction` for chunk writes plus domain-table SQL.

        It takes the write lock up front (SQLite: BEGIN IMMEDIATE); nested calls on one
        thread join the outer transaction.
        """
        with self.engine.write() as tx:
            yield tx

    @contextmanager
    def snapshot(self) -> Iterator[Transaction]:
        """A read :class:`Transaction`: one consistent view of the memory."""
        with self.engine.read() as tx:
            yield tx

    def migrate(
        self,
        layer: str,
        migrations: Mapping[Dialect, Sequence[str]],
        *,
        readable_from: int | None = None,
    ) -> None:
        """Create or upgrade a domain layer's own tables.

        ``migrations`` holds the layer's numbered steps per SQL dialect; the
        engine's own are run (a file's schema version counts them). A read-only
        open reads a schema from ``readable_from`` on as it is (later steps serve
        writes only; default: none).
        """
        steps = migrations[self.engine.dialect]
        if self.engine.read_only:
            with self.engine.read() as tx:
                value = tx.execute(
                    "SELECT value FROM meta WHERE key = ?", (f"schema:{layer}",)
                ).scalar()
            if value is not None:  # a layer never used has no tables: it reads as empty
                check_read_only(self.path, layer, int(value), steps, readable_from)
            return
        with self.engine.write() as tx:
            migrate(tx, layer, steps)

    # -- writing -----------------------------------------------------------------------

    def prepare(
        self,
        chunks: Sequence[Chunk],
        *,
        embed: bool = True,
        progress: Progress | None = None,
    ) -> Prepared:
        """Validate chunks and compute their vectors (from the cache where possible).

        Runs outside any write transaction: embedding is slow and can fail, and the
        previous version of a source must stay intact when it does. Each batch of
        new vectors is cached at once, so an interrupted ingest resumes where it
        stopped without paying for the same vectors twice. ``progress("embedding",
        done, total)`` counts the texts that need the embedder (cached ones cost nothing).
        """
        if self.engine.in_transaction:
            raise RuntimeError("prepare() must not run inside a write transaction")
        if isinstance(chunks, Chunk):
            chunks = [chunks]
        validated = []
        for i, chunk in enumerate(chunks):
            if not isinstance(chunk, Chunk):
                raise InvalidInputError(f"chunk {i} is a {type(chunk).__name__}, not a Chunk")
            text = _check_text(chunk.text, f"chunk {i} text")
            embed_text = None
            if chunk.embed_text is not None and chunk.embed_text != text:
                embed_text = _check_text(chunk.embed_text, f"chunk {i} embed_text")
            validated.append(
                (
                    text,
                    encode_metadata(chunk.metadata),
                    embed_text,
                    content_hash(embed_text or text),
                    as_timestamp(chunk.ts, f"chunk {i} ts"),
                )
            )
        vectors: dict[str, bytes] = {}
        embedded = 0
        texts = {h: et or t for t, _, et, h, _ in validated}
        if embed and validated:
            vectors, embedded = self.cache.vectors_for(self._require_embedder(), texts, progress)
        return Prepared(
            [PreparedChunk(t, m, et, h, ts, vectors.get(h)) for t, m, et, h, ts in validated],
            embedded=embedded,
            cached=len(vectors) - embedded,
        )

    # -- changing the model ------------------------------------------------------------

    def embedded_texts(self) -> dict[str, str]:
        """Every distinct embedded text, by content hash (the embedding cache's key)."""
        return self.cache.embedded_texts()

    def cache_embeddings(
        self,
        embedder: Embedder,
        texts: Mapping[str, str],
        *,
        batch_size: int | None = None,
        progress: Progress | None = None,
    ) -> int:
        """Put vectors from ``embedder`` for ``texts`` in the cache; returns how many were new.

        Resumable: texts already cached for that embedder are skipped. ``progress`` is
        called as ``("embedding", texts done, texts in all)``, cached ones counting as done.
        """
        return self.cache.fill(embedder, texts, batch_size=batch_size, progress=progress)

    def switch_embedder(self, embedder: Embedder) -> None:
        """Make ``embedder`` the file's model, with the vectors it left in the cache.

        One transaction swaps every chunk's vector, rebuilds the vector index for the new
        dimension and records the model. Chunks whose text is not cached for the new
        model lose their vector and wait for a backfill. Other processes holding the
        file open with the old model must reopen it.
        """
        self.check_width(embedder)
        self.cache.switch(embedder)
        self.embedder = embedder

    def write_source(
        self, kind: str, collection: str, source: str, prepared: Prepared
    ) -> list[int]:
        """Replace every chunk of one source with ``chunks`` (inside a transaction)."""
        kind = check_name(kind, "kind")
        collection = check_name(collection, "collection")
        source = check_name(source, "source")
        now = time.time()
        rows = [
            NewChunk(
                kind,
                collection,
                source,
                position,
                c.text,
                c.metadata_json,
                c.content_hash,
                c.embed_text,
                c.ts,
                now,
                c.embedding,
            )
            for position, c in enumerate(prepared.chunks)
        ]
        with self.engine.write() as tx:
            tx.execute(
                "DELETE FROM chunks WHERE kind = ? AND collection = ? AND source = ?",
                (kind, collection, source),
            )
            ids = self.engine.insert_chunks(tx, rows)
            self.engine.after_write(tx)
        return ids

    def put_source(
        self,
        kind: str,
        source: str,
        chunks: Sequence[Chunk],
        *,
        collection: str = "default",
        embed: bool = True,
    ) -> WriteReport:
        """Add a source's chunks, atomically replacing what it had before.

        With ``embed=False`` the chunks are searchable by text at once and get
        their vectors later from :meth:`backfill_embeddings`.
        """
        prepared = self.prepare(chunks, embed=embed)
        ids = self.write_source(kind, collection, source, prepared)
        return WriteReport(
            ids, embedded=prepared.embedded, cached=prepared.cached, pending=prepared.pending
        )

    def delete_source(self, kind: str, source: str, *, collection: str | None = None) -> int:
        """Delete a source's chunks (in every collection unless one is named)."""
        sql = "DELETE FROM chunks WHERE kind = ? AND source = ?"
        params: list[Any] = [check_name(kind, "kind"), check_name(source, "source")]
        if collection is not None:
            sql += " AND collection = ?"
            params.append(check_name(collection, "collection"))
        with self.engine.write() as tx:
            tx.execute(sql, params)
            return tx.changes()

    def rename_source(self, kind: str, collection: str, source: str, new: str) -> int:
        """Give a source's chunks another name, in place (ids, vectors and text stay);
        returns how many chunks it has. The new name must be free in the collection."""
        params = [check_name(new, "source"), check_name(kind, "kind")]
        params += [check_name(collection, "collection"), check_name(source, "source")]
        with self.engine.write() as tx:
            tx.execute(
                "UPDATE chunks SET source = ? WHERE kind = ? AND collection = ? AND source = ?",
                params,
            )
            return tx.changes()

    def forget_embeddings(self, hashes: Iterable[str]) -> int:
        """Drop the cached vectors of ``hashes`` that no chunk uses any more; returns how
        many. The cache is keyed by a hash of the embedded text, so a text that must be
        forgotten leaves that hash, and its vector, behind until they go too."""
        return self.cache.forget(hashes)

    def compact(self) -> CompactReport:
        """Drop the cached vectors no chunk uses (deleted documents and events, texts
        since changed) and give the space back to the disk.

        The cache keeps them so that re-adding a text costs no embedding call (a renamed
        file, a document deleted and added again); a memory that keeps months of events
        grows by them with nothing kept. Vectors of another model for texts chunks still
        hold stay: a ``reembed`` fills them first and may be resumed. On SQLite the file
        is rewritten (``VACUUM``): it needs free disk space for two copies of what it
        keeps (one in the temp folder, one in the WAL) and holds the write lock meanwhile; reads begun before it keep the old file in
        use, and it shrinks once they end (``CompactReport.settled``).
        """
        self.check_writable("compact the memory")
        if self.engine.in_transaction:  # before anything is dropped
            raise StorageError("cannot compact the memory inside a write transaction")
        before = self.engine.size_bytes()
        dropped = self.cache.drop_unused()
        after = self.engine.reclaim_space()
        on_disk = self.engine.size_bytes()
        return CompactReport(dropped, before, after, on_disk, settled=on_disk <= after)

    def delete_collection(self, kind: str, collection: str) -> int:
        kind, collection = check_name(kind, "kind"), check_name(collection, "collection")
        with self.engine.write() as tx:
            tx.execute("DELETE FROM chunks WHERE kind = ? AND collection = ?", (kind, collection))
            return tx.changes()

    def delete(self, ids: int | Sequence[int]) -> int:
        """Delete chunks by id; returns how many existed."""
        id_list = [ids] if isinstance(ids, int) else list(ids)
        deleted = 0
        with self.engine.write() as tx:
            for chunk_id in id_list:
                tx.execute("DELETE FROM chunks WHERE id = ?", (int(chunk_id),))
                deleted += tx.changes()
        return deleted

    def pending_embeddings(self, *, kind: str | None = None, collection: str | None = None) -> int:
        """How many chunks still wait for their vectors."""
        sql, params = ChunkFilter.of(kind=kind, collection=collection).sql(self.engine.dialect)
        with self.engine.read() as tx:
            return int(
                tx.execute(
                    f"SELECT count(*) AS n FROM chunks c WHERE c.embedding IS NULL AND {sql}",
                    params,
                ).scalar()
            )

    def backfill_embeddings(
        self,
        *,
        kind: str | None = None,
        collection: str | None = None,
        batch_size: int = 256,
        limit: int | None = None,
        progress: Progress | None = None,
    ) -> int:
        """Give vectors to chunks written with ``embed=False``; resumable at any point.

        ``progress("embedded", done, None)`` (optional) counts the chunks done after
        each batch. Returns how many chunks got a vector.
        """
        done = 0
        sql, params = ChunkFilter.of(kind=kind, collection=collection).sql(self.engine.dialect)
        last_id = 0
        while limit is None or done < limit:
            size = batch_size if limit is None else min(batch_size, limit - done)
            with self.engine.read() as tx:
                rows = tx.execute(
                    "SELECT c.id, c.content_hash, coalesce(c.embed_text, c.text) AS text "
                    f"FROM chunks c WHERE c.embedding IS NULL AND c.id > ? AND {sql} "
                    "ORDER BY c.id LIMIT ?",
                    (last_id, *params, size),
                ).fetchall()
            if not rows:
                break
            last_id = rows[-1]["id"]
            blobs, _ = self.cache.vectors_for(
                self._require_embedder(), {r["content_hash"]: r["text"] for r in rows}
            )
            with self.engine.write() as tx:
                self.engine.set_embeddings(
                    tx, [(r["id"], r["content_hash"], blobs[r["content_hash"]]) for r in rows]
                )
            done += len(rows)
            if progress is not None:
                progress("embedded", done, None)
        return done

    # -- reading -----------------------------------------------------------------------

    def get(self, chunk_id: int) -> StoredChunk:
        chunk_id = check_id(chunk_id, "chunk id")
        with self.engine.read() as tx:
            row = tx.execute(
                f"SELECT {self.engine.chunk_columns} FROM chunks c WHERE c.id = ?", (chunk_id,)
            ).fetchone()
        if row is None:
            raise NotFoundError(f"no chunk with id {chunk_id}")
        return _stored(row)

    def get_source(
        self, kind: str, source: str, *, collection: str | None = None
    ) -> list[StoredChunk]:
        sql = f"SELECT {self.engine.chunk_columns} FROM chunks c WHERE c.kind = ? AND c.source = ?"
        params: list[Any] = [kind, source]
        if collection is not None:
            sql += " AND c.collection = ?"
            params.append(collection)
        with self.engine.read() as tx:
            rows = tx.execute(sql + " ORDER BY c.collection, c.position", params).fetchall()
        return [_stored(r) for r in rows]

    def sources(self) -> list[tuple[str, str, str]]:
        """Every (kind, collection, source) that has chunks, in that order."""
        with self.engine.read() as tx:
            rows = tx.execute(
                "SELECT DISTINCT kind, collection, source FROM chunks "
                "ORDER BY kind, collection, source"
            ).fetchall()
        return [(str(r["kind"]), str(r["collection"]), str(r["source"])) for r in rows]

    def count(self, *, kind: str | None = None, collection: str | None = None) -> int:
        sql, params = ChunkFilter.of(kind=kind, collection=collection).sql(self.engine.dialect)
        with self.engine.read() as tx:
            return int(
                tx.execute(f"SELECT count(*) AS n FROM chunks c WHERE {sql}", params).scalar()
            )

    def collections(self, *, kind: str | None = None) -> dict[str, int]:
        """Collection name -> chunk count."""
        sql, params = ChunkFilter.of(kind=kind).sql(self.engine.dialect)
        with self.engine.read() as tx:
            rows = tx.execute(
                f"SELECT c.collection, count(*) AS n FROM chunks c WHERE {sql} "
                "GROUP BY c.collection ORDER BY c.collection",
                params,
            ).fetchall()
        return {str(r["collection"]): int(r["n"]) for r in rows}

    def kinds(self) -> list[str]:
        """The kinds of chunk the memory holds."""
        with self.engine.read() as tx:
            rows = tx.execute("SELECT DISTINCT kind FROM chunks ORDER BY kind").fetchall()
        return [str(r["kind"]) for r in rows]

    def stats(self) -> dict[str, Any]:
        with self.engine.read() as tx:
            kinds = {
                str(r["kind"]): int(r["n"])
                for r in tx.execute("SELECT kind, count(*) AS n FROM chunks GROUP BY kind")
            }
            total = sum(kinds.values())
            pending = tx.execute(
                "SELECT count(*) AS n FROM chunks WHERE embedding IS NULL"
            ).scalar()
            cached = tx.execute("SELECT count(*) AS n FROM embedding_cache").scalar()
            unused = tx.execute("SELECT count(*) AS n " + UNUSED_EMBEDDINGS).scalar()
            sources = tx.execute(
                "SELECT count(*) AS n FROM "
                "(SELECT DISTINCT kind, collection, source FROM chunks) AS s"
            ).scalar()
            # the file's, which a read-only open of an older one does not raise
            version = tx.execute("SELECT value FROM meta WHERE key = 'schema:store'").scalar()
        return {
            "path": self.path,
            "chunks": total,
            "sources": sources,
            "chunks_by_kind": kinds,
            "pending_embeddings": pending,
            "cached_embeddings": cached,
            "unused_cached_embeddings": unused,  # compact() drops them
            "embedder": self.embedder_name,
            "dim": self.dim,
            "schema_version": int(version or 0),
            "file_bytes": self.engine.size_bytes(),
            "index_bytes": self.engine.index_bytes(),
            "free_bytes": self.engine.free_bytes(),  # compact() gives them back
        }

    # -- searching ---------------------------------------------------------------------

    def stems(self, words: Sequence[str]) -> list[str]:
        """Each word as the text index stems it, so a layer can compare words as search
        does (the code layer matches query words against symbol names this way)."""
        if not words:
            return []
        with self.engine.read() as tx:
            return self.engine.stems(tx, list(words))

    def search(
        self,
        query: str,
        *,
        mode: SearchMode = "hybrid",
        limit: int = 10,
        kind: str | Sequence[str] | None = None,
        collection: str | Sequence[str] | None = None,
        where: Where | None = None,
        min_score: float = 0.0,
        source: str | Sequence[str] | None = None,
        since: float | datetime | str | None = None,
        until: float | datetime | str | None = None,
        mmr: float | None = None,
        rerank: bool = False,
        engine: VectorIndexKind = "memory",
        pool: int | None = None,
        exact: bool | None = None,
        fuse: Fuse = "pointwise",
        kind_where: Mapping[str, Where] | None = None,
    ) -> list[SearchResult]:
        """Search by meaning (``vector``), words (``text``) or both fused (``hybrid``).

        Filters apply inside each leg, so a filter never returns fewer than
        ``limit`` results while that many chunks match. ``min_score`` applies to the
        normalised score. ``mmr=λ`` diversifies (λ = 1 is pure relevance);
        ``rerank`` asks the configured reranker to reorder the candidates.
        ``engine='vec0'`` runs the vector leg on sqlite-vec instead of the
        in-memory index (it needs no memory for vectors, but is slower).
        ``exact=False`` lets the in-memory engine pick candidates by sign bits and
        re-score them exactly: several times faster, recall@10 about 0.95+ (see
        docs/performance.md); scores stay exact cosine. ``exact`` defaults to True on
        SQLite and to False (the HNSW index) on PostgreSQL, where True scans exactly
        (docs/scale-out.md). ``fuse='rrf'`` fuses the hybrid
        legs by reciprocal rank (k = 60) instead of scoring each candidate on its
        own cosine and word coverage (see docs/search.md for why the default is
        not RRF). ``kind_where`` holds metadata conditions per kind, which only
        that kind's chunks must meet (``{"event": {"user": "alice"}}``: one user's
        events, and every document and symbol).
        """
        if not isinstance(query, str):
            raise InvalidInputError(f"query must be a string, not {type(query).__name__}")
        if len(query) > MAX_QUERY_CHARS:
            raise InvalidInputError(
                f"query is {len(query):,} characters; the limit is {MAX_QUERY_CHARS:,}"
            )
        if mode not in ("hybrid", "vector", "text"):
            raise InvalidInputError(f"mode must be 'hybrid', 'vector' or 'text', not {mode!r}")
        if engine not in ("memory", "vec0"):
            raise InvalidInputError(f"engine must be 'memory' or 'vec0', not {engine!r}")
        if fuse not in ("pointwise", "rrf"):
            raise InvalidInputError(f"fuse must be 'pointwise' or 'rrf', not {fuse!r}")
        limit = check_limit(limit, MAX_LIMIT)
        min_score = check_min_score(min_score)
        if mmr is not None and not (isinstance(mmr, int | float) and 0.0 <= mmr <= 1.0):
            raise InvalidInputError("mmr (lambda) must be a number from 0 to 1")
        if rerank and self.reranker is None:
            raise RerankerNotConfiguredError(
                "rerank=True but this store has no reranker; pass reranker=... to Store()"
            )
        check_unicode(query, "query")
        request = SearchRequest(
            query=query,
            mode=mode,
            limit=limit,
            where=ChunkFilter.of(  # validates before any work
                kind=kind,
                collection=collection,
                source=source,
                where=where,
                since=as_timestamp(since, "since"),
                until=as_timestamp(until, "until"),
                kind_where=kind_where,
            ),
            min_score=min_score,
            mmr=mmr,
            rerank=rerank,
            index=engine,
            pool=pool,
            exact=exact if exact is not None else self.engine.dialect == "sqlite",
            fuse=fuse,
            kind=kind,
        )
        results = pipeline.search(
            self.engine, request, query_vector=self._query_vector, reranker=self.reranker
        )
        if kind:  # only the kinds that found nothing can be misspelt
            found = {r.kind for r in results}
            asked = [kind] if isinstance(kind, str) else list(kind)
            self._check_kinds([k for k in asked if k not in found], asked)
        return results

    def _check_kinds(self, kinds: Sequence[str], asked: Sequence[str]) -> None:
        """Refuse a kind no chunk holds when its other number does ("events" for the
        event log's "event"): a silent [] hides the typo. Kinds are open (any layer
        may add one), so a kind nothing holds is otherwise just empty."""
        if not kinds:
            return
        variants = {k: k[:-1] if k.endswith("s") else k + "s" for k in kinds}
        wanted = sorted(set(kinds) | set(variants.values()))
        marks = ", ".join("?" * len(wanted))
        with self.engine.read() as tx:
            held = {
                str(r["kind"])
                for r in tx.execute(
                    f"SELECT DISTINCT kind FROM chunks WHERE kind IN ({marks})", wanted
                )
            }
        for k in kinds:  # ["event", "events"] asks for both spellings on purpose
            if k not in held and variants[k] in held and variants[k] not in asked:
                raise InvalidInputError(
                    f"no chunk is of kind {k!r}; the memory holds kind {variants[k]!r}"
                )

    def _query_vector(self, query: str) -> Vectors:
        """The query's vector (recent ones are remembered)."""
        return self._query_vectors.get(self._require_embedder(), query)

    def warm(self) -> None:
        """Load the in-memory vector index now, as the first vector search would.

        For callers with a deadline per search (the enricher): the one-time load
        should not be counted against the first search's time.
        """
        with self.engine.read() as tx:
            self.engine.warm(tx)

    def vector_index(self) -> VectorIndex:
        """The SQLite engine's in-memory vector index, loaded now if it was not.

        For benchmarks and diagnostics: its size (``nbytes``), where it loaded
        from (``loaded_from``) and its scan threads (``threads``, settable).
        """
        if not isinstance(self.engine, SqliteEngine):
            raise AttributeError("only a SQLite memory holds an in-memory vector index")
        self.warm()
        assert self.engine.index is not None
        return self.engine.index
