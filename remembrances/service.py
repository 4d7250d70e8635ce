"""RemembrancesService: the KB, the event log and the code index over one file."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from . import embeddings
from .embeddings.base import Embedder
from .store import Reranker, Store

DEFAULT_PATH = Path(".remembrances") / "memory.db"


def default_path() -> Path:
    """``REMEMBRANCES_DB`` if set, else ``./.remembrances/memory.db``."""
    return Path(os.environ.get("REMEMBRANCES_DB") or DEFAULT_PATH)


def recorded_embedder(path: str | os.PathLike[str]) -> str | None:
    """The embedder spec an existing file was written with, without opening it for writing."""
    if not Path(path).exists():
        return None
    store = Store(path, read_only=True)
    try:
        return store.embedder_name
    except Exception:
        return None
    finally:
        store.close()


class RemembrancesService:
    """One memory file and one embedder; the domain layers hang off it."""

    def __init__(self, store: Store) -> None:
        self.store = store

    @property
    def path(self) -> str:
        return self.store.path

    @property
    def embedder(self) -> Embedder | None:
        return self.store.embedder

    def stats(self) -> dict[str, Any]:
        return self.store.stats()

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> RemembrancesService:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open(  # noqa: A001 - the library's front door, like sqlite_utils.Database
    path: str | os.PathLike[str] | None = None,
    *,
    embedder: Embedder | str | None = None,
    read_only: bool = False,
    reranker: Reranker | None = None,
) -> RemembrancesService:
    """Open (or create) a memory file.

    ``embedder`` is an :class:`Embedder` or a spec (``"local"``, ``"openai:..."``).
    Without one, an existing file is opened with the embedder it was written
    with, and a new file gets ``REMEMBRANCES_EMBEDDER`` or the offline default.
    """
    path = Path(path) if path is not None else default_path()
    if embedder is None:
        embedder = embeddings.create(_recorded(path))
    elif isinstance(embedder, str):
        embedder = embeddings.create(embedder)
    return RemembrancesService(Store(path, embedder=embedder, read_only=read_only, reranker=reranker))


def _recorded(path: Path) -> str | None:
    try:
        return recorded_embedder(path)
    except Exception:
        return None
