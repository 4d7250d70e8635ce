"""Reading the vectors straight out of vec0's own tables, for a fast cold start.

The in-memory index needs every chunk vector once per process. Read row by row
from ``chunks`` that costs a walk over every row's text (the embedding is the last
column) and a Python object per row: 0.6-1.2 s at 100k chunks. The vec0 table
the triggers keep equal to the chunk blobs already stores the same vectors the
way a loader wants them: 1,024 at a time in one blob, with a validity bitmap, the
rowids and the ``kind``/``collection`` metadata packed beside them. Reading those
blobs straight into the index's matrix is a few large copies.

The layout is sqlite-vec's (0.1.x, pinned in pyproject): ``chunks_vec_chunks``
(chunk_id, size, validity bitmap, rowids as int64), ``chunks_vec_vector_chunks00``
(one float32 blob per chunk), ``chunks_vec_metadatachunks0N`` (16 bytes per slot
for TEXT: a length and the first 12 bytes; longer values in
``chunks_vec_metadatatext0N`` by rowid). Anything unexpected (another version,
sizes that do not add up, a count that disagrees with the chunk table) returns
None and the caller loads from the chunk blobs, the source of truth.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..embeddings.base import Vectors

TABLE = "chunks_vec"
#: The metadata columns, in the order vec0_script declares them.
METADATA = ("kind", "collection")
_PREFIX = 12  # bytes of a TEXT value stored inline in vec0's metadata chunks
_SLOT = 4 + _PREFIX


@dataclass
class Vec0Rows:
    """Every live vector with its chunk id and metadata names, ordered by chunk id."""

    count: int
    matrix: Vectors  # (capacity, dim); rows past ``count`` are zero
    ids: npt.NDArray[np.int64]
    #: Per column in METADATA: the distinct names and each row's index into them.
    names: dict[str, list[str]]
    codes: dict[str, npt.NDArray[np.int32]]


class LoadStopped(Exception):
    """A background load was told to stop (the store closed, or its model changed)."""


def read(
    conn: Any, dim: int, *, growth: float = 1.0, stop: Callable[[], bool] | None = None
) -> Vec0Rows | None:
    """The vectors of a file's vec0 table, or None when its layout is not the expected one.

    ``stop`` is asked between blobs; when it says so, :class:`LoadStopped` is raised."""
    if not hasattr(conn, "blob_open"):
        return None
    try:
        version = conn.execute(
            f"SELECT value FROM {TABLE}_info WHERE key = 'CREATE_VERSION'"
        ).fetchone()
    except Exception:  # no vec0 table (no vectors yet), or not one we know
        return None
    if version is None or not str(version[0]).startswith("v0.1."):
        return None
    chunks = conn.execute(
        f"SELECT chunk_id, size, validity, rowids FROM {TABLE}_chunks ORDER BY chunk_id"
    ).fetchall()
    expected = (
        conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
        - conn.execute("SELECT count(*) FROM chunks WHERE embedding IS NULL").fetchone()[0]
    )
    valid: list[npt.NDArray[np.bool_]] = []
    for _, size, validity, rowids in chunks:
        if size <= 0 or len(validity) * 8 < size or len(rowids) < size * 8:
            return None
        bits = np.unpackbits(np.frombuffer(validity, dtype=np.uint8), bitorder="little")
        valid.append(bits[:size].astype(bool))
    if sum(int(v.sum()) for v in valid) != expected:
        return None  # vec0 and the chunk blobs disagree: `check` will say so
    capacity = int(expected * growth) + 16
    matrix: Vectors = np.zeros((capacity, dim), dtype=np.float32)
    ids = np.zeros(capacity, dtype=np.int64)
    slots = {name: np.zeros((capacity, _SLOT), dtype=np.uint8) for name in METADATA}
    metadata = {
        name: dict(conn.execute(f"SELECT rowid, data FROM {TABLE}_metadatachunks{i:02d}"))
        for i, name in enumerate(METADATA)
    }
    spare: Vectors | None = None
    n = 0
    for (chunk_id, size, _, rowids), live in zip(chunks, valid, strict=True):
        if stop is not None and stop():
            raise LoadStopped
        k = int(live.sum())
        if k == 0:
            continue
        with conn.blob_open("main", f"{TABLE}_vector_chunks00", "vectors", chunk_id, False) as blob:
            if blob.length() != size * dim * 4:
                return None
            if k == size:  # every slot live: straight into the matrix
                blob.readinto(matrix[n : n + size].reshape(-1).view(np.uint8))
            else:
                if spare is None or len(spare) < size:
                    spare = np.empty((size, dim), dtype=np.float32)
                blob.readinto(spare[:size].reshape(-1).view(np.uint8))
                matrix[n : n + k] = spare[:size][live]
        ids[n : n + k] = np.frombuffer(rowids, dtype="<i8", count=size)[live]
        for name in METADATA:
            data = metadata[name].get(chunk_id)
            if data is None or len(data) < size * _SLOT:
                return None
            packed = np.frombuffer(data, dtype=np.uint8, count=size * _SLOT).reshape(size, _SLOT)
            slots[name][n : n + k] = packed[live]
        n += k
    names: dict[str, list[str]] = {}
    codes: dict[str, npt.NDArray[np.int32]] = {}
    for i, name in enumerate(METADATA):
        decoded = _decode(conn, f"{TABLE}_metadatatext{i:02d}", slots[name][:n], ids[:n])
        if decoded is None:
            return None
        names[name], codes[name] = decoded
    order = None
    if n > 1 and not bool(np.all(ids[1:n] > ids[: n - 1])):
        order = np.argsort(ids[:n], kind="stable")  # re-embedded rows sit out of id order
        matrix[:n] = matrix[:n][order]
        ids[:n] = ids[:n][order]
        codes = {name: column[order] for name, column in codes.items()}
    return Vec0Rows(n, matrix, ids, names, codes)


def _decode(
    conn: Any, text_table: str, slots: npt.NDArray[np.uint8], ids: npt.NDArray[np.int64]
) -> tuple[list[str], npt.NDArray[np.int32]] | None:
    """Names and per-row codes from packed TEXT slots (length + 12-byte prefix)."""
    if len(slots) == 0:
        return [], np.zeros(0, dtype=np.int32)
    # Rows come in runs of one name (chunks are written a source at a time): find the
    # run starts with two 8-byte compares, then sort only the runs' keys.
    halves = np.ascontiguousarray(slots).view(np.uint64)
    changed = np.flatnonzero(np.any(halves[1:] != halves[:-1], axis=1)) + 1
    starts = np.concatenate(([0], changed))
    keys = np.ascontiguousarray(slots[starts]).view(f"V{_SLOT}").ravel()
    unique, run_inverse = np.unique(keys, return_inverse=True)
    inverse = np.repeat(run_inverse.ravel(), np.diff(np.append(starts, len(slots))))
    names: list[str] = []
    index: dict[str, int] = {}
    remap = np.zeros(len(unique), dtype=np.int32)
    long_keys: list[int] = []
    for u, key in enumerate(unique):
        raw = bytes(key)
        length = int.from_bytes(raw[:4], "little", signed=True)
        if length < 0:
            return None
        if length > _PREFIX:
            long_keys.append(u)
            continue
        try:
            name = raw[4 : 4 + length].decode("utf-8")
        except UnicodeDecodeError:
            return None
        remap[u] = index.setdefault(name, len(names))
        if remap[u] == len(names):
            names.append(name)
    codes = remap[inverse.ravel()].astype(np.int32)
    if long_keys:  # values over 12 bytes: the full text is stored by rowid
        texts = dict(conn.execute(f"SELECT rowid, data FROM {text_table}"))
        for row in np.flatnonzero(np.isin(inverse.ravel(), long_keys)):
            text = texts.get(int(ids[row]))
            if not isinstance(text, str):
                return None
            code = index.setdefault(text, len(names))
            if code == len(names):
                names.append(text)
            codes[row] = code
    return names, codes


# -- the compact copy: int8 codes for a cold start under the float32 read floor --------
#
# A cold search must read every vector once; at 1M x 384 the float32 copy alone is
# 1.5 GB. ``chunks_int8`` (a second vec0 table, kept equal to the chunk blobs by
# triggers) holds each vector as int8 codes with a per-vector scale, and the exact
# error of that approximation, packed by vec0 1,024 to a blob: 392 bytes per vector
# instead of 1,536. A cold search scans it, and re-scores exactly every vector the
# error bound cannot rule out (vector_index.cold_top_k), so it returns exactly the
# warm path's results.

COMPACT = "chunks_int8"
#: The SQL function the triggers call (registered on every writing connection).
QUANTIZE = "remembrances_int8"
_TAIL = 8  # after the codes: the scale and the error bound, float32 each
_CODE_MAX = 127.0
#: The widest vector both tables take: vec0 columns hold at most 8192 values.
MAX_DIMENSIONS = 8192 - _TAIL


def quantize_rows(vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.uint8]:
    """Float32 rows as int8 codes, then each row's scale and an upper bound of its error.

    ``v ≈ scale · codes``, and ``‖v − scale · codes‖ ≤ error`` holds exactly (computed
    in float64 and rounded up), so for any query ``q`` the true dot product lies within
    ``‖q‖ · error`` (plus float rounding, see ``vector_index.cold_bound``) of the
    approximate one. A row that is not finite gets an infinite bound: always re-scored.
    The triggers call this once per written vector (through :func:`quantize`), so it
    makes few NumPy calls; the batch path (:func:`fill_compact`) runs the same code.
    """
    rows, dim = vectors.shape
    peak = np.abs(vectors).max(axis=1) if dim else np.zeros(rows, dtype=np.float32)
    finite = np.isfinite(peak)
    with np.errstate(all="ignore"):  # rows that are zero or not finite: fixed below
        scale = peak / np.float32(_CODE_MAX)
        usable = scale > 0  # False for NaN too
        if not usable.all():
            scale[~usable] = 1.0
        codes = np.rint(vectors / scale[:, None])
        np.clip(codes, -_CODE_MAX, _CODE_MAX, out=codes)
        small = codes.astype(np.int8)
        if not finite.all():
            small[~finite] = 0
        residual = vectors.astype(np.float64)
        residual -= small * scale.astype(np.float64)[:, None]
        error = np.sqrt(np.einsum("ij,ij->i", residual, residual))
    bound = error.astype(np.float32)
    low = bound < error
    if low.any():
        bound[low] = np.nextafter(bound[low], np.float32(np.inf))
    if not finite.all():
        bound[~finite] = np.inf
    out = np.empty((rows, dim + _TAIL), dtype=np.uint8)
    out[:, :dim] = small.view(np.uint8)
    out[:, dim : dim + 4] = scale.astype("<f4").view(np.uint8).reshape(rows, 4)
    out[:, dim + 4 :] = bound.astype("<f4").view(np.uint8).reshape(rows, 4)
    return out


def quantize(blob: bytes) -> bytes:
    """One chunk blob as its compact row (the triggers' SQL function)."""
    if len(blob) % 4:
        raise ValueError(f"a float32 vector blob cannot be {len(blob)} bytes long")
    return quantize_rows(np.frombuffer(blob, dtype="<f4").reshape(1, -1)).tobytes()


class Quantizer:
    """The triggers' SQL function, with a memo the writer fills a batch at a time.

    Called row by row from a trigger, :func:`quantize` costs ~20 NumPy calls per
    vector (measured ~200 µs a row under load, the bulk of a write). A writer that
    knows the vectors it is about to write quantizes them in one call
    (:meth:`prepare`); the function then looks each blob up. The memo is keyed by
    the blob's bytes and the output is a function of those bytes alone, so a hit is
    exactly what the function would compute.
    """

    def __init__(self) -> None:
        self.memo: dict[bytes, bytes] = {}

    def __call__(self, blob: bytes) -> bytes:
        found = self.memo.get(blob)
        return found if found is not None else quantize(blob)

    def prepare(self, blobs: Sequence[bytes | None], dim: int) -> None:
        wanted = [b for b in blobs if b is not None and len(b) == dim * 4]
        if not wanted:
            return
        matrix = np.frombuffer(b"".join(wanted), dtype="<f4").reshape(len(wanted), dim)
        for blob, row in zip(wanted, quantize_rows(matrix), strict=True):
            self.memo[blob] = row.tobytes()


def register(conn: Any, quantizer: Quantizer | None = None) -> None:
    """Make the triggers' quantizer available on ``conn`` (a connection that writes)."""
    conn.create_scalar_function(QUANTIZE, quantizer or quantize, 1, deterministic=True)


def compact_script(dim: int) -> str:
    """The int8 table and the triggers that keep it equal to the chunk blobs."""
    return f"""
    CREATE VIRTUAL TABLE IF NOT EXISTS {COMPACT} USING vec0 (
        chunk_id INTEGER PRIMARY KEY,
        codes int8[{int(dim) + _TAIL}]
    );
    CREATE TRIGGER IF NOT EXISTS {COMPACT}_insert AFTER INSERT ON chunks
    WHEN new.embedding IS NOT NULL BEGIN
        INSERT INTO {COMPACT} (chunk_id, codes)
        VALUES (new.id, vec_int8({QUANTIZE}(new.embedding)));
    END;
    CREATE TRIGGER IF NOT EXISTS {COMPACT}_delete AFTER DELETE ON chunks
    WHEN old.embedding IS NOT NULL BEGIN
        DELETE FROM {COMPACT} WHERE chunk_id = old.id;
    END;
    CREATE TRIGGER IF NOT EXISTS {COMPACT}_update AFTER UPDATE OF embedding ON chunks
    WHEN new.embedding IS NOT NULL BEGIN
        DELETE FROM {COMPACT} WHERE chunk_id = old.id;
        INSERT INTO {COMPACT} (chunk_id, codes)
        VALUES (new.id, vec_int8({QUANTIZE}(new.embedding)));
    END;
    CREATE TRIGGER IF NOT EXISTS {COMPACT}_clear AFTER UPDATE OF embedding ON chunks
    WHEN new.embedding IS NULL BEGIN
        DELETE FROM {COMPACT} WHERE chunk_id = old.id;
    END;
    """


#: The compact table's triggers, by name (for ``check``).
COMPACT_TRIGGERS = tuple(f"{COMPACT}_{op}" for op in ("insert", "delete", "update", "clear"))


def fill_compact(conn: Any, dim: int, batch: int = 4096) -> None:
    """(Re)build the compact copy from the chunk blobs (a file from before it existed).

    Quantized in batches here rather than by the triggers' function row by row
    (the same code, so the same bytes); an INSERT ... SELECT would also lose
    ``vec_int8``'s subtype, which vec0 needs to take the value as int8."""
    conn.execute(f"DELETE FROM {COMPACT}")
    rows = conn.execute(
        "SELECT id, embedding FROM chunks WHERE embedding IS NOT NULL AND length(embedding) = ?",
        (int(dim) * 4,),
    )
    while part := list(itertools.islice(rows, batch)):
        ids = [int(r[0]) for r in part]
        matrix = np.frombuffer(b"".join(r[1] for r in part), dtype="<f4").reshape(len(part), dim)
        packed = quantize_rows(matrix)
        conn.executemany(
            f"INSERT INTO {COMPACT} (chunk_id, codes) VALUES (?, vec_int8(?))",
            [(i, packed[j].tobytes()) for j, i in enumerate(ids)],
        )


@dataclass
class CompactBlock:
    """The live vectors of a batch of the compact table's vec0 chunks."""

    ids: npt.NDArray[np.int64]
    codes: npt.NDArray[np.int8]  # (rows, dim), a view into a buffer reused by the next block
    scale: npt.NDArray[np.float32]
    error: npt.NDArray[np.float32]


#: A compact chunk as listed before its blobs are read: id, size, live slots.
CompactChunk = tuple[int, int, npt.NDArray[np.bool_]]


def compact_blocks(conn: Any, dim: int) -> list[CompactChunk] | None:
    """The compact table's vec0 chunks (id, size, live slots), or None when the file
    has no usable compact copy (an older file: the caller loads the float32 vectors
    instead). Its live count must equal that of ``chunks_vec``, which the same
    writes keep equal to the chunk blobs (a cheaper check than counting ``chunks``:
    ~2 ms against ~40 ms at 1M, read cold)."""
    if not hasattr(conn, "blob_open"):
        return None
    try:
        version = conn.execute(
            f"SELECT value FROM {COMPACT}_info WHERE key = 'CREATE_VERSION'"
        ).fetchone()
        reference = conn.execute(f"SELECT size, validity FROM {TABLE}_chunks").fetchall()
    except Exception:  # an older file: no compact table
        return None
    if version is None or not str(version[0]).startswith("v0.1."):
        return None
    listed = conn.execute(
        f"SELECT chunk_id, size, validity FROM {COMPACT}_chunks ORDER BY chunk_id"
    ).fetchall()
    live = _live([(size, validity) for _, size, validity in listed])
    vec_live = _live([(size, validity) for size, validity in reference])
    if live is None or vec_live is None:
        return None
    if sum(int(v.sum()) for v in live) != sum(int(v.sum()) for v in vec_live):
        return None  # the copy disagrees with the vectors: `check --repair` rebuilds it
    return [(int(c[0]), int(c[1]), v) for c, v in zip(listed, live, strict=True)]


def _live(chunks: list[tuple[int, bytes]]) -> list[npt.NDArray[np.bool_]] | None:
    """Each vec0 chunk's live slots, from its validity bitmap (None: sizes that do not
    add up). One unpack for all chunks when their bitmaps have one length (always)."""
    if not chunks:
        return []
    if any(size <= 0 or len(validity) * 8 < size for size, validity in chunks):
        return None
    if len({len(validity) for _, validity in chunks}) == 1:
        packed = np.frombuffer(b"".join(v for _, v in chunks), dtype=np.uint8)
        bits = np.unpackbits(packed.reshape(len(chunks), -1), axis=1, bitorder="little")
        return [bits[i, :size].astype(bool) for i, (size, _) in enumerate(chunks)]
    return [
        np.unpackbits(np.frombuffer(v, dtype=np.uint8), bitorder="little")[:size].astype(bool)
        for size, v in chunks
    ]


def iter_compact(
    conn: Any, dim: int, chunks: list[CompactChunk], *, batch: int = 64
) -> Iterator[CompactBlock]:
    """The live vectors, ``batch`` vec0 chunks at a time, in order: one blob read per
    chunk for the codes and one for the rowids, into a buffer reused from batch to
    batch (a block's arrays stay valid until the next one is asked for).

    Batches of 64 chunks (64k vectors, 25 MB) let the caller split the scoring over
    threads with a few hand-overs per search: a reader thread overlapping the reads
    with per-chunk scoring was measured slower on this 2-core machine under load
    (0.8-1.4 s against ~0.7 s at 1M): every hand-over waited for a core."""
    width = dim + _TAIL
    chunks = [c for c in chunks if c[2].any()]
    if not chunks:
        return
    per_batch = batch * max(size for _, size, _ in chunks)
    staged = np.empty((per_batch, width), dtype=np.uint8)
    rowids = np.empty(per_batch, dtype="<i8")
    vectors = ids = None
    try:
        for first in range(0, len(chunks), batch):
            part = chunks[first : first + batch]
            n = 0
            for chunk_id, size, _ in part:
                if vectors is None or ids is None:
                    vectors = conn.blob_open(
                        "main", f"{COMPACT}_vector_chunks00", "vectors", chunk_id, False
                    )
                    ids = conn.blob_open("main", f"{COMPACT}_chunks", "rowids", chunk_id, False)
                else:
                    vectors.reopen(chunk_id)
                    ids.reopen(chunk_id)
                if vectors.length() != size * width or ids.length() < size * 8:
                    raise ValueError(f"{COMPACT} chunk {chunk_id} has an unexpected size")
                vectors.readinto(staged[n : n + size].reshape(-1))
                ids.readinto(rowids[n : n + size].view(np.uint8))
                n += size
            live = np.concatenate([c[2] for c in part])
            if live.all():
                rows, block_ids = staged[:n], rowids[:n].copy()
            else:
                rows, block_ids = staged[:n][live], rowids[:n][live]
            tail = np.ascontiguousarray(rows[:, dim:]).view("<f4")
            yield CompactBlock(block_ids, rows[:, :dim].view(np.int8), tail[:, 0], tail[:, 1])
    finally:
        for blob in (vectors, ids):
            if blob is not None:
                blob.close()
