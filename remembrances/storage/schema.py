"""Numbered schema migrations, for the store and for each domain layer.

Each layer ("store", "kb", "events", "code") has its own list of SQL scripts; the
version it reached is recorded in ``meta`` as ``schema:<layer>``. Migrations run in
one ``BEGIN IMMEDIATE`` transaction, so two processes opening a new file at once
cannot both apply them. The schema as built is documented in docs/storage.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import SchemaVersionError
from .vec0_storage import compact_script


def _words_view_and_triggers(function: str) -> str:
    """The view the full-text index reads the chunks through and the triggers that keep
    it equal to them, all through the SQL function ``function`` (store steps 5 and 6)."""
    return f"""
    DROP TRIGGER IF EXISTS chunks_fts_insert;
    DROP TRIGGER IF EXISTS chunks_fts_delete;
    DROP TRIGGER IF EXISTS chunks_fts_update;
    DROP VIEW IF EXISTS chunks_words;
    CREATE VIEW chunks_words (id, text) AS SELECT id, {function}(text) FROM chunks;
    CREATE TRIGGER chunks_fts_insert AFTER INSERT ON chunks BEGIN
        INSERT INTO chunks_fts (rowid, text) VALUES (new.id, {function}(new.text));
    END;
    CREATE TRIGGER chunks_fts_delete AFTER DELETE ON chunks BEGIN
        INSERT INTO chunks_fts (chunks_fts, rowid, text)
        VALUES ('delete', old.id, {function}(old.text));
    END;
    CREATE TRIGGER chunks_fts_update AFTER UPDATE OF text ON chunks BEGIN
        INSERT INTO chunks_fts (chunks_fts, rowid, text)
        VALUES ('delete', old.id, {function}(old.text));
        INSERT INTO chunks_fts (rowid, text) VALUES (new.id, {function}(new.text));
    END;
    """


STORE_MIGRATIONS: tuple[str, ...] = (
    # 1: chunks, their full-text index, the embedding cache and the change log.
    """
    CREATE TABLE IF NOT EXISTS meta (
        key   TEXT PRIMARY KEY,
        value TEXT NOT NULL
    );
    -- AUTOINCREMENT: ids are never reused, so the in-memory vector index can tell
    -- a new chunk from a deleted one by id alone.
    CREATE TABLE chunks (
        id           INTEGER PRIMARY KEY AUTOINCREMENT,
        kind         TEXT NOT NULL,
        collection   TEXT NOT NULL,
        source       TEXT NOT NULL,
        position     INTEGER NOT NULL,
        text         TEXT NOT NULL,
        metadata     TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(metadata)),
        content_hash TEXT NOT NULL,
        embed_text   TEXT,
        ts           REAL,
        created_at   REAL NOT NULL,
        embedding    BLOB,
        UNIQUE (kind, collection, source, position)
    );
    CREATE INDEX chunks_kind_collection ON chunks (kind, collection);
    CREATE INDEX chunks_ts ON chunks (ts) WHERE ts IS NOT NULL;
    CREATE INDEX chunks_pending ON chunks (kind, collection) WHERE embedding IS NULL;

    CREATE VIRTUAL TABLE chunks_fts USING fts5 (
        text, content='chunks', content_rowid='id',
        tokenize='porter unicode61 remove_diacritics 2'
    );
    CREATE TRIGGER chunks_fts_insert AFTER INSERT ON chunks BEGIN
        INSERT INTO chunks_fts (rowid, text) VALUES (new.id, new.text);
    END;
    CREATE TRIGGER chunks_fts_delete AFTER DELETE ON chunks BEGIN
        INSERT INTO chunks_fts (chunks_fts, rowid, text) VALUES ('delete', old.id, old.text);
    END;
    CREATE TRIGGER chunks_fts_update AFTER UPDATE OF text ON chunks BEGIN
        INSERT INTO chunks_fts (chunks_fts, rowid, text) VALUES ('delete', old.id, old.text);
        INSERT INTO chunks_fts (rowid, text) VALUES (new.id, new.text);
    END;

    -- Every change to a chunk's vector, in order: how an in-memory vector index in
    -- any process catches up with writes made by other processes.
    CREATE TABLE vector_log (
        seq      INTEGER PRIMARY KEY AUTOINCREMENT,
        chunk_id INTEGER NOT NULL,
        op       TEXT NOT NULL CHECK (op IN ('add', 'del'))
    );
    CREATE TRIGGER vector_log_insert AFTER INSERT ON chunks
    WHEN new.embedding IS NOT NULL BEGIN
        INSERT INTO vector_log (chunk_id, op) VALUES (new.id, 'add');
    END;
    CREATE TRIGGER vector_log_delete AFTER DELETE ON chunks
    WHEN old.embedding IS NOT NULL BEGIN
        INSERT INTO vector_log (chunk_id, op) VALUES (old.id, 'del');
    END;
    CREATE TRIGGER vector_log_update AFTER UPDATE OF embedding ON chunks BEGIN
        INSERT INTO vector_log (chunk_id, op) SELECT old.id, 'del' WHERE old.embedding IS NOT NULL;
        INSERT INTO vector_log (chunk_id, op) SELECT new.id, 'add' WHERE new.embedding IS NOT NULL;
    END;

    CREATE TABLE embedding_cache (
        embedder     TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        embedding    BLOB NOT NULL,
        PRIMARY KEY (embedder, content_hash)
    ) WITHOUT ROWID;
    """,
    # 2: deleting or reading a source without naming its collection used the
    # (kind, collection) index and scanned the whole kind.
    """
    CREATE INDEX chunks_source ON chunks (source, kind);
    """,
    # 3: nothing to create. The compact int8 copy's triggers (vec0_storage.compact_script,
    # made with the vector table) call a function that versions before it lack, so
    # their every write failed with "no such function"; counting this step makes them
    # refuse the file instead, with a message that says to upgrade.
    """
    -- the chunks_int8 triggers call remembrances_int8
    """,
    # 4: the embedding cache as a rowid table, keyed by text first; chunks indexed
    # by text. WITHOUT ROWID, a row of a 384-dim vector (1.5 kB) is past what an
    # index page holds inline, so each row took an overflow page of its own: 4.7 kB
    # a vector, half the file of a memory of events. A rowid table keeps two such
    # rows to a page. Forgetting a deleted text's vector looked it up by its hash
    # alone, which neither table had first in an index: 10 ms a text at 50,000
    # chunks, minutes for ``forget_user`` of a long-standing user.
    """
    CREATE TABLE embedding_cache_rows (
        id           INTEGER PRIMARY KEY,
        embedder     TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        embedding    BLOB NOT NULL,
        UNIQUE (content_hash, embedder)
    );
    INSERT INTO embedding_cache_rows (embedder, content_hash, embedding)
    SELECT embedder, content_hash, embedding FROM embedding_cache;
    DROP TABLE embedding_cache;
    ALTER TABLE embedding_cache_rows RENAME TO embedding_cache;
    CREATE INDEX IF NOT EXISTS chunks_content_hash ON chunks (content_hash);
    """,
    # 5: Chinese, Japanese and Korean text is indexed as pairs of characters (cjk.py):
    # a run of those scripts was one word, so no word inside it could be found. The
    # index reads the chunks through a view that writes them so; FTS5's own rebuild
    # and integrity check read that view too. remembrances_words is added to every
    # connection (text_match.register_words); versions before it refuse the file.
    # (Step 6 makes the index, with the function that replaced this one.)
    """
    DROP TABLE IF EXISTS chunks_fts;
    CREATE VIRTUAL TABLE chunks_fts USING fts5 (
        text, content='chunks_words', content_rowid='id',
        tokenize='porter unicode61 remove_diacritics 2'
    );
    """
    + _words_view_and_triggers("remembrances_words"),
    # 6: each CJK run is brought to NFKC before it is paired (half-width kana,
    # decomposed Hangul), as PostgreSQL's folding does. A function of a new name does it
    # (remembrances_fts_text): a process of the version before, still running, has only
    # the old one, and its writes fail instead of indexing words a delete would not
    # take back. The index is made again with it.
    _words_view_and_triggers("remembrances_fts_text")
    + """
    INSERT INTO chunks_fts (chunks_fts) VALUES ('rebuild');
    """,
    # 7: a search kept to one user's or one session's events read every event's
    # metadata to find theirs (40 ms at 100,000 events); these indexes hold the two
    # keys, and the filters name them (filters.INDEXED_KEYS).
    """
    CREATE INDEX IF NOT EXISTS chunks_user ON chunks (kind, json_extract(metadata, '$.user'));
    CREATE INDEX IF NOT EXISTS chunks_session ON chunks (kind, json_extract(metadata, '$.session'));
    """,
)
#: The oldest store schema this version reads as it is (a read-only open cannot upgrade
#: it): steps 3 to 7 changed nothing a reader needs (the pairs of CJK characters of
#: steps 5 and 6 are not found in an older index, which is otherwise read as before;
#: step 7's indexes only make scoped searches faster).
STORE_READABLE_FROM = 2


def vec0_script(dim: int) -> str:
    """The vec0 KNN table and the triggers that keep it equal to the chunk blobs, and
    the compact int8 copy for cold starts (``vec0_storage.compact_script``).

    Created once the dimension is known (the first embedder to write the file).
    """
    return f"""
    CREATE VIRTUAL TABLE IF NOT EXISTS chunks_vec USING vec0 (
        chunk_id INTEGER PRIMARY KEY,
        embedding float[{int(dim)}] distance_metric=cosine,
        kind TEXT,
        collection TEXT
    );
    CREATE TRIGGER IF NOT EXISTS chunks_vec_insert AFTER INSERT ON chunks
    WHEN new.embedding IS NOT NULL BEGIN
        INSERT INTO chunks_vec (chunk_id, embedding, kind, collection)
        VALUES (new.id, new.embedding, new.kind, new.collection);
    END;
    CREATE TRIGGER IF NOT EXISTS chunks_vec_delete AFTER DELETE ON chunks
    WHEN old.embedding IS NOT NULL BEGIN
        DELETE FROM chunks_vec WHERE chunk_id = old.id;
    END;
    CREATE TRIGGER IF NOT EXISTS chunks_vec_update AFTER UPDATE OF embedding ON chunks BEGIN
        DELETE FROM chunks_vec WHERE chunk_id = old.id;
        INSERT INTO chunks_vec (chunk_id, embedding, kind, collection)
        SELECT new.id, new.embedding, new.kind, new.collection WHERE new.embedding IS NOT NULL;
    END;
    """ + compact_script(dim)


def check_read_only(
    where: str, layer: str, found: int, migrations: Sequence[str], readable_from: int | None = None
) -> None:
    """Refuse a read-only open of a ``layer`` schema this version cannot read as is.

    A read-only open never writes, so it cannot upgrade an older schema either;
    the message says how to upgrade it once. ``readable_from`` is the oldest version
    whose tables the reads need all of (later steps serve writes only); default: the
    latest.
    """
    if found > len(migrations):
        raise SchemaVersionError(
            f"{where}'s {layer} schema is version {found}, newer than this version of "
            f"remembrances understands ({len(migrations)}); upgrade remembrances to open it"
        )
    if found < (len(migrations) if readable_from is None else readable_from):
        raise SchemaVersionError(
            f"{where} was written by an older remembrances ({layer} schema {found}, this "
            f"version uses {len(migrations)}) and is open read-only, which never writes; "
            f"upgrade it once with `remembrances --db {where} init` (Python: "
            "remembrances.open() without read_only), then retry"
        )


def migrate(conn: Any, layer: str, migrations: Sequence[str]) -> int:
    """Apply the missing migrations of ``layer``; the caller holds a write transaction."""
    conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    key = f"schema:{layer}"
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    current = int(row[0]) if row else 0
    if current > len(migrations):
        raise SchemaVersionError(
            f"this file's {layer} schema is version {current}, newer than this version of "
            f"remembrances understands ({len(migrations)}); upgrade remembrances to open it"
        )
    for version in range(current + 1, len(migrations) + 1):
        conn.execute(migrations[version - 1])
    if current != len(migrations):
        conn.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, str(len(migrations))),
        )
    return len(migrations)
