"""The PostgreSQL engine's legs against a real server, and their parity with SQLite's."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from remembrances import Chunk, Store
from remembrances.embeddings import HashEmbedder
from remembrances.embeddings.base import to_blob
from remembrances.postgres.engine import PostgresEngine
from remembrances.postgres.schema import STORE_MIGRATIONS
from remembrances.storage.engine import NewChunk
from remembrances.storage.filters import ChunkFilter
from remembrances.storage.search import COMMON_SHARE, chunk_rows, text_candidates
from remembrances.storage.text_match import text_match as sqlite_text_match
from remembrances.storage.transaction import Transaction

DIM = 8


@pytest.fixture
def engine(postgres_url: str) -> Iterator[PostgresEngine]:
    made = PostgresEngine(postgres_url)
    made.prepare_schema()
    with made.write() as tx:
        made.create_vector_table(tx, DIM, fill=False)
    yield made
    made.close()


def _chunks(vectors: np.ndarray, *, kinds: list[str] | None = None) -> list[NewChunk]:
    return [
        NewChunk(
            kind=kinds[i] if kinds else "kb",
            collection="default",
            source=f"s{i}",
            position=0,
            text=f"chunk number {i}",
            metadata_json=json.dumps({"n": i}),
            content_hash=f"h{i}",
            embed_text=None,
            ts=float(i),
            created_at=0.0,
            embedding=to_blob(v),
        )
        for i, v in enumerate(vectors)
    ]


def _unit(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    m = rng.standard_normal((n, DIM)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def test_inserted_chunks_read_back_with_their_ids(engine: PostgresEngine) -> None:
    vectors = _unit(5)
    with engine.write() as tx:
        ids = engine.insert_chunks(tx, _chunks(vectors))
    assert len(set(ids)) == 5
    with engine.read() as tx:
        rows = chunk_rows(engine, tx, ids)
        back = engine.vectors(tx, ids)
    for i, chunk_id in enumerate(ids):
        assert rows[chunk_id]["source"] == f"s{i}" and rows[chunk_id]["metadata"] == json.dumps(
            {"n": i}
        )
        assert rows[chunk_id]["has_embedding"] is True
        assert np.array_equal(back[chunk_id], vectors[i])  # float32 in, the same float32 out


@pytest.mark.parametrize("exact_below", [0, None], ids=["index", "size-rule"])
def test_vector_leg_ranks_by_cosine_and_filters_never_starve(
    engine: PostgresEngine, exact_below: int | None
) -> None:
    # 0: every search asks the HNSW index first (the path of memories above the
    # threshold); the default: this small memory is scanned exactly.
    engine.exact_below = exact_below
    # More chunks than the index's widest candidate list (ef_search 1000), 5 "rare".
    vectors = _unit(2500)
    kinds = ["rare" if i % 500 == 0 else "kb" for i in range(2500)]
    with engine.write() as tx:
        ids = engine.insert_chunks(tx, _chunks(vectors, kinds=kinds))
    query = vectors[7]
    exact = vectors @ query
    with engine.read() as tx:
        hits = engine.vector_leg(tx, query, 10, ChunkFilter())
        assert hits[0] == (ids[7], pytest.approx(1.0, abs=1e-6))
        assert len(hits) == 10
        # Each reported score is the exact cosine of that chunk.
        for chunk_id, score in hits:
            assert score == pytest.approx(max(float(exact[ids.index(chunk_id)]), 0.0), abs=1e-5)
        # Only 5 chunks are "rare": the index's 1000 nearest candidates hold at
        # most a few of them, yet all 5 come back, best first.
        rare = engine.vector_leg(tx, query, 10, ChunkFilter.of(kind="rare"))
        assert sorted(i for i, _ in rare) == sorted(ids[i] for i in range(0, 2500, 500))
        rare_exact = sorted((max(float(exact[i]), 0.0) for i in range(0, 2500, 500)), reverse=True)
        assert [s for _, s in rare] == pytest.approx(rare_exact, abs=1e-5)
        by_meta = engine.vector_leg(tx, query, 3, ChunkFilter.of(where={"n": {"$lt": 3}}))
        assert sorted(i for i, _ in by_meta) == sorted(ids[:3])
        exact_hits = engine.vector_leg(tx, query, 10, ChunkFilter(), exact=True)
        want = [ids[i] for i in np.argsort(-exact, kind="stable")[:10]]
        assert [i for i, _ in exact_hits] == want


def _index_scans(tx: Transaction) -> int:
    """Scans of the HNSW index in this transaction so far (the server's own counter)."""
    return int(
        tx.execute(
            "SELECT pg_stat_get_xact_numscans(to_regclass('chunks_embedding')) AS n"
        ).scalar()
    )


def test_size_rule_scans_few_candidates_exactly_and_asks_the_index_above(
    engine: PostgresEngine,
) -> None:
    vectors = _unit(2500, seed=4)
    kinds = ["rare" if i % 500 == 0 else "kb" for i in range(2500)]
    with engine.write() as tx:
        ids = engine.insert_chunks(tx, _chunks(vectors, kinds=kinds))
        tx.execute("ANALYZE chunks")  # the planner must know the table is big enough
    query = vectors[11]
    exact_top = [ids[i] for i in np.argsort(-(vectors @ query), kind="stable")[:10]]

    def scans(where: ChunkFilter) -> tuple[int, list[int]]:
        with engine.read() as tx:
            before = _index_scans(tx)
            hits = engine.vector_leg(tx, query, 10, where)
            return _index_scans(tx) - before, [i for i, _ in hits]

    engine.exact_below = 1000  # the memory (2,500 chunks) is above the threshold
    used, top = scans(ChunkFilter())
    assert used >= 1 and len(top) == 10
    used, _ = scans(ChunkFilter.of(kind="kb"))  # 2,495 allowed: still above
    assert used >= 1
    used, rare = scans(ChunkFilter.of(kind="rare"))  # 5 allowed: exact, no index scan
    assert used == 0 and sorted(rare) == sorted(ids[i] for i in range(0, 2500, 500))
    engine.exact_below = 2500  # the whole memory is at the threshold: exact
    used, top = scans(ChunkFilter())
    assert used == 0 and top == exact_top


def test_the_default_size_rule_follows_the_index_search_it_would_replace(
    engine: PostgresEngine,
) -> None:
    """No URL threshold: an exact scan is chosen while it reads no more rows than the
    index search at that search's ef_search costs (1,000 + 16 per unit, measured)."""
    vectors = _unit(2500, seed=5)
    with engine.write() as tx:
        ids = engine.insert_chunks(tx, _chunks(vectors))
        tx.execute("ANALYZE chunks")
    query = vectors[3]
    exact_top = [ids[i] for i in np.argsort(-(vectors @ query), kind="stable")[:10]]
    assert engine.exact_below is None
    assert (engine.exact_rows(100), engine.exact_rows(1000)) == (2600, 17000)

    def index_scans(pool: int, where: ChunkFilter) -> int:
        with engine.read() as tx:
            before = _index_scans(tx)
            top = [i for i, _ in engine.vector_leg(tx, query, pool, where)][:10]
            used = _index_scans(tx) - before
        assert used > 0 or top == exact_top  # an exact scan is exact
        return used

    assert index_scans(10, ChunkFilter()) == 0  # ef_search 100: 2,600 >= 2,500 chunks
    engine.ef_search = 40  # a faster index search: 1,640 < 2,500, the index wins
    assert index_scans(10, ChunkFilter()) >= 1
    assert index_scans(100, ChunkFilter()) == 0  # a pool of 100 widens it to 100: exact
    # A filtered search asks the index's widest list (1000): 17,000 chunks.
    assert index_scans(10, ChunkFilter.of(kind="kb")) == 0


def test_the_url_sets_ef_search_and_the_threshold(postgres_url: str) -> None:
    made = PostgresEngine(f"{postgres_url}&ef_search=200&exact_below=0")
    try:
        made.prepare_schema()
        vectors = _unit(50)
        with made.write() as tx:
            made.create_vector_table(tx, DIM, fill=False)
            made.insert_chunks(tx, _chunks(vectors))
        assert made.exact_below == 0
        with made.read() as tx:
            assert len(made.vector_leg(tx, vectors[0], 10, ChunkFilter())) == 10
            assert tx.execute("SHOW hnsw.ef_search").scalar() == "200"
            # A pool deeper than ef_search widens it: the index returns at most ef_search.
            made.vector_leg(tx, vectors[0], 300, ChunkFilter())
            assert tx.execute("SHOW hnsw.ef_search").scalar() == "300"
            made.vector_leg(tx, vectors[0], 10, ChunkFilter.of(kind="kb"))
            assert tx.execute("SHOW hnsw.ef_search").scalar() == "1000"  # filtered: widest
    finally:
        made.close()


def test_unfiltered_index_search_defaults_to_ef_search_100(engine: PostgresEngine) -> None:
    """The default measured on 100k real embeddings (recall@10 0.994; docs/scale-out.md)."""
    vectors = _unit(50)
    with engine.write() as tx:
        engine.insert_chunks(tx, _chunks(vectors))
    engine.exact_below = 0  # the index, as in a memory above the size rule's threshold
    with engine.read() as tx:
        assert len(engine.vector_leg(tx, vectors[0], 10, ChunkFilter())) == 10
        assert tx.execute("SHOW hnsw.ef_search").scalar() == "100"
        # A hybrid search's pool of 150 candidates: the list grows to hold them.
        assert len(engine.vector_leg(tx, vectors[0], 150, ChunkFilter())) == 50
        assert tx.execute("SHOW hnsw.ef_search").scalar() == "150"


def test_vectors_stay_in_the_row(postgres_url: str) -> None:
    """384-dim vectors with their text make rows above 2 kB: none may go to the TOAST
    table (an exact scan would fetch each through its index)."""
    made = PostgresEngine(postgres_url)
    try:
        made.prepare_schema()
        rng = np.random.default_rng(2)
        words = " ".join(f"word{i}" for i in range(60))  # ~600 bytes of text and words
        with made.write() as tx:
            made.create_vector_table(tx, 384, fill=False)
            made.insert_chunks(
                tx,
                [
                    NewChunk(
                        "kb",
                        "d",
                        f"s{i}",
                        0,
                        f"{words} {i}",
                        "{}",
                        f"h{i}",
                        None,
                        None,
                        0.0,
                        to_blob(rng.standard_normal(384).astype(np.float32)),
                    )
                    for i in range(200)
                ],
            )
            row = tx.execute("SELECT avg(pg_column_size(c.*)) AS n FROM chunks c").scalar()
            toast = tx.execute(
                "SELECT pg_relation_size(reltoastrelid) AS n FROM pg_class WHERE oid = "
                "to_regclass('chunks')"
            ).scalar()
        assert float(row) > 2100  # above PostgreSQL's usual TOAST threshold
        assert toast == 0
    finally:
        made.close()


def test_the_index_build_gets_memory_for_its_whole_graph(engine: PostgresEngine) -> None:
    with engine.write() as tx:
        engine.insert_chunks(tx, _chunks(_unit(2000)))
        tx.execute("DROP INDEX chunks_embedding")
        tx.execute("SET LOCAL maintenance_work_mem = '1MB'")  # a server set too low
        engine.create_vector_table(tx, DIM, fill=True)
        assert engine.has_vector_table(tx)
        # 2,000 vectors x (4 x 8 bytes + 1,024 for the graph): raised for this build.
        assert tx.execute("SHOW maintenance_work_mem").scalar() == f"{2000 * 1056 // 1024}kB"
    with engine.write() as tx:
        tx.execute("DROP INDEX chunks_embedding")
        tx.execute("SET LOCAL maintenance_work_mem = '64MB'")  # enough: left as it is
        engine.create_vector_table(tx, DIM, fill=True)
        assert tx.execute("SHOW maintenance_work_mem").scalar() == "64MB"


CORPUS = [
    "The deployment of the web servers failed on Tuesday",
    "Servers deploy nightly; deployments rarely fail",
    "Cats and dogs living together",
    "A note about the weather and the cats",
    "Nothing relevant here at all",
    # words inside paths, dotted names, versions, addresses and hyphens: PostgreSQL's
    # parser kept `docs/scale-out.md` and `re.compile` whole, and found neither word
    "call re.compile on the pattern; see docs/scale-out.md",
    "upgrade to version 3.4.1, mail ops@example.com or open https://example.com/guide",
    "blue-green releases of the web servers",
    # a near word alone (NEAR_PREFIX): on SQLite the word statistics came from a prefix
    # query, which FTS5 stems too ("employ" * became "emploi" *), and found nothing
    "the employee handbook is on the wiki",
]


def test_text_leg_and_word_coverage_match_sqlite(engine: PostgresEngine, tmp_path: Path) -> None:
    embedder = HashEmbedder(DIM)
    store = Store(tmp_path / "m.db", embedder=embedder)
    try:
        sqlite_ids = [
            store.put_source("kb", f"s{i}", [Chunk(t)]).chunk_ids[0] for i, t in enumerate(CORPUS)
        ]
        with engine.write() as tx:
            pg_ids = engine.insert_chunks(
                tx,
                [
                    NewChunk("kb", "default", f"s{i}", 0, t, "{}", f"h{i}", None, None, 0.0, None)
                    for i, t in enumerate(CORPUS)
                ],
            )
        for query in (
            "why did the deployment fail?",
            "cats",
            "weather servers dogs",
            "zebra",
            "compile the docs",
            "example guide 3",
            "blue green servers",
            "employment",
        ):
            with store.snapshot() as conn:
                want = sqlite_text_match(getattr(conn, "connection", conn), query, sqlite_ids)
            with engine.read() as tx:
                got = engine.text_match(tx, query, pg_ids)
                leg = engine.text_leg(tx, query, 10, ChunkFilter())
            by_source = {f"s{sqlite_ids.index(i)}": v for i, v in want.items()}
            assert {f"s{pg_ids.index(i)}": v for i, v in got.items()} == pytest.approx(by_source)
            # the leg finds what holds a word; coverage also counts a near word
            found = {i for i, _ in leg}
            assert found == set(got) if query != "employment" else not found
            with engine.read() as tx:
                only = engine.text_leg(tx, query, 10, ChunkFilter.of(source=["s0", "s4"]))
            assert {i for i, _ in only} <= {pg_ids[0], pg_ids[4]}
    finally:
        store.close()


def test_switching_the_model_rewrites_vectors_from_the_cache(engine: PostgresEngine) -> None:
    with engine.write() as tx:
        ids = engine.insert_chunks(tx, _chunks(_unit(3)))
        new = _unit(1, seed=9)[0][:4].copy()
        tx.execute(
            "INSERT INTO embedding_cache (embedder, content_hash, embedding) VALUES (?, ?, ?)",
            ("other", "h1", to_blob(new)),
        )
        engine.switch_vectors(tx, "other", 4)
        assert engine.has_vector_table(tx)
    with engine.read() as tx:
        back = engine.vectors(tx, ids)
        assert list(back) == [ids[1]] and np.array_equal(back[ids[1]], new)
        assert engine.vector_leg(tx, new, 5, ChunkFilter())[0][0] == ids[1]


def test_check_finds_and_repairs_stale_statistics_and_a_missing_index(
    engine: PostgresEngine,
) -> None:
    with engine.write() as tx:
        engine.insert_chunks(tx, _chunks(_unit(4)))
        tx.execute(
            "INSERT INTO meta (key, value) VALUES ('embedder', 'x'), ('dim', ?)", (str(DIM),)
        )
    assert engine.check().ok and engine.check().chunks == 4
    with engine.write() as tx:
        tx.execute("UPDATE text_terms SET chunks = chunks + 5 WHERE term = 'chunk'")
        tx.execute("DROP INDEX chunks_embedding")
    found = engine.check()
    assert not found.ok and len(found.problems) == 2, found.problems
    repaired = engine.check(repair=True)
    assert repaired.ok and repaired.repaired == repaired.problems
    assert engine.check().problems == []


def test_text_leg_asks_rare_words_first_for_candidates_but_never_returns_fewer(
    engine: PostgresEngine,
) -> None:
    texts = [f"common note {i}" for i in range(100)] + [f"common rare note {i}" for i in range(3)]
    with engine.write() as tx:
        ids = engine.insert_chunks(
            tx,
            [
                NewChunk("kb", "default", f"s{i}", 0, t, "{}", f"h{i}", None, None, 0.0, None)
                for i, t in enumerate(texts)
            ],
        )
    rare_ids = set(ids[100:])  # 3 of 103 chunks: rare
    with engine.read() as tx:
        assert engine.rare_words(tx, "common rare", COMMON_SHARE) == ["rare"]
        two = text_candidates(engine, tx, "common rare", 2, ChunkFilter())
        five = text_candidates(engine, tx, "common rare", 5, ChunkFilter())
    assert len(two) == 2 and {i for i, _ in two} <= rare_ids
    # Only 3 chunks hold the rare word: the leg falls back to every word for 5.
    assert len(five) == 5 and rare_ids <= {i for i, _ in five}


def test_a_long_chunk_of_cjk_fits_a_tsvector(postgres_url: str) -> None:
    # a tsvector holds 1 MB: 100,000 pairs of astral Han were 1.2 MB and refused the
    # write; a chunk's pairs are now capped by their bytes (tsquery.MAX_PAIR_BYTES)
    import random

    rng = random.Random(7)
    text = "".join(chr(rng.randrange(0x20000, 0x2A6DF)) for _ in range(300_000))
    with Store(postgres_url, embedder=HashEmbedder(DIM)) as store:
        store.put_source("kb", "han", [Chunk(text)])
        assert [h.source for h in store.search(text[:2], mode="text")] == ["han"]


def test_a_memory_indexed_before_cjk_pairs_is_indexed_again(postgres_url: str) -> None:
    with Store(postgres_url, embedder=HashEmbedder(DIM)) as store:
        store.put_source("kb", "ja", [Chunk("私は東京に住んでいます")])
    # as store step 4 wrote it: the run of CJK characters was one word
    with Store(postgres_url, embedder=HashEmbedder(DIM)) as store, store.transaction() as tx:
        tx.execute("UPDATE chunks SET tsv = to_tsvector('remembrances_text', text)")
        tx.execute("UPDATE meta SET value = '4' WHERE key = 'schema:store'")
    with Store(postgres_url, embedder=HashEmbedder(DIM), read_only=True) as old:
        assert old.search("東京", mode="text") == []
    with Store(postgres_url, embedder=HashEmbedder(DIM)) as store:
        assert [h.source for h in store.search("東京", mode="text")] == ["ja"]
        assert store.stats()["schema_version"] == len(STORE_MIGRATIONS)


def test_a_memory_indexed_before_words_were_split_is_indexed_again(postgres_url: str) -> None:
    with Store(postgres_url, embedder=HashEmbedder(DIM)) as store:
        store.put_source("kb", "doc", [Chunk("see docs/scale-out.md and re.compile")])
    # as store step 2 wrote it: the parser's whole tokens, and no step 3
    with Store(postgres_url, embedder=HashEmbedder(DIM)) as store, store.transaction() as tx:
        tx.execute("UPDATE chunks SET tsv = to_tsvector('remembrances_text', text)")
        tx.execute("UPDATE meta SET value = '2' WHERE key = 'schema:store'")
    with Store(postgres_url, embedder=HashEmbedder(DIM), read_only=True) as old:
        assert old.search("compile", mode="text") == []  # read as it is
    with Store(postgres_url, embedder=HashEmbedder(DIM)) as store:
        assert [h.source for h in store.search("compile docs", mode="text")] == ["doc"]
        assert store.stats()["schema_version"] == len(STORE_MIGRATIONS)


def test_a_search_kept_to_a_user_or_session_reads_them_from_their_index(
    postgres_url: str,
) -> None:
    # store step 7: the filter names the expression the index holds
    with Store(postgres_url, embedder=HashEmbedder(DIM)) as store:
        for user in ("ana", "bo"):
            meta = {"user": user, "session": f"s-{user}"}
            store.put_source("event", f"e-{user}", [Chunk("shipped", metadata=meta)])
        for key, value in (("user", "bo"), ("session", "s-bo")):
            sql, params = ChunkFilter.of(kind="event", where={key: value}).sql("postgresql")
            with store.transaction() as tx:
                tx.execute("SET LOCAL enable_seqscan = off")  # a table this small is scanned
                plan = " ".join(
                    str(row[0])
                    for row in tx.execute(f"EXPLAIN SELECT c.id FROM chunks c WHERE {sql}", params)
                )
            assert f"chunks_{key}" in plan, plan
            hits = store.search("shipped", mode="text", where={key: value})
            assert [h.source for h in hits] == ["e-bo"]
