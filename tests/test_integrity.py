"""check() finds disagreements between the chunk table and its indexes, and repairs them."""

from __future__ import annotations

import struct

import pytest

import remembrances
from remembrances import Chunk, Store
from remembrances.embeddings import HashEmbedder
from remembrances.integrity import check


def filled(store: Store) -> Store:
    for i in range(5):
        store.put_source(
            "kb", f"doc{i}", [Chunk(f"note number {i} about sqlite"), Chunk(f"second part {i}")]
        )
    return store


@pytest.mark.backends("sqlite", "postgresql")
def test_a_healthy_file_passes(store: Store) -> None:
    report = check(filled(store))
    assert report.ok and report.problems == [] and report.chunks == 10 and report.vectors == 10


def test_fts_drift_is_found_and_rebuilt(store: Store) -> None:
    filled(store)
    with store.transaction() as conn:
        conn.execute("INSERT INTO chunks_fts (rowid, text) VALUES (99999, 'ghost row')")
    report = check(store)
    assert not report.ok and "full-text" in report.problems[0]
    repaired = check(store, repair=True)
    assert repaired.ok and repaired.repaired
    assert check(store).problems == []
    assert store.search("ghost", mode="text") == []


def test_vec0_drift_is_found_and_rebuilt(store: Store) -> None:
    filled(store)
    with store.transaction() as conn:
        conn.execute("DELETE FROM chunks_vec WHERE chunk_id IN (SELECT id FROM chunks LIMIT 2)")
    report = check(store)
    assert "2 missing" in " ".join(report.problems)
    assert check(store, repair=True).ok
    assert check(store).problems == []
    assert len(store.search("sqlite", mode="vector", engine="vec0", limit=20)) == 10


def test_non_finite_vectors_are_cleared_for_re_embedding(store: Store) -> None:
    filled(store)
    nan_blob = struct.pack("<64f", *([float("nan")] * 64))
    with store.transaction() as conn:
        conn.execute("DROP TRIGGER chunks_vec_update")  # simulate a foreign tool's write
        conn.execute("UPDATE chunks SET embedding = ? WHERE source = 'doc0'", (nan_blob,))
    report = check(store)
    assert any("non-finite" in p for p in report.problems)
    assert any("chunks_vec_update" in p for p in report.problems)
    assert check(store, repair=True).ok
    assert check(store).problems == []
    assert store.pending_embeddings() == 2
    assert store.backfill_embeddings() == 2
    assert store.search("note number 0", mode="vector")[0].source == "doc0"


@pytest.mark.backends("sqlite", "postgresql")
def test_missing_model_record_is_reported(store: Store) -> None:
    filled(store)
    with store.transaction() as conn:
        conn.execute("DELETE FROM meta WHERE key = 'embedder'")
    assert any("records no embedder" in p for p in check(store).problems)


@pytest.mark.backends("sqlite", "postgresql")
def test_chunks_and_records_that_disagree_are_found_and_repaired(location: str) -> None:
    """What only the layers know: a chunk whose document or event is gone, and a
    document or event missing its chunks (rebuilt from its stored text)."""
    with remembrances.open(location, embedder="hash:64") as svc:
        svc.kb.add("# Keys\n\nRotate keys every 90 days.", source="keys.md")
        svc.kb.add("# Gone\n\nA document whose row is lost.", source="gone.md")
        kept, lost, unindexed = (svc.events.log(f"event {i}", subject="ops") for i in "abc")
        with svc.store.transaction() as tx:  # what a bug could leave behind
            tx.execute("DELETE FROM kb_documents WHERE source = 'gone.md'")
            tx.execute("DELETE FROM events WHERE id = ?", (lost.id,))
        svc.store.delete_source("event", str(unindexed.id), collection="events")
        svc.store.delete_source("kb", "keys.md", collection="default")
        report = svc.check()
        assert not report.ok and len(report.problems) == 2, report.problems
        assert (
            f"event events/{lost.id}" in report.problems[0]
            and "kb default/gone.md" in (report.problems[0])
        )
        assert "KB default/keys.md" in report.problems[1]
        assert f"event {unindexed.id}" in report.problems[1]
        assert svc.check(repair=True).ok
        assert svc.check().ok and svc.check().problems == []
        assert [h.source for h in svc.kb.search("rotate keys", mode="text")] == ["keys.md"]
        found = svc.events.search("event", mode="text", limit=5)
        assert sorted(e.id for e in found) == sorted([kept.id, unindexed.id])
        assert svc.store.search("whose row is lost", mode="text") == []


class FailingEmbedder(HashEmbedder):
    """hash:64 whose vectors come back with the wrong length: an embedder that fails."""

    def embed_documents(self, texts):  # type: ignore[no-untyped-def]
        return [[0.1] * 5 for _ in texts]


@pytest.mark.backends("sqlite", "postgresql")
def test_a_repair_whose_embedder_fails_keeps_the_document(location: str) -> None:
    text = "# Keys\n\nRotate keys every 90 days, and the signing key every 30."
    with remembrances.open(location, embedder="hash:64") as svc:
        svc.kb.add(text, source="keys.md", metadata={"team": "ops"})
        svc.store.delete_source("kb", "keys.md", collection="default")
        with svc.store.transaction() as tx:  # so that the repair must call the embedder
            tx.execute("DELETE FROM embedding_cache")
    with remembrances.open(location, embedder=FailingEmbedder(64)) as svc:
        report = svc.check(repair=True)
        assert any("could not be rebuilt" in p and "keys.md" in p for p in report.problems)
        assert not any("chunked again" in r for r in report.repaired)
        doc = svc.kb.get("keys.md")  # still there, as it was
        assert doc.text == text and doc.metadata == {"team": "ops"}
    with remembrances.open(location, embedder="hash:64") as svc:
        assert svc.check(repair=True).repaired == ["chunked again from their stored text: 1"]
        assert svc.check().ok
        assert [h.source for h in svc.kb.search("signing key", mode="text")] == ["keys.md"]
