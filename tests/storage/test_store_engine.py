"""The store over its engine: the model guard attached after opening, sources, sizes."""

from __future__ import annotations

from pathlib import Path

import pytest

from remembrances import Chunk, EmbedderMismatchError, EmbedderUnavailableError, Store
from remembrances.embeddings import HashEmbedder
from remembrances.storage.engine import Engine
from remembrances.storage.filters import ChunkFilter
from remembrances.storage.search import text_candidates
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
    assert store.kinds() == ["event", "kb"] == sorted(store.stats()["chunks_by_kind"])


def test_the_sqlite_engine_is_the_default_and_meets_the_protocol(store: Store) -> None:
    assert isinstance(store.engine, SqliteEngine)
    engine: Engine = store.engine
    assert engine.dialect == "sqlite" and engine.location == store.path
    assert store.stats()["file_bytes"] == engine.size_bytes() > 0


def test_the_text_leg_asks_rare_words_first_only_for_candidates(store: Store) -> None:
    """Hybrid search scores its candidates itself, so its text leg may start from the
    query's rare words; a ranked text search keeps BM25 over every word."""
    texts = (
        [f"alpha beta gamma delta {i} " * 3 for i in range(30)]  # common: 30 of 103
        + [f"filler note {i}" for i in range(68)]
        + [f"rare note {i}" for i in range(5)]  # rare: 5 of 103, under COMMON_SHARE
    )
    ids = [
        store.put_source("kb", f"s{i}", [Chunk(text)]).chunk_ids[0] for i, text in enumerate(texts)
    ]
    rare_ids, common_ids = set(ids[98:]), set(ids[:30])
    query = "alpha beta gamma delta rare"
    with store.engine.read() as tx:
        two = text_candidates(store.engine, tx, query, 2, ChunkFilter())
        six = text_candidates(store.engine, tx, query, 6, ChunkFilter())
        ranked_two = store.engine.text_leg(tx, query, 2, ChunkFilter())
        ranked_six = store.engine.text_leg(tx, query, 6, ChunkFilter())
    assert len(two) == 2 and {i for i, _ in two} <= rare_ids
    # Four common words held three times outweigh one rare word in BM25.
    assert len(ranked_two) == 2 and {i for i, _ in ranked_two} <= common_ids
    # Only 5 chunks hold the rare word: for 6 the leg asks with every word.
    assert [i for i, _ in six] == [i for i, _ in ranked_six] and len(six) == 6


@pytest.mark.backends("sqlite", "postgresql")
def test_an_embedder_too_wide_for_the_vector_index_is_refused_before_anything_is_recorded(
    location: str,
) -> None:
    with Store(location) as store:
        widest = store.engine.max_dimensions
        with pytest.raises(EmbedderUnavailableError, match=f"can index 1 to {widest} dimensions"):
            store.attach_embedder(HashEmbedder(widest + 1))
        assert store.embedder is None and store.embedder_name is None
        store.attach_embedder(HashEmbedder(widest))  # the widest it takes is recorded
        store.put_source("kb", "a.md", [Chunk("alpha beta")])
        assert [r.source for r in store.search("alpha", mode="vector")] == ["a.md"]
    with pytest.raises(EmbedderUnavailableError, match="dimensions"):
        Store(location, embedder=HashEmbedder(widest + 1))


class CountingEmbedder(HashEmbedder):
    """A real (hashing) embedder that counts the texts it was asked to embed."""

    def __init__(self, dim: int) -> None:
        super().__init__(dim)
        self.embedded = 0

    def embed_documents(self, texts):  # type: ignore[no-untyped-def]
        self.embedded += len(texts)
        return super().embed_documents(texts)


@pytest.mark.backends("sqlite", "postgresql")
def test_reembedding_with_a_too_wide_model_is_refused_before_any_embedding(
    location: str,
) -> None:
    from remembrances.reembed import reembed

    with Store(location, embedder=HashEmbedder(32)) as store:
        store.put_source("kb", "a.md", [Chunk("alpha beta")])
        widest = store.engine.max_dimensions
    wide = CountingEmbedder(widest + 1)
    with pytest.raises(EmbedderUnavailableError, match=f"can index 1 to {widest} dimensions"):
        reembed(location, wide)
    assert wide.embedded == 0
    with Store(location, embedder=HashEmbedder(32)) as store:  # still the old model
        assert [r.source for r in store.search("alpha", mode="vector")] == ["a.md"]
