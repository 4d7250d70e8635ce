"""The in-memory vector engine against NumPy brute force, through the public Store API.

Vectors are chosen by the test (an embedder that looks texts up in a table), so
the expected top-k is computed independently from the same numbers.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from remembrances import Store
from remembrances.embeddings import HashEmbedder
from remembrances.records import Chunk
from remembrances.storage import vector_index
from remembrances.storage.vector_index import MIN_CANDIDATES

from .table_embedder import TableEmbedder

DIM = 48


def unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def embedding_like(rng: np.random.Generator, count: int, latent: int = 8) -> np.ndarray:
    """Points near a low-dimensional subspace, as text embeddings are (uniformly
    random points are the worst case for sign bits)."""
    basis = rng.standard_normal((latent, DIM))
    spread = 0.1 * np.sqrt(latent) * rng.standard_normal((count, DIM))
    return unit(rng.standard_normal((count, latent)) @ basis + spread)


@pytest.fixture
def table() -> TableEmbedder:
    rng = np.random.default_rng(7)
    docs = embedding_like(rng, 6000)
    queries = unit(docs[rng.integers(0, 6000, 40)] + 0.1 * rng.standard_normal((40, DIM)))
    return TableEmbedder(docs, queries)


@pytest.fixture
def vstore(db_path: Path, table: TableEmbedder) -> Iterator[Store]:
    s = Store(db_path, embedder=table)
    yield s
    s.close()


def fill(store: Store, doc_ids: range, *, per_source: int = 100, kind: str = "kb") -> None:
    """Sources of ``per_source`` chunks; chunk ``i`` has ts ``i`` and metadata parity."""
    ids = list(doc_ids)
    for start in range(0, len(ids), per_source):
        part = ids[start : start + per_source]
        store.put_source(
            kind,
            f"s{part[0]}",
            [Chunk(f"v{i}", metadata={"even": i % 2 == 0}, ts=float(i)) for i in part],
            collection="odd" if (part[0] // per_source) % 2 else "main",
        )


def brute_force(
    table: TableEmbedder, live: Sequence[int], query: int, k: int
) -> tuple[list[int], np.ndarray]:
    """Doc numbers and cosines of the true top ``k`` among ``live`` docs."""
    live_arr = np.asarray(live)
    scores = table.docs[live_arr] @ table.queries[query]
    order = np.argsort(-scores, kind="stable")[:k]
    return [int(live_arr[o]) for o in order], scores[order]


def doc_number(store: Store, chunk_id: int) -> int:
    return int(store.get(chunk_id).text[1:])


def search_docs(store: Store, query: int, k: int = 10, **kw: object) -> list[tuple[int, float]]:
    results = store.search(f"q{query}", mode="vector", limit=k, **kw)  # type: ignore[arg-type]
    return [(int(r.text[1:]), r.score) for r in results]


def assert_exact(store: Store, table: TableEmbedder, live: Sequence[int], k: int = 10) -> None:
    for q in range(len(table.queries)):
        expected, cosines = brute_force(table, live, q, k)
        got = search_docs(store, q, k)
        assert [d for d, _ in got] == expected
        np.testing.assert_allclose([s for _, s in got], np.clip(cosines, 0, 1), rtol=0, atol=1e-5)


def test_exact_search_equals_brute_force(vstore: Store, table: TableEmbedder) -> None:
    fill(vstore, range(3000))
    assert_exact(vstore, table, range(3000))
    assert_exact(vstore, table, range(3000), k=137)


def test_exact_with_the_scan_split_across_threads(
    vstore: Store, table: TableEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vector_index, "_ROWS_PER_THREAD", 97)
    monkeypatch.setattr(vector_index, "SCAN_THREADS", 3)
    fill(vstore, range(1000))
    assert_exact(vstore, table, range(1000))
    vstore.delete_source("kb", "s100")
    live = [i for i in range(1000) if not 100 <= i < 200]
    assert_exact(vstore, table, live)
    # The approximate mode's Hamming pass, in blocks.
    monkeypatch.setattr(vector_index, "_HAMMING_BLOCK", 41)
    hits = 0
    for q in range(len(table.queries)):
        got = [d for d, _ in search_docs(vstore, q, exact=False)]
        assert len(got) == 10 and not set(got) & set(range(100, 200))
        hits += len(set(got) & set(brute_force(table, live, q, 10)[0]))
    assert hits / (10 * len(table.queries)) >= 0.9


def test_exact_after_deletes_updates_growth_and_compaction(
    vstore: Store, table: TableEmbedder
) -> None:
    fill(vstore, range(2000))
    assert_exact(vstore, table, range(2000))  # loads the index
    live = set(range(2000))
    # Growth past the loaded capacity, applied from vector_log.
    fill(vstore, range(2000, 4000))
    live |= set(range(2000, 4000))
    assert_exact(vstore, table, sorted(live))
    # Deletes of over a quarter of the rows trigger compaction.
    for start in range(0, 1400, 100):
        vstore.delete_source("kb", f"s{start}")
        live -= set(range(start, start + 100))
    assert_exact(vstore, table, sorted(live))
    # A source replaced by other vectors, and a vector updated in place.
    vstore.put_source("kb", "s2000", [Chunk(f"v{i}") for i in range(4000, 4050)], collection="main")
    live -= set(range(2000, 2100))
    live |= set(range(4000, 4050))
    with vstore.transaction() as conn:
        chunk_id = conn.execute("SELECT id FROM chunks WHERE text = 'v2500'").fetchone()[0]
        conn.execute(
            "UPDATE chunks SET embedding = ?, text = 'v4999' WHERE id = ?",
            (table.docs[4999].astype("<f4").tobytes(), chunk_id),
        )
    live = (live - {2500}) | {4999}
    assert_exact(vstore, table, sorted(live))
    # A fresh process-level view (new Store, lazy load) agrees.
    reopened = Store(vstore.path, embedder=table)
    try:
        assert_exact(reopened, table, sorted(live))
    finally:
        reopened.close()


@pytest.mark.parametrize("exact", [True, False])
def test_filters_return_k_when_k_match(vstore: Store, table: TableEmbedder, exact: bool) -> None:
    fill(vstore, range(3000))
    fill(vstore, range(3000, 3012), kind="events")
    # Few matches: every one of them comes back, best first.
    for kw, matching in (
        ({"kind": "events"}, range(3000, 3012)),
        ({"since": 100.0, "until": 106.0}, range(100, 107)),
        ({"source": "s200"}, range(200, 300)),
        ({"where": {"even": True}, "kind": "events"}, range(3000, 3012, 2)),
    ):
        for q in range(0, 40, 8):
            got = search_docs(vstore, q, 10, exact=exact, **kw)
            expected, _ = brute_force(table, list(matching), q, 10)
            assert [d for d, _ in got] == expected, kw
    # Broad filters: exactly k, all matching, and (exact mode) the true top k.
    for kw, matching in (
        ({"collection": "odd"}, [i for i in range(3000) if (i // 100) % 2]),
        ({"where": {"even": False}}, list(range(1, 3012, 2))),
        ({"since": 500.0}, list(range(500, 3012))),
    ):
        for q in range(0, 40, 8):
            got = search_docs(vstore, q, 10, exact=exact, **kw)
            assert len(got) == 10
            assert {d for d, _ in got} <= set(matching)
            if exact:
                assert [d for d, _ in got] == brute_force(table, matching, q, 10)[0]


@pytest.mark.parametrize("min_run", [1, 50, 10**9])
def test_filtered_rows_score_the_same_in_runs_gathered_or_scanned(
    vstore: Store, table: TableEmbedder, monkeypatch: pytest.MonkeyPatch, min_run: int
) -> None:
    # min_run 1: every filter is scored run by run in place; 50: runs of 100
    # (collections alternate per source) are; 10**9: never, so gather or full scan.
    monkeypatch.setattr(vector_index, "_MIN_RUN", min_run)
    monkeypatch.setattr(vector_index, "_ROWS_PER_THREAD", 97)  # long runs split over threads
    monkeypatch.setattr(vector_index, "SCAN_THREADS", 3)
    fill(vstore, range(3000))
    vstore.delete_source("kb", "s300")  # a hole inside a run
    for kw, matching in (
        ({"collection": "odd"}, [i for i in range(3000) if (i // 100) % 2 and i // 100 != 3]),
        ({"collection": "main"}, [i for i in range(3000) if not (i // 100) % 2]),
        ({"since": 250.0, "until": 2600.0}, [i for i in range(250, 2601) if i // 100 != 3]),
        ({"source": ["s0", "s0", "s2900"]}, list(range(100)) + list(range(2900, 3000))),
    ):
        for q in range(0, 40, 5):
            got = search_docs(vstore, q, 25, **kw)
            expected, cosines = brute_force(table, matching, q, 25)
            assert [d for d, _ in got] == expected, kw
            np.testing.assert_allclose(
                [s for _, s in got], np.clip(cosines, 0, 1), rtol=0, atol=1e-5
            )


def test_approximate_recall_and_exact_scores(vstore: Store, table: TableEmbedder) -> None:
    fill(vstore, range(6000))
    hits = 0
    for q in range(len(table.queries)):
        expected, _ = brute_force(table, range(6000), q, 10)
        got = search_docs(vstore, q, 10, exact=False)
        hits += len({d for d, _ in got} & set(expected))
        # Candidates are re-scored from the float32 rows: scores are exact cosines.
        for d, score in got:
            cosine = float(table.docs[d] @ table.queries[q])
            assert score == pytest.approx(max(cosine, 0.0), abs=1e-5)
        assert [s for _, s in got] == sorted((s for _, s in got), reverse=True)
    assert hits / (10 * len(table.queries)) >= 0.9


def test_approximate_on_small_sets_is_exact(vstore: Store, table: TableEmbedder) -> None:
    fill(vstore, range(MIN_CANDIDATES - 50))
    for q in range(10):
        assert search_docs(vstore, q, exact=False) == search_docs(vstore, q)


def test_approximate_stays_current_after_writes(vstore: Store, table: TableEmbedder) -> None:
    fill(vstore, range(1500))
    search_docs(vstore, 0, exact=False)  # builds the sign bits
    fill(vstore, range(1500, 4000))  # more than doubles: bits re-centred
    vstore.delete_source("kb", "s0")
    for q in range(10):
        expected, _ = brute_force(table, range(100, 4000), q, 10)
        got = [d for d, _ in search_docs(vstore, q, exact=False)]
        assert 0 not in got
        assert len(set(got) & set(expected)) >= 7


def test_search_sees_writes_of_another_process(db_path: Path) -> None:
    store = Store(db_path, embedder=HashEmbedder(64))
    try:
        store.put_source("kb", "a", [Chunk("apples and pears"), Chunk("the old river bank")])
        before = store.search("zebra quokka wombat", mode="vector", limit=5)
        assert all("zebra" not in r.text for r in before)  # index loaded, no zebra yet
        script = textwrap.dedent(
            f"""
            from remembrances import Store
            from remembrances.embeddings import HashEmbedder
            from remembrances.records import Chunk
            s = Store({str(db_path)!r}, embedder=HashEmbedder(64))
            s.put_source("kb", "b", [Chunk("zebra quokka wombat")])
            s.delete_source("kb", "a")
            s.close()
            """
        )
        subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
        for exact in (True, False):
            after = store.search("zebra quokka wombat", mode="vector", limit=5, exact=exact)
            assert [r.text for r in after] == ["zebra quokka wombat"]
        hybrid = store.search("apples", limit=5)
        assert all(r.source != "a" for r in hybrid)
    finally:
        store.close()


def test_vec0_engine_agrees_with_memory(vstore: Store, table: TableEmbedder) -> None:
    fill(vstore, range(1000))
    for q in range(0, 40, 4):
        memory = search_docs(vstore, q)
        vec0 = search_docs(vstore, q, engine="vec0")
        assert [d for d, _ in vec0] == [d for d, _ in memory]
        np.testing.assert_allclose([s for _, s in vec0], [s for _, s in memory], atol=1e-5)
