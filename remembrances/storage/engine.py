"""What a database engine does for the store: the statements that differ per engine.

The :class:`~remembrances.store.Store` keeps the parts every engine shares
(validation, the model guard's logic, the embedding cache, fusion, MMR, rerank,
the query cache); an :class:`Engine` owns the statements only it can write: the
chunk table with its text index and vector index, the two search legs, the word
statistics behind text scores, and its connections and transactions. The SQLite
engine (FTS5, vec0, an in-memory exact index) is the default; the PostgreSQL
engine (tsvector, pgvector) implements the same protocol.

Vectors cross this boundary as float32 little-endian blobs (``embeddings.base.to_blob``),
the store's portable form; an engine converts them to its own type.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Literal, Protocol

from ..embeddings.base import Vectors
from .filters import ChunkFilter
from .reports import CheckReport
from .transaction import Dialect, Transaction

#: Where the vector leg runs: "memory" (the engine's default index) or "vec0" (an
#: engine's on-disk index, scanned by the database; engines without one use their default).
VectorIndexKind = Literal["memory", "vec0"]

#: A leg's candidates, best first: (chunk id, score). Vector legs give cosine
#: similarity; text legs give a "higher is better" relevance of the engine's own scale.
Candidates = list[tuple[int, float]]


@dataclass(frozen=True)
class NewChunk:
    """A validated chunk row to insert (the store validated and embedded it)."""

    kind: str
    collection: str
    source: str
    position: int
    text: str
    metadata_json: str
    content_hash: str
    embed_text: str | None
    ts: float | None
    created_at: float
    embedding: bytes | None


class Engine(Protocol):
    """One memory's database, as the store uses it.

    Every method taking a ``tx`` runs inside a transaction the same engine opened
    (:meth:`write` or :meth:`read`); the engine may rely on its own transaction type.
    """

    # -- connections and transactions ------------------------------------------------

    @property
    def dialect(self) -> Dialect: ...

    @property
    def max_dimensions(self) -> int:
        """The longest vector the engine's vector index takes."""
        ...

    @property
    def location(self) -> str:
        """The file path or URL, as messages name it (never with a password)."""
        ...

    @property
    def read_only(self) -> bool: ...

    @property
    def read_only_reason(self) -> str:
        """Why writes are refused, for messages ("it was opened with read_only=True")."""
        ...

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called: every use then raises ``ClosedError``."""
        ...

    @property
    def in_transaction(self) -> bool:
        """Whether this thread is inside a write transaction of this engine."""
        ...

    def write(self) -> AbstractContextManager[Transaction]:
        """A write transaction that takes the write lock up front; nested calls on one
        thread join the outer one. Commits when the block ends, rolls back on error."""
        ...

    def read(self) -> AbstractContextManager[Transaction]:
        """A consistent read snapshot (inside this thread's write transaction: that one)."""
        ...

    def close(self) -> None: ...

    # -- schema and the model's vector table ----------------------------------------

    @property
    def schema_version(self) -> int:
        """The store schema version this code writes (its number of migrations)."""
        ...

    def prepare_schema(self) -> None:
        """Create or upgrade the store's own tables (meta, chunks, text index, cache);
        on a memory opened read-only, check instead that they are current."""
        ...

    def has_vector_table(self, tx: Transaction) -> bool:
        """Whether the vector index for the recorded dimension exists."""
        ...

    def create_vector_table(self, tx: Transaction, dim: int, *, fill: bool) -> None:
        """Create the vector index for ``dim`` (``fill``: from the chunks' vectors)."""
        ...

    def switch_vectors(self, tx: Transaction, embedder: str, dim: int) -> None:
        """Give every chunk the vector ``embedder`` left in the embedding cache (None
        where it has none) and rebuild the vector index for ``dim``."""
        ...

    # -- chunk writes ----------------------------------------------------------------

    def insert_chunks(self, tx: Transaction, chunks: Sequence[NewChunk]) -> list[int]:
        """Insert chunks (text index and vector index kept equal); their new ids, in order."""
        ...

    def set_embeddings(self, tx: Transaction, rows: Sequence[tuple[int, str, bytes]]) -> None:
        """Give a vector to chunks still without one: (chunk id, content hash, blob);
        a chunk whose hash changed meanwhile is left alone."""
        ...

    def after_write(self, tx: Transaction) -> None:
        """Housekeeping at the end of a chunk write (e.g. pruning a change log)."""
        ...

    # -- reading and searching -------------------------------------------------------

    @property
    def chunk_columns(self) -> str:
        """The select list (over the chunk alias ``c``) that reads a chunk back with the
        columns id, kind, collection, source, position, text, metadata (JSON text),
        content_hash, ts, created_at and has_embedding."""
        ...

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
        """The ``pool`` chunks most similar to ``query`` among those ``where`` allows,
        by cosine similarity. A filter never makes it return fewer than ``pool`` while
        that many chunks match."""
        ...

    def text_leg(self, tx: Transaction, query: str, pool: int, where: ChunkFilter) -> Candidates:
        """The ``pool`` best chunks holding any of the query's words (never the raw
        query as a full-text expression), by the engine's own relevance."""
        ...

    def rare_words(self, tx: Transaction, query: str, share: float) -> list[str]:
        """The query's words held by some but at most ``share`` of the chunks; []
        unless some of its words are rare and some are not."""
        ...

    def text_match(
        self, tx: Transaction, query: str, ids: Sequence[int], *, joined_names: bool = True
    ) -> dict[int, float]:
        """Each chunk's coverage of the query's words in [0, 1] (``text_match.py``);
        chunks holding none of them are left out. ``joined_names``: the words of a
        ``send_file`` the chunk does not hold count less (``text_match.identifiers``)."""
        ...

    def stems(self, tx: Transaction, words: Sequence[str]) -> list[str]:
        """Each word as the text index stems it (``deploys`` -> ``deploy``), in order."""
        ...

    def cosines(self, tx: Transaction, query: Vectors, ids: Sequence[int]) -> dict[int, float]:
        """Cosine similarity of ``query`` to each chunk of ``ids`` that has a vector."""
        ...

    def vectors(self, tx: Transaction, ids: Sequence[int]) -> dict[int, Vectors]:
        """The vectors of the chunks of ``ids`` that have one (for MMR)."""
        ...

    def warm(self, tx: Transaction) -> None:
        """Load whatever the first vector search would load (a no-op where nothing is)."""
        ...

    def forget_vectors(self) -> None:
        """Drop in-process vector state after the model changed."""
        ...

    def check(self, *, repair: bool = False) -> CheckReport:
        """Whether the derived indexes agree with the chunks and the model record
        (``repair``: rebuild them from the chunks)."""
        ...

    def index_bytes(self) -> int:
        """Memory held by an in-process vector index (0 when there is none)."""
        ...

    def size_bytes(self) -> int:
        """The memory's size on disk (the file and its WAL, or the database's tables)."""
        ...

    def free_bytes(self) -> int:
        """Space inside the memory that deleted rows left, which ``reclaim_space`` gives
        back to the disk (0 where the database reuses it by itself)."""
        ...

    def reclaim_space(self) -> int:
        """Give the space deleted rows left back to the disk, where the engine can
        without stopping its readers (nothing where the database does it itself);
        returns the memory's size once it has."""
        ...
