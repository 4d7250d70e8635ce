"""The SQLite engine: one file, FTS5 for words, vec0 and an in-memory index for vectors.

Everything SQLite-specific the store needs lives here or in the modules it uses:
the connections and their pragmas (``sqlite_connection.py``), the schema and its
triggers (``schema.py``), the exact in-memory vector index kept current from the
``vector_log`` (``vector_index.py``), vec0's own tables for a fast cold start
(``vec0_storage.py``) and BM25 word statistics from FTS5 (``text_match.py``).
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import apsw
import numpy as np

from ..embeddings.base import Vectors, to_blob
from ..errors import InvalidInputError, NotAMemoryError, RemembrancesError
from ..fts_query import fts_query
from . import text_match as text_matching
from . import vec0_storage
from .engine import Candidates, NewChunk, VectorIndexKind
from .filters import ChunkFilter
from .in_lists import in_lists
from .reports import CheckReport
from .schema import (
    STORE_MIGRATIONS,
    STORE_READABLE_FROM,
    check_read_only,
    migrate,
    vec0_script,
)
from .sqlite_connection import Connection, Database, FileKind, kind_of
from .sqlite_transaction import SqliteTransaction
from .transaction import Dialect, Transaction, marks
from .vector_index import VectorIndex, cold_top_k

#: vector_log entries kept; a reader further behind reloads its index.
VECTOR_LOG_KEEP = 200_000

log = logging.getLogger(__name__)

#: Engines whose index may be loading in a thread: stopped before the interpreter
#: exits (a daemon thread inside SQLite at exit is cut off mid-call otherwise).
_loading: weakref.WeakSet[SqliteEngine] = weakref.WeakSet()


@atexit.register
def _stop_loaders() -> None:
    for engine in list(_loading):
        engine._stop_loader()


def admit(path: str, kind: FileKind, *, create: bool | None, read_only: bool) -> None:
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


def _connection(tx: Transaction) -> Connection:
    assert isinstance(tx, SqliteTransaction), "a transaction of another engine"
    return tx.connection


class SqliteEngine:
    """One SQLite memory file (see :class:`~.engine.Engine` for each method's contract)."""

    #: The chunk columns the store reads back, by these names.
    chunk_columns = (
        "c.id, c.kind, c.collection, c.source, c.position, c.text, c.metadata, "
        "c.content_hash, c.ts, c.created_at, c.embedding IS NOT NULL AS has_embedding"
    )

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        read_only: bool = False,
        create: bool | None = None,
    ) -> None:
        self.path = os.fspath(path)
        # SQLite reports both as a disk I/O error, which sends people to check their disk
        if not str(self.path).strip():
            raise InvalidInputError(
                "the memory's path is empty; give a file path, such as memory.db"
            )
        if os.path.isdir(self.path):
            raise InvalidInputError(
                f"{self.path!r} is a directory; a memory is one file: give a file path, such "
                f"as {os.path.join(self.path, 'memory.db')}"
            )
        if not os.path.exists(self.path):  # before SQLite creates it
            admit(self.path, "new", create=create, read_only=read_only)

        def inspect(conn: Connection) -> None:  # the file is looked at before any write
            admit(self.path, kind_of(conn), create=create, read_only=read_only)

        #: The file's connections (tests and ``integrity`` reach the SQLite file here).
        self.db = Database(self.path, read_only=read_only, inspect=inspect)
        # The compact copy's triggers quantize every vector written (vec0_storage);
        # chunk writes fill its memo a batch at a time.
        self._quantizer = vec0_storage.Quantizer()
        vec0_storage.register(self.db.conn, self._quantizer)
        #: The exact in-memory vector index, loaded after the first vector search
        #: (which is answered from the compact copy when the file has one).
        self.index: VectorIndex | None = None
        # One index per store, shared by the threads' searches: syncing mutates it.
        self.index_lock = threading.Lock()
        #: The thread loading the index in the background, and how to stop it.
        self._loader: threading.Thread | None = None
        self._stopping = threading.Event()
        self._load_failed = False
        #: Searches answered from the compact copy (for tests and benchmarks).
        self.cold_searches = 0

    # -- connections and transactions ------------------------------------------------

    @property
    def dialect(self) -> Dialect:
        return "sqlite"

    @property
    def max_dimensions(self) -> int:
        return vec0_storage.MAX_DIMENSIONS

    @property
    def location(self) -> str:
        return self.path

    @property
    def read_only(self) -> bool:
        return self.db.read_only

    @property
    def read_only_reason(self) -> str:
        return self.db.read_only_reason

    @property
    def closed(self) -> bool:
        return self.db.closed

    @property
    def in_transaction(self) -> bool:
        return self.db.in_transaction

    @contextmanager
    def write(self) -> Iterator[Transaction]:
        with self.db.write() as conn:
            yield SqliteTransaction(conn)

    @contextmanager
    def read(self) -> Iterator[Transaction]:
        with self.db.read() as conn:
            yield SqliteTransaction(conn)

    def close(self) -> None:
        self._stop_loader()
        self.db.close()

    # -- schema and the model's vector table ----------------------------------------

    @property
    def schema_version(self) -> int:
        return len(STORE_MIGRATIONS)

    def prepare_schema(self) -> None:
        if not self.db.read_only:
            with self.write() as tx:
                migrate(tx, "store", STORE_MIGRATIONS)
            return
        with self.read() as tx:
            try:
                version = int(
                    tx.execute("SELECT value FROM meta WHERE key = 'schema:store'").scalar() or 0
                )
            except apsw.SQLError as exc:
                raise RemembrancesError(f"{self.path!r} is not a remembrances file") from exc
        check_read_only(self.path, "store", version, STORE_MIGRATIONS, STORE_READABLE_FROM)

    def _vector_tables(self, tx: Transaction) -> set[str]:
        names = ("chunks_vec", vec0_storage.COMPACT)
        return {
            str(r[0])
            for r in tx.execute(
                f"SELECT name FROM sqlite_master WHERE name IN ({marks(len(names))})", names
            ).fetchall()
        }

    def has_vector_table(self, tx: Transaction) -> bool:
        # A file from before the compact copy existed has only chunks_vec: the store
        # then calls create_vector_table(fill=True), which builds the copy.
        return len(self._vector_tables(tx)) == 2

    def create_vector_table(self, tx: Transaction, dim: int, *, fill: bool) -> None:
        present = self._vector_tables(tx)
        tx.execute(vec0_script(dim))  # both tables, if not there yet
        if fill and "chunks_vec" not in present:
            tx.execute(
                "INSERT INTO chunks_vec (chunk_id, embedding, kind, collection) "
                "SELECT id, embedding, kind, collection FROM chunks "
                "WHERE embedding IS NOT NULL AND length(embedding) = ?",
                (dim * 4,),
            )
        if fill and vec0_storage.COMPACT not in present:
            vec0_storage.fill_compact(_connection(tx), dim)

    def switch_vectors(self, tx: Transaction, embedder: str, dim: int) -> None:
        # The vec0 table has the old dimension: drop it (and its triggers) before the
        # vector updates would write new-size vectors into it.
        for trigger in (
            "chunks_vec_insert",
            "chunks_vec_delete",
            "chunks_vec_update",
            *vec0_storage.COMPACT_TRIGGERS,
        ):
            tx.execute(f"DROP TRIGGER IF EXISTS {trigger}")
        tx.execute("DROP TABLE IF EXISTS chunks_vec")
        tx.execute(f"DROP TABLE IF EXISTS {vec0_storage.COMPACT}")
        tx.execute(
            "UPDATE chunks SET embedding = (SELECT e.embedding FROM embedding_cache e "
            "WHERE e.embedder = ? AND e.content_hash = chunks.content_hash)",
            (embedder,),
        )
        tx.execute(vec0_script(dim))
        tx.execute(
            "INSERT INTO chunks_vec (chunk_id, embedding, kind, collection) "
            "SELECT id, embedding, kind, collection FROM chunks WHERE embedding IS NOT NULL"
        )
        vec0_storage.fill_compact(_connection(tx), dim)

    # -- chunk writes ----------------------------------------------------------------

    def insert_chunks(self, tx: Transaction, chunks: Sequence[NewChunk]) -> list[int]:
        conn = _connection(tx)
        with self._quantized(conn, [c.embedding for c in chunks]):
            return self._insert_chunks(conn, chunks)

    @contextmanager
    def _quantized(self, conn: Connection, blobs: Sequence[bytes | None]) -> Iterator[None]:
        """The compact copy's rows for these vectors, computed in one call for the
        triggers the writes will fire (vec0_storage.Quantizer)."""
        dim = conn.execute("SELECT value FROM meta WHERE key = 'dim'").fetchone()
        if dim is not None:
            self._quantizer.prepare(blobs, int(dim[0]))
        try:
            yield
        finally:
            self._quantizer.memo.clear()

    def _insert_chunks(self, conn: Connection, chunks: Sequence[NewChunk]) -> list[int]:
        ids = []
        for c in chunks:
            row = conn.execute(
                "INSERT INTO chunks (kind, collection, source, position, text, metadata, "
                "content_hash, embed_text, ts, created_at, embedding) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                (
                    c.kind,
                    c.collection,
                    c.source,
                    c.position,
                    c.text,
                    c.metadata_json,
                    c.content_hash,
                    c.embed_text,
                    c.ts,
                    c.created_at,
                    c.embedding,
                ),
            ).fetchone()
            ids.append(int(row[0]))
        return ids

    def set_embeddings(self, tx: Transaction, rows: Sequence[tuple[int, str, bytes]]) -> None:
        with self._quantized(_connection(tx), [blob for _, _, blob in rows]):
            tx.executemany(
                "UPDATE chunks SET embedding = ? WHERE id = ? AND content_hash = ? "
                "AND embedding IS NULL",
                [(blob, i, h) for i, h, blob in rows],
            )

    def after_write(self, tx: Transaction) -> None:
        """Prune the vector log: readers further behind than it reaches reload."""
        conn = _connection(tx)
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

    # -- searching -------------------------------------------------------------------

    def vector_leg(
        self,
        tx: Transaction,
        query: Vectors,
        pool: int,
        where: ChunkFilter,
        *,
        index: VectorIndexKind,
        exact: bool,
    ) -> Candidates:
        conn = _connection(tx)
        if index == "vec0":
            return self._vec0_leg(conn, query, pool, where)
        cold = self._cold_leg(conn, query, pool, where)
        if cold is not None:
            return cold
        ids = None
        if where.by_metadata:
            sql, params = where.sql()
            ids = [
                r[0]
                for r in conn.execute(
                    f"SELECT c.id FROM chunks c WHERE c.embedding IS NOT NULL AND {sql}", params
                )
            ]
        with self.index_lock:
            vectors = self._vector_index(conn)
            if ids is not None:
                found, scores = vectors.top_k(query, pool, rows=vectors.rows_for(ids), exact=exact)
            else:
                mask = None
                if any(
                    v is not None
                    for v in (where.kinds, where.collections, where.since, where.until)
                ):
                    mask = vectors.mask(
                        kinds=where.kinds,
                        collections=where.collections,
                        since=where.since,
                        until=where.until,
                    )
                found, scores = vectors.top_k(query, pool, mask=mask, exact=exact)
        return [(int(i), float(s)) for i, s in zip(found, scores, strict=True)]

    def _vec0_leg(
        self, conn: Connection, query: Vectors, pool: int, where: ChunkFilter
    ) -> Candidates:
        blob = to_blob(query)
        exists = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'chunks_vec'").fetchone()
        if exists is None:
            return []
        if where.unfiltered:
            rows = conn.execute(
                "SELECT chunk_id, distance FROM chunks_vec WHERE embedding MATCH ? AND k = ? "
                "ORDER BY distance",
                (blob, pool),
            ).fetchall()
        else:  # filtered: an exact scan of the matching rows
            sql, params = where.sql()
            rows = conn.execute(
                "SELECT c.id, vec_distance_cosine(c.embedding, ?) AS d FROM chunks c "
                f"WHERE c.embedding IS NOT NULL AND {sql} ORDER BY d LIMIT ?",
                (blob, *params, pool),
            ).fetchall()
        return [(int(i), 1.0 - float(d)) for i, d in rows]

    def _cold_leg(
        self, conn: Connection, query: Vectors, pool: int, where: ChunkFilter
    ) -> Candidates | None:
        """Before this process has its index: the exact top ``pool`` from the compact
        copy (``vector_index.cold_top_k``), and the index starts loading in the
        background. None when the index is there, or the file has no compact copy."""
        with self.index_lock:
            if (self.index is not None and self.index.loaded) or self._load_failed:
                return None
        dim = conn.execute("SELECT value FROM meta WHERE key = 'dim'").fetchone()
        if dim is None:
            return None
        allowed = None
        if not where.unfiltered:
            sql, params = where.sql()
            allowed = np.unique(
                np.fromiter(
                    (
                        r[0]
                        for r in conn.execute(
                            f"SELECT c.id FROM chunks c WHERE c.embedding IS NOT NULL AND {sql}",
                            params,
                        )
                    ),
                    dtype=np.int64,
                )
            )
        found = cold_top_k(conn, int(dim[0]), query, pool, allowed)
        if found is None:
            return None
        self.cold_searches += 1
        self._start_loader(int(dim[0]))
        return [(int(i), float(s)) for i, s in zip(*found, strict=True)]

    def _start_loader(self, dim: int) -> None:
        """Load the index in a thread of its own, for the searches after the first."""
        with self.index_lock:
            if self._loader is not None or self.db.closed:
                return
            if self.index is not None and self.index.loaded:
                return
            stopping = self._stopping = threading.Event()
            thread = threading.Thread(
                target=self._load_in_background,
                args=(dim, stopping),
                name="remembrances-index-load",
                daemon=True,  # a process that is done does not wait for it
            )
            self._loader = thread
            _loading.add(self)
        thread.start()

    def _load_in_background(self, dim: int, stopping: threading.Event) -> None:
        try:
            index = VectorIndex(dim)
            index.stop = stopping.is_set
            with self.db.read() as conn:
                index.sync(conn)
            index.stop = None
            with self.index_lock:
                if not stopping.is_set() and (self.index is None or not self.index.loaded):
                    self.index = index  # later searches apply the log from its snapshot on
        except vec0_storage.LoadStopped:
            pass
        except Exception as exc:  # the next search loads the index itself, and reports
            log.debug("loading the vector index in the background failed: %s", exc)
            self._load_failed = True
        finally:
            with self.index_lock:
                if self._loader is threading.current_thread():
                    self._loader = None

    def _await_loader(self) -> None:
        """Wait for a background load (never called holding ``index_lock``)."""
        thread = self._loader
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    def _stop_loader(self) -> None:
        thread = self._loader
        if thread is not None and thread is not threading.current_thread():
            self._stopping.set()
            thread.join()

    def _vector_index(self, conn: Connection) -> VectorIndex:
        """The in-memory index, brought up to date (the caller holds ``index_lock``)."""
        dim = conn.execute("SELECT value FROM meta WHERE key = 'dim'").fetchone()
        if self.index is None:
            self.index = VectorIndex(int(dim[0]) if dim else 1)
        self.index.sync(conn)
        return self.index

    def text_leg(self, tx: Transaction, query: str, pool: int, where: ChunkFilter) -> Candidates:
        match = fts_query(query)
        if match is None:
            return []
        sql, params = where.sql()
        rows = (
            _connection(tx)
            .execute(
                "SELECT c.id, bm25(chunks_fts) AS s FROM chunks_fts "
                "JOIN chunks c ON c.id = chunks_fts.rowid "
                f"WHERE chunks_fts MATCH ? AND {sql} ORDER BY s LIMIT ?",
                (match, *params, pool),
            )
            .fetchall()
        )
        # Raw BM25, higher is better: fusion needs the unsquashed values.
        return [(int(i), max(-float(s), 0.0)) for i, s in rows]

    def rare_words(self, tx: Transaction, query: str, share: float) -> list[str]:
        return text_matching.rare_words(_connection(tx), query, share)

    def text_match(
        self, tx: Transaction, query: str, ids: Sequence[int], *, joined_names: bool = True
    ) -> dict[int, float]:
        return text_matching.text_match(_connection(tx), query, ids, joined_names=joined_names)

    def stems(self, tx: Transaction, words: Sequence[str]) -> list[str]:
        return text_matching.stems(_connection(tx), words)

    def cosines(self, tx: Transaction, query: Vectors, ids: Sequence[int]) -> dict[int, float]:
        rows = (
            _connection(tx)
            .execute(
                f"SELECT id, embedding FROM chunks WHERE embedding IS NOT NULL "
                f"AND id IN ({marks(len(ids))})",
                ids,
            )
            .fetchall()
        )
        if not rows or len(rows[0][1]) != query.nbytes:
            return {}
        matrix = np.frombuffer(b"".join(blob for _, blob in rows), dtype="<f4").reshape(
            len(rows), -1
        )
        norms = np.linalg.norm(matrix, axis=1) * float(np.linalg.norm(query))
        scores = matrix @ query / np.where(norms > 0, norms, 1.0)
        return {int(i): float(s) for (i, _), s in zip(rows, scores, strict=True)}

    def vectors(self, tx: Transaction, ids: Sequence[int]) -> dict[int, Vectors]:
        if self.index is not None and self.index.loaded:
            with self.index_lock:
                return {i: v.copy() for i, v in self.index.vectors(ids).items()}
        conn = _connection(tx)
        found: dict[int, Vectors] = {}
        for part, part_marks in in_lists(ids):
            for i, blob in conn.execute(
                f"SELECT id, embedding FROM chunks WHERE id IN ({part_marks}) "
                "AND embedding IS NOT NULL",
                part,
            ):
                found[i] = np.frombuffer(blob, dtype="<f4")
        return found

    def warm(self, tx: Transaction) -> None:
        self._await_loader()
        with self.index_lock:
            self._vector_index(_connection(tx))

    def forget_vectors(self) -> None:
        self._stop_loader()
        with self.index_lock:
            self.index = None  # the next search loads the new vectors

    def check(self, *, repair: bool = False) -> CheckReport:
        from . import sqlite_integrity  # it imports this module

        return sqlite_integrity.check(self, repair)

    def index_bytes(self) -> int:
        return self.index.nbytes if self.index is not None else 0

    def size_bytes(self) -> int:
        return sum(
            os.path.getsize(self.path + suffix)
            for suffix in ("", "-wal")
            if os.path.exists(self.path + suffix)
        )

    def free_bytes(self) -> int:
        with self.db.read() as conn:
            pages = conn.execute("PRAGMA freelist_count").fetchone()[0]
            size = conn.execute("PRAGMA page_size").fetchone()[0]
        return int(pages) * int(size)

    def reclaim_space(self) -> int:
        return self.db.vacuum()
