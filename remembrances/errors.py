"""Typed errors. Every message says what went wrong and what to do about it."""

from __future__ import annotations


class RemembrancesError(Exception):
    """Base class for every error this library raises on purpose."""


class InvalidInputError(RemembrancesError, ValueError):
    """Input that cannot be stored or searched (empty, oversized, wrong type)."""


class InvalidVectorError(InvalidInputError):
    """A vector of the wrong length, or with NaN/inf values."""


class EmbedderMismatchError(RemembrancesError):
    """The file was written by another embedder (name or dimension)."""


class EmbedderUnavailableError(RemembrancesError):
    """An embedder cannot be created: missing extra, missing key or model file."""


class EmbeddingError(RemembrancesError):
    """An embedding provider failed after its retries."""


class SchemaVersionError(RemembrancesError):
    """The file was written by a newer version of remembrances."""


class ReadOnlyError(RemembrancesError):
    """A write was attempted on a store opened read-only."""


class RerankerNotConfiguredError(RemembrancesError):
    """A rerank was asked for but no reranker was given to the store."""


class NotFoundError(RemembrancesError, KeyError):
    """The requested document, event, project or chunk does not exist."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class AmbiguousNameError(NotFoundError):
    """A name (a part of a document's path) that several documents answer to."""


class StorageError(RemembrancesError):
    """The file cannot be written: disk full, I/O error, or locked for too long."""


class NotAMemoryError(RemembrancesError):
    """The file exists but is not a remembrances memory (another program's, or empty)."""


class MemoryExistsError(RemembrancesError):
    """A copy's destination already holds a memory (pass replace=True to overwrite it)."""


class CorruptFileError(StorageError):
    """SQLite found damaged pages in the file; ``remembrances check`` says what can be saved."""


class MissingExtraError(RemembrancesError):
    """A feature needs an optional extra that is not installed; the message names it."""


class ClosedError(RemembrancesError):
    """The memory (or the layer used) was closed; open it again to use it."""
