"""Compacting a memory: the cached vectors nothing uses go, the file shrinks, and
nothing a chunk needs is lost."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

import remembrances
from remembrances import Chunk, ReadOnlyError, Store
from remembrances.embeddings import HashEmbedder
from remembrances.embeddings.base import to_blob
from remembrances.integrity import check
from remembrances.storage import sqlite_connection
from remembrances.store import content_hash

pytestmark = pytest.mark.backends("sqlite", "postgresql")

KEPT = [f"deploy note {i}: the release train leaves on Friday" for i in range(40)]
GONE = [f"old build log {i}: step {i * 7} finished" for i in range(300)]


def _ranked(store: Store, engine: str = "memory") -> list[tuple[float, int]]:
    """The hits as (score, chunk id), ties in either order (the engines break them apart)."""
    hits = store.search("release train Friday", engine=engine)  # type: ignore[arg-type]
    return sorted((round(h.score, 6), h.id) for h in hits)


def _cache_rows(store: Store) -> set[tuple[str, str]]:
    with store.snapshot() as tx:
        rows = tx.execute("SELECT embedder, content_hash FROM embedding_cache").fetchall()
    return {(str(r["embedder"]), str(r["content_hash"])) for r in rows}


def test_compact_drops_the_vectors_of_deleted_text_and_keeps_the_rest(store: Store) -> None:
    store.put_source("kb", "kept", [Chunk(t) for t in KEPT])
    store.put_source("kb", "gone", [Chunk(t) for t in GONE])
    store.delete_source("kb", "gone")
    # another model's vectors: one of a text a chunk holds (a reembed filled it and
    # may be resumed), one of a deleted text
    other = to_blob(HashEmbedder(64).embed_documents(["x"])[0])
    with store.transaction() as tx:
        tx.executemany(
            "INSERT INTO embedding_cache (embedder, content_hash, embedding) VALUES (?, ?, ?)",
            [
                ("other:64", content_hash(KEPT[0]), other),
                ("other:64", content_hash(GONE[0]), other),
            ],
        )
    before = _ranked(store)
    assert store.stats()["unused_cached_embeddings"] == len(GONE) + 1  # what compact drops

    report = store.compact()

    assert report.vectors_dropped == len(GONE) + 1
    assert store.stats()["unused_cached_embeddings"] == 0
    assert _cache_rows(store) == {(store.embedder_name, content_hash(t)) for t in KEPT} | {
        ("other:64", content_hash(KEPT[0]))
    }
    assert _ranked(store) == before
    assert check(store).ok
    # a kept text added again costs nothing; a dropped one is embedded again
    assert store.put_source("kb", "again", [Chunk(KEPT[1])]).embedded == 0
    assert store.put_source("kb", "back", [Chunk(GONE[1])]).embedded == 1
    assert store.compact().vectors_dropped == 0


def test_compacting_an_empty_memory_does_nothing(store: Store) -> None:
    report = store.compact()
    assert report.vectors_dropped == 0 and report.bytes_after > 0


@pytest.mark.backends("sqlite")
def test_the_file_shrinks_and_reopens_whole(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with Store(path, embedder=HashEmbedder(64)) as store:
        store.put_source("kb", "kept", [Chunk(t) for t in KEPT])
        store.put_source("kb", "gone", [Chunk(t * 20) for t in GONE])
        store.delete_source("kb", "gone")
        before = {engine: _ranked(store, engine) for engine in ("memory", "vec0")}
        freed = store.stats()["free_bytes"]  # the deleted rows' pages, which compact gives back
        report = store.compact()
        assert report.bytes_after < report.bytes_before / 2, report
        assert freed > 0 and store.stats()["free_bytes"] == 0
        assert report.settled and report.bytes_on_disk == report.bytes_after == path.stat().st_size
        assert not Path(f"{path}-wal").exists() or Path(f"{path}-wal").stat().st_size == 0
        # VACUUM ran with its temp store in a file (a 177 MB file: 66 MB more RAM at the
        # peak, against 178 MB in memory; benchmarks/RESULTS.md); the writer is back to
        # temp tables in memory afterwards
        assert store.engine.db.conn.execute("PRAGMA temp_store").fetchall() == [(2,)]
    # the vec0 tables and the cold start read from them survive the rewrite
    with Store(path, embedder=HashEmbedder(64)) as store:
        for engine in ("memory", "vec0"):
            assert _ranked(store, engine) == before[engine], engine
        assert check(store).ok


@pytest.mark.backends("sqlite")
def test_compact_goes_on_while_another_thread_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_connection, "VACUUM_SETTLE_S", 0.5)
    path = tmp_path / "m.db"
    with remembrances.open(path, embedder="hash:64") as memory:
        memory.kb.add("The VPN needs MFA.", source="vpn")
        memory.kb.add("Old runbook.", source="old")
        memory.kb.delete("old")
        reading, release = threading.Event(), threading.Event()
        seen: list[int] = []

        def hold_a_snapshot() -> None:
            with memory.store.snapshot() as tx:  # the snapshot starts at its first read
                seen.append(int(tx.execute("SELECT count(*) AS n FROM chunks").scalar()))
                reading.set()
                release.wait(10)
                seen.append(int(tx.execute("SELECT count(*) AS n FROM chunks").scalar()))

        reader = threading.Thread(target=hold_a_snapshot)
        reader.start()
        assert reading.wait(10)
        try:
            report = memory.compact()
        finally:
            release.set()
            reader.join()
        assert report.vectors_dropped == 1 and seen == [1, 1]
        # the read kept the old pages in use: the rewrite waits in the WAL, and says so
        assert not report.settled and report.bytes_on_disk > report.bytes_after
        assert memory.kb.search("VPN MFA")[0].source == "vpn"
    # the reads have ended: the next checkpoint (here, closing) gives the space back
    assert path.stat().st_size == report.bytes_after


@pytest.mark.backends("sqlite")
def test_a_read_only_memory_is_not_compacted(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with Store(path, embedder=HashEmbedder(64)) as store:
        store.put_source("kb", "a", [Chunk("text")])
    with Store(path, read_only=True) as store, pytest.raises(ReadOnlyError, match="compact"):
        store.compact()


@pytest.mark.backends("sqlite")
def test_compact_inside_a_write_transaction_is_refused(tmp_path: Path) -> None:
    with Store(tmp_path / "m.db", embedder=HashEmbedder(64)) as store:
        store.put_source("kb", "a", [Chunk("text")])
        store.put_source("kb", "gone", [Chunk("deleted text")])
        store.delete_source("kb", "gone")
        cached = _cache_rows(store)
        with store.transaction(), pytest.raises(remembrances.StorageError, match="inside"):
            store.compact()
        assert store.get_source("kb", "a")[0].text == "text"
        assert _cache_rows(store) == cached  # refused before anything was dropped
