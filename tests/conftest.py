"""Shared fixtures: real SQLite files in a temporary directory, the real sqlite-vec."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from remembrances import Store
from remembrances.embeddings import HashEmbedder


class FlakyEmbedder(HashEmbedder):
    """A real embedder (hashing) that fails on a chosen text, to test atomicity."""

    def __init__(self, dim: int = 64, fail_on: str = "FAIL") -> None:
        super().__init__(dim)
        self.fail_on = fail_on

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if any(self.fail_on in t for t in texts):
            raise RuntimeError("embedding service unavailable")
        return super().embed_documents(texts)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "memory.db"


@pytest.fixture
def embedder() -> HashEmbedder:
    return HashEmbedder(64)


@pytest.fixture
def store(db_path: Path, embedder: HashEmbedder) -> Iterator[Store]:
    s = Store(db_path, embedder=embedder)
    yield s
    s.close()
