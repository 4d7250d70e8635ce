"""Embedders: one interface, an offline default, a test embedder, cloud providers."""

from __future__ import annotations

import os

from ..errors import EmbedderUnavailableError
from .base import Embedder, as_matrix, as_vector
from .hashing import HashEmbedder

__all__ = ["DEFAULT_SPEC", "Embedder", "HashEmbedder", "as_matrix", "as_vector", "create"]

DEFAULT_SPEC = "local"


def create(spec: str | None = None) -> Embedder:
    """Build an embedder from a spec such as ``"local"`` or ``"hash:64"``.

    ``None`` means ``REMEMBRANCES_EMBEDDER`` or, failing that, the offline default.
    """
    spec = (spec or os.environ.get("REMEMBRANCES_EMBEDDER") or DEFAULT_SPEC).strip()
    provider, _, model = spec.partition(":")
    provider = provider.lower()
    if provider == "local":
        from .local import LocalEmbedder

        return LocalEmbedder()
    if provider == "hash":
        try:
            return HashEmbedder(int(model or 64))
        except ValueError as exc:
            raise EmbedderUnavailableError(f"bad hash embedder spec {spec!r}: {exc}") from exc
    raise EmbedderUnavailableError(f"unknown embedder {spec!r}; use 'local' or 'hash:DIM'")
