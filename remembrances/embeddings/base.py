"""The one interface every embedder implements, and the checks its output must pass."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from ..errors import InvalidVectorError

Vectors = npt.NDArray[np.float32]


@runtime_checkable
class Embedder(Protocol):
    """Turns text into vectors. ``name`` is recorded in the file (the model guard).

    ``name`` should be a spec that :func:`remembrances.embeddings.create` accepts, so
    that a file can be reopened with the embedder that wrote it.
    Documents and queries are separate calls because some models embed them
    differently (instruction prefixes, input types).
    """

    name: str
    #: An embedder that learns its dimension from the provider (one request) may also
    #: have ``known_dim``, None until then: a file that records the dimension for this
    #: embedder then sets ``dim`` instead (:meth:`Store.attach_embedder`).
    dim: int

    def embed_documents(self, texts: Sequence[str]) -> Any:
        """One vector per text: a ``(len(texts), dim)`` array or a list of lists."""
        ...

    def embed_query(self, text: str) -> Any:
        """One vector: a ``(dim,)`` array or a list."""
        ...


def with_vectors_done(exc: BaseException, done: Mapping[int, Any]) -> None:
    """Attach to ``exc`` the vectors an ``embed_documents`` call did get before it failed
    (by the text's index in the call): a provider embedder sends one call as several
    requests at once, and the caller caches what was paid for (storage/embedding_cache.py)."""
    exc.vectors_done = dict(done)  # type: ignore[attr-defined]


def vectors_done(exc: BaseException) -> dict[int, Any]:
    """What :func:`with_vectors_done` attached to ``exc`` (nothing, for most errors)."""
    return getattr(exc, "vectors_done", None) or {}


def as_matrix(vectors: Any, *, count: int, dim: int, who: str = "embedder") -> Vectors:
    """Check an embedder's output and return it as unit-length float32 rows.

    Refuses (never pads, truncates or repairs) the wrong number of vectors, the
    wrong length, NaN/inf and all-zero vectors: any of them would silently ruin
    retrieval.
    """
    try:
        matrix = np.asarray(vectors, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidVectorError(
            f"{who} returned something that is not a list of vectors: {exc}"
        ) from exc
    if matrix.ndim == 1 and count == 1:
        matrix = matrix.reshape(1, -1)
    if matrix.ndim != 2 or matrix.shape[0] != count:
        got = matrix.shape[0] if matrix.ndim >= 1 else 0
        raise InvalidVectorError(f"{who} returned {got} vectors for {count} texts")
    if count and matrix.shape[1] != dim:
        raise InvalidVectorError(
            f"{who} returned vectors of length {matrix.shape[1]}, expected {dim}; if the "
            "model now makes vectors of that size, re-embed the memory for it "
            "(remembrances reembed --embedder <spec>)"
        )
    if not np.isfinite(matrix).all():
        raise InvalidVectorError(f"{who} returned a vector with NaN or infinite values")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    if count and (norms == 0).any():
        raise InvalidVectorError(f"{who} returned an all-zero vector (cosine is undefined)")
    return (matrix / norms).astype(np.float32) if count else matrix.astype(np.float32)


def as_vector(vector: Any, *, dim: int, who: str = "embedder") -> Vectors:
    """Check one query vector; see :func:`as_matrix`."""
    row: Vectors = as_matrix(vector, count=1, dim=dim, who=who)[0]
    return row


def to_blob(vector: Vectors) -> bytes:
    """Little-endian float32 bytes: the on-disk format (and sqlite-vec's)."""
    return np.asarray(vector, dtype="<f4").tobytes()


def from_blob(blob: bytes) -> Vectors:
    return np.frombuffer(blob, dtype="<f4").astype(np.float32, copy=False)
