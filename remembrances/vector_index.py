"""Exact top-k over every chunk vector, held in one float32 matrix in memory.

sqlite-vec's scan computes cosine in a scalar loop; a matrix-vector product over
a contiguous float32 matrix runs at memory bandwidth instead (see
benchmarks/RESULTS.md). The chunk blobs stay the source of truth: the index is
loaded from them on first use and kept current from ``vector_log``, which
triggers fill on every vector change, so a search sees every write committed
before it started, by this process or any other.

Memory: the matrix grows by 1/8 at a time (so at most ~1.13x the vectors' size)
plus 4 bytes per chunk id ever issued for the id -> row map and ~16 bytes per row
for the filter columns.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import apsw
import numpy as np
import numpy.typing as npt

from .embeddings.base import Vectors

_GROWTH = 1.125
_COMPACT_FRACTION = 0.25  # compact when a quarter of the rows are deleted


class VectorIndex:
    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.loaded = False
        self.seq = 0  # last vector_log entry applied
        self._reset(0)

    def _reset(self, capacity: int) -> None:
        self.n = 0  # rows in use (live or dead)
        self.dead = 0
        self.matrix: Vectors = np.zeros((capacity, self.dim), dtype=np.float32)
        self.ids: npt.NDArray[np.int64] = np.zeros(capacity, dtype=np.int64)
        self.alive: npt.NDArray[np.bool_] = np.zeros(capacity, dtype=bool)
        self.kinds: npt.NDArray[np.int32] = np.zeros(capacity, dtype=np.int32)
        self.collections: npt.NDArray[np.int32] = np.zeros(capacity, dtype=np.int32)
        self.ts: npt.NDArray[np.float64] = np.zeros(capacity, dtype=np.float64)
        self.row_of: npt.NDArray[np.int32] = np.full(16, -1, dtype=np.int32)
        self.codes: dict[str, int] = {}

    # -- keeping current -------------------------------------------------------------

    def sync(self, conn: apsw.Connection) -> None:
        """Apply the changes committed since the last sync (call inside a read txn)."""
        last = conn.execute("SELECT coalesce(max(seq), 0) FROM vector_log").fetchone()[0]
        if self.loaded and last == self.seq:
            return
        pruned = conn.execute(
            "SELECT value FROM meta WHERE key = 'vector_log_pruned_through'"
        ).fetchone()
        if not self.loaded or (pruned and int(pruned[0]) > self.seq):
            self._load_all(conn, last)
            return
        adds: list[int] = []
        for chunk_id, op in conn.execute(
            "SELECT chunk_id, op FROM vector_log WHERE seq > ? ORDER BY seq", (self.seq,)
        ):
            if op == "del":
                if adds:  # keep the order of operations on one id
                    self._add_rows(conn, adds)
                    adds = []
                self._delete(chunk_id)
            else:
                adds.append(chunk_id)
        if adds:
            self._add_rows(conn, adds)
        self.seq = last
        if self.dead > _COMPACT_FRACTION * max(self.n, 1):
            self._compact()

    def _load_all(self, conn: apsw.Connection, last_seq: int) -> None:
        count = conn.execute("SELECT count(*) FROM chunks WHERE embedding IS NOT NULL").fetchone()[
            0
        ]
        self._reset(int(count * _GROWTH) + 16)
        rows = conn.execute(
            "SELECT id, kind, collection, ts, embedding FROM chunks "
            "WHERE embedding IS NOT NULL ORDER BY id"
        )
        self._append(rows)
        self.seq = last_seq
        self.loaded = True

    def _add_rows(self, conn: apsw.Connection, chunk_ids: Sequence[int]) -> None:
        for start in range(0, len(chunk_ids), 5000):
            part = chunk_ids[start : start + 5000]
            for chunk_id in part:  # an add of a present id replaces it
                self._delete(chunk_id)
            marks = ",".join("?" * len(part))
            rows = conn.execute(
                "SELECT id, kind, collection, ts, embedding FROM chunks "
                f"WHERE id IN ({marks}) AND embedding IS NOT NULL ORDER BY id",
                tuple(part),
            )
            self._append(rows)

    def _code(self, name: str) -> int:
        code = self.codes.get(name)
        if code is None:
            code = self.codes[name] = len(self.codes)
        return code

    def _append(self, rows: Iterable[tuple[int, str, str, float | None, bytes]]) -> None:
        for chunk_id, kind, collection, ts, blob in rows:
            if len(blob) != self.dim * 4:
                continue  # a foreign vector; `check` reports it
            if self.n == len(self.ids):
                self._grow(int(self.n * _GROWTH) + 16)
            row = self.n
            self.matrix[row] = np.frombuffer(blob, dtype="<f4")
            self.ids[row] = chunk_id
            self.alive[row] = True
            self.kinds[row] = self._code(kind)
            self.collections[row] = self._code(collection)
            self.ts[row] = np.nan if ts is None else ts
            if chunk_id >= len(self.row_of):
                grown = np.full(max(chunk_id + 1, int(len(self.row_of) * 1.5)), -1, dtype=np.int32)
                grown[: len(self.row_of)] = self.row_of
                self.row_of = grown
            self.row_of[chunk_id] = row
            self.n += 1

    def _grow(self, capacity: int) -> None:
        self.matrix = np.resize(self.matrix, (capacity, self.dim))
        for name in ("ids", "alive", "kinds", "collections", "ts"):
            setattr(self, name, np.resize(getattr(self, name), capacity))

    def _delete(self, chunk_id: int) -> None:
        if chunk_id < len(self.row_of) and (row := self.row_of[chunk_id]) >= 0:
            self.alive[row] = False
            self.row_of[chunk_id] = -1
            self.dead += 1

    def _compact(self) -> None:
        keep = np.flatnonzero(self.alive[: self.n])
        # In place, block by block: keep[i] >= i, so no source is overwritten early.
        for start in range(0, len(keep), 65536):
            part = keep[start : start + 65536]
            end = start + len(part)
            self.matrix[start:end] = self.matrix[part]
            for name in ("ids", "kinds", "collections", "ts"):
                column = getattr(self, name)
                column[start:end] = column[part]
        self.n = len(keep)
        self.alive[: self.n] = True
        self.alive[self.n :] = False
        self.dead = 0
        self.row_of[:] = -1
        self.row_of[self.ids[: self.n]] = np.arange(self.n, dtype=np.int32)

    # -- searching -------------------------------------------------------------------

    def mask(
        self,
        *,
        kinds: Sequence[str] | None = None,
        collections: Sequence[str] | None = None,
        since: float | None = None,
        until: float | None = None,
    ) -> npt.NDArray[np.bool_]:
        """Rows that are live and pass the cheap column filters."""
        mask = self.alive[: self.n].copy()
        if kinds is not None:
            codes = [self.codes[k] for k in kinds if k in self.codes]
            mask &= np.isin(self.kinds[: self.n], codes)
        if collections is not None:
            codes = [self.codes[c] for c in collections if c in self.codes]
            mask &= np.isin(self.collections[: self.n], codes)
        if since is not None:
            mask &= self.ts[: self.n] >= since  # NaN (no time) compares False
        if until is not None:
            mask &= self.ts[: self.n] <= until
        return mask

    def rows_for(self, chunk_ids: Sequence[int]) -> npt.NDArray[np.int64]:
        ids = np.asarray(chunk_ids, dtype=np.int64)
        ids = ids[(ids >= 0) & (ids < len(self.row_of))]
        rows = self.row_of[ids].astype(np.int64)
        return rows[rows >= 0]

    def top_k(
        self,
        query: Vectors,
        k: int,
        *,
        mask: npt.NDArray[np.bool_] | None = None,
        rows: npt.NDArray[np.int64] | None = None,
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """Chunk ids and cosine similarities of the ``k`` nearest rows, best first.

        ``rows`` restricts the scan to those rows (selective filters); ``mask`` marks
        the allowed rows of a full scan. Exact: every allowed row is scored.
        """
        if rows is not None:
            scores = self.matrix[rows] @ query
            candidates = rows
        else:
            scores = self.matrix[: self.n] @ query
            if mask is None:
                mask = self.alive[: self.n]
            candidates = None
            scores = np.where(mask, scores, -np.inf).astype(np.float32)
        k = min(k, len(scores))
        if k <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        top = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
        top = top[np.argsort(-scores[top], kind="stable")]
        top = top[np.isfinite(scores[top])]
        picked = candidates[top] if candidates is not None else top
        return self.ids[picked], scores[top]

    def vectors(self, chunk_ids: Sequence[int]) -> dict[int, Vectors]:
        out: dict[int, Vectors] = {}
        for chunk_id in chunk_ids:
            if 0 <= chunk_id < len(self.row_of) and (row := self.row_of[chunk_id]) >= 0:
                out[chunk_id] = self.matrix[row]
        return out

    @property
    def nbytes(self) -> int:
        return int(
            self.matrix.nbytes
            + self.ids.nbytes
            + self.alive.nbytes
            + self.kinds.nbytes
            + self.collections.nbytes
            + self.ts.nbytes
            + self.row_of.nbytes
        )
