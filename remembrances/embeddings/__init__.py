"""Embedders: one interface, an offline default, a test embedder, cloud providers."""

from __future__ import annotations

import os
from typing import Any

from ..errors import EmbedderUnavailableError
from .base import Embedder, as_matrix, as_vector
from .hashing import HashEmbedder
from .retry import RetryPolicy

__all__ = [
    "DEFAULT_SPEC",
    "PROVIDERS",
    "Embedder",
    "HashEmbedder",
    "RetryPolicy",
    "as_matrix",
    "as_vector",
    "create",
]

DEFAULT_SPEC = "local"
#: Remote providers: spec prefix -> (module, class). Modules import their SDK lazily.
PROVIDERS: dict[str, tuple[str, str]] = {
    "openai": ("openai", "OpenAIEmbedder"),
    "voyage": ("voyage", "VoyageEmbedder"),
    "google": ("google", "GoogleEmbedder"),
    "ollama": ("ollama", "OllamaEmbedder"),
}
_USAGE = (
    "use 'local', 'hash:DIM', 'openai:MODEL', 'voyage:MODEL', 'google:MODEL' or "
    "'ollama:MODEL' (optionally MODEL@DIMS for a shorter output)"
)


def create(spec: str | None = None, **options: Any) -> Embedder:
    """Build an embedder from a spec such as ``"local"``, ``"hash:64"``,
    ``"openai:text-embedding-3-small"``, ``"openai:text-embedding-3-small@256"``,
    ``"voyage:voyage-3.5"``, ``"google:gemini-embedding-001"`` or
    ``"ollama:nomic-embed-text"``.

    ``None`` means ``REMEMBRANCES_EMBEDDER`` or, failing that, the offline default.
    ``options`` go to the provider (``api_key``, ``base_url``, ``host``,
    ``dimensions``, ``timeout``, ``retry``, ``batch_size``, ``concurrency``...).
    A provider's name is a spec this function accepts again, so a store can be
    reopened with the embedder that wrote it. A missing key or SDK is reported
    here, before any work starts.
    """
    spec = (spec or os.environ.get("REMEMBRANCES_EMBEDDER") or DEFAULT_SPEC).strip()
    provider, _, model = spec.partition(":")
    provider = provider.lower().strip()
    model = model.strip()
    if provider == "local":
        from .local import LocalEmbedder

        return LocalEmbedder(**options)
    if provider == "hash":
        if not (model or "64").strip().isdigit():
            raise EmbedderUnavailableError(
                f"bad hash embedder spec {spec!r}: the part after 'hash:' is the dimension, "
                "a whole number, as in hash:64"
            )
        try:
            return HashEmbedder(int(model or 64))
        except ValueError as exc:
            raise EmbedderUnavailableError(f"bad hash embedder spec {spec!r}: {exc}") from exc
    if provider not in PROVIDERS:
        raise EmbedderUnavailableError(f"unknown embedder {spec!r}; {_USAGE}")
    model, dimensions = _split_dimensions(model, spec)
    if dimensions is not None:
        if options.get("dimensions") not in (None, dimensions):
            raise EmbedderUnavailableError(
                f"{spec!r} asks for {dimensions} dimensions but dimensions="
                f"{options['dimensions']!r} was also given"
            )
        options["dimensions"] = dimensions
    if model:
        options["model"] = model
    import importlib

    module_name, class_name = PROVIDERS[provider]
    module = importlib.import_module(f"{__name__}.{module_name}")
    try:
        embedder: Embedder = getattr(module, class_name)(**options)
    except TypeError as exc:
        raise EmbedderUnavailableError(f"bad options for the {provider} embedder: {exc}") from exc
    return embedder


def _split_dimensions(model: str, spec: str) -> tuple[str, int | None]:
    """``"text-embedding-3-small@256"`` -> (``"text-embedding-3-small"``, 256)."""
    base, at, suffix = model.rpartition("@")
    if not at:
        return model, None
    if not suffix.isdigit() or int(suffix) < 1 or not base:
        raise EmbedderUnavailableError(
            f"bad embedder spec {spec!r}: after '@' comes the output dimension, a positive "
            "integer (e.g. 'openai:text-embedding-3-small@256')"
        )
    return base, int(suffix)
