"""Cold start: the first search of a process, and the index loaded after it.

The first vector search of a process is answered from the compact int8 copy
(``chunks_int8``: scanned, then re-scored exactly within the error bound), while
the in-memory index loads in the background from vec0's storage (a few large blob
reads) when it can, and from the chunk rows otherwise. All of them must give the
same results as the warm index, including after deletes (holes in vec0's chunks),
re-embedded rows (out of id order), long and non-ASCII collection names (stored
outside vec0's 12-byte prefix), chunks still waiting for a vector, duplicate
vectors (ties), filters, and a ``limit`` larger than the store.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import apsw
import numpy as np
import pytest
import sqlite_vec

from remembrances import Store, integrity
from remembrances.embeddings import HashEmbedder
from remembrances.embeddings.base import to_blob
from remembrances.records import Chunk
from remembrances.reembed import reembed
from remembrances.storage import vec0_storage, vector_index
from remembrances.storage.vector_index import VectorIndex, cold_bound

from .table_embedder import TableEmbedder

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
        assert from_rows.vector_index().loaded_from == "rows"
    with Store(path, embedder=HashEmbedder(DIM)) as cold:
        first = [cold.search(q, mode="vector", limit=10) for q in queries]
        assert cold.engine.cold_searches >= 1  # type: ignore[attr-defined]
        assert cold.vector_index().loaded_from == "vec0"
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


# -- the first search, from the compact int8 copy -----------------------------------

TDIM = 48


def vectors(shape: str, n: int, rng: np.random.Generator) -> np.ndarray:
    if shape == "random":
        return rng.standard_normal((n, TDIM)).astype(np.float32)
    # Clustered like real embeddings: tight clusters, many near-equal scores, and
    # one row in ten an exact copy of another (the same text twice): ties.
    centres = rng.standard_normal((12, TDIM))
    docs = centres[rng.integers(0, 12, n)] + 0.04 * rng.standard_normal((n, TDIM))
    copies = rng.choice(n, n // 10, replace=False)
    docs[copies] = docs[rng.choice(n, n // 10)]
    return docs.astype(np.float32)


def queries_for(docs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Random directions, cluster members (near-ties) and exact copies of rows."""
    picked = docs[rng.choice(len(docs), 4, replace=False)]
    nudged = picked + 0.01 * rng.standard_normal(picked.shape)
    return np.concatenate([rng.standard_normal((2, TDIM)), picked, nudged]).astype(np.float32)


def write_table_store(path: Path, docs: np.ndarray, queries: np.ndarray) -> TableEmbedder:
    """50 chunks per source; kinds, collections, times and metadata vary by source.
    Then holes (deleted sources) and re-embedded rows (vec0 order != id order)."""
    embedder = TableEmbedder(docs, queries)
    with Store(path, embedder=embedder) as store:
        for s in range(len(docs) // 50):
            chunks = [
                Chunk(f"v{i} text {i}", ts=float(i), metadata={"g": i % 3})
                for i in range(s * 50, (s + 1) * 50)
            ]
            store.put_source(
                ("kb", "event")[s % 2], f"s{s}", chunks, collection=("a", "b", "c")[s % 3]
            )
        store.delete_source("kb", "s2")
        store.delete_source("event", "s7")
        with store.transaction() as conn:
            for chunk_id in (11, 300, 700):
                conn.execute(
                    "UPDATE chunks SET embedding = (SELECT embedding FROM chunks WHERE id = ?) "
                    "WHERE id = ?",
                    (chunk_id + 1, chunk_id),
                )
    return embedder


FILTERS: list[dict[str, Any]] = [
    {},
    {"kind": "event"},
    {"collection": ["a", "c"]},
    {"since": 200.0, "until": 900.0},
    {"source": ["s1", "s4", "s9"]},
    {"where": {"g": 1}},
    {"kind": "kb", "collection": "b", "since": 400.0},
    {"source": "no-such-source"},
]


def hits(store: Store, query: str, limit: int, **where: Any) -> list[tuple[int, float]]:
    return [(h.id, h.score) for h in store.search(query, mode="vector", limit=limit, **where)]


@pytest.mark.parametrize("shape", ["random", "clustered"])
def test_the_cold_search_returns_exactly_the_warm_results(tmp_path: Path, shape: str) -> None:
    rng = np.random.default_rng(7)
    docs = vectors(shape, 900, rng)
    queries = queries_for(docs, rng)
    path = tmp_path / "m.db"
    embedder = write_table_store(path, docs, queries)
    cases = [(q, limit, f) for q in range(len(queries)) for limit in (1, 10, 60) for f in FILTERS]
    cases += [(0, 1000, {}), (3, 1000, {"kind": "event"})]  # more than the store holds
    with Store(path, embedder=embedder) as warm:
        warm.vector_index()
        want = [hits(warm, f"q{q}", limit, **f) for q, limit, f in cases]
    for (q, limit, where), expected in zip(cases, want, strict=True):
        with Store(path, embedder=embedder) as cold:
            got = hits(cold, f"q{q}", limit, **where)
            # A source that holds nothing is answered before any vector leg.
            legs = 0 if where.get("source") == "no-such-source" else 1
            assert cold.engine.cold_searches == legs  # type: ignore[attr-defined]
        assert got == expected, (q, limit, where)
    assert any(len(w) == 800 for w in want)  # limit over the store: every live vector


def test_ties_are_ordered_by_chunk_id_on_both_paths(tmp_path: Path) -> None:
    rng = np.random.default_rng(11)
    base = rng.standard_normal((5, TDIM)).astype(np.float32)
    docs = np.concatenate([base[rng.integers(0, 5, 200)], rng.standard_normal((50, TDIM))])
    docs = docs.astype(np.float32)
    queries = base[:2].copy()
    path = tmp_path / "m.db"
    embedder = write_table_store(path, docs, queries)
    with Store(path, embedder=embedder) as store:
        cold = hits(store, "q0", 7)
        store.vector_index()
        warm = hits(store, "q0", 7)
    assert cold == warm
    assert len({score for _, score in cold}) == 1  # all tied: the 7 lowest ids win
    assert [i for i, _ in cold] == sorted(i for i, _ in cold)


def test_a_fresh_process_returns_the_warm_results(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    docs = vectors("clustered", 1000, rng)
    queries = queries_for(docs, rng)
    np.save(tmp_path / "docs.npy", docs)
    np.save(tmp_path / "queries.npy", queries)
    path = tmp_path / "m.db"
    embedder = write_table_store(path, docs, queries)
    script = textwrap.dedent(
        f"""
        import json, sys
        import numpy as np
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from table_embedder import TableEmbedder
        from remembrances import Store
        e = TableEmbedder(np.load({str(tmp_path / "docs.npy")!r}),
                          np.load({str(tmp_path / "queries.npy")!r}))
        with Store({str(path)!r}, embedder=e, read_only=True) as s:
            first = [(h.id, h.score) for h in s.search("q2", mode="vector", limit=10)]
            print(json.dumps({{"first": first, "cold": s.engine.cold_searches}}))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    child = json.loads(out.stdout.strip().splitlines()[-1])
    with Store(path, embedder=embedder) as warm:
        warm.vector_index()
        want = hits(warm, "q2", 10)
    assert child["cold"] == 1
    assert [(i, s) for i, s in child["first"]] == want


def raw(path: Path, *, write: bool = False) -> apsw.Connection:
    """A plain connection with sqlite-vec loaded (no remembrances code)."""
    flags = apsw.SQLITE_OPEN_READWRITE if write else apsw.SQLITE_OPEN_READONLY
    conn = apsw.Connection(str(path), flags=flags)
    conn.enable_load_extension(True)
    conn.load_extension(sqlite_vec.loadable_path())
    return conn


def compact_rows(path: Path) -> dict[int, bytes]:
    conn = raw(path)
    try:
        return {
            int(i): bytes(b) for i, b in conn.execute("SELECT chunk_id, codes FROM chunks_int8")
        }
    finally:
        conn.close()


def expected_rows(path: Path) -> dict[int, bytes]:
    """The compact copy the chunk blobs call for, computed here from the blobs."""
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        rows = conn.execute("SELECT id, embedding FROM chunks WHERE embedding IS NOT NULL")
        return {int(i): vec0_storage.quantize(b) for i, b in rows}
    finally:
        conn.close()


def test_the_compact_copy_follows_every_write(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    build(path)  # puts, deletes, re-embedded rows, a chunk without a vector
    assert compact_rows(path) == expected_rows(path)
    with Store(path, embedder=HashEmbedder(DIM)) as store:
        store.put_source("kb", "s5", [Chunk("replaced text")])  # replace a source
        with store.transaction() as conn:
            conn.execute("UPDATE chunks SET embedding = NULL WHERE id = 60")  # loses its vector
        store.backfill_embeddings()
        pending = store.stats()["pending_embeddings"]
        with pytest.raises(RuntimeError), store.transaction() as conn:
            conn.execute("DELETE FROM chunks WHERE id < 100")  # rolled back with the rest
            raise RuntimeError("abort")
        assert integrity.check(store).problems == []
    assert pending == 0
    assert compact_rows(path) == expected_rows(path)
    assert min(compact_rows(path)) < 100
    reembed(path, HashEmbedder(16))  # another model: every vector, another dimension
    rows = compact_rows(path)
    assert rows == expected_rows(path) and len(next(iter(rows.values()))) == 16 + 8
    with Store(path, embedder=HashEmbedder(16)) as store:
        first = hits(store, "source 4 chunk 3", 10)
        assert store.engine.cold_searches == 1  # type: ignore[attr-defined]
        store.vector_index()
        assert hits(store, "source 4 chunk 3", 10) == first


def test_the_error_bound_holds(tmp_path: Path) -> None:
    rng = np.random.default_rng(2)
    docs = np.concatenate(
        [
            rng.standard_normal((500, TDIM)),
            rng.standard_normal((5, TDIM)) * 1e-30,  # tiny values
            np.eye(TDIM)[:5] * 3.0,  # one large coordinate
        ]
    ).astype(np.float32)
    packed = vec0_storage.quantize_rows(docs)
    codes = packed[:, :TDIM].view(np.int8).astype(np.float64)
    tail = np.ascontiguousarray(packed[:, TDIM:]).view("<f4")
    approx = codes * tail[:, :1].astype(np.float64)
    error = np.linalg.norm(docs.astype(np.float64) - approx, axis=1)
    assert np.all(error <= tail[:, 1])
    for query in rng.standard_normal((20, TDIM)).astype(np.float32):
        exact = docs @ query
        bound = cold_bound(TDIM, tail[:, 0].copy(), tail[:, 1].copy(), float(np.linalg.norm(query)))
        assert np.all(np.abs(exact - approx @ query.astype(np.float64)) <= bound)
    nan = vec0_storage.quantize(np.full(TDIM, np.nan, dtype=np.float32).tobytes())
    assert np.frombuffer(nan[TDIM:], dtype="<f4")[1] == np.inf


def drop_compact_copy(path: Path) -> None:
    """What a file written before the compact copy existed looks like."""
    conn = raw(path, write=True)
    for trigger in vec0_storage.COMPACT_TRIGGERS:
        conn.execute(f"DROP TRIGGER {trigger}")
    conn.execute("DROP TABLE chunks_int8")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_an_older_file_searches_without_writing_then_gets_its_copy(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    build(path)
    with Store(path, embedder=HashEmbedder(DIM)) as store:
        store.vector_index()
        want = hits(store, "words3", 10)
    drop_compact_copy(path)
    before = digest(path)
    with Store(path, embedder=HashEmbedder(DIM), read_only=True) as old:
        assert hits(old, "words3", 10) == want
        assert old.engine.cold_searches == 0  # type: ignore[attr-defined]
        assert old.vector_index().loaded_from == "vec0"
    assert digest(path) == before
    assert "chunks_int8" not in {
        r[0] for r in apsw.Connection(str(path)).execute("SELECT name FROM sqlite_master")
    }
    with Store(path, embedder=HashEmbedder(DIM)) as store:  # a writable open builds it
        assert integrity.check(store).problems == []
    assert compact_rows(path) == expected_rows(path)
    with Store(path, embedder=HashEmbedder(DIM)) as store:
        assert hits(store, "words3", 10) == want
        assert store.engine.cold_searches == 1  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("damage", "counted"),
    [
        ("DELETE FROM chunks_int8 WHERE chunk_id = 8", True),
        ("DROP TABLE chunks_int8", True),
        # A row edited by hand: the count still agrees, so only `check` can tell.
        (
            "UPDATE chunks_int8_vector_chunks00 SET vectors = zeroblob(length(vectors)) "
            "WHERE rowid = 1",
            False,
        ),
    ],
)
def test_check_finds_and_repairs_the_compact_copy(
    tmp_path: Path, damage: str, counted: bool
) -> None:
    path = tmp_path / "m.db"
    build(path)
    with Store(path, embedder=HashEmbedder(DIM)) as store:
        store.vector_index()
        want = hits(store, "words3", 10)
    conn = raw(path, write=True)
    conn.execute(damage)
    conn.close()
    if counted:  # a copy whose count disagrees is not used
        with Store(path, embedder=HashEmbedder(DIM), read_only=True) as store:
            assert hits(store, "words3", 10) == want
            assert store.engine.cold_searches == 0  # type: ignore[attr-defined]
    with Store(path) as store:  # no embedder: opening does not rebuild anything
        problems = integrity.check(store).problems
        assert any("compact vector copy" in p for p in problems), problems
        integrity.check(store, repair=True)
        assert integrity.check(store).problems == []
    assert compact_rows(path) == expected_rows(path)
    with Store(path, embedder=HashEmbedder(DIM)) as store:
        assert hits(store, "words3", 10) == want
        assert store.engine.cold_searches == 1  # type: ignore[attr-defined]


def test_closing_while_the_index_loads_stops_the_load(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    build(path)
    store = Store(path, embedder=HashEmbedder(DIM))
    hits(store, "words3", 10)
    loader = store.engine._loader  # type: ignore[attr-defined]
    store.close()
    assert loader is None or not loader.is_alive()


def test_batches_and_threads_do_not_change_the_scan(tmp_path: Path) -> None:
    """The scan reads vec0 chunks in batches and splits large batches over threads;
    neither may change what it yields or computes."""
    path = tmp_path / "m.db"
    build(path)  # two vec0 chunks, with holes
    conn = raw(path)
    try:
        conn.execute("BEGIN")
        chunks = vec0_storage.compact_blocks(conn, DIM)
        assert chunks is not None and len(chunks) == 2

        def scan(batch: int) -> list[np.ndarray]:
            blocks = [
                (b.ids.copy(), b.codes.copy(), b.scale.copy(), b.error.copy())
                for b in vec0_storage.iter_compact(conn, DIM, chunks, batch=batch)
            ]
            return [np.concatenate(column) for column in zip(*blocks, strict=True)]

        one, many = scan(1), scan(64)
        conn.execute("COMMIT")
    finally:
        conn.close()
    assert all(np.array_equal(a, b) for a, b in zip(one, many, strict=True))
    assert sorted(one[0].tolist()) == sorted(expected_rows(path))
    rng = np.random.default_rng(4)
    codes = rng.integers(-127, 128, (3 * vector_index._ROWS_PER_THREAD + 5, 40), dtype=np.int8)
    query = rng.standard_normal(40).astype(np.float32)
    out = np.empty(len(codes), dtype=np.float32)
    vector_index._approximate(codes, query, out)
    want = np.empty(len(codes), dtype=np.float32)
    vector_index._dot_rows(codes.astype(np.float32), query, want)
    assert np.array_equal(out, want)


def test_the_batch_quantizer_writes_the_same_bytes_as_the_trigger_function() -> None:
    """Writes quantize a batch at a time; `check` and the triggers quantize one vector
    at a time: both must give the same bytes, or `check` would report a sound file."""
    rng = np.random.default_rng(9)
    rows = rng.standard_normal((300, 384)).astype(np.float32)
    rows[:100] /= np.linalg.norm(rows[:100], axis=1, keepdims=True)
    rows[100] = 0.0
    rows[101, 5] = np.nan
    rows[102, 7] = np.inf
    rows[103] *= 1e-38
    rows[104] *= 1e30
    batch = vec0_storage.quantize_rows(rows)
    assert [vec0_storage.quantize(r.tobytes()) for r in rows] == [b.tobytes() for b in batch]
    quantizer = vec0_storage.Quantizer()
    quantizer.prepare([r.tobytes() for r in rows[:50]] + [None, b"\0" * 12], 384)
    assert len(quantizer.memo) == 50
    assert all(quantizer(r.tobytes()) == b.tobytes() for r, b in zip(rows, batch, strict=True))
