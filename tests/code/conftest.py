"""Fixtures for the code index: the fixture repository and an indexer over a real file."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from repo_builder import MAX_FILE_BYTES, build_repo  # noqa: E402

from remembrances import Store  # noqa: E402
from remembrances.code import CodeIndexer  # noqa: E402


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return build_repo(tmp_path / "shop")


@pytest.fixture
def code(store: Store) -> Iterator[CodeIndexer]:
    yield CodeIndexer(store, max_file_bytes=MAX_FILE_BYTES, workers=1)
