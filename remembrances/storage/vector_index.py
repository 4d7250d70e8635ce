"""Top-k over every chunk vector, held in one float32 matrix in memory.

sqlite-vec's scan computes cosine in a scalar loop; a matrix-vector product over
a contiguous float32 matrix runs at memory bandwidth instead (see
benchmarks/results/vector.md). The chunk blobs stay the source of truth: the
index is loaded from them on first use and kept current from ``vector_log``,
which triggers fill on every vector change, so a search sees every write
committed before it started, by this process or any other.

Exact search (the default) scores every allowed row in float32. Approximate
search (``exact=False``) ranks rows by the Hamming distance between sign bits
(1/32 of the float32 size, built on first use) and re-scores the best
candidates exactly from the float32 rows, so the scores it returns are exact.

Memory: the matrix grows by 1/8 at a time (untouched capacity is not resident),
plus ~29 bytes per row for ids, filter columns and the score buffer, 4 bytes per
chunk id ever issued for the id -> row map, and dim/8 bytes per row for the sign
bits once approximate search has been used. Searches must not run
concurrently on one index (they share the score buffer, and sync mutates it);
the Store holds a lock around each use.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import numpy.typing as npt

from ..embeddings.base import Vectors
from . import vec0_storage
from .in_lists import in_lists

_GROWTH = 1.125
_COMPACT_FRACTION = 0.25  # compact when a quarter of the rows are deleted
_BATCH = 8192  # rows decoded per bulk copy while loading
#: A selective filter's rows are gathered and scored alone; a broad one is a
#: masked full scan (a gather copies the rows, which costs more than reading them).
_GATHER_FRACTION = 0.25
#: Filtered rows in runs of consecutive positions (a kind or collection written in
#: batches) are scored in place, run by run, when runs average this many rows.
_MIN_RUN = 1024
#: Approximate search re-scores this many candidates per result (at least
#: ``MIN_CANDIDATES``); measured on MiniLM embeddings in benchmarks/bench_vector.py.
OVERSAMPLE = 20
MIN_CANDIDATES = 400
#: Sign bits are taken relative to the mean vector; it is re-taken (and the
#: codes rebuilt) when the index has doubled since, so the bits stay balanced.
_RECENTRE_GROWTH = 2.0
_HAMMING_BLOCK = 16_384
#: Bytes of the file a cold search maps (SQLite caps it at its own maximum).
_COLD_MMAP = 1 << 40

#: Below this many rows per thread, handing work to another thread costs more than it saves.
_ROWS_PER_THREAD = 32_768
#: Threads for a full scan. NumPy's own dot loop runs in the calling threads: a BLAS
#: gemv with OpenBLAS's threads was 50x slower on a busy 2-core machine (its
#: threads spin-wait for cores other processes hold); see docs/performance.md.
SCAN_THREADS = max(
    1, min(int(os.environ.get("REMEMBRANCES_SCAN_THREADS", "0")) or (os.cpu_count() or 1), 4)
)

Rows = npt.NDArray[np.int64]
Scores = npt.NDArray[np.float32]

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=3, thread_name_prefix="remembrances-scan")
        return _pool


def _dot_rows(matrix: Vectors, query: Vectors, out: Scores) -> None:
    """out[i] = matrix[i] . query, single-threaded (numpy >= 2: its SIMD vecdot loop)."""
    if _vecdot is not None:
        _vecdot(matrix, query, out=out)
    else:  # numpy 1.x
        np.matmul(matrix, query, out=out)


def _scores_of(rows: Vectors, query: Vectors) -> Scores:
    out = np.empty(len(rows), dtype=np.float32)
    _dot_rows(rows, query, out)
    return out


_vecdot: Callable[..., Any] | None = getattr(np, "vecdot", None)
_BYTE_ONES = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)


def _popcount(words: npt.NDArray[np.uint64], out: npt.NDArray[np.uint8]) -> None:
    """Set bits per uint64 (numpy >= 2 has a ufunc; 1.x sums a byte table)."""
    if hasattr(np, "bitwise_count"):
        np.bitwise_count(words, out=out)
    else:
        out[:] = _BYTE_ONES[words.view(np.uint8)].reshape(-1, 8).sum(axis=1)


class VectorIndex:
    def __init__(self, dim: int, *, threads: int | None = None) -> None:
        self.dim = dim
        self.threads = threads or SCAN_THREADS
        self.words = (dim + 63) // 64  # uint64 words of sign bits per row
        self.loaded = False
        self.loaded_from = ""  # "vec0" (packed blobs) or "rows" (chunk rows), once loaded
        self.seq = 0  # last vector_log entry applied
        #: Asked while loading (a load in a background thread can be stopped).
        self.stop: Callable[[], bool] | None = None
        self._reset(0)

    def _reset(self, capacity: int) -> None:
        self.n = 0  # rows in use (live or dead)
        self.dead = 0
        # np.zeros: pages not yet written are not resident, so spare capacity is free.
        self.matrix: Vectors = np.zeros((capacity, self.dim), dtype=np.float32)
        self.ids: npt.NDArray[np.int64] = np.zeros(capacity, dtype=np.int64)
        self.alive: npt.NDArray[np.bool_] = np.zeros(capacity, dtype=bool)
        self.kinds: npt.NDArray[np.int32] = np.zeros(capacity, dtype=np.int32)
        self.collections: npt.NDArray[np.int32] = np.zeros(capacity, dtype=np.int32)
        self.ts: npt.NDArray[np.float64] = np.zeros(capacity, dtype=np.float64)
        self.row_of: npt.NDArray[np.int32] = np.full(16, -1, dtype=np.int32)
        self.codes: dict[str, int] = {}
        self._scores: Scores = np.zeros(0, dtype=np.float32)
        self._dead_rows: Rows | None = None
        self._bits: npt.NDArray[np.uint64] | None = None  # (words, capacity) sign bits
        self._centre: Vectors | None = None
        self._centred_at = 0
        self._distance: npt.NDArray[np.int32] = np.zeros(0, dtype=np.int32)
        self._xor: npt.NDArray[np.uint64] = np.zeros(0, dtype=np.uint64)
        self._ones: npt.NDArray[np.uint8] = np.zeros(0, dtype=np.uint8)

    # -- keeping current -------------------------------------------------------------

    def sync(self, conn: Any) -> None:
        """Apply the changes committed since the last sync (call inside a read txn)."""
        last = conn.execute("SELECT coalesce(max(seq), 0) FROM vector_log").fetchone()[0]
        # A reader whose snapshot is older than the index has nothing to apply (the
        # log only grows); going back would replay entries already applied.
        if self.loaded and last <= self.seq:
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

    def _load_all(self, conn: Any, last_seq: int) -> None:
        packed = vec0_storage.read(conn, self.dim, growth=_GROWTH, stop=self.stop)
        if packed is not None:
            self._adopt(conn, packed)
        else:
            self._load_rows(conn)
        self.loaded_from = "vec0" if packed is not None else "rows"
        self.seq = last_seq
        self.loaded = True

    def _adopt(self, conn: Any, packed: vec0_storage.Vec0Rows) -> None:
        """Take the arrays read from vec0's tables; times come from the ``ts`` index."""
        self._reset(0)
        n, capacity = packed.count, len(packed.matrix)
        self.matrix, self.ids, self.n = packed.matrix, packed.ids, n
        self.alive = np.zeros(capacity, dtype=bool)
        self.alive[:n] = True
        for column, target in (("kind", "kinds"), ("collection", "collections")):
            values = np.zeros(capacity, dtype=np.int32)
            names = packed.names[column]
            if names:
                translate = np.array([self._code(name) for name in names], dtype=np.int32)
                values[:n] = translate[packed.codes[column]]
            setattr(self, target, values)
        top = int(self.ids[:n].max()) if n else 0
        self.row_of = np.full(max(16, top + 1), -1, dtype=np.int32)
        self.row_of[self.ids[:n]] = np.arange(n, dtype=np.int32)
        self.ts = np.zeros(capacity, dtype=np.float64)
        self.ts[:n] = np.nan
        timed = conn.execute("SELECT id, ts FROM chunks WHERE ts IS NOT NULL").fetchall()
        if timed:
            pairs = np.fromiter(
                itertools.chain.from_iterable(timed), dtype=np.float64, count=2 * len(timed)
            ).reshape(-1, 2)
            chunk_ids = pairs[:, 0].astype(np.int64)
            known = chunk_ids < len(self.row_of)
            rows = self.row_of[chunk_ids[known]]
            self.ts[rows[rows >= 0]] = pairs[:, 1][known][rows >= 0]

    def _load_rows(self, conn: Any) -> None:
        """The slow path: every row of ``chunks``, for a file whose vec0 tables we cannot read."""
        count = conn.execute("SELECT count(*) FROM chunks WHERE embedding IS NOT NULL").fetchone()[
            0
        ]
        self._reset(int(count * _GROWTH) + 16)
        rows = conn.execute(
            "SELECT id, kind, collection, ts, embedding FROM chunks "
            "WHERE embedding IS NOT NULL ORDER BY id"
        )
        self._append(rows)

    def _add_rows(self, conn: Any, chunk_ids: Sequence[int]) -> None:
        for part, marks in in_lists(chunk_ids, 5000):
            for chunk_id in part:  # an add of a present id replaces it
                self._delete(chunk_id)
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
        batch: list[tuple[int, str, str, float | None, bytes]] = []
        for row in rows:
            if len(row[4]) == self.dim * 4:  # else a foreign vector; `check` reports it
                batch.append(row)
                if len(batch) == _BATCH:
                    if self.stop is not None and self.stop():
                        raise vec0_storage.LoadStopped
                    self._append_batch(batch)
                    batch = []
        if batch:
            self._append_batch(batch)

    def _append_batch(self, batch: list[tuple[int, str, str, float | None, bytes]]) -> None:
        """Copy a batch of rows in with one bulk copy per column (no per-row numpy calls)."""
        count = len(batch)
        start, end = self.n, self.n + count
        if end > len(self.ids):
            self._grow(int(end * _GROWTH) + 16)
        ids = np.fromiter((r[0] for r in batch), dtype=np.int64, count=count)
        self.matrix[start:end] = np.frombuffer(b"".join(r[4] for r in batch), dtype="<f4").reshape(
            count, self.dim
        )
        self.ids[start:end] = ids
        self.alive[start:end] = True
        self.kinds[start:end] = [self._code(r[1]) for r in batch]
        self.collections[start:end] = [self._code(r[2]) for r in batch]
        self.ts[start:end] = [np.nan if r[3] is None else r[3] for r in batch]
        top = int(ids.max())
        if top >= len(self.row_of):
            grown = np.full(max(top + 1, int(len(self.row_of) * 1.5)), -1, dtype=np.int32)
            grown[: len(self.row_of)] = self.row_of
            self.row_of = grown
        self.row_of[ids] = np.arange(start, end, dtype=np.int32)
        self.n = end
        if self._bits is not None:
            if self.n >= _RECENTRE_GROWTH * self._centred_at:
                self._bits = None  # rebuilt around the new mean on the next approximate search
            else:
                self._bits[:, start:end] = self._encode(self.matrix[start:end])

    def _grow(self, capacity: int) -> None:
        def grown(old: npt.NDArray[np.generic], shape: tuple[int, ...]) -> npt.NDArray[np.generic]:
            new = np.zeros(shape, dtype=old.dtype)
            new[: self.n] = old[: self.n]
            return new

        for name in ("matrix", "ids", "alive", "kinds", "collections", "ts"):
            old = getattr(self, name)
            setattr(self, name, grown(old, (capacity, *old.shape[1:])))
        if self._bits is not None:
            bits = np.zeros((self.words, capacity), dtype=np.uint64)
            bits[:, : self.n] = self._bits[:, : self.n]
            self._bits = bits

    def _delete(self, chunk_id: int) -> None:
        if chunk_id < len(self.row_of) and (row := self.row_of[chunk_id]) >= 0:
            self.alive[row] = False
            self.row_of[chunk_id] = -1
            self.dead += 1
            self._dead_rows = None

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
            if self._bits is not None:
                self._bits[:, start:end] = self._bits[:, part]
        self.n = len(keep)
        self.alive[: self.n] = True
        self.alive[self.n :] = False
        self.dead = 0
        self._dead_rows = None
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

    def rows_for(self, chunk_ids: Sequence[int]) -> Rows:
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
        rows: Rows | None = None,
        exact: bool = True,
    ) -> tuple[Rows, Scores]:
        """Chunk ids and cosine similarities of the ``k`` nearest rows, best first.

        ``rows`` restricts the search to those rows and ``mask`` marks the allowed
        rows (both filters: when ``k`` rows are allowed, ``k`` are returned).
        ``exact=False`` re-scores only the nearest candidates by sign bits; the
        scores returned are exact either way.
        """
        query = np.ascontiguousarray(query, dtype=np.float32)
        if rows is not None:
            rows = np.unique(rows)  # sorted, each row once
        elif mask is not None:
            rows = np.flatnonzero(mask[: self.n])  # sorted already
        if rows is not None:
            scores = self._score_runs(rows, query)
            if scores is None and len(rows) <= _GATHER_FRACTION * self.n:
                scores = _scores_of(self.matrix[rows], query)
            if scores is not None:
                top = _best(scores, k, lambda p: self.ids[rows[p]])
                return self.ids[rows[top]], scores[top]
            if mask is None:
                mask = np.zeros(self.n, dtype=bool)
                mask[rows] = True
        if not exact:
            candidates = self._candidates(query, max(k * OVERSAMPLE, MIN_CANDIDATES), mask)
            if candidates is not None:
                scores = _scores_of(self.matrix[candidates], query)
                top = _best(scores, k, lambda p: self.ids[candidates[p]])
                return self.ids[candidates[top]], scores[top]
        scores = self._scan(query)
        if rows is not None:
            # select among the allowed rows only: argpartition slows down ~15x
            # when most of its input is tied at -inf (a filter keeping a few %)
            top = rows[_best(scores[rows], k, lambda p: self.ids[rows[p]])]
            return self.ids[top], scores[top]
        if self.dead:
            scores[self._dead()] = -np.inf
        top = _best(scores, k, lambda p: self.ids[p])
        return self.ids[top], scores[top]

    def _score_runs(self, rows: Rows, query: Vectors) -> Scores | None:
        """Scores of sorted ``rows`` read in place run by run, or None when the rows
        are too scattered for that (then a gather or a full scan is cheaper)."""
        if len(rows) == 0:
            return np.zeros(0, dtype=np.float32)
        breaks = np.flatnonzero(np.diff(rows) != 1) + 1
        if (len(breaks) + 1) * _MIN_RUN > len(rows):
            return None
        out = np.empty(len(rows), dtype=np.float32)
        starts = [0, *breaks.tolist()]
        ends = [*breaks.tolist(), len(rows)]
        for a, b in zip(starts, ends, strict=True):
            matrix, part = self.matrix[int(rows[a]) : int(rows[a]) + (b - a)], out[a:b]

            def work(x: int, y: int, matrix: Vectors = matrix, part: Scores = part) -> None:
                _dot_rows(matrix[x:y], query, part[x:y])

            self._in_parts(b - a, work)  # a long run is split over the scan threads
        return out

    def _scan(self, query: Vectors) -> Scores:
        """Every row's score, in a buffer reused between searches (no allocation)."""
        if len(self._scores) < self.n:
            self._scores = np.empty(len(self.ids), dtype=np.float32)
        n = self.n
        scores = self._scores[:n]
        self._in_parts(n, lambda a, b: _dot_rows(self.matrix[a:b], query, scores[a:b]))
        return scores

    def _in_parts(self, n: int, work: Callable[[int, int], None]) -> None:
        """Run ``work(start, end)`` over rows [0, n), split over the scan threads."""
        parts = max(1, min(self.threads, n // _ROWS_PER_THREAD))
        bounds = [n * i // parts for i in range(parts + 1)]
        pending = [_executor().submit(work, bounds[i], bounds[i + 1]) for i in range(1, parts)]
        work(0, bounds[1])
        for future in pending:
            future.result()

    def _dead(self) -> Rows:
        if self._dead_rows is None:
            self._dead_rows = np.flatnonzero(~self.alive[: self.n])
        return self._dead_rows

    # -- approximate search: sign bits ---------------------------------------------------

    def _encode(self, vectors: Vectors) -> npt.NDArray[np.uint64]:
        """Sign bits of ``vectors - centre`` as (words, rows) uint64."""
        assert self._centre is not None
        packed = np.packbits(vectors > self._centre, axis=-1, bitorder="little")
        width = self.words * 8
        if packed.shape[-1] != width:
            padded = np.zeros((*packed.shape[:-1], width), dtype=np.uint8)
            padded[..., : packed.shape[-1]] = packed
            packed = padded
        return np.ascontiguousarray(packed.view(np.uint64).reshape(-1, self.words).T)

    def _build_bits(self) -> None:
        # The mean of all rows, dead ones too: any centre keeps the bits valid; the
        # mean only keeps them balanced.
        self._centre = (
            self.matrix[: self.n].mean(axis=0, dtype=np.float64).astype(np.float32)
            if self.n
            else np.zeros(self.dim, dtype=np.float32)
        )
        self._centred_at = max(self.n, 1)
        bits = np.zeros((self.words, len(self.ids)), dtype=np.uint64)
        for start in range(0, self.n, 65536):
            end = min(start + 65536, self.n)
            bits[:, start:end] = self._encode(self.matrix[start:end])
        self._bits = bits

    def _candidates(
        self, query: Vectors, count: int, mask: npt.NDArray[np.bool_] | None
    ) -> Rows | None:
        """The ``count`` allowed rows nearest by sign bits, or None when that is all rows."""
        allowed = self.n - self.dead if mask is None else int(np.count_nonzero(mask))
        if allowed <= count:
            return None  # re-scoring every allowed row is the exact scan
        if self._bits is None:
            self._build_bits()
        assert self._bits is not None
        q = self._encode(query.reshape(1, -1))[:, 0]
        n = self.n
        if len(self._distance) < n:  # reused: fresh arrays would page-fault every search
            capacity = len(self.ids)
            self._distance = np.empty(capacity, dtype=np.int32)
            self._xor = np.empty(capacity, dtype=np.uint64)
            self._ones = np.empty(capacity, dtype=np.uint8)
        bits = self._bits

        def hamming(start: int, end: int) -> None:
            # Blocks small enough that the scratch arrays stay in cache across words.
            for a in range(start, end, _HAMMING_BLOCK):
                b = min(a + _HAMMING_BLOCK, end)
                distance, xor, ones = self._distance[a:b], self._xor[a:b], self._ones[a:b]
                distance[:] = 0
                for word in range(self.words):
                    np.bitwise_xor(bits[word, a:b], q[word], out=xor)
                    _popcount(xor, ones)
                    np.add(distance, ones, out=distance)

        # One thread: this loop makes many short numpy calls, and two threads would
        # hand the GIL back and forth between them (measured slower).
        hamming(0, n)
        distance = self._distance[:n]
        if mask is not None:
            distance[~mask] = self.dim + 1
        elif self.dead:
            distance[self._dead()] = self.dim + 1
        return np.argpartition(distance, count - 1)[:count].astype(np.int64)

    def vectors(self, chunk_ids: Sequence[int]) -> dict[int, Vectors]:
        out: dict[int, Vectors] = {}
        for chunk_id in chunk_ids:
            if 0 <= chunk_id < len(self.row_of) and (row := self.row_of[chunk_id]) >= 0:
                out[chunk_id] = self.matrix[row]
        return out

    @property
    def nbytes(self) -> int:
        """Bytes held for vectors, allowing for spare capacity (not resident until used)."""
        return int(
            self.matrix.nbytes
            + self.ids.nbytes
            + self.alive.nbytes
            + self.kinds.nbytes
            + self.collections.nbytes
            + self.ts.nbytes
            + self.row_of.nbytes
            + self._scores.nbytes
            + (self._bits.nbytes if self._bits is not None else 0)
            + self._distance.nbytes
            + self._xor.nbytes
            + self._ones.nbytes
        )


def _best(scores: Scores, k: int, ids_at: Callable[[Rows], Rows]) -> Rows:
    """Positions of the ``k`` highest finite scores, best first; ties by chunk id.

    ``ids_at`` maps positions to chunk ids. Equal scores (duplicate texts embed to
    equal vectors) are ordered by id, and the k-th place goes to the lowest ids,
    whatever the rows' order in memory: the cold search (``cold_top_k``), which sees
    the rows in another order, returns exactly the same list.
    """
    n = len(scores)
    k = min(k, n)
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    if k < n:
        top = np.argpartition(scores, n - k)[n - k :]
        kth = scores[top].min()
        if kth > -np.inf:
            tied = np.count_nonzero(scores == kth)  # one compare pass: ~1% of a scan
            if tied > np.count_nonzero(scores[top] == kth):  # tied rows left out
                above = np.flatnonzero(scores > kth)
                at = np.flatnonzero(scores == kth)
                at = at[np.argsort(ids_at(at), kind="stable")[: k - len(above)]]
                top = np.concatenate((above, at))
    else:
        top = np.arange(n)
    top = top[np.lexsort((ids_at(top), -scores[top]))]
    return top[scores[top] > -np.inf]


def cold_bound(
    dim: int, scale: npt.NDArray[np.float32], error: npt.NDArray[np.float32], query_norm: float
) -> npt.NDArray[np.float64]:
    """How far a vector's exact float32 score can be from its int8 approximation.

    ``|q·v − q·v̂| ≤ ‖q‖·‖v − v̂‖ ≤ ‖q‖·error`` (Cauchy-Schwarz; ``error`` is
    stored rounded up). Both scores are also float sums of ``dim`` products, each
    within ``γ·Σ|q_i x_i| ≤ γ·‖q‖·‖x‖`` of its real value (``γ = dim·u/(1 − dim·u)``,
    u = 2^-24, any summation order), with ``‖v̂‖ ≤ 127·√dim·scale`` and
    ``‖v‖ ≤ ‖v̂‖ + error``. The sum of the three, with a margin for the float64
    arithmetic here, bounds the difference.
    """
    unit = 2.0**-24
    gamma = dim * unit / (1 - dim * unit)
    peak = 127.0 * np.sqrt(dim) * scale.astype(np.float64)
    err = error.astype(np.float64)
    bound: npt.NDArray[np.float64] = (err + gamma * (2 * peak + err)) * query_norm * (1 + 1e-9)
    return bound + 1e-30


def cold_top_k(
    conn: Any, dim: int, query: Vectors, k: int, allowed: Rows | None = None
) -> tuple[Rows, Scores] | None:
    """The exact top ``k`` from the compact int8 copy, without loading the index.

    Every allowed vector gets an approximate score from its int8 codes and a bound
    on its error (``cold_bound``). The best ``k`` by approximate score are scored
    exactly (float32, from the chunk blobs); the k-th of those exact scores, T, is
    a lower bound of the true k-th score. Every vector that could reach T (its
    approximate score + its bound ≥ T) is scored exactly too, so every vector whose
    exact score is at least the true k-th one, ties included, is scored exactly,
    and the top ``k`` among them (score, then chunk id) is the warm path's answer.
    ``allowed``: sorted chunk ids a filter keeps. None when the file has no compact
    copy (an older file); the caller loads the index instead.
    """
    chunks = vec0_storage.compact_blocks(conn, dim)
    if chunks is None:
        return None
    query = np.ascontiguousarray(query, dtype=np.float32)
    query_norm = float(np.linalg.norm(query.astype(np.float64)))
    total = sum(int(live.sum()) for _, _, live in chunks)
    ids = np.empty(total, dtype=np.int64)
    raw = np.empty(total, dtype=np.float32)
    scale = np.empty(total, dtype=np.float32)
    error = np.empty(total, dtype=np.float32)
    n = 0
    # Pages read through a memory map for the scan: no read() call and no page-cache
    # copy per 4 KiB page (0.6-0.8 s against 0.8-1.1 s at 1M, measured under load).
    mapped = int(conn.execute("PRAGMA mmap_size").fetchone()[0])
    if mapped < _COLD_MMAP:
        conn.execute(f"PRAGMA mmap_size={_COLD_MMAP}")
    try:
        for block in vec0_storage.iter_compact(conn, dim, chunks):
            keep: slice | npt.NDArray[np.bool_] = slice(None)
            if allowed is not None:
                at = np.minimum(np.searchsorted(allowed, block.ids), max(len(allowed) - 1, 0))
                keep = allowed[at] == block.ids if len(allowed) else block.ids < 0
            m = len(block.ids[keep])
            if m == 0:
                continue
            ids[n : n + m] = block.ids[keep]
            scale[n : n + m] = block.scale[keep]
            error[n : n + m] = block.error[keep]
            _approximate(block.codes[keep], query, raw[n : n + m])
            n += m
    except ValueError:  # blobs of an unexpected size: load the index instead
        return None
    finally:
        if mapped < _COLD_MMAP:
            conn.execute(f"PRAGMA mmap_size={mapped}")  # as the connection had it
    ids, raw, scale, error = ids[:n], raw[:n], scale[:n], error[:n]
    k = min(k, n)
    if k <= 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    approx = raw.astype(np.float64) * scale
    guess = np.argpartition(approx, n - k)[n - k :] if k < n else np.arange(n)
    guess_scores = _exact_scores(conn, ids[guess], query)
    if guess_scores is None:
        return None
    threshold = float(guess_scores.min())
    # Every vector that could reach the threshold. The largest bound first (it grows
    # with scale and error), then each survivor's own.
    widest = cold_bound(dim, scale.max(keepdims=True), error.max(keepdims=True), query_norm)
    maybe = np.flatnonzero(approx >= threshold - float(widest[0]))
    reach = approx[maybe] + cold_bound(dim, scale[maybe], error[maybe], query_norm)
    others = np.setdiff1d(maybe[reach >= threshold], guess, assume_unique=True)
    other_scores = _exact_scores(conn, ids[others], query)
    if other_scores is None:
        return None
    found = ids[np.concatenate((guess, others))]
    scores = np.concatenate((guess_scores, other_scores))
    top = _best(scores, k, lambda p: found[p])
    return found[top], scores[top]


def _approximate(codes: npt.NDArray[np.int8], query: Vectors, out: Scores) -> None:
    """out = codes · query, cast to float32 1,024 rows at a time (the cast buffer stays
    in cache), split over the scan threads for a large block."""

    def work(start: int, end: int) -> None:
        floats = np.empty((min(1024, end - start), codes.shape[1]), dtype=np.float32)
        for a in range(start, end, 1024):
            b = min(a + 1024, end)
            np.copyto(floats[: b - a], codes[a:b], casting="unsafe")
            _dot_rows(floats[: b - a], query, out[a:b])

    n = len(codes)
    parts = max(1, min(SCAN_THREADS, n // _ROWS_PER_THREAD))
    bounds = [n * i // parts for i in range(parts + 1)]
    pending = [_executor().submit(work, bounds[i], bounds[i + 1]) for i in range(1, parts)]
    work(0, bounds[1])
    for future in pending:
        future.result()


def _exact_scores(conn: Any, chunk_ids: Rows, query: Vectors) -> Scores | None:
    """The warm path's float32 scores of these chunks (their blobs, the same dot loop)."""
    if len(chunk_ids) == 0:
        return np.zeros(0, dtype=np.float32)
    blobs: dict[int, bytes] = {}
    for part, marks in in_lists([int(i) for i in chunk_ids], 5000):
        blobs.update(
            conn.execute(
                f"SELECT id, embedding FROM chunks WHERE id IN ({marks}) AND embedding IS NOT NULL",
                tuple(part),
            ).fetchall()
        )
    if len(blobs) != len(chunk_ids):
        return None  # the compact copy and the chunks disagree: load the index instead
    matrix = np.frombuffer(b"".join(blobs[int(i)] for i in chunk_ids), dtype="<f4").reshape(
        len(chunk_ids), -1
    )
    if matrix.shape[1] != len(query):
        return None
    return _scores_of(np.ascontiguousarray(matrix), query)
