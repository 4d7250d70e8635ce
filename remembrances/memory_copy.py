"""Copy a whole memory to another place, SQLite or PostgreSQL, with its vectors.

Unlike an export (transfer.py), which keeps what a memory *means* and re-embeds
on import, a copy keeps everything as it is: every chunk with its vector and
times, the embedding cache, the model guard (the embedder's name and
dimension), and the domain layers' tables row for row (documents, events and
conversation turns, code projects with their files, symbols and reference
graph). Nothing is embedded, and a code project needs no root on this host.

The destination is written in one transaction: a copy that fails half-way
leaves nothing behind (a destination it created is removed again; one it was
told to replace keeps its previous contents). A destination that already
holds a memory is refused unless ``replace=True``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from contextlib import suppress
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .errors import InvalidInputError, MemoryExistsError, NotFoundError, SchemaVersionError
from .postgres.url import PostgresTarget, is_postgres_url
from .progress import Progress
from .storage import row_copy
from .storage.transaction import Dialect
from .store import Store


@dataclass(frozen=True)
class Layer:
    """A domain layer's tables, as the copy needs them."""

    name: str
    tables: tuple[str, ...]
    migrations: Mapping[Dialect, Sequence[str]]


def layers(*, code: bool = True) -> list[Layer]:
    """The domain layers and their tables; ``code=False`` leaves the code layer out (its
    module needs the code extra, which a memory without code does not)."""
    from .events.tables import EVENTS_MIGRATIONS
    from .events.tables import TABLES as EVENTS_TABLES
    from .kb.tables import KB_MIGRATIONS
    from .kb.tables import TABLES as KB_TABLES

    found = [
        Layer("kb", KB_TABLES, KB_MIGRATIONS),
        Layer("events", EVENTS_TABLES, EVENTS_MIGRATIONS),
    ]
    if code:
        from .code.tables import CODE_MIGRATIONS
        from .code.tables import TABLES as CODE_TABLES

        found.append(Layer("code", CODE_TABLES, CODE_MIGRATIONS))
    return found


@dataclass
class CopyReport:
    """What was copied: chunks (``with_vectors`` of them had one), cached vectors, rows per table."""

    source: str
    destination: str
    embedder: str | None
    dim: int | None
    chunks: int = 0
    with_vectors: int = 0
    cached_embeddings: int = 0
    rows: dict[str, int] = field(default_factory=dict)
    replaced: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


Location = str | os.PathLike[str]


def _where(location: Location) -> str | Path:
    if isinstance(location, str) and is_postgres_url(location):
        return location
    if not isinstance(location, str | os.PathLike):
        raise InvalidInputError(
            f"a memory is a file path or a postgresql:// URL, not {type(location).__name__}"
        )
    if not os.fspath(location):
        raise InvalidInputError("a memory's path cannot be empty")
    return Path(location)


def _same(a: str | Path, b: str | Path) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        return PostgresTarget.parse(a).display == PostgresTarget.parse(b).display
    if isinstance(a, Path) and isinstance(b, Path):
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
        return a.resolve() == b.resolve()
    return False


def _exists(location: str | Path) -> bool:
    if isinstance(location, Path):
        return location.exists()
    from .postgres.connection import memory_exists

    return memory_exists(location)


def _remove(location: str | Path) -> None:
    """Take away a destination this copy created (after a failure)."""
    if isinstance(location, Path):
        for path in (location, *(Path(f"{location}{s}") for s in ("-wal", "-shm", "-journal"))):
            with suppress(FileNotFoundError):
                path.unlink()
        return
    from .postgres.connection import drop_memory

    drop_memory(location)


def copy_memory(
    source: Location,
    destination: Location,
    *,
    replace: bool = False,
    progress: Progress | None = None,
) -> CopyReport:
    """Copy the memory at ``source`` to ``destination`` (paths or ``postgresql://`` URLs).

    Everything comes across as it is stored, vectors included: nothing is
    re-embedded, and no embedder is loaded. ``replace=True`` overwrites a
    destination that holds a memory (refused otherwise with
    :class:`~remembrances.errors.MemoryExistsError`). ``progress("copied", done,
    total)`` counts chunks and rows written.
    """
    src_at, dst_at = _where(source), _where(destination)
    if _same(src_at, dst_at):
        raise InvalidInputError(
            f"{source} is both the source and the destination; copy to another file or memory"
        )
    if isinstance(src_at, Path) and not src_at.exists():
        raise NotFoundError(f"no memory file at {src_at}; check the source path")
    with Store(src_at, read_only=True, create=False) as src:
        existed = _exists(dst_at)
        dst = Store(dst_at)
        try:
            report = _copy(src, dst, replace, progress)
        except BaseException:
            dst.close()
            if not existed:
                _remove(dst_at)
            raise
        dst.close()
    return report


def _copy(src: Store, dst: Store, replace: bool, progress: Progress | None) -> CopyReport:
    with_code = any(m.meta("schema:code") is not None for m in (src, dst))
    known = layers(code=with_code)
    present = [layer for layer in known if src.meta(f"schema:{layer.name}") is not None]
    for layer in present:
        version = int(src.meta(f"schema:{layer.name}") or 0)
        steps = len(layer.migrations[src.engine.dialect])
        if version > steps:
            raise SchemaVersionError(
                f"{src.path}'s {layer.name} schema is version {version}, newer than this "
                "version of remembrances understands; upgrade remembrances to copy it"
            )
        if version < steps:  # its rows would be stamped new without the steps' changes
            raise SchemaVersionError(
                f"{src.path} was written by an older remembrances ({layer.name} schema "
                f"{version}, this version uses {steps}); upgrade it once with "
                f"`remembrances --db {src.path} init`, then copy it"
            )
        dst.migrate(layer.name, layer.migrations)
    tables = [t for layer in known if dst.meta(f"schema:{layer.name}") for t in layer.tables]
    held = dst.count() + _rows(dst, tables)
    if held and not replace:
        raise MemoryExistsError(
            f"{dst.path} already holds a memory ({held} chunks and rows); copy to a new "
            "file or memory name, or pass --replace (replace=True) to overwrite it"
        )
    report = CopyReport(
        source=src.path,
        destination=dst.path,
        embedder=src.embedder_name,
        dim=src.dim,
        replaced=bool(held),
    )
    recorded = (dst.embedder_name, dst.dim)
    source_tables = [t for layer in present for t in layer.tables]
    with src.snapshot() as rtx, dst.transaction() as wtx:
        total = src.count() + sum(row_copy.count_rows(rtx, t) for t in source_tables)
        done = 0
        if held:
            row_copy.clear(wtx, tables)
        model = (report.embedder, report.dim)
        if model[0] is not None and model[1] is not None and recorded[0] is not None:
            row_copy.record_model(dst.engine, wtx, model[0], model[1], recorded)
        for table in source_tables:  # parents first: files before their symbols
            report.rows[table] = 0
            for columns, rows in row_copy.read_table(rtx, table):
                row_copy.write_table(wtx, table, columns, rows)
                report.rows[table] += len(rows)
                done += len(rows)
                if progress is not None:
                    progress("copied", done, total)
                if "id" in columns:
                    row_copy.follow_ids(wtx, table)
        for chunks in row_copy.read_chunks(src.engine, rtx):
            dst.engine.insert_chunks(wtx, chunks)
            report.chunks += len(chunks)
            report.with_vectors += sum(1 for c in chunks if c.embedding is not None)
            done += len(chunks)
            if progress is not None:
                progress("copied", done, total)
        for entries in row_copy.read_cache(rtx):
            row_copy.write_cache(wtx, entries)
            report.cached_embeddings += len(entries)
        if model[0] is not None and model[1] is not None and recorded[0] is None:
            # A new model record: the vector index is built once, over every chunk.
            row_copy.record_model(dst.engine, wtx, model[0], model[1], recorded)
        dst.engine.after_write(wtx)
    return report


def _rows(store: Store, tables: Sequence[str]) -> int:
    with store.snapshot() as tx:
        return sum(row_copy.count_rows(tx, t) for t in tables)
