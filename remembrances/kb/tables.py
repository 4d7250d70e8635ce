"""The knowledge base's own tables and every statement on them.

``kb_documents`` holds one row per document (its chunks live in the store's chunk
table); ``kb_roots`` the folder each collection was first ingested from. The
SQL is the portable subset (storage/transaction.py); rows are read by name.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..storage.transaction import Row, Transaction

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


#: A document's row without its text (listing never reads the text).
DOCUMENT_COLUMNS = (
    "source, collection, title, metadata, format, content_hash, chars, bytes, chunks, "
    "created_at, updated_at, path"
)
#: What an ingest needs to know of a stored file, to skip it when it did not change.
KNOWN_COLUMNS = "source, path, fingerprint, chunks, file_size, file_mtime_ns, settings"


@dataclass(frozen=True)
class DocumentWrite:
    """One document's row, as written after its chunks."""

    collection: str
    source: str
    title: str | None
    metadata_json: str
    format: str
    text: str
    content_hash: str
    fingerprint: str
    chunks: int
    path: str | None
    file_size: int | None
    file_mtime_ns: int | None
    settings: str | None


def upsert(tx: Transaction, doc: DocumentWrite, now: float) -> None:
    """Insert a document or replace the one with the same (collection, source)."""
    tx.execute(
        "INSERT INTO kb_documents (collection, source, title, metadata, format, text, "
        "content_hash, fingerprint, chars, bytes, chunks, path, file_size, "
        "file_mtime_ns, settings, created_at, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (collection, source) DO UPDATE SET title = excluded.title, "
        "metadata = excluded.metadata, format = excluded.format, "
        "text = excluded.text, content_hash = excluded.content_hash, "
        "fingerprint = excluded.fingerprint, chars = excluded.chars, "
        "bytes = excluded.bytes, chunks = excluded.chunks, path = excluded.path, "
        "file_size = excluded.file_size, file_mtime_ns = excluded.file_mtime_ns, "
        "settings = excluded.settings, updated_at = excluded.updated_at",
        (
            doc.collection,
            doc.source,
            doc.title,
            doc.metadata_json,
            doc.format,
            doc.text,
            doc.content_hash,
            doc.fingerprint,
            len(doc.text),
            len(doc.text.encode("utf-8")),
            doc.chunks,
            doc.path,
            doc.file_size,
            doc.file_mtime_ns,
            doc.settings,
            now,
            now,
        ),
    )


def known(tx: Transaction, collection: str, source: str) -> Row | None:
    """The :data:`KNOWN_COLUMNS` of one document."""
    return tx.execute(
        f"SELECT {KNOWN_COLUMNS} FROM kb_documents WHERE collection = ? AND source = ?",
        (collection, source),
    ).fetchone()


def known_files(tx: Transaction, collection: str) -> list[Row]:
    """The :data:`KNOWN_COLUMNS` of every document of ``collection`` read from a file."""
    return tx.execute(
        f"SELECT {KNOWN_COLUMNS} FROM kb_documents WHERE collection = ? AND path IS NOT NULL",
        (collection,),
    ).fetchall()


def touch(
    tx: Transaction,
    collection: str,
    source: str,
    *,
    path: str,
    size: int,
    mtime_ns: int,
    settings: str,
) -> None:
    tx.execute(
        "UPDATE kb_documents SET path = ?, file_size = ?, file_mtime_ns = ?, settings = ? "
        "WHERE collection = ? AND source = ?",
        (path, size, mtime_ns, settings, collection, source),
    )


def source_of_path(tx: Transaction, collection: str, path: str) -> str | None:
    value = tx.execute(
        "SELECT source FROM kb_documents WHERE collection = ? AND path = ?", (collection, path)
    ).scalar()
    return None if value is None else str(value)


def exists(tx: Transaction, collection: str, source: str) -> bool:
    found = tx.execute(
        "SELECT 1 AS found FROM kb_documents WHERE collection = ? AND source = ?",
        (collection, source),
    ).fetchone()
    return found is not None


def sources_and_paths(tx: Transaction, collection: str) -> list[tuple[str, str | None]]:
    rows = tx.execute(
        "SELECT source, path FROM kb_documents WHERE collection = ?", (collection,)
    ).fetchall()
    return [(str(r["source"]), r["path"]) for r in rows]


def delete(tx: Transaction, collection: str, source: str) -> int:
    tx.execute("DELETE FROM kb_documents WHERE collection = ? AND source = ?", (collection, source))
    return tx.changes()


def delete_collection(tx: Transaction, collection: str) -> int:
    tx.execute("DELETE FROM kb_documents WHERE collection = ?", (collection,))
    return tx.changes()


def document(tx: Transaction, collection: str, source: str) -> Row | None:
    """A document's :data:`DOCUMENT_COLUMNS` and its ``text``."""
    return tx.execute(
        f"SELECT {DOCUMENT_COLUMNS}, text FROM kb_documents WHERE collection = ? AND source = ?",
        (collection, source),
    ).fetchone()


def documents(tx: Transaction, collection: str | None, limit: int | None, offset: int) -> list[Row]:
    """Documents without their text, by collection and source."""
    sql = f"SELECT {DOCUMENT_COLUMNS} FROM kb_documents"
    params: list[Any] = []
    if collection is not None:
        sql += " WHERE collection = ?"
        params.append(collection)
    sql += " ORDER BY collection, source"
    if limit is not None or offset:
        sql += " LIMIT ? OFFSET ?"  # "no limit" as a number both engines accept
        params.extend([2**62 if limit is None else limit, offset])
    return tx.execute(sql, params).fetchall()


def count(tx: Transaction, collection: str | None) -> int:
    sql, params = "SELECT count(*) AS n FROM kb_documents", []
    if collection is not None:
        sql += " WHERE collection = ?"
        params.append(collection)
    return int(tx.execute(sql, params).scalar())


def collections(tx: Transaction) -> dict[str, int]:
    rows = tx.execute(
        "SELECT collection, count(*) AS n FROM kb_documents GROUP BY collection ORDER BY collection"
    ).fetchall()
    return {str(r["collection"]): int(r["n"]) for r in rows}


def titles(tx: Transaction, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str | None]:
    found: dict[tuple[str, str], str | None] = {}
    for collection, source in keys:
        found[(collection, source)] = tx.execute(
            "SELECT title FROM kb_documents WHERE collection = ? AND source = ?",
            (collection, source),
        ).scalar()
    return found


def root(tx: Transaction, collection: str) -> str | None:
    """The folder ``collection`` was first ingested from."""
    value = tx.execute("SELECT root FROM kb_roots WHERE collection = ?", (collection,)).scalar()
    return None if value is None else str(value)


def set_root(tx: Transaction, collection: str, folder: str) -> None:
    tx.execute("INSERT INTO kb_roots (collection, root) VALUES (?, ?)", (collection, folder))


def short_documents(tx: Transaction) -> list[tuple[str, str]]:
    """(collection, source) of documents with fewer chunks stored than they were cut into."""
    rows = tx.execute(
        "SELECT d.collection, d.source FROM kb_documents d WHERE d.chunks != "
        "(SELECT count(*) FROM chunks c WHERE c.kind = 'kb' AND c.collection = d.collection "
        "AND c.source = d.source)"
    ).fetchall()
    return [(str(r["collection"]), str(r["source"])) for r in rows]
