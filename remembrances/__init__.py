"""remembrances: memory for AI agents in one SQLite file."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .errors import (
    AmbiguousNameError,
    ClosedError,
    CorruptFileError,
    EmbedderMismatchError,
    EmbedderUnavailableError,
    EmbeddingError,
    InvalidInputError,
    InvalidVectorError,
    MemoryExistsError,
    MissingExtraError,
    NotAMemoryError,
    NotFoundError,
    ReadOnlyError,
    RemembrancesError,
    RerankerNotConfiguredError,
    SchemaVersionError,
    StorageError,
)

if TYPE_CHECKING:
    from .evaluation import evaluate
    from .records import Chunk, SearchResult, StoredChunk, WriteReport
    from .service import RemembrancesService, open
    from .store import Reranker, Store

# Imported on first use: a process that only needs the errors, or the CLI talking
# to a server (``--url``), does not pay for numpy, apsw and the store.
_LAZY = {
    "evaluate": ".evaluation",
    "Chunk": ".records",
    "SearchResult": ".records",
    "StoredChunk": ".records",
    "WriteReport": ".records",
    "RemembrancesService": ".service",
    "open": ".service",
    "Reranker": ".store",
    "Store": ".store",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "AmbiguousNameError",
    "Chunk",
    "ClosedError",
    "CorruptFileError",
    "EmbedderMismatchError",
    "EmbedderUnavailableError",
    "EmbeddingError",
    "InvalidInputError",
    "InvalidVectorError",
    "MemoryExistsError",
    "MissingExtraError",
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
