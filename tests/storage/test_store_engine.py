"""The store over its engine: the model guard attached after opening, sources, sizes."""

from __future__ import annotations

from pathlib import Path

import pytest

from remembrances import Chunk, EmbedderMismatchError, Store
from remembrances.embeddings import HashEmbedder
from remembrances.storage.engine import Engine
from remembrances.storage.sqlite_engine import SqliteEngine


def test_open_without_an_embedder_then_attach_the_recorded_one(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with Store(path, embedder=HashEmbedder(32)) as store:
        store.put_source("kb", "a.md", [Chunk("alpha beta")])
    with Store(path) as store:
        assert store.embedder is None and store.embedder_name == "hash:32"
        with pytest.raises(EmbedderMismatchError, match="reembed"):
            store.attach_embedder(HashEmbedder(16))
        assert store.embedder is None  # a refused model is not kept
        store.attach_embedder(HashEmbedder(32))
        assert [r.source for r in store.search("alpha", mode="vector")] == ["a.md"]


def test_a_file_missing_its_vector_table_gets_it_back_when_the_model_attaches(
    tmp_path: Path,
) -> None:
    path = tmp_path / "m.db"
    with Store(path, embedder=HashEmbedder(32)) as store:
        store.put_source("kb", "a.md", [Chunk("alpha beta")])
        with store.transaction() as tx:
            for trigger in ("chunks_vec_insert", "chunks_vec_delete", "chunks_vec_update"):
                tx.execute(f"DROP TRIGGER {trigger}")
            tx.execute("DROP TABLE chunks_vec")
    with Store(path, embedder=HashEmbedder(32)) as store:
        assert store.search("alpha", mode="vector", engine="vec0")[0].source == "a.md"


def test_sources_lists_every_source_once_in_order(store: Store) -> None:
    store.put_source("kb", "b.md", [Chunk("one"), Chunk("two")], collection="x")
    store.put_source("event", "7", [Chunk("three")], collection="events")
    store.put_source("kb", "a.md", [Chunk("four")], collection="x")
    assert store.sources() == [("event", "events", "7"), ("kb", "x", "a.md"), ("kb", "x", "b.md")]
    store.delete_source("kb", "a.md")
    assert store.sources() == [("event", "events", "7"), ("kb", "x", "b.md")]


def test_the_sqlite_engine_is_the_default_and_meets_the_protocol(store: Store) -> None:
    assert isinstance(store.engine, SqliteEngine)
    engine: Engine = store.engine
    assert engine.dialect == "sqlite" and engine.location == store.path
    assert store.stats()["file_bytes"] == engine.size_bytes() > 0
