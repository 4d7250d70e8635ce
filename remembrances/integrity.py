"""Checking (and repairing) that the derived indexes agree with the chunk table.

The chunk rows and their embedding blobs are the source of truth; the FTS5 index,
the vec0 table and the vector log are derived from them by triggers. A crash cannot
break that agreement (every write is one transaction), but a file edited by hand,
copied mid-write or written by a buggy tool can. ``check`` says what disagrees;
``check(repair=True)`` rebuilds the derived indexes from the chunks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import apsw
import numpy as np

from .connection import Connection
from .schema import vec0_script
from .store import Store


@dataclass
class CheckReport:
    chunks: int = 0
    vectors: int = 0
    problems: list[str] = field(default_factory=list)
    repaired: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems or len(self.repaired) == len(self.problems)

    def to_dict(self) -> dict[str, object]:
        return {
            "ok": self.ok,
            "chunks": self.chunks,
            "vectors": self.vectors,
            "problems": self.problems,
            "repaired": self.repaired,
        }


def check(store: Store, *, repair: bool = False) -> CheckReport:
    """Verify chunk ↔ FTS ↔ vec0 ↔ blob consistency and the model record."""
    report = CheckReport()
    # FTS5's integrity-check command is a write statement: run it on the writer
    # (a reader connection that ran it was seen to keep a stale FTS5 structure).
    context = store.snapshot() if store.read_only and not repair else store.transaction()
    with context as conn:
        _check_sqlite(conn, report)
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
            _check_triggers(conn, report, int(dim[0]), repair)
            _check_blobs(conn, report, int(dim[0]), repair)
            _check_vec0(conn, report, int(dim[0]), repair)
    return report


def _check_sqlite(conn: Connection, report: CheckReport) -> None:
    result = conn.execute("PRAGMA quick_check").fetchall()
    if result != [("ok",)]:
        report.problems.append("sqlite quick_check: " + "; ".join(str(r[0]) for r in result[:5]))


_TRIGGERS = (
    "chunks_fts_insert",
    "chunks_fts_delete",
    "chunks_fts_update",
    "vector_log_insert",
    "vector_log_delete",
    "vector_log_update",
)
_VEC0_TRIGGERS = ("chunks_vec_insert", "chunks_vec_delete", "chunks_vec_update")


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


def _check_fts(conn: Connection, report: CheckReport, repair: bool) -> None:
    try:
        conn.execute("INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('integrity-check', 1)")
        return
    except apsw.CorruptError:
        report.problems.append("the full-text index does not match the chunk table")
    if repair:
        conn.execute("INSERT INTO chunks_fts (chunks_fts) VALUES ('rebuild')")
        report.repaired.append("rebuilt the full-text index from the chunks")


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
    missing = conn.execute(
        "SELECT count(*) FROM chunks c WHERE c.embedding IS NOT NULL AND length(c.embedding) = ? "
        "AND NOT EXISTS (SELECT 1 FROM chunks_vec v WHERE v.chunk_id = c.id)",
        (dim * 4,),
    ).fetchone()[0]
    extra = conn.execute(
        "SELECT count(*) FROM chunks_vec v WHERE NOT EXISTS "
        "(SELECT 1 FROM chunks c WHERE c.id = v.chunk_id AND c.embedding IS NOT NULL)"
    ).fetchone()[0]
    different = conn.execute(
        "SELECT count(*) FROM chunks_vec v JOIN chunks c ON c.id = v.chunk_id "
        "WHERE c.embedding IS NOT NULL AND v.embedding != c.embedding"
    ).fetchone()[0]
    if not (missing or extra or different):
        return
    report.problems.append(
        f"the vec0 table disagrees with the chunk vectors ({missing} missing, "
        f"{extra} stale, {different} different)"
    )
    if repair:
        _refill_vec0(conn)
        report.repaired.append("rebuilt the vec0 table from the chunk vectors")


def _refill_vec0(conn: Connection) -> None:
    conn.execute("DELETE FROM chunks_vec")
    conn.execute(
        "INSERT INTO chunks_vec (chunk_id, embedding, kind, collection) "
        "SELECT id, embedding, kind, collection FROM chunks WHERE embedding IS NOT NULL "
        "AND length(embedding) = (SELECT CAST(value AS INTEGER) * 4 FROM meta WHERE key = 'dim')"
    )
