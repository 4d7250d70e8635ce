"""Fixtures for the code index: the fixture repository and an indexer over a real file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from remembrances import Store
from remembrances.code import CodeIndexer
from tests.code.repo_builder import MAX_FILE_BYTES, build_repo


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return build_repo(tmp_path / "shop")


@pytest.fixture
def code(store: Store) -> Iterator[CodeIndexer]:
    yield CodeIndexer(store, max_file_bytes=MAX_FILE_BYTES, workers=1)
