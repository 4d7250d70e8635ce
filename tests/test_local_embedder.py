"""The offline default embedder: a real model from the package, no network."""

from __future__ import annotations

import numpy as np
import pytest

from remembrances import Chunk, Store
from remembrances.embeddings import create
from remembrances.embeddings.local import LocalEmbedder
from remembrances.errors import EmbedderUnavailableError


@pytest.fixture(scope="module")
def local() -> LocalEmbedder:
    embedder = create("local")
    assert isinstance(embedder, LocalEmbedder)
    embedder.load()
    return embedder


def test_vectors_are_unit_length_and_semantic(local: LocalEmbedder) -> None:
    vectors = local.embed_documents(
        ["The cat sat on the mat.", "A kitten rested on a rug.", "Quarterly tax filing deadline."]
    )
    assert vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    sims = vectors @ vectors.T
    assert sims[0, 1] > sims[0, 2] + 0.3


def test_batching_and_order_do_not_change_vectors(local: LocalEmbedder) -> None:
    texts = ["short", "a somewhat longer sentence about databases", "mid length text"]
    together = local.embed_documents(texts)
    alone = np.stack([local.embed_documents([t])[0] for t in texts])
    assert np.allclose(together, alone, atol=1e-4)
    assert np.allclose(local.embed_query(texts[1]), together[1], atol=1e-4)


def test_long_input_is_truncated_not_refused(local: LocalEmbedder) -> None:
    vector = local.embed_documents(["word " * 5000])
    assert vector.shape == (1, 384) and np.isfinite(vector).all()


def test_store_with_the_local_embedder(tmp_path, local: LocalEmbedder) -> None:  # type: ignore[no-untyped-def]
    store = Store(tmp_path / "m.db", embedder=local)
    store.put_source("kb", "pets", [Chunk("Cats sleep most of the day.")])
    store.put_source("kb", "db", [Chunk("SQLite uses a write-ahead log for concurrency.")])
    assert store.search("feline naps", mode="vector")[0].source == "pets"
    assert store.search("database journaling", mode="vector")[0].source == "db"


def test_missing_model_file_is_a_clear_error(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("REMEMBRANCES_LOCAL_MODEL", str(tmp_path / "missing.onnx"))
    with pytest.raises(EmbedderUnavailableError, match=r"remembrances\[local\]"):
        LocalEmbedder().load()
