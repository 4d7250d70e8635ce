"""Public methods the benchmarks read instead of the store's tables or private attributes."""

from __future__ import annotations

from pathlib import Path

import pytest

from remembrances import InvalidInputError, NotFoundError, Store
from remembrances.code import CodeIndexer
from remembrances.code.repo_map import RepoMapper
from remembrances.records import Chunk


def test_vector_index_is_the_loaded_index_searches_use(store: Store) -> None:
    store.put_source("note", "a", [Chunk("alpha beta"), Chunk("gamma delta")])
    index = store.vector_index()
    assert index.loaded and index.n == 2
    assert index.loaded_from in ("vec0", "rows")
    assert store.stats()["index_bytes"] == index.nbytes > 0
    store.search("alpha", mode="vector")
    assert store.vector_index() is index  # one index per store, kept in sync
    store.put_source("note", "b", [Chunk("epsilon")])
    assert store.vector_index().n == 3


def test_a_project_graph_is_rebuilt_on_request_and_counts_its_updates(
    store: Store, tmp_path: Path
) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.py").write_text("def helper():\n    return 1\n")
    (root / "b.py").write_text("from a import helper\n\ndef main():\n    return helper()\n")
    code = CodeIndexer(store, workers=1)
    code.index(root, project="p", embed=False)
    mapper = RepoMapper(store)
    assert mapper.graph_updates("p") == 0  # the index run built it whole
    assert mapper.rebuild_graph("p") == 1  # b.py uses helper, defined in a.py
    (root / "b.py").write_text("from a import helper\n\ndef main():\n    return helper() + 1\n")
    code.index(root, project="p", embed=False)
    assert mapper.graph_updates("p") == 1
    assert mapper.rebuild_graph("p") == 1 and mapper.graph_updates("p") == 0
    with pytest.raises(NotFoundError):
        mapper.rebuild_graph("nope")
    with pytest.raises(InvalidInputError):
        mapper.graph_updates("")
