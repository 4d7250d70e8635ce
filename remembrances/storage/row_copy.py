"""The rows of one memory written into another, across engines (``remembrances copy``).

Reads run in a snapshot of the source, writes in the destination's one write
transaction, both through the :class:`~.transaction.Transaction` contract, so the
statements are the portable subset and either side may be SQLite or PostgreSQL.
Chunks cross as :class:`~.engine.NewChunk` rows with their float32 blobs (the
store's portable form of a vector): nothing is embedded again. The domain
layers' tables are copied row for row with their ids, since their chunks name
them (an event's chunk has the event's id as its source; code files own symbols).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

from ..embeddings.base import to_blob
from .engine import Engine, NewChunk
from .transaction import Transaction

#: Rows per read and per write.
BATCH = 500

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _name(identifier: str) -> str:
    """A table or column name, quoted; anything else is refused (names come from a file)."""
    if not _IDENTIFIER.fullmatch(identifier):
        raise ValueError(f"not a table or column name: {identifier!r}")
    return f'"{identifier}"'


# -- chunks and the embedding cache --------------------------------------------------


def read_chunks(engine: Engine, tx: Transaction, size: int = BATCH) -> Iterator[list[NewChunk]]:
    """Every chunk of the memory, in id order, with its vector as a blob (None when it
    waits for one), ``size`` at a time."""
    last = 0
    while True:
        rows = tx.execute(
            f"SELECT {engine.chunk_columns}, c.embed_text AS embed_text "
            "FROM chunks c WHERE c.id > ? ORDER BY c.id LIMIT ?",
            (last, size),
        ).fetchall()
        if not rows:
            return
        vectors = engine.vectors(tx, [r["id"] for r in rows if r["has_embedding"]])
        yield [
            NewChunk(
                kind=r["kind"],
                collection=r["collection"],
                source=r["source"],
                position=int(r["position"]),
                text=r["text"],
                metadata_json=r["metadata"],
                content_hash=r["content_hash"],
                embed_text=r["embed_text"],
                ts=None if r["ts"] is None else float(r["ts"]),
                created_at=float(r["created_at"]),
                embedding=to_blob(vectors[r["id"]]) if r["id"] in vectors else None,
            )
            for r in rows
        ]
        last = int(rows[-1]["id"])


def read_cache(tx: Transaction, size: int = BATCH) -> Iterator[list[tuple[str, str, bytes]]]:
    """The embedding cache: (embedder, content hash, float32 blob), ``size`` at a time."""
    last: tuple[str, str] = ("", "")
    while True:  # in the order of the cache's key: text, then model
        rows = tx.execute(
            "SELECT embedder, content_hash, embedding FROM embedding_cache "
            "WHERE content_hash > ? OR (content_hash = ? AND embedder > ?) "
            "ORDER BY content_hash, embedder LIMIT ?",
            (last[0], last[0], last[1], size),
        ).fetchall()
        if not rows:
            return
        yield [(r["embedder"], r["content_hash"], bytes(r["embedding"])) for r in rows]
        last = (rows[-1]["content_hash"], rows[-1]["embedder"])


def write_cache(tx: Transaction, rows: Sequence[tuple[str, str, bytes]]) -> None:
    tx.executemany(
        "INSERT INTO embedding_cache (embedder, content_hash, embedding) VALUES (?, ?, ?) "
        "ON CONFLICT (embedder, content_hash) DO NOTHING",
        rows,
    )


# -- the domain layers' tables -------------------------------------------------------


def read_table(
    tx: Transaction, table: str, size: int = BATCH
) -> Iterator[tuple[tuple[str, ...], list[tuple[Any, ...]]]]:
    """A table's rows as (column names, rows), ``size`` rows at a time."""
    rows = tx.execute(f"SELECT * FROM {_name(table)}")
    batch: list[tuple[Any, ...]] = []
    columns: tuple[str, ...] = ()
    for row in rows:
        if not columns:
            columns = tuple(row.keys())
        batch.append(tuple(row))
        if len(batch) >= size:
            yield columns, batch
            batch = []
    if batch:
        yield columns, batch


def write_table(
    tx: Transaction, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]
) -> None:
    names = ", ".join(_name(c) for c in columns)
    marks = ", ".join("?" * len(columns))
    tx.executemany(f"INSERT INTO {_name(table)} ({names}) VALUES ({marks})", rows)


def follow_ids(tx: Transaction, table: str) -> None:
    """After rows came in with their ids, new rows get ids above them.

    SQLite's rowids and AUTOINCREMENT follow by themselves; a PostgreSQL identity
    column's sequence must be moved past the largest id.
    """
    if tx.dialect == "postgresql":
        tx.execute(
            "SELECT setval(pg_get_serial_sequence(?, 'id'), coalesce(max(id), 1), "
            f"max(id) IS NOT NULL) AS n FROM {_name(table)}",
            (table,),
        )


def clear(tx: Transaction, tables: Sequence[str]) -> None:
    """Delete every chunk and every row of ``tables`` (children first)."""
    for table in reversed(tables):
        tx.execute(f"DELETE FROM {_name(table)}")
    tx.execute("DELETE FROM chunks")


def count_rows(tx: Transaction, table: str) -> int:
    return int(tx.execute(f"SELECT count(*) AS n FROM {_name(table)}").scalar())


def record_model(
    engine: Engine,
    tx: Transaction,
    embedder: str,
    dim: int,
    recorded: tuple[str | None, int | None],
) -> None:
    """Make ``embedder``/``dim`` the destination's model (its guard) and give it the
    vector index for ``dim``; ``recorded`` is what it recorded before.

    A destination without a model gets its vector index after its chunks came in
    (``fill``): one index build is far cheaper than growing it row by row (an HNSW
    index made PostgreSQL inserts 11x slower: 84 vs 959 chunks/s). One that had
    another model holds no chunks by now: its index is rebuilt for ``dim`` first.
    """
    if recorded == (embedder, dim):
        return
    tx.execute(
        "INSERT INTO meta (key, value) VALUES ('embedder', ?), ('dim', ?) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (embedder, str(dim)),
    )
    if recorded[0] is None:
        engine.create_vector_table(tx, dim, fill=True)
    else:  # another model's index, over no chunks: rebuilt for this dimension
        engine.switch_vectors(tx, embedder, dim)
