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


def read(conn: Any, dim: int, *, growth: float = 1.0) -> Vec0Rows | None:
    """The vectors of a file's vec0 table, or None when its layout is not the expected one."""
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
