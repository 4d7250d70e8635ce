"""The Store: chunks, their vectors and their full-text index in one SQLite file.

Every domain layer (KB, events, code) stores its searchable text here and
searches through :meth:`Store.search`, so there is one search engine, not three.
The schema is described in docs/storage.md.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Protocol

import apsw
import numpy as np

from . import fusion
from .connection import Connection, Database, FileKind, kind_of
from .embeddings.base import Embedder, Vectors, as_matrix, as_vector, to_blob
from .errors import (
    EmbedderMismatchError,
    EmbedderUnavailableError,
    InvalidInputError,
    NotAMemoryError,
    NotFoundError,
    ReadOnlyError,
    RemembrancesError,
    RerankerNotConfiguredError,
    SchemaVersionError,
)
from .fts_query import fts_query
from .progress import Progress
from .records import Chunk, SearchResult, StoredChunk, WriteReport
from .schema import STORE_MIGRATIONS, migrate, vec0_script
from .storage.filters import ChunkFilter, names
from .storage.filters import Where as Where
from .storage.in_lists import in_lists
from .storage.sqlite_transaction import SqliteTransaction
from .text_match import text_match
from .validation import check_min_score, check_name, check_text, check_unicode, encode_metadata
from .vector_index import VectorIndex

log = logging.getLogger(__name__)

SearchMode = Literal["hybrid", "vector", "text"]
Engine = Literal["memory", "vec0"]
Fuse = Literal["pointwise", "rrf"]

MAX_CHUNK_CHARS = 1_000_000
MAX_QUERY_CHARS = 100_000
MAX_LIMIT = 1000
#: Texts per embedder call, unless the embedder asks for another size (its
#: ``call_size``); each batch is cached as soon as it returns.
EMBED_BATCH = 64
#: Query vectors remembered (least recently used ones are dropped first).
QUERY_CACHE_SIZE = 256
#: Candidates each leg proposes to a hybrid search (at least; ``limit * 5`` when larger).
HYBRID_POOL = 100
#: vector_log entries kept; a reader further behind reloads its index.
VECTOR_LOG_KEEP = 200_000


class Reranker(Protocol):
    """Re-scores the top candidates of a search (e.g. a cross-encoder)."""

    def rerank(self, query: str, texts: Sequence[str]) -> Sequence[float]: ...


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


def _as_timestamp(value: float | datetime | str | None, what: str) -> float | None:
    """Seconds since the epoch (UTC). Naive datetimes are local time."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError as exc:
            raise InvalidInputError(f"{what} {value!r} is not an ISO 8601 time") from exc
    if isinstance(value, datetime):
        return value.timestamp()
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InvalidInputError(f"{what} must be a datetime, an ISO string or epoch seconds")
    return float(value)


def _admit(path: str, kind: FileKind, *, create: bool | None, read_only: bool) -> None:
    """Refuse, before anything is written, a file that is not a memory unless asked to."""
    if kind == "memory" or (kind == "other" and create is True and not read_only):
        return
    if kind == "new" and create is not False and not read_only:
        return
    if kind == "empty" and create is not False and not read_only:
        return
    if kind == "new":
        raise NotAMemoryError(
            f"there is no memory file at {path!r}; create one with `remembrances init` "
            "(Python: open it with create=True)"
        )
    what = "is empty" if kind == "empty" else "holds another program's SQLite tables"
    raise NotAMemoryError(
        f"{path!r} {what}, so it is not a remembrances memory; nothing was written to it. "
        "Point --db at a memory file, or make one here on purpose with "
        f"`remembrances --db {path} init` (Python: create=True)"
    )


def embed_call_size(embedder: Embedder) -> int:
    """Texts per embedder call: the embedder's ``call_size`` when it has one.

    A remote embedder sizes it to keep all its concurrent requests busy; one
    call of EMBED_BATCH would leave a cloud provider with one request at a time.
    """
    size = getattr(embedder, "call_size", EMBED_BATCH)
    return (
        size if isinstance(size, int) and not isinstance(size, bool) and size >= 1 else EMBED_BATCH
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
    ) -> None:
        """Open the memory at ``path``.

        ``create``: None (default) makes a memory of a new path or an empty file and
        refuses a file holding anything else; True also turns another program's
        SQLite file into a memory (the user asked for one there); False opens only
        an existing memory. Nothing is written to a file that is refused.
        """
        self.path = os.fspath(path)
        if not os.path.exists(self.path):  # before SQLite creates it
            _admit(self.path, "new", create=create, read_only=read_only)

        def admit(conn: Connection) -> None:  # the file is looked at before any write
            _admit(self.path, kind_of(conn), create=create, read_only=read_only)

        self.db = Database(self.path, read_only=read_only, inspect=admit)
        self.embedder = embedder
        self.reranker = reranker
        self._index: VectorIndex | None = None
        self._index_lock = threading.Lock()
        self._query_cache: OrderedDict[tuple[str, str], Vectors] = OrderedDict()
        self._query_cache_lock = threading.Lock()
        try:
            if self.db.read_only:
                self._check_readable()
            else:
                with self.db.write() as conn:
                    migrate(conn, "store", STORE_MIGRATIONS)
            if embedder is not None:
                self._guard_embedder(embedder)
        except BaseException:
            self.db.close()
            raise

    # -- lifecycle and the model guard ---------------------------------------------------

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check_readable(self) -> None:
        with self.db.read() as conn:
            try:
                row = conn.execute("SELECT value FROM meta WHERE key = 'schema:store'").fetchone()
            except apsw.SQLError as exc:
                raise RemembrancesError(f"{self.path!r} is not a remembrances file") from exc
        version = int(row[0]) if row else 0
        if version > len(STORE_MIGRATIONS):
            raise SchemaVersionError(
                f"this file's store schema is version {version}, newer than this version of "
                "remembrances understands; upgrade remembrances to open it"
            )
        if version < len(STORE_MIGRATIONS):
            raise RemembrancesError(
                f"{self.path!r} needs a schema upgrade; open it once without read_only"
            )

    def meta(self, key: str) -> str | None:
        with self.db.read() as conn:
            row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    @property
    def read_only(self) -> bool:
        """True when writes are refused (opened read-only, or the file is not writable)."""
        return self.db.read_only

    def check_writable(self, action: str) -> None:
        """Refuse up front (before any embedding) what a read-only file would refuse later."""
        if self.db.read_only:
            raise ReadOnlyError(
                f"cannot {action}: {self.path!r} is read-only ({self.db.read_only_reason})"
            )

    @property
    def embedder_name(self) -> str | None:
        """The embedder recorded in the file (None for a file without vectors yet)."""
        return self.meta("embedder")

    @property
    def dim(self) -> int | None:
        value = self.meta("dim")
        return None if value is None else int(value)

    def _guard_embedder(self, embedder: Embedder) -> None:
        name, dim = self.embedder_name, self.dim
        if name is None:
            if self.db.read_only:
                return
            with self.db.write() as conn:
                recorded = conn.execute("SELECT value FROM meta WHERE key = 'embedder'").fetchone()
                if recorded is None:
                    conn.execute(
                        "INSERT INTO meta (key, value) VALUES ('embedder', ?), ('dim', ?)",
                        (embedder.name, str(embedder.dim)),
                    )
                    conn.execute(vec0_script(embedder.dim))
            name, dim = self.embedder_name, self.dim
        elif name == embedder.name and dim == embedder.dim and not self.db.read_only:
            with self.db.read() as conn:
                has_vec0 = conn.execute(
                    "SELECT 1 FROM sqlite_master WHERE name = 'chunks_vec'"
                ).fetchone()
            if has_vec0 is None:  # a file from before vec0 existed, or a damaged one
                with self.db.write() as conn:
                    conn.execute(vec0_script(embedder.dim))
                    conn.execute(
                        "INSERT INTO chunks_vec (chunk_id, embedding, kind, collection) "
                        "SELECT id, embedding, kind, collection FROM chunks "
                        "WHERE embedding IS NOT NULL AND length(embedding) = ?",
                        (embedder.dim * 4,),
                    )
        if name != embedder.name or dim != embedder.dim:
            raise EmbedderMismatchError(
                f"{self.path} was written with embedder {name!r} ({dim} dims) but was opened "
                f"with {embedder.name!r} ({embedder.dim} dims). Open it with that embedder "
                f"(--embedder {name}, or embedder={name!r} in Python), or re-embed it for the "
                f"new model with: remembrances --db {self.path} reembed --embedder {embedder.name}"
            )

    def _require_embedder(self) -> Embedder:
        if self.embedder is None:
            raise EmbedderUnavailableError(
                "this store was opened without an embedder; pass embedder=... (or use mode='text')"
            )
        return self.embedder

    # -- transactions for the domain layers ------------------------------------------

    # Typed Any, not Transaction, until remembrances/code/ stops passing it where an
    # apsw.Connection is declared; the object is a Transaction (storage/transaction.py).
    @contextmanager
    def transaction(self) -> Iterator[Any]:
        """A write :class:`Transaction` (BEGIN IMMEDIATE) for chunk writes plus domain-table SQL.

        Nested calls on one thread join the outer transaction.
        """
        with self.db.write() as conn:
            yield SqliteTransaction(conn)

    @contextmanager
    def snapshot(self) -> Iterator[Any]:
        """A read :class:`Transaction`: one consistent view of the file."""
        with self.db.read() as conn:
            yield SqliteTransaction(conn)

    def migrate(self, layer: str, migrations: Sequence[str]) -> None:
        """Create or upgrade a domain layer's own tables."""
        if self.db.read_only:
            with self.db.read() as conn:
                row = conn.execute(
                    "SELECT value FROM meta WHERE key = ?", (f"schema:{layer}",)
                ).fetchone()
            if row is not None and int(row[0]) > len(migrations):
                raise SchemaVersionError(f"this file's {layer} schema is newer than this version")
            return
        with self.db.write() as conn:
            migrate(conn, layer, migrations)

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
        if self.db.in_transaction:
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
                    _as_timestamp(chunk.ts, f"chunk {i} ts"),
                )
            )
        vectors: dict[str, bytes] = {}
        embedded = 0
        texts = {h: et or t for t, _, et, h, _ in validated}
        if embed and validated:
            vectors, embedded = self._vectors_for(texts, progress)
        return Prepared(
            [PreparedChunk(t, m, et, h, ts, vectors.get(h)) for t, m, et, h, ts in validated],
            embedded=embedded,
            cached=len(vectors) - embedded,
        )

    def _vectors_for(
        self, texts: Mapping[str, str], progress: Progress | None = None
    ) -> tuple[dict[str, bytes], int]:
        """Blobs for ``{content_hash: text}``: cached ones, then newly embedded ones."""
        embedder = self._require_embedder()
        found = self._cached(embedder.name, list(texts))
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
        found.update(self._embed_into_cache(embedder, missing, progress=step))
        return found, len(missing)

    def _embed_into_cache(
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
            matrix = as_matrix(
                embedder.embed_documents([texts[h] for h in batch]),
                count=len(batch),
                dim=embedder.dim,
                who=f"embedder {embedder.name!r}",
            )
            blobs = {h: to_blob(v) for h, v in zip(batch, matrix, strict=True)}
            if not self.db.read_only:
                with self.db.write() as conn:
                    conn.executemany(
                        "INSERT OR IGNORE INTO embedding_cache (embedder, content_hash, embedding) "
                        "VALUES (?, ?, ?)",
                        [(embedder.name, h, b) for h, b in blobs.items()],
                    )
            if keep:
                kept.update(blobs)
            if progress is not None:
                progress(len(batch))
        return kept

    # -- changing the model ------------------------------------------------------------

    def embedded_texts(self) -> dict[str, str]:
        """Every distinct embedded text, by content hash (the embedding cache's key)."""
        with self.db.read() as conn:
            rows = conn.execute(
                "SELECT content_hash, coalesce(embed_text, text) FROM chunks GROUP BY content_hash"
            ).fetchall()
        return {str(h): str(t) for h, t in rows}

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
        with self.db.read() as conn:
            cached = {
                str(r[0])
                for r in conn.execute(
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
        self._embed_into_cache(embedder, missing, batch_size=batch_size, progress=step, keep=False)
        return len(missing)

    def switch_embedder(self, embedder: Embedder) -> None:
        """Make ``embedder`` the file's model, with the vectors it left in the cache.

        One transaction swaps every chunk's vector, rebuilds the vec0 table for the new
        dimension and records the model. Chunks whose text is not cached for the new
        model lose their vector and wait for a backfill. Other processes holding the
        file open with the old model must reopen it.
        """
        with self.db.write() as conn:
            # The vec0 table has the old dimension: drop it (and its triggers) before the
            # vector updates would write new-size vectors into it.
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
        self.embedder = embedder
        with self._index_lock:
            self._index = None  # the next search loads the new vectors

    def _cached(self, embedder: str, hashes: Sequence[str]) -> dict[str, bytes]:
        found: dict[str, bytes] = {}
        with self.db.read() as conn:
            for part, marks in in_lists(hashes):
                for h, blob in conn.execute(
                    "SELECT content_hash, embedding FROM embedding_cache "
                    f"WHERE embedder = ? AND content_hash IN ({marks})",
                    (embedder, *part),
                ):
                    found[h] = blob
        return found

    def write_source(
        self, kind: str, collection: str, source: str, prepared: Prepared
    ) -> list[int]:
        """Replace every chunk of one source with ``chunks`` (inside a transaction)."""
        kind = check_name(kind, "kind")
        collection = check_name(collection, "collection")
        source = check_name(source, "source")
        now = time.time()
        with self.db.write() as conn:
            conn.execute(
                "DELETE FROM chunks WHERE kind = ? AND collection = ? AND source = ?",
                (kind, collection, source),
            )
            ids = []
            for position, c in enumerate(prepared.chunks):
                row = conn.execute(
                    "INSERT INTO chunks (kind, collection, source, position, text, metadata, "
                    "content_hash, embed_text, ts, created_at, embedding) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                    (
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
                    ),
                ).fetchone()
                ids.append(int(row[0]))
            self._prune_vector_log(conn)
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

    def _prune_vector_log(self, conn: Connection) -> None:
        low, high = conn.execute("SELECT min(seq), max(seq) FROM vector_log").fetchone()
        if low is None or high - low < 2 * VECTOR_LOG_KEEP:
            return
        through = high - VECTOR_LOG_KEEP
        conn.execute("DELETE FROM vector_log WHERE seq <= ?", (through,))
        conn.execute(
            "INSERT INTO meta (key, value) VALUES ('vector_log_pruned_through', ?) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (str(through),),
        )

    def delete_source(self, kind: str, source: str, *, collection: str | None = None) -> int:
        """Delete a source's chunks (in every collection unless one is named)."""
        sql = "DELETE FROM chunks WHERE kind = ? AND source = ?"
        params: list[Any] = [check_name(kind, "kind"), check_name(source, "source")]
        if collection is not None:
            sql += " AND collection = ?"
            params.append(check_name(collection, "collection"))
        with self.db.write() as conn:
            conn.execute(sql, params)
            return int(conn.changes())

    def delete_collection(self, kind: str, collection: str) -> int:
        kind, collection = check_name(kind, "kind"), check_name(collection, "collection")
        with self.db.write() as conn:
            conn.execute("DELETE FROM chunks WHERE kind = ? AND collection = ?", (kind, collection))
            return int(conn.changes())

    def delete(self, ids: int | Sequence[int]) -> int:
        """Delete chunks by id; returns how many existed."""
        id_list = [ids] if isinstance(ids, int) else list(ids)
        deleted = 0
        with self.db.write() as conn:
            for chunk_id in id_list:
                conn.execute("DELETE FROM chunks WHERE id = ?", (int(chunk_id),))
                deleted += conn.changes()
        return deleted

    def pending_embeddings(self, *, kind: str | None = None, collection: str | None = None) -> int:
        """How many chunks still wait for their vectors."""
        sql, params = self._filter_sql(kind=kind, collection=collection)
        with self.db.read() as conn:
            return int(
                conn.execute(
                    f"SELECT count(*) FROM chunks c WHERE c.embedding IS NULL AND {sql}", params
                ).fetchone()[0]
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
        sql, params = self._filter_sql(kind=kind, collection=collection)
        last_id = 0
        while limit is None or done < limit:
            size = batch_size if limit is None else min(batch_size, limit - done)
            with self.db.read() as conn:
                rows = conn.execute(
                    "SELECT c.id, c.content_hash, coalesce(c.embed_text, c.text) FROM chunks c "
                    f"WHERE c.embedding IS NULL AND c.id > ? AND {sql} ORDER BY c.id LIMIT ?",
                    (last_id, *params, size),
                ).fetchall()
            if not rows:
                break
            last_id = rows[-1][0]
            blobs, _ = self._vectors_for({h: t for _, h, t in rows})
            with self.db.write() as conn:
                conn.executemany(
                    "UPDATE chunks SET embedding = ? WHERE id = ? AND content_hash = ? "
                    "AND embedding IS NULL",
                    [(blobs[h], i, h) for i, h, _ in rows],
                )
            done += len(rows)
            if progress is not None:
                progress("embedded", done, None)
        return done

    # -- reading -----------------------------------------------------------------------

    def get(self, chunk_id: int) -> StoredChunk:
        with self.db.read() as conn:
            row = conn.execute(
                f"SELECT {_CHUNK_COLUMNS} FROM chunks WHERE id = ?", (chunk_id,)
            ).fetchone()
        if row is None:
            raise NotFoundError(f"no chunk with id {chunk_id}")
        return _stored(row)

    def get_source(
        self, kind: str, source: str, *, collection: str | None = None
    ) -> list[StoredChunk]:
        sql = f"SELECT {_CHUNK_COLUMNS} FROM chunks WHERE kind = ? AND source = ?"
        params: list[Any] = [kind, source]
        if collection is not None:
            sql += " AND collection = ?"
            params.append(collection)
        with self.db.read() as conn:
            rows = conn.execute(sql + " ORDER BY collection, position", params).fetchall()
        return [_stored(r) for r in rows]

    def count(self, *, kind: str | None = None, collection: str | None = None) -> int:
        sql, params = self._filter_sql(kind=kind, collection=collection)
        with self.db.read() as conn:
            return int(
                conn.execute(f"SELECT count(*) FROM chunks c WHERE {sql}", params).fetchone()[0]
            )

    def collections(self, *, kind: str | None = None) -> dict[str, int]:
        """Collection name -> chunk count."""
        sql, params = self._filter_sql(kind=kind)
        with self.db.read() as conn:
            rows = conn.execute(
                f"SELECT collection, count(*) FROM chunks c WHERE {sql} "
                "GROUP BY collection ORDER BY collection",
                params,
            ).fetchall()
        return {str(name): int(n) for name, n in rows}

    def stats(self) -> dict[str, Any]:
        with self.db.read() as conn:
            kinds = dict(conn.execute("SELECT kind, count(*) FROM chunks GROUP BY kind").fetchall())
            total = sum(kinds.values())
            pending = conn.execute(
                "SELECT count(*) FROM chunks WHERE embedding IS NULL"
            ).fetchone()[0]
            cached = conn.execute("SELECT count(*) FROM embedding_cache").fetchone()[0]
            sources = conn.execute(
                "SELECT count(*) FROM (SELECT DISTINCT kind, collection, source FROM chunks)"
            ).fetchone()[0]
        size = sum(
            os.path.getsize(self.path + suffix)
            for suffix in ("", "-wal")
            if os.path.exists(self.path + suffix)
        )
        return {
            "path": self.path,
            "chunks": total,
            "sources": sources,
            "chunks_by_kind": kinds,
            "pending_embeddings": pending,
            "cached_embeddings": cached,
            "embedder": self.embedder_name,
            "dim": self.dim,
            "schema_version": len(STORE_MIGRATIONS),
            "file_bytes": size,
            "index_bytes": self._index.nbytes if self._index is not None else 0,
        }

    # -- searching ---------------------------------------------------------------------

    def _filter_sql(
        self,
        *,
        kind: str | Sequence[str] | None = None,
        collection: str | Sequence[str] | None = None,
        source: str | Sequence[str] | None = None,
        where: Where | None = None,
        since: float | None = None,
        until: float | None = None,
    ) -> tuple[str, list[Any]]:
        """SQL over the chunk alias ``c`` for the filters, applied inside each search."""
        return ChunkFilter.of(
            kind=kind, collection=collection, source=source, where=where, since=since, until=until
        ).sql()

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
        engine: Engine = "memory",
        pool: int | None = None,
        exact: bool = True,
        fuse: Fuse = "pointwise",
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
        docs/performance.md); scores stay exact cosine. ``fuse='rrf'`` fuses the hybrid
        legs by reciprocal rank (k = 60) instead of scoring each candidate on its
        own cosine and word coverage (see docs/search.md for why the default is
        not RRF).
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
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
            raise InvalidInputError(f"limit must be an integer from 1 to {MAX_LIMIT}")
        min_score = check_min_score(min_score)
        if mmr is not None and not (isinstance(mmr, int | float) and 0.0 <= mmr <= 1.0):
            raise InvalidInputError("mmr (lambda) must be a number from 0 to 1")
        if rerank and self.reranker is None:
            raise RerankerNotConfiguredError(
                "rerank=True but this store has no reranker; pass reranker=... to Store()"
            )
        check_unicode(query, "query")
        since_ts = _as_timestamp(since, "since")
        until_ts = _as_timestamp(until, "until")
        filters: dict[str, Any] = {
            "kind": kind,
            "collection": collection,
            "source": source,
            "where": where,
            "since": since_ts,
            "until": until_ts,
        }
        sql, params = self._filter_sql(**filters)  # validates before any work
        if pool is None:
            # Hybrid scores every candidate on its own; a deep pool only finds
            # chunks that one leg ranks low and the other high.
            pool = (
                limit
                if mode != "hybrid" and mmr is None and not rerank
                else max(limit * 5, HYBRID_POOL)
            )
        pool = min(max(pool, limit), 4096)

        query_vector = None
        if mode != "text" and query.strip():
            query_vector = self._query_vector(query)

        with self.db.read() as conn:
            vector_hits: list[tuple[int, float]] = []
            text_hits: list[tuple[int, float]] = []
            if query_vector is not None:
                if engine == "vec0":
                    vector_hits = self._vec0_leg(conn, query_vector, pool, sql, params, filters)
                else:
                    vector_hits = self._memory_leg(
                        conn, query_vector, pool, sql, params, filters, exact=exact
                    )
            if mode != "vector":
                text_hits = self._text_leg(conn, query, pool, sql, params)
            fused = self._fuse(conn, query, query_vector, mode, vector_hits, text_hits, fuse, kind)
            fused = [f for f in fused if f.score >= min_score]
            if mmr is not None:
                fused = self._mmr(conn, fused, mmr, limit)
            elif not rerank:
                fused = fused[:limit]
            results = self._rows(conn, fused)
        if rerank:
            results = self._rerank(query, results, limit, min_score)
        return results

    def _query_vector(self, query: str) -> Vectors:
        """The query's vector; recent ones are remembered, since an agent's turn
        often searches several sources with the same words."""
        embedder = self._require_embedder()
        key = (embedder.name, query)
        with self._query_cache_lock:
            cached = self._query_cache.get(key)
            if cached is not None:
                self._query_cache.move_to_end(key)
                return cached
        vector = as_vector(
            embedder.embed_query(query), dim=embedder.dim, who=f"embedder {embedder.name!r}"
        )
        vector.setflags(write=False)
        with self._query_cache_lock:
            self._query_cache[key] = vector
            if len(self._query_cache) > QUERY_CACHE_SIZE:
                self._query_cache.popitem(last=False)
        return vector

    def _memory_leg(
        self,
        conn: Connection,
        query: Vectors,
        pool: int,
        sql: str,
        params: list[Any],
        filters: dict[str, Any],
        *,
        exact: bool = True,
    ) -> list[tuple[int, float]]:
        ids = None
        if filters["source"] is not None or filters["where"]:
            ids = [
                r[0]
                for r in conn.execute(
                    f"SELECT c.id FROM chunks c WHERE c.embedding IS NOT NULL AND {sql}", params
                )
            ]
        # One index per store, shared by the threads' searches: syncing mutates it.
        with self._index_lock:
            index = self._vector_index(conn)
            if ids is not None:
                ids_found, scores = index.top_k(query, pool, rows=index.rows_for(ids), exact=exact)
            else:
                mask = None
                if any(filters[k] is not None for k in ("kind", "collection", "since", "until")):
                    mask = index.mask(
                        kinds=names(filters["kind"], "kind"),
                        collections=names(filters["collection"], "collection"),
                        since=filters["since"],
                        until=filters["until"],
                    )
                ids_found, scores = index.top_k(query, pool, mask=mask, exact=exact)
        return [
            (int(i), fusion.vector_score(float(s))) for i, s in zip(ids_found, scores, strict=True)
        ]

    def warm(self) -> None:
        """Load the in-memory vector index now, as the first vector search would.

        For callers with a deadline per search (the enricher): the one-time load
        should not be counted against the first search's time.
        """
        self.vector_index()

    def vector_index(self) -> VectorIndex:
        """The in-memory vector index, loaded now if it was not.

        For benchmarks and diagnostics: its size (``nbytes``), where it loaded
        from (``loaded_from``) and its scan threads (``threads``, settable).
        """
        with self.snapshot() as conn, self._index_lock:
            return self._vector_index(conn)

    def _vector_index(self, conn: Connection) -> VectorIndex:
        dim = conn.execute("SELECT value FROM meta WHERE key = 'dim'").fetchone()
        if self._index is None:
            self._index = VectorIndex(int(dim[0]) if dim else 1)
        self._index.sync(conn)
        return self._index

    def _vec0_leg(
        self,
        conn: Connection,
        query: Vectors,
        pool: int,
        sql: str,
        params: list[Any],
        filters: dict[str, Any],
    ) -> list[tuple[int, float]]:
        blob = to_blob(query)
        exists = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'chunks_vec'").fetchone()
        if exists is None:
            return []
        if all(v is None or v == {} for v in filters.values()):
            rows = conn.execute(
                "SELECT chunk_id, distance FROM chunks_vec WHERE embedding MATCH ? AND k = ? "
                "ORDER BY distance",
                (blob, pool),
            ).fetchall()
        else:  # filtered: an exact scan of the matching rows
            rows = conn.execute(
                "SELECT c.id, vec_distance_cosine(c.embedding, ?) AS d FROM chunks c "
                f"WHERE c.embedding IS NOT NULL AND {sql} ORDER BY d LIMIT ?",
                (blob, *params, pool),
            ).fetchall()
        return [(int(i), fusion.vector_score(1.0 - float(d))) for i, d in rows]

    def _text_leg(
        self, conn: Connection, query: str, pool: int, sql: str, params: list[Any]
    ) -> list[tuple[int, float]]:
        match = fts_query(query)
        if match is None:
            return []
        rows = conn.execute(
            "SELECT c.id, bm25(chunks_fts) AS s FROM chunks_fts "
            "JOIN chunks c ON c.id = chunks_fts.rowid "
            f"WHERE chunks_fts MATCH ? AND {sql} ORDER BY s LIMIT ?",
            (match, *params, pool),
        ).fetchall()
        # Raw BM25, higher is better: fusion needs the unsquashed values.
        return [(int(i), max(-float(s), 0.0)) for i, s in rows]

    @staticmethod
    def _fuse(
        conn: Connection,
        query: str,
        query_vector: Vectors | None,
        mode: SearchMode,
        vector_hits: list[tuple[int, float]],
        text_hits: list[tuple[int, float]],
        fuse: Fuse,
        kind: str | Sequence[str] | None,
    ) -> list[fusion.Fused]:
        if mode == "vector":
            return [
                fusion.Fused(i, s, vector_score=s, vector_rank=r)
                for r, (i, s) in enumerate(vector_hits, start=1)
            ]
        ids = list(dict.fromkeys([i for i, _ in vector_hits] + [i for i, _ in text_hits]))
        coverages = text_match(conn, query, ids)
        if mode == "text":
            ranked = [
                fusion.Fused(
                    i, coverages.get(i, 0.0), text_score=coverages.get(i, 0.0), text_rank=r
                )
                for r, (i, _) in enumerate(text_hits, start=1)
            ]
            return sorted(ranked, key=lambda f: (-f.score, f.text_rank or 0))
        if fuse == "rrf":
            return fusion.rrf(vector_hits, [(i, coverages.get(i, 0.0)) for i, _ in text_hits])
        cosines = dict(vector_hits)
        missing = [i for i in ids if i not in cosines]
        if missing and query_vector is not None:
            cosines.update(_cosines(conn, query_vector, missing))
        return fusion.pointwise(
            vector_hits, text_hits, cosines, coverages, params=fusion.params_for(kind)
        )

    def _mmr(
        self, conn: Connection, fused: list[fusion.Fused], lambda_: float, limit: int
    ) -> list[fusion.Fused]:
        ids = [f.id for f in fused]
        vectors: dict[int, Vectors] = {}
        if self._index is not None and self._index.loaded:
            with self._index_lock:
                vectors = {i: v.copy() for i, v in self._index.vectors(ids).items()}
        else:
            for part, marks in in_lists(ids):
                for i, blob in conn.execute(
                    f"SELECT id, embedding FROM chunks WHERE id IN ({marks}) "
                    "AND embedding IS NOT NULL",
                    part,
                ):
                    vectors[i] = np.frombuffer(blob, dtype="<f4")
        by_id = {f.id: f for f in fused}
        order = fusion.mmr(
            [(f.id, vectors.get(f.id), f.score) for f in fused], lambda_=lambda_, limit=limit
        )
        return [by_id[i] for i in order]

    def _rows(self, conn: Connection, fused: list[fusion.Fused]) -> list[SearchResult]:
        if not fused:
            return []
        ids = [f.id for f in fused]
        rows: dict[int, tuple[Any, ...]] = {}
        for part, marks in in_lists(ids):
            for row in conn.execute(
                "SELECT id, kind, collection, source, position, text, metadata, ts FROM chunks "
                f"WHERE id IN ({marks})",
                part,
            ):
                rows[row[0]] = row
        results = []
        for f in fused:
            row = rows.get(f.id)
            if row is None:
                continue
            results.append(
                SearchResult(
                    id=f.id,
                    kind=row[1],
                    collection=row[2],
                    source=row[3],
                    position=row[4],
                    text=row[5],
                    metadata=json.loads(row[6]),
                    ts=row[7],
                    score=f.score,
                    vector_score=f.vector_score,
                    text_score=f.text_score,
                    vector_rank=f.vector_rank,
                    text_rank=f.text_rank,
                )
            )
        return results

    def _rerank(
        self, query: str, results: list[SearchResult], limit: int, min_score: float
    ) -> list[SearchResult]:
        assert self.reranker is not None
        if not results:
            return results
        scores = list(self.reranker.rerank(query, [r.text for r in results]))
        if len(scores) != len(results):
            raise RemembrancesError(
                f"reranker returned {len(scores)} scores for {len(results)} texts"
            )
        for result, score in zip(results, scores, strict=True):
            value = float(score)
            if not math.isfinite(value):
                value = 0.0
            # Logits (cross-encoders) become probabilities; scores in [0, 1] stay.
            result.score = value if 0.0 <= value <= 1.0 else 1.0 / (1.0 + math.exp(-value))
        results.sort(key=lambda r: -r.score)
        return [r for r in results if r.score >= min_score][:limit]


_CHUNK_COLUMNS = (
    "id, kind, collection, source, position, text, metadata, content_hash, ts, created_at, "
    "embedding IS NOT NULL"
)


def _cosines(conn: Connection, query: Vectors, ids: Sequence[int]) -> dict[int, float]:
    """Cosine similarity of ``query`` to each chunk of ``ids`` that has a vector."""
    marks = ",".join("?" * len(ids))
    rows = conn.execute(
        f"SELECT id, embedding FROM chunks WHERE embedding IS NOT NULL AND id IN ({marks})", ids
    ).fetchall()
    if not rows or len(rows[0][1]) != query.nbytes:
        return {}
    matrix = np.frombuffer(b"".join(blob for _, blob in rows), dtype="<f4").reshape(len(rows), -1)
    norms = np.linalg.norm(matrix, axis=1) * float(np.linalg.norm(query))
    scores = matrix @ query / np.where(norms > 0, norms, 1.0)
    return {int(i): float(s) for (i, _), s in zip(rows, scores, strict=True)}


def _stored(row: tuple[Any, ...]) -> StoredChunk:
    return StoredChunk(
        id=row[0],
        kind=row[1],
        collection=row[2],
        source=row[3],
        position=row[4],
        text=row[5],
        metadata=json.loads(row[6]),
        content_hash=row[7],
        ts=row[8],
        created_at=row[9],
        has_embedding=bool(row[10]),
    )
