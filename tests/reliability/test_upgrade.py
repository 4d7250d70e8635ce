"""Files written by an older schema migrate in place; newer ones are refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from remembrances import Chunk, SchemaVersionError, Store
from remembrances.embeddings import HashEmbedder
from remembrances.integrity import check
from remembrances.storage.schema import STORE_MIGRATIONS, migrate
from remembrances.storage.sqlite_connection import connect


def test_version_1_file_migrates_in_place(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    conn = connect(path)
    conn.execute("BEGIN IMMEDIATE")
    migrate(conn, "store", STORE_MIGRATIONS[:1])
    conn.execute("INSERT INTO meta (key, value) VALUES ('embedder', 'hash:64'), ('dim', '64')")
    conn.execute(
        "INSERT INTO chunks (kind, collection, source, position, text, content_hash, created_at) "
        "VALUES ('kb', 'default', 'legacy.md', 0, 'written by version one', 'h', 0)"
    )
    conn.execute("COMMIT")
    conn.close()

    store = Store(path, embedder=HashEmbedder(64))
    assert store.meta("schema:store") == str(len(STORE_MIGRATIONS))
    with store.snapshot() as c:
        names = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert "chunks_source" in names
    assert store.get_source("kb", "legacy.md")[0].text == "written by version one"
    assert store.search("version one", mode="text")[0].source == "legacy.md"
    assert store.backfill_embeddings() == 1  # old rows without vectors get them
    assert check(store).ok


def test_newer_file_is_refused_read_write_and_read_only(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    store = Store(path, embedder=HashEmbedder(64))
    store.put_source("kb", "a", [Chunk("text")])
    with store.transaction() as conn:
        conn.execute("UPDATE meta SET value = '999' WHERE key = 'schema:store'")
    store.close()
    with pytest.raises(SchemaVersionError, match="upgrade remembrances"):
        Store(path, embedder=HashEmbedder(64))
    with pytest.raises(SchemaVersionError):
        Store(path, read_only=True)


def test_open_without_embedder_uses_the_recorded_one_even_before_migrating(tmp_path: Path) -> None:
    import remembrances

    path = tmp_path / "old.db"
    conn = connect(path)
    conn.execute("BEGIN IMMEDIATE")
    migrate(conn, "store", STORE_MIGRATIONS[:1])
    conn.execute("INSERT INTO meta (key, value) VALUES ('embedder', 'hash:32'), ('dim', '32')")
    conn.execute("COMMIT")
    conn.close()
    with remembrances.open(path) as memory:
        assert memory.embedder is not None and memory.embedder.name == "hash:32"
        assert memory.store.meta("schema:store") == str(len(STORE_MIGRATIONS))
