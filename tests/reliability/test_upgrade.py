"""Files written by an older schema migrate in place; newer ones are refused."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from remembrances import Chunk, SchemaVersionError, Store
from remembrances.cjk import cjk_words
from remembrances.embeddings import HashEmbedder
from remembrances.embeddings.base import to_blob
from remembrances.integrity import check
from remembrances.storage.filters import ChunkFilter
from remembrances.storage.schema import STORE_MIGRATIONS, migrate
from remembrances.storage.sqlite_connection import Connection, connect
from remembrances.store import content_hash


@contextmanager
def _written_at(path: Path, steps: int, dim: int = 64) -> Iterator[Connection]:
    """A memory file as a version that knew ``steps`` store steps wrote it (its model
    recorded): the rows written inside go in with them."""
    conn = connect(path)
    conn.execute("BEGIN IMMEDIATE")
    migrate(conn, "store", STORE_MIGRATIONS[:steps])
    conn.execute(
        "INSERT INTO meta (key, value) VALUES ('embedder', ?), ('dim', ?)",
        (f"hash:{dim}", str(dim)),
    )
    yield conn
    conn.execute("COMMIT")
    conn.close()


def test_version_1_file_migrates_in_place(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with _written_at(path, 1) as conn:
        conn.execute(
            "INSERT INTO chunks (kind, collection, source, position, text, content_hash, "
            "created_at) VALUES ('kb', 'default', 'legacy.md', 0, 'written by version one', "
            "'h', 0)"
        )

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
    with _written_at(path, 1, dim=32):
        pass
    with remembrances.open(path) as memory:
        assert memory.embedder is not None and memory.embedder.name == "hash:32"
        assert memory.store.meta("schema:store") == str(len(STORE_MIGRATIONS))


def _as_the_previous_version_left_it(path: Path) -> None:
    """Store schema 2 and events schema 3: what files written before the removed-turns
    table (events step 4) and the store's step 3 look like."""
    conn = connect(path)
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("DROP TABLE removed_turns")
    conn.execute("UPDATE meta SET value = '3' WHERE key = 'schema:events'")
    conn.execute("UPDATE meta SET value = '2' WHERE key = 'schema:store'")
    conn.execute("COMMIT")
    conn.close()


def test_the_previous_versions_file_is_read_as_it_is_and_copied_once_upgraded(
    tmp_path: Path,
) -> None:
    # the steps since then serve writes only: a read-only open (every reading CLI
    # command) needed no `init`, and a copy read the table the source lacked
    import remembrances
    from remembrances.memory_copy import copy_memory

    path = tmp_path / "previous.db"
    with remembrances.open(path, embedder="hash:64") as memory:
        memory.events.log_conversation([{"role": "user", "content": "ship on Friday"}], session="s")
    _as_the_previous_version_left_it(path)
    with remembrances.open(path, read_only=True) as memory:
        assert memory.stats()["schema_version"] == 2  # the file's, not this version's
        assert [e.content for e in memory.events.turns("s")] == ["ship on Friday"]
        assert memory.events.search("Friday", mode="text")[0].content == "ship on Friday"
    # a copy would stamp its rows with the new schema without the steps' changes
    with pytest.raises(SchemaVersionError, match="events schema 3, this version uses 4"):
        copy_memory(path, tmp_path / "copy.db")
    assert not (tmp_path / "copy.db").exists()
    with remembrances.open(path) as memory:  # a writable open upgrades it
        memory.events.delete(memory.events.turns("s")[0].id)
        assert memory.store.meta("schema:store") == str(len(STORE_MIGRATIONS))
        assert memory.store.meta("schema:events") == "4"
        logged = memory.events.log_conversation(
            [{"role": "user", "content": "ship on Friday"}], session="s"
        )
        assert logged.added == []  # the deleted turn stays deleted
    report = copy_memory(path, tmp_path / "copy.db")
    assert report.rows["events"] == 0 and report.rows["removed_turns"] == 1


def test_the_previous_version_refuses_a_file_this_version_wrote(tmp_path: Path) -> None:
    # its writes failed on the compact copy's triggers ("no such function:
    # remembrances_int8"); with one step more than it knows, it refuses the file
    path = tmp_path / "new.db"
    Store(path, embedder=HashEmbedder(64)).put_source("kb", "a", [Chunk("text")])
    conn = connect(path)
    conn.execute("BEGIN IMMEDIATE")
    newer = f"store schema is version {len(STORE_MIGRATIONS)}, newer"
    with pytest.raises(SchemaVersionError, match=newer):
        migrate(conn, "store", STORE_MIGRATIONS[:2])  # what that version runs on open
    conn.execute("ROLLBACK")
    conn.close()


def test_a_version_3_file_keeps_its_cached_vectors_in_the_new_cache_table(tmp_path: Path) -> None:
    # step 4 moves the cache out of a WITHOUT ROWID table (an overflow page a vector)
    # and indexes chunks by text
    path = tmp_path / "v3.db"
    text = "cached before the upgrade"
    with _written_at(path, 3) as conn:
        conn.execute(
            "INSERT INTO embedding_cache (embedder, content_hash, embedding) VALUES (?, ?, ?)",
            ("hash:64", content_hash(text), to_blob(HashEmbedder(64).embed_documents([text])[0])),
        )

    with Store(path, embedder=HashEmbedder(64)) as store:
        assert store.meta("schema:store") == str(len(STORE_MIGRATIONS))
        with store.snapshot() as tx:
            table = tx.execute("SELECT sql FROM sqlite_master WHERE name = 'embedding_cache'")
            assert "WITHOUT ROWID" not in table.scalar()
            names = {
                r[0] for r in tx.execute("SELECT name FROM sqlite_master WHERE type = 'index'")
            }
        assert "chunks_content_hash" in names
        assert store.put_source("kb", "a", [Chunk(text)]).cached == 1  # not embedded again
        store.delete_source("kb", "a")
        assert store.forget_embeddings([content_hash(text)]) == 1
        assert check(store).ok


def test_a_version_4_file_is_indexed_again_so_that_cjk_words_are_found(tmp_path: Path) -> None:
    # step 5: a run of CJK characters was one word of the full-text index
    path = tmp_path / "v4.db"
    with _written_at(path, 4) as conn:
        conn.execute(
            "INSERT INTO chunks (kind, collection, source, position, text, content_hash, "
            "created_at) VALUES ('kb', 'default', 'ja', 0, '私は東京に住んでいます', 'h', 0)"
        )
    with Store(path, read_only=True) as old:  # read as it is: the run is one word there
        assert old.search("東京", mode="text") == []
    with Store(path, embedder=HashEmbedder(64)) as store:
        assert [h.source for h in store.search("東京", mode="text")] == ["ja"]
        store.put_source("kb", "zh", [Chunk("我住在北京")])
        store.delete_source("kb", "ja")  # the index takes back the pairs it was given
        assert [h.source for h in store.search("北京 東京", mode="text")] == ["zh"]
        assert check(store).ok


def test_a_version_5_index_is_made_again_with_the_words_as_read_now(tmp_path: Path) -> None:
    # step 5 paired half-width katakana as written; step 6 reads it as full-width (NFKC):
    # deleting the chunk afterwards must take back what the index holds
    path = tmp_path / "v5.db"
    with Store(path, embedder=HashEmbedder(64)) as store:
        store.put_source("kb", "guide", [Chunk("ｶﾞｲﾄﾞを読む")])
        with store.transaction() as tx:  # the index as step 5 wrote it
            row = tx.execute("SELECT id, text FROM chunks").fetchone()
            tx.execute(
                "INSERT INTO chunks_fts (chunks_fts, rowid, text) VALUES ('delete', ?, ?)",
                (row["id"], cjk_words(row["text"])),
            )
            tx.execute(
                "INSERT INTO chunks_fts (rowid, text) VALUES (?, ?)",
                (row["id"], " ｶﾞ ﾞｲ ｲﾄ ﾄﾞ ﾞを を読 読む "),
            )
            tx.execute("UPDATE meta SET value = '5' WHERE key = 'schema:store'")
        assert store.search("ガイド", mode="text") == []
    with Store(path, embedder=HashEmbedder(64)) as store:
        assert [h.source for h in store.search("ガイド", mode="text")] == ["guide"]
        store.delete_source("kb", "guide")
        assert check(store).ok


def test_a_version_6_file_gets_the_scope_indexes_and_its_scoped_searches_use_them(
    tmp_path: Path,
) -> None:
    # step 7: keeping a search to one user's events read every event's metadata
    path = tmp_path / "v6.db"
    with _written_at(path, 6) as conn:
        for user in ("ana", "bo"):
            conn.execute(
                "INSERT INTO chunks (kind, collection, source, position, text, metadata, "
                "content_hash, created_at) VALUES ('event', 'events', ?, 0, 'shipped', ?, ?, 0)",
                (f"e-{user}", json.dumps({"user": user, "session": f"s-{user}"}), user),
            )
    with Store(path, read_only=True) as old:  # read as it is, without the indexes
        assert [h.source for h in old.search("shipped", mode="text", where={"user": "bo"})] == [
            "e-bo"
        ]
    with Store(path, embedder=HashEmbedder(64)) as store:
        for key, value in (("user", "bo"), ("session", "s-bo")):
            where = ChunkFilter.of(kind="event", where={key: value})
            sql, params = where.sql()
            with store.snapshot() as tx:
                plan = " ".join(
                    str(row[-1])
                    for row in tx.execute(
                        f"EXPLAIN QUERY PLAN SELECT c.id FROM chunks c WHERE {sql}", params
                    )
                )
            assert f"USING INDEX chunks_{key}" in plan, plan
            hits = store.search("shipped", mode="text", where={key: value})
            assert [h.source for h in hits] == ["e-bo"]
        assert check(store).ok


def test_a_process_of_the_version_before_cannot_write_a_step_6_file(tmp_path: Path) -> None:
    # it has only step 5's remembrances_words: its writes would index words a delete
    # by this version would not take back; they fail instead
    import apsw
    import sqlite_vec

    from remembrances.storage import vec0_storage

    path = tmp_path / "m.db"
    with Store(path, embedder=HashEmbedder(64)) as store:
        store.put_source("kb", "a", [Chunk("東京")])
    old = apsw.Connection(str(path))
    old.enable_load_extension(True)
    old.load_extension(sqlite_vec.loadable_path())
    vec0_storage.register(old)
    old.create_scalar_function("remembrances_words", lambda text: text, 1)
    with pytest.raises(apsw.SQLError, match="no such function: remembrances_fts_text"):
        old.execute(
            "INSERT INTO chunks (kind, collection, source, position, text, content_hash, "
            "created_at) VALUES ('kb', 'default', 'b', 0, 'ﾃｽﾄ', 'h', 0)"
        )
    old.close()
    with Store(path, embedder=HashEmbedder(64)) as store:
        assert check(store).ok
