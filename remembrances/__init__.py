"""remembrances: memory for AI agents in one SQLite file."""

from __future__ import annotations

from .errors import (
    ClosedError,
    CorruptFileError,
    EmbedderMismatchError,
    EmbedderUnavailableError,
    EmbeddingError,
    InvalidInputError,
    InvalidVectorError,
    NotAMemoryError,
    NotFoundError,
    ReadOnlyError,
    RemembrancesError,
    RerankerNotConfiguredError,
    SchemaVersionError,
    StorageError,
)
from .evaluation import evaluate
from .records import Chunk, SearchResult, StoredChunk, WriteReport
from .service import RemembrancesService, open
from .store import Reranker, Store

__all__ = [
    "Chunk",
    "ClosedError",
    "CorruptFileError",
    "EmbedderMismatchError",
    "EmbedderUnavailableError",
    "EmbeddingError",
    "InvalidInputError",
    "InvalidVectorError",
    "NotAMemoryError",
    "NotFoundError",
    "ReadOnlyError",
    "RemembrancesError",
    "RemembrancesService",
    "Reranker",
    "RerankerNotConfiguredError",
    "SchemaVersionError",
    "SearchResult",
    "StorageError",
    "Store",
    "StoredChunk",
    "WriteReport",
    "evaluate",
    "open",
]
__version__ = "0.1.0"
