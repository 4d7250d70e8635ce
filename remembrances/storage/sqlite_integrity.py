"""Checking and saving a SQLite memory file: its own pages, FTS5, vec0, triggers, blobs.

The chunk rows and their embedding blobs are the source of truth; the FTS5 index,
the vec0 table and the vector log are derived from them by triggers. A crash cannot
break that agreement (every write is one transaction), but a file edited by hand,
copied mid-write or written by a buggy tool can. ``check`` says what disagrees;
``check(repair=True)`` rebuilds the derived indexes from the chunks. A file with
damaged pages is diagnosed instead, and ``salvage`` copies what can be read.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import apsw
import numpy as np

from ..errors import CorruptFileError, RemembrancesError
from . import text_match, vec0_storage
from .reports import CheckReport, RecoveryReport
from .schema import vec0_script
from .sqlite_connection import Connection, connect
from .sqlite_engine import SqliteEngine


def check(engine: SqliteEngine, repair: bool = False) -> CheckReport:
    """Verify chunk, FTS, vec0 and blob consistency and the model record."""
    try:
        return _check(engine, repair)
    except CorruptFileError:
        return diagnose(engine.path)


def _check(engine: SqliteEngine, repair: bool) -> CheckReport:
    report = CheckReport()
    # FTS5's integrity-check command is a write statement: run it on the writer
    # (a reader connection that ran it was seen to keep a stale FTS5 structure).
    context = engine.db.read() if engine.read_only and not repair else engine.db.write()
    with context as conn:
        if _quick_check(conn):
            report.damaged = True
        else:
            _check_indexes(conn, report, repair)
    return diagnose(engine.path) if report.damaged else report


def _check_indexes(conn: Connection, report: CheckReport, repair: bool) -> None:
    dim = conn.execute("SELECT value FROM meta WHERE key = 'dim'").fetchone()
    embedder = conn.execute("SELECT value FROM meta WHERE key = 'embedder'").fetchone()
    report.chunks = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
    report.vectors = conn.execute(
        "SELECT count(*) FROM chunks WHERE embedding IS NOT NULL"
    ).fetchone()[0]
    if report.vectors and (dim is None or embedder is None):
        report.problems.append("vectors exist but the file records no embedder or dimension")
    _check_fts(conn, report, repair)
    if dim is not None:
        vec0_storage.register(conn)  # the compact copy is compared with the quantizer
        _check_triggers(conn, report, int(dim[0]), repair)
        _check_blobs(conn, report, int(dim[0]), repair)
        _check_vec0(conn, report, int(dim[0]), repair)
        _check_compact(conn, report, int(dim[0]), repair)


def _quick_check(conn: Connection) -> list[str]:
    """SQLite's own page and b-tree check; [] when the file is sound."""
    try:
        result = [str(r[0]) for r in conn.execute("PRAGMA quick_check(20)")]
    except apsw.Error as exc:
        return [str(exc)]
    return [] if result == ["ok"] else result


_TRIGGERS = (
    "chunks_fts_insert",
    "chunks_fts_delete",
    "chunks_fts_update",
    "vector_log_insert",
    "vector_log_delete",
    "vector_log_update",
)
_VEC0_TRIGGERS = (
    "chunks_vec_insert",
    "chunks_vec_delete",
    "chunks_vec_update",
    *vec0_storage.COMPACT_TRIGGERS,
)


def _check_triggers(conn: Connection, report: CheckReport, dim: int, repair: bool) -> None:
    present = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    for name in _TRIGGERS:
        if name not in present:
            report.problems.append(f"trigger {name} is missing; restore the file from a backup")
    missing_vec0 = [name for name in _VEC0_TRIGGERS if name not in present]
    if missing_vec0:
        report.problems.append(f"vec0 triggers missing: {', '.join(missing_vec0)}")
        if repair:
            conn.execute(vec0_script(dim))
            report.repaired.append("re-created the vec0 triggers")


_FTS_CHECK = "INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('integrity-check', 1)"


def _check_fts(conn: Connection, report: CheckReport, repair: bool) -> None:
    try:
        if conn.readonly("main"):
            if fts_rows_agree(conn) and _fts_check_rolled_back(conn.filename):
                return
        else:
            conn.execute(_FTS_CHECK)
            return
    except apsw.CorruptError:
        pass
    report.problems.append("the full-text index does not match the chunk table")
    if repair:
        conn.execute("INSERT INTO chunks_fts (chunks_fts) VALUES ('rebuild')")
        report.repaired.append("rebuilt the full-text index from the chunks")


def fts_rows_agree(conn: Connection) -> bool:
    """Whether the full-text index holds exactly the chunks' rows (ids only).

    A weaker check than FTS5's own, which compares the indexed words with the
    text too, but one a read-only connection can run.
    """
    stray = conn.execute(
        "SELECT EXISTS (SELECT 1 FROM chunks_fts_docsize d LEFT JOIN chunks c ON c.id = d.id "
        "WHERE c.id IS NULL) OR EXISTS (SELECT 1 FROM chunks c LEFT JOIN chunks_fts_docsize d "
        "ON d.id = c.id WHERE d.id IS NULL)"
    ).fetchone()[0]
    return not stray


def _fts_check_rolled_back(path: str) -> bool:
    """FTS5's full check where the memory is open read-only.

    FTS5 runs its check as a write statement that changes nothing; run it on a
    connection of its own, in a transaction rolled back, so that not a byte of the
    file changes. A file this user cannot write, or one on a read-only file system
    (SQLite opens it lazily: the first statement fails), gets the row check alone (True).
    """
    try:
        conn = apsw.Connection(path, flags=apsw.SQLITE_OPEN_READWRITE)
    except apsw.CantOpenError:
        return True
    try:
        text_match.register_words(conn)  # the index reads the chunks through it
        conn.execute("BEGIN")
        try:
            conn.execute(_FTS_CHECK)
        except apsw.ReadOnlyError:
            pass
        finally:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
        return True
    except apsw.CantOpenError:
        return True
    finally:
        conn.close()


def _check_blobs(conn: Connection, report: CheckReport, dim: int, repair: bool) -> None:
    bad: list[int] = []
    for chunk_id, blob in conn.execute(
        "SELECT id, embedding FROM chunks WHERE embedding IS NOT NULL"
    ):
        if len(blob) != dim * 4 or not np.isfinite(np.frombuffer(blob, dtype="<f4")).all():
            bad.append(chunk_id)
    if not bad:
        return
    report.problems.append(
        f"{len(bad)} chunk vectors have the wrong length or non-finite values (ids {bad[:10]})"
    )
    if repair:
        # Dropped vectors come back through Store.backfill_embeddings.
        conn.executemany("UPDATE chunks SET embedding = NULL WHERE id = ?", [(i,) for i in bad])
        report.repaired.append(f"cleared {len(bad)} bad vectors; run a backfill to re-embed them")


def _check_vec0(conn: Connection, report: CheckReport, dim: int, repair: bool) -> None:
    exists = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'chunks_vec'").fetchone()
    if exists is None:
        report.problems.append("the vec0 table is missing")
        if repair:
            conn.execute(vec0_script(dim))
            _refill_vec0(conn)
            report.repaired.append("created and filled the vec0 table")
        return
    missing, extra, different = _disagreements(
        conn, "chunks_vec", "v.embedding", "c.embedding", dim
    )
    if not (missing or extra or different):
        return
    report.problems.append(
        f"the vec0 table disagrees with the chunk vectors ({missing} missing, "
        f"{extra} stale, {different} different)"
    )
    if repair:
        _refill_vec0(conn)
        report.repaired.append("rebuilt the vec0 table from the chunk vectors")


def _disagreements(
    conn: Connection, table: str, stored: str, expected: str, dim: int
) -> tuple[int, int, int]:
    """How many chunk vectors a derived vector table (rows ``v`` keyed by ``chunk_id``)
    lacks, holds for no chunk vector, and holds as something other than ``expected``
    (an expression over the chunk ``c``)."""
    missing = conn.execute(
        "SELECT count(*) FROM chunks c WHERE c.embedding IS NOT NULL AND length(c.embedding) = ? "
        f"AND NOT EXISTS (SELECT 1 FROM {table} v WHERE v.chunk_id = c.id)",
        (dim * 4,),
    ).fetchone()[0]
    extra = conn.execute(
        f"SELECT count(*) FROM {table} v WHERE NOT EXISTS "
        "(SELECT 1 FROM chunks c WHERE c.id = v.chunk_id AND c.embedding IS NOT NULL)"
    ).fetchone()[0]
    different = conn.execute(
        f"SELECT count(*) FROM {table} v JOIN chunks c ON c.id = v.chunk_id "
        f"WHERE c.embedding IS NOT NULL AND {stored} != {expected}"
    ).fetchone()[0]
    return int(missing), int(extra), int(different)


def _check_compact(conn: Connection, report: CheckReport, dim: int, repair: bool) -> None:
    """The int8 copy cold searches scan (vec0_storage): one row per chunk vector, each
    equal to the quantizer's output for that vector."""
    table = vec0_storage.COMPACT
    exists = conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).fetchone()
    if exists is None:
        # A file from before the copy existed: searches load the float32 vectors
        # instead, and the first writable open builds it.
        report.problems.append(f"the compact vector copy ({table}) is missing")
        if repair:
            conn.execute(vec0_script(dim))
            vec0_storage.fill_compact(conn, dim)
            report.repaired.append("created and filled the compact vector copy")
        return
    expected = f"{vec0_storage.QUANTIZE}(c.embedding)"
    missing, extra, different = _disagreements(conn, table, "v.codes", expected, dim)
    if not (missing or extra or different):
        return
    report.problems.append(
        f"the compact vector copy disagrees with the chunk vectors ({missing} missing, "
        f"{extra} stale, {different} different)"
    )
    if repair:
        vec0_storage.fill_compact(conn, dim)
        report.repaired.append("rebuilt the compact vector copy from the chunk vectors")


def _refill_vec0(conn: Connection) -> None:
    conn.execute("DELETE FROM chunks_vec")
    conn.execute(
        "INSERT INTO chunks_vec (chunk_id, embedding, kind, collection) "
        "SELECT id, embedding, kind, collection FROM chunks WHERE embedding IS NOT NULL "
        "AND length(embedding) = (SELECT CAST(value AS INTEGER) * 4 FROM meta WHERE key = 'dim')"
    )


#: Tables copied to a recovered file, in an order that satisfies their foreign keys.
#: The full-text index, vec0 and the vector log are rebuilt from the chunks instead.
SALVAGED = (
    "chunks",
    "kb_documents",
    "events",
    "removed_turns",
    "code_projects",
    "code_files",
    "code_symbols",
    "code_names",
    "embedding_cache",
)
_BATCH = 256
_SEARCH_LIMIT = 2**62


def diagnose(path: str | os.PathLike[str]) -> CheckReport:
    """What is wrong with a damaged file and how many rows of each table can be read."""
    report = CheckReport(damaged=True)
    try:
        conn = connect(path, read_only=True)
    except RemembrancesError as exc:
        report.problems.append(f"the file cannot be opened: {exc}")
        return report
    try:
        details = _quick_check(conn)
        report.problems.append(
            "the file is damaged (SQLite: " + "; ".join(details[:3] or ["damaged pages"]) + ")"
        )
        tables = _tables(conn)
        for table in SALVAGED:
            if table not in tables:
                continue
            # chunks: rows and vectors counted in the same pass over the readable pages
            column = "embedding IS NOT NULL" if table == "chunks" else "1"
            try:
                flags = [flag for (flag,) in _readable_rows(conn, table, [column])]
            except _Unreadable:
                flags = []
                report.problems.append(f"no row of {table} can be read")
            report.readable[table] = len(flags)
            if table == "chunks":
                report.chunks, report.vectors = len(flags), sum(flags)
    finally:
        conn.close()
    return report


def salvage(source: str | os.PathLike[str], target: SqliteEngine, report: RecoveryReport) -> None:
    """Copy every readable row of the damaged file ``source`` into ``target``, a new
    memory whose layers made their tables; the full-text and vector indexes are
    rebuilt from the chunks by the triggers."""
    try:
        src = connect(source, read_only=True)
    except CorruptFileError as exc:  # its advice ("run check") is the command being run
        raise CorruptFileError(
            f"{str(source)!r} cannot be opened at all ({exc.__cause__ or 'damaged'}): no "
            "row of it can be read, so nothing was recovered"
        ) from exc
    try:
        tables = _tables(src)
        meta = dict(_readable_rows(src, "meta", ["key", "value"])) if "meta" in tables else {}
        dim = meta.get("dim")
        with target.db.write() as out:
            for key in ("embedder", "dim"):
                if key in meta:
                    out.execute(
                        "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                        (key, str(meta[key])),
                    )
            if dim is not None:
                out.execute(vec0_script(int(dim)))
            out.execute("PRAGMA defer_foreign_keys = ON")
            for table in SALVAGED:
                if table not in tables:
                    continue
                columns = [c for c in _columns(src, table) if c in set(_columns(out, table))]
                if not columns:
                    continue
                names = ", ".join(f'"{c}"' for c in columns)
                marks = ", ".join("?" for _ in columns)
                saved = 0
                try:
                    for row in _readable_rows(src, table, [f'"{c}"' for c in columns]):
                        out.execute(
                            f'INSERT OR IGNORE INTO "{table}" ({names}) VALUES ({marks})', row
                        )
                        saved += 1
                except _Unreadable:
                    report.unreadable.append(table)
                report.saved[table] = saved
            # Rows whose parent was lost would break the foreign keys.
            for child, sql in _ORPHANS:
                if child in tables:
                    out.execute(sql)
    finally:
        src.close()


_ORPHANS = (
    ("code_files", "DELETE FROM code_files WHERE project_id NOT IN (SELECT id FROM code_projects)"),
    ("code_symbols", "DELETE FROM code_symbols WHERE file_id NOT IN (SELECT id FROM code_files)"),
    ("code_names", "DELETE FROM code_names WHERE file_id NOT IN (SELECT id FROM code_files)"),
)


class _Unreadable(Exception):
    """A table whose rows cannot be read at all (a WITHOUT ROWID table with damage)."""


def _tables(conn: Connection) -> set[str]:
    try:
        return {str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master")}
    except apsw.Error:
        return set()  # the schema page itself is damaged: nothing can be found


def _columns(conn: Connection, table: str) -> list[str]:
    try:
        return [str(r[1]) for r in conn.execute(f'PRAGMA table_info("{table}")')]
    except apsw.Error:
        return []


def _readable_rows(conn: Connection, table: str, columns: list[str]) -> Iterator[Any]:
    """Rows of ``table`` in rowid order, stepping over the ranges on damaged pages."""
    selected = ", ".join(columns)
    try:
        has_rowid = conn.execute(
            "SELECT sql NOT LIKE '%WITHOUT ROWID%' FROM sqlite_master WHERE name = ?", (table,)
        ).fetchone()
    except apsw.Error:
        return
    if not has_rowid or not has_rowid[0]:
        try:
            # every column: a smaller index covering ``selected`` would spare the
            # table's own pages, and count rows a recovery cannot read
            rows = conn.execute(f'SELECT {selected}, * FROM "{table}"').fetchall()
        except apsw.Error as exc:
            raise _Unreadable(table) from exc
        yield from (row[: len(columns)] for row in rows)
        return
    batch = f'SELECT rowid, {selected} FROM "{table}" WHERE rowid > ? ORDER BY rowid LIMIT ?'
    last = -(2**63)
    while True:
        try:
            rows = conn.execute(batch, (last, _BATCH)).fetchall()
        except apsw.Error:
            rows = None
        if rows is None:  # damage within the next batch: one row at a time up to it
            try:
                rows = conn.execute(batch, (last, 1)).fetchall()
            except apsw.Error:
                skipped = _next_readable(conn, batch, last)
                if skipped is None:
                    return
                last = skipped
                continue
        if not rows:
            return
        for row in rows:
            yield row[1:]
        last = rows[-1][0]


def _next_readable(conn: Connection, batch: str, last: int) -> int | None:
    """The smallest rowid past ``last`` from which reading works again (None: nowhere)."""

    def works(start: int) -> bool:
        try:
            conn.execute(batch, (start, 1)).fetchall()
        except apsw.Error:
            return False
        return True

    # From 0 when nothing was read yet: ids are positive, and doubling from -2**63
    # stepped from 0 straight past every id, so damage on a table's first page lost it all.
    origin = max(last, 0)
    step = 1
    while origin + step < _SEARCH_LIMIT and not works(origin + step):
        step *= 2
    if origin + step >= _SEARCH_LIMIT:
        return None
    low, high = origin + step // 2, origin + step  # low fails (or is origin), high works
    while high - low > 1:
        middle = (low + high) // 2
        if works(middle):
            high = middle
        else:
            low = middle
    return high
