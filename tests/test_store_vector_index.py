"""``Store.vector_index``: the loaded in-memory index, for benchmarks and diagnostics."""

from __future__ import annotations

from remembrances import Store
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
