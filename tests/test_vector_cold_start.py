"""Cold start: the index read from vec0's packed tables equals the one read row by row.

A fresh process loads the in-memory index from vec0's storage (a few large blob
reads) when it can, and from the chunk rows otherwise. Both must give the same
rows, names, times and search results, including after deletes (holes in vec0's
chunks), re-embedded rows (out of id order), long and non-ASCII collection names
(stored outside vec0's 12-byte prefix) and chunks still waiting for a vector.
"""

from __future__ import annotations

from pathlib import Path

import apsw
import numpy as np
import pytest

from remembrances import Store
from remembrances.embeddings import HashEmbedder
from remembrances.embeddings.base import to_blob
from remembrances.records import Chunk
from remembrances.storage import vec0_storage
from remembrances.storage.vector_index import VectorIndex

DIM = 32
LONG = "a-collection-name-well-over-twelve-bytes"
UNICODE = "café-ñandú-数据"  # over 12 bytes in UTF-8, and not ASCII


def build(path: Path) -> None:
    """A file with every shape the loader has to handle."""
    with Store(path, embedder=HashEmbedder(DIM)) as store:
        for i in range(30):  # 30 sources x 50 chunks: vec0 spans two 1,024-slot chunks
            collection = ("default", LONG, UNICODE, "short")[i % 4]
            kind = ("kb", "code", "event")[i % 3]
            chunks = [
                Chunk(f"source {i} chunk {j} words{j % 7}", ts=None if kind != "event" else 1e9 + j)
                for j in range(50)
            ]
            store.put_source(kind, f"s{i}", chunks, collection=collection)
        store.put_source("kb", "pending", [Chunk("no vector yet")], embed=False)
        store.delete_source("kb", "s3")  # holes in vec0's first chunk
        store.delete_source("code", "s10")
        with store.transaction() as conn:  # re-embedded rows move to vec0's end
            rng = np.random.default_rng(1)
            for chunk_id in (5, 77, 140):
                vector = rng.standard_normal(DIM).astype(np.float32)
                vector /= np.linalg.norm(vector)
                conn.execute(
                    "UPDATE chunks SET embedding = ? WHERE id = ?", (to_blob(vector), chunk_id)
                )


def both_ways(path: Path) -> tuple[VectorIndex, VectorIndex]:
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        conn.execute("BEGIN")
        packed = vec0_storage.read(conn, DIM, growth=1.125)
        assert packed is not None, "the vec0 tables were not read"
        fast = VectorIndex(DIM)
        fast._load_all(conn, 0)
        slow = VectorIndex(DIM)
        slow._load_rows(conn)
        conn.execute("COMMIT")
    finally:
        conn.close()
    return fast, slow


def names(index: VectorIndex, column: str) -> list[str]:
    by_code = {code: name for name, code in index.codes.items()}
    return [by_code[int(c)] for c in getattr(index, column)[: index.n]]


def test_packed_load_equals_row_by_row_load(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    build(path)
    fast, slow = both_ways(path)
    n = slow.n
    assert fast.n == n == 30 * 50 - 2 * 50
    assert np.array_equal(fast.ids[:n], slow.ids[:n])
    assert np.all(np.diff(fast.ids[:n]) > 0)  # re-embedded rows put back in id order
    assert np.array_equal(fast.matrix[:n], slow.matrix[:n])
    assert names(fast, "kinds") == names(slow, "kinds")
    assert names(fast, "collections") == names(slow, "collections")
    assert {LONG, UNICODE} <= set(names(fast, "collections"))
    assert np.array_equal(fast.ts[:n], slow.ts[:n], equal_nan=True)
    assert np.isfinite(fast.ts[:n]).sum() == 10 * 50
    assert np.array_equal(fast.alive[:n], slow.alive[:n])
    rng = np.random.default_rng(3)
    for query in rng.standard_normal((5, DIM)).astype(np.float32):
        query /= np.linalg.norm(query)
        for mask_of in (
            lambda ix: None,
            lambda ix: ix.mask(collections=[LONG]),
            lambda ix: ix.mask(kinds=["event"], since=1e9 + 10),
        ):
            got = fast.top_k(query, 10, mask=mask_of(fast))
            want = slow.top_k(query, 10, mask=mask_of(slow))
            assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])


def test_cold_first_search_equals_warm(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    build(path)
    queries = ["source 4 chunk 3", "words5", "chunk 12 source 27"]
    rows_path = tmp_path / "rows.db"  # the same file, with vec0 tables it cannot read
    rows_path.write_bytes(path.read_bytes())
    conn = apsw.Connection(str(rows_path))
    conn.execute("UPDATE chunks_vec_info SET value = 'v9.0.0' WHERE key = 'CREATE_VERSION'")
    conn.close()
    with Store(rows_path, embedder=HashEmbedder(DIM)) as from_rows:
        want = [from_rows.search(q, mode="vector", limit=10) for q in queries]
        assert from_rows._index is not None and from_rows._index.loaded_from == "rows"
    with Store(path, embedder=HashEmbedder(DIM)) as cold:
        first = [cold.search(q, mode="vector", limit=10) for q in queries]
        assert cold._index is not None and cold._index.loaded_from == "vec0"
        again = [cold.search(q, mode="vector", limit=10) for q in queries]
        with cold.transaction() as conn:  # after a write the index catches up from the log
            conn.execute("DELETE FROM chunks WHERE id = ?", (first[0][0].id,))
        after = cold.search(queries[0], mode="vector", limit=10)
    assert [[(h.id, h.score) for h in r] for r in first] == [
        [(h.id, h.score) for h in r] for r in again
    ]
    assert first[0][0].id not in [h.id for h in after] and len(after) == 10
    assert [[(h.id, h.score) for h in r] for r in first] == [
        [(h.id, h.score) for h in r] for r in want
    ]


@pytest.mark.parametrize(
    "damage",
    [
        "UPDATE chunks_vec_info SET value = 'v9.0.0' WHERE key = 'CREATE_VERSION'",
        "DELETE FROM chunks_vec_chunks WHERE chunk_id = 1",
        "UPDATE chunks_vec_vector_chunks00 SET vectors = zeroblob(16) WHERE rowid = 1",
        "UPDATE chunks_vec_metadatachunks01 SET data = zeroblob(16) WHERE rowid = 1",
    ],
)
def test_an_unexpected_vec0_layout_falls_back_to_the_rows(tmp_path: Path, damage: str) -> None:
    path = tmp_path / "m.db"
    build(path)
    with Store(path, embedder=HashEmbedder(DIM)) as store:
        want = [(h.id, h.score) for h in store.search("source 4 chunk 3", mode="vector", limit=10)]
    conn = apsw.Connection(str(path))
    conn.execute(damage)  # what another sqlite-vec version, or a bad edit, could leave
    conn.close()
    check = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    check.execute("BEGIN")
    assert vec0_storage.read(check, DIM) is None
    check.close()
    with Store(path, embedder=HashEmbedder(DIM)) as store:
        got = [(h.id, h.score) for h in store.search("source 4 chunk 3", mode="vector", limit=10)]
    assert got == want
