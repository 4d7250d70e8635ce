"""The knowledge base's own table: one row per document (its chunks live in the store)."""

from __future__ import annotations

KB_MIGRATIONS: tuple[str, ...] = (
    # 1: documents. ``fingerprint`` covers everything that shapes the chunks (text,
    # title, metadata, format, chunker settings): equal fingerprint, nothing to do.
    # ``path``/``file_size``/``file_mtime_ns`` are set for ingested files, so an
    # unchanged file is recognised without reading it.
    """
    CREATE TABLE kb_documents (
        id            INTEGER PRIMARY KEY,
        collection    TEXT NOT NULL,
        source        TEXT NOT NULL,
        title         TEXT,
        metadata      TEXT NOT NULL DEFAULT '{}',
        format        TEXT NOT NULL,
        text          TEXT NOT NULL,
        content_hash  TEXT NOT NULL,
        fingerprint   TEXT NOT NULL,
        chars         INTEGER NOT NULL,
        bytes         INTEGER NOT NULL,
        chunks        INTEGER NOT NULL,
        path          TEXT,
        file_size     INTEGER,
        file_mtime_ns INTEGER,
        settings      TEXT,
        created_at    REAL NOT NULL,
        updated_at    REAL NOT NULL,
        UNIQUE (collection, source)
    );
    CREATE INDEX kb_documents_path ON kb_documents (path) WHERE path IS NOT NULL;
    """,
    # 2: the folder a collection was first ingested from: ingested documents are
    # named by their path under it ("guide/install.md"), whichever folder (that
    # root or one inside it) a later ingest is pointed at.
    """
    CREATE TABLE kb_roots (
        collection TEXT PRIMARY KEY,
        root       TEXT NOT NULL
    );
    """,
)
