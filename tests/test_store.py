"""The Store on a real SQLite file with the real sqlite-vec extension."""

from __future__ import annotations

import math
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from remembrances import (
    Chunk,
    EmbedderMismatchError,
    EmbedderUnavailableError,
    InvalidInputError,
    InvalidVectorError,
    NotFoundError,
    ReadOnlyError,
    RerankerNotConfiguredError,
    SchemaVersionError,
    Store,
    fusion,
)
from remembrances.embeddings import HashEmbedder
from remembrances.storage.schema import STORE_MIGRATIONS
from remembrances.storage.search import QueryVectors
from tests.conftest import FlakyEmbedder

# Every test here runs on SQLite and on PostgreSQL (a real server: tests/conftest.py).
pytestmark = pytest.mark.backends("sqlite", "postgresql")

DOCS = {
    "sqlite.md": [
        "SQLite WAL mode lets readers and one writer work at the same time.",
        "The busy timeout makes a writer wait for the lock instead of failing.",
    ],
    "cats.md": ["Cats sleep for most of the day and hunt at dusk."],
    "tax.md": ["The quarterly tax filing deadline is the fifteenth of the month."],
}


def fill(store: Store) -> None:
    for source, texts in DOCS.items():
        store.put_source("kb", source, [Chunk(t) for t in texts])


def texts(results: list) -> list[str]:
    return [r.text for r in results]


class FixedEmbedder:
    """Returns whatever vectors it is told to: for testing the store's checks."""

    name = "fixed:4"
    dim = 4

    def __init__(self, vectors: object) -> None:
        self.vectors = vectors

    def embed_documents(self, texts: list[str]) -> object:
        return self.vectors

    def embed_query(self, text: str) -> list[float]:
        return [1.0, 0.0, 0.0, 0.0]


# -- writing -------------------------------------------------------------------------


def test_put_get_count_and_collections(store: Store) -> None:
    fill(store)
    store.put_source("kb", "other.md", [Chunk("notes", metadata={"k": 1})], collection="work")
    assert store.count() == 5
    assert store.count(kind="kb", collection="work") == 1
    assert store.collections() == {"default": 4, "work": 1}
    chunks = store.get_source("kb", "sqlite.md")
    assert [c.position for c in chunks] == [0, 1]
    assert chunks[0].has_embedding
    assert store.get(chunks[1].id).text == DOCS["sqlite.md"][1]
    stats = store.stats()
    assert stats["chunks"] == 5 and stats["embedder"] == "hash:64" and stats["dim"] == 64


@pytest.mark.backends("sqlite")  # the file's blob format; PostgreSQL stores pgvector values
def test_embedding_blob_is_little_endian_float32_unit_vector(store: Store) -> None:
    store.put_source("kb", "a", [Chunk("hello world")])
    with store.snapshot() as conn:
        blob = conn.execute("SELECT embedding FROM chunks").fetchone()[0]
    vector = np.frombuffer(blob, dtype="<f4")
    assert vector.shape == (64,)
    assert math.isclose(float(np.linalg.norm(vector)), 1.0, rel_tol=1e-5)


def test_replace_is_atomic_when_embedding_fails(location: str) -> None:
    store = Store(location, embedder=FlakyEmbedder())
    store.put_source("kb", "doc", [Chunk("old first"), Chunk("old second")])
    with pytest.raises(RuntimeError):
        store.put_source("kb", "doc", [Chunk("new first"), Chunk("FAIL here")])
    assert texts(store.get_source("kb", "doc")) == ["old first", "old second"]
    assert store.search("old", mode="text")  # FTS still agrees with the table


def test_replace_is_atomic_when_the_write_fails(store: Store) -> None:
    store.put_source("kb", "doc", [Chunk("old version")])
    prepared = store.prepare([Chunk("new version")])
    with pytest.raises(ZeroDivisionError), store.transaction():
        store.write_source("kb", "default", "doc", prepared)
        1 / 0  # noqa: B018 - a failure after the chunk rows were written
    assert texts(store.get_source("kb", "doc")) == ["old version"]
    assert texts(store.search("version", mode="text")) == ["old version"]
    assert texts(store.search("version", mode="vector")) == ["old version"]


def test_delete_by_source_and_id_leaves_no_index_rows(store: Store) -> None:
    fill(store)
    assert store.delete_source("kb", "cats.md") == 1
    assert "Cats" not in " ".join(texts(store.search("cats sleep", limit=10)))
    chunk_id = store.get_source("kb", "tax.md")[0].id
    assert store.delete([chunk_id, 999_999]) == 1
    with pytest.raises(NotFoundError):
        store.get(chunk_id)
    with store.snapshot() as conn:
        if conn.dialect == "sqlite":
            fts = conn.execute("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'tax'")
            vec = conn.execute("SELECT count(*) FROM chunks_vec")
        else:  # the text index is a column; its word statistics are a table
            fts = conn.execute("SELECT count(*) FROM text_terms WHERE term = 'tax'")
            vec = conn.execute("SELECT count(*) FROM chunks WHERE embedding IS NOT NULL")
        assert fts.scalar() == 0
        assert vec.scalar() == store.count() == 2


def test_second_identical_ingest_makes_no_embed_calls(store: Store, embedder: HashEmbedder) -> None:
    fill(store)
    calls = embedder.calls
    fill(store)
    assert embedder.calls == calls
    report = store.put_source("kb", "sqlite.md", [Chunk(DOCS["sqlite.md"][0]), Chunk("a new line")])
    assert (report.embedded, report.cached) == (1, 1)
    assert embedder.calls == calls + 1


def test_cache_survives_reopen(location: str) -> None:
    first = HashEmbedder(64)
    Store(location, embedder=first).put_source("kb", "a", [Chunk("cached text")])
    second = HashEmbedder(64)
    Store(location, embedder=second).put_source("kb", "b", [Chunk("cached text")])
    assert second.calls == 0


def test_deferred_embeddings_are_searchable_by_text_then_backfilled(store: Store) -> None:
    report = store.put_source("code", "big.py", [Chunk("def retry_upload(): pass")], embed=False)
    assert report.pending == 1 and store.pending_embeddings() == 1
    assert texts(store.search("retry upload", mode="text")) == ["def retry_upload(): pass"]
    assert store.search("retry upload", mode="vector") == []
    assert store.backfill_embeddings(kind="code") == 1
    assert store.pending_embeddings() == 0
    assert texts(store.search("retry upload", mode="vector")) == ["def retry_upload(): pass"]


# -- hostile input ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "chunk",
    [
        Chunk(""),
        Chunk("   \n\t"),
        Chunk("x" * 1_000_001),
        Chunk("bad \udcff surrogate"),
        Chunk("ok", metadata={"nan": float("nan")}),
        Chunk("ok", metadata={1: "non-string key"}),  # type: ignore[dict-item]
        Chunk("ok", metadata=["not", "a", "mapping"]),  # type: ignore[arg-type]
        Chunk("ok", ts="not a time"),
        Chunk(b"bytes are not text"),  # type: ignore[arg-type]
    ],
)
def test_bad_chunks_are_refused_and_nothing_is_written(store: Store, chunk: Chunk) -> None:
    store.put_source("kb", "doc", [Chunk("the old version")])
    with pytest.raises(InvalidInputError):
        store.put_source("kb", "doc", [Chunk("fine"), chunk])
    assert texts(store.get_source("kb", "doc")) == ["the old version"]


@pytest.mark.parametrize(
    ("vectors", "message"),
    [
        ([[1.0, 2.0, float("nan"), 0.0]], "NaN"),
        ([[1.0, 2.0, float("inf"), 0.0]], "NaN or infinite"),
        ([[1.0, 2.0, 3.0]], "length 3, expected 4"),
        ([[1.0, 0, 0, 0], [0, 1.0, 0, 0]], "2 vectors for 1 texts"),
        ([[0.0, 0.0, 0.0, 0.0]], "all-zero"),
        ("garbage", "not a list of vectors"),
    ],
)
def test_bad_vectors_are_refused(location: str, vectors: object, message: str) -> None:
    store = Store(location, embedder=FixedEmbedder(vectors))
    with pytest.raises(InvalidVectorError, match=message):
        store.put_source("kb", "doc", [Chunk("text")])
    assert store.count() == 0


@pytest.mark.parametrize(
    "kwargs",
    [
        {"mode": "fuzzy"},
        {"limit": 0},
        {"limit": 10**6},
        {"limit": True},
        {"min_score": 1.5},
        {"min_score": float("nan")},
        {"mmr": 2.0},
        {"where": {"k": [1, {"nested": True}]}},
        {"where": {"k": {"$regex": "x"}}},
        {"where": {"k": {"$in": 0}}},
        {"where": {"": 1}},
        {"since": "yesterday-ish"},
        {"engine": "faiss"},
    ],
)
def test_bad_search_arguments_raise_typed_errors(store: Store, kwargs: dict) -> None:
    fill(store)
    with pytest.raises(InvalidInputError):
        store.search("sqlite", **kwargs)


def test_a_kind_spelled_in_the_other_number_is_refused_not_empty(store: Store) -> None:
    fill(store)  # kind "kb"
    store.put_source("event", "e1", [Chunk("Rolled back the deploy")])
    for kind in ("events", ["kb", "events"], "kbs"):
        with pytest.raises(InvalidInputError, match=r"kind 'event'|kind 'kb'"):
            store.search("deploy", kind=kind)
    # Kinds are open: one nothing holds is empty, and hostile ones are data.
    assert store.search("deploy", kind="notes") == []
    for odd in ("s", "x\x00", "'; DROP TABLE chunks; --", "é" * 300):
        assert store.search("deploy", kind=odd) == []
    # Asking for both spellings on purpose is no typo.
    assert [r.source for r in store.search("deploy", kind=["event", "events"])] == ["e1"]
    # A memory that holds both spellings answers each as asked.
    store.put_source("events", "e2", [Chunk("A custom layer's deploy note")])
    assert [r.source for r in store.search("deploy", kind="events")] == ["e2"]


def test_hostile_queries_never_raise(store: Store) -> None:
    fill(store)
    for query in [
        "",
        "   ",
        "???",
        '"',
        "AND OR NOT",
        "NEAR(a b)",
        "col:val",
        "*",
        "^x",
        "(((",
        "\x00\x01",
        "emoji 🎉🎉",
        "x" * 50_000,
        "don't",
        "-x -y",
    ]:
        for mode in ("hybrid", "vector", "text"):
            results = store.search(query, mode=mode)
            assert all(0.0 <= r.score <= 1.0 for r in results)
    with pytest.raises(InvalidInputError):
        store.search("x" * 100_001)
    with pytest.raises(InvalidInputError):
        store.search("lone \udcff")
    with pytest.raises(InvalidInputError):
        store.search(b"bytes")  # type: ignore[arg-type]


def test_filter_keys_that_look_like_sql_are_data(store: Store) -> None:
    store.put_source("kb", "a", [Chunk("alpha text", metadata={"x') OR 1=1 --": "v"})])
    store.put_source("kb", "b", [Chunk("alpha text too", metadata={"y": "v"})])
    hits = store.search("alpha", where={"x') OR 1=1 --": "v"})
    assert [h.source for h in hits] == ["a"]
    assert store.search("alpha", where={"'; DROP TABLE chunks; --": 1}) == []
    assert store.count() == 2


# -- search ----------------------------------------------------------------------------


def test_every_mode_finds_the_right_chunk(store: Store) -> None:
    fill(store)
    for mode in ("hybrid", "vector", "text"):
        top = store.search("busy timeout lock", mode=mode, limit=3)[0]
        assert top.text == DOCS["sqlite.md"][1], mode
        assert top.source == "sqlite.md" and top.kind == "kb" and top.collection == "default"


def test_scores_are_normalised_and_legs_reported(store: Store) -> None:
    fill(store)
    hybrid = store.search("busy timeout", limit=10)
    assert hybrid[0].vector_rank == 1 and hybrid[0].text_rank == 1
    assert all(0.0 <= r.score <= 1.0 for r in hybrid)
    assert [r.score for r in hybrid] == sorted((r.score for r in hybrid), reverse=True)
    # Found by both legs beats found by one: the fused score is not a rank.
    assert hybrid[0].score > max(r.score for r in hybrid[1:])
    vector = store.search("busy timeout", mode="vector")
    assert vector[0].vector_score == vector[0].score and vector[0].text_score is None
    text = store.search("busy timeout", mode="text")
    assert text[0].text_score == text[0].score and 0 < text[0].score < 1


def test_rrf_fusion_on_request(store: Store) -> None:
    fill(store)
    hits = store.search("cats hunt tax deadline", limit=10, fuse="rrf")

    def rrf(h: object) -> float:
        ranks = (h.vector_rank, h.text_rank)  # type: ignore[attr-defined]
        return sum(1 / (60 + r) for r in ranks if r is not None)

    assert [round(rrf(h), 9) for h in hits] == sorted(
        (round(rrf(h), 9) for h in hits), reverse=True
    )
    assert max(h.score for h in hits) <= 1.0
    with pytest.raises(InvalidInputError):
        store.search("cats", fuse="max")  # type: ignore[arg-type]


def test_min_score_drops_weak_hits(store: Store) -> None:
    fill(store)
    everything = store.search("busy timeout", mode="vector", limit=10)
    cut = everything[0].score - 1e-6
    strong = store.search("busy timeout", mode="vector", limit=10, min_score=cut)
    assert len(strong) == 1 and len(everything) > 1


def test_hybrid_scores_each_hit_from_its_cosine_and_word_coverage(store: Store) -> None:
    fill(store)
    query = "cats hunt tax deadline"
    hits = store.search(query, limit=10, pool=50, kind="kb")
    assert hits
    params = fusion.params_for("kb")
    for h in hits:
        assert h.vector_score is not None and h.text_score is not None
        assert h.score == pytest.approx(params.score(h.vector_score, h.text_score))
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    cosine = {h.id: h.score for h in store.search(query, mode="vector", limit=50)}
    for h in hits:  # a text-only candidate gets its exact cosine too
        if h.id in cosine:
            assert h.vector_score == pytest.approx(cosine[h.id], abs=1e-5)


def test_text_mode_scores_are_word_coverage(store: Store) -> None:
    store.put_source("kb", "both", [Chunk("the cat chased the tax form")])
    store.put_source("kb", "one", [Chunk("a cat slept all day long today")])
    hits = store.search("cat tax", mode="text", limit=5)
    assert [h.source for h in hits] == ["both", "one"]
    assert hits[0].score == pytest.approx(1.0)
    assert 0.0 < hits[1].score < 1.0


def test_filters_apply_inside_the_search(store: Store) -> None:
    # 30 strongly matching chunks in one collection, 3 weak ones in another:
    # filtering after a top-k would return nothing for the weak collection.
    for i in range(30):
        store.put_source(
            "kb", f"strong{i}", [Chunk(f"deploy release pipeline {i}")], collection="a"
        )
    for i in range(3):
        store.put_source(
            "kb",
            f"weak{i}",
            [Chunk(f"deploy notes {i}", metadata={"team": "ops", "n": i})],
            collection="b",
        )
    for mode in ("hybrid", "vector", "text"):
        hits = store.search("deploy release pipeline", mode=mode, limit=3, collection="b")
        assert len(hits) == 3 and {h.collection for h in hits} == {"b"}, mode
        hits = store.search("deploy release pipeline", mode=mode, limit=5, where={"team": "ops"})
        assert {h.source for h in hits} == {"weak0", "weak1", "weak2"}, mode
        hits = store.search("deploy", mode=mode, limit=5, where={"n": {"$gte": 1}})
        assert {h.source for h in hits} == {"weak1", "weak2"}, mode
        hits = store.search("deploy", mode=mode, limit=5, where={"n": [0, 2]})
        assert {h.source for h in hits} == {"weak0", "weak2"}, mode
        hits = store.search("deploy", mode=mode, limit=50, source=["strong1", "weak1"])
        assert {h.source for h in hits} == {"strong1", "weak1"}, mode
        assert store.search("deploy", mode=mode, kind="event") == []


def test_a_filter_naming_nothing_stored_finds_nothing_and_the_rest_still_finds(
    store: Store,
) -> None:
    # The search checks first whether the named kinds, collections and sources hold
    # any chunk (an empty knowledge base beside a large code index returns at once):
    # the answers must stay those of the legs. That no leg runs for such a filter is
    # checked in tests/test_vector_cold_start.py (no cold vector search counted).
    store.put_source("code", "deploy.py", [Chunk("def deploy(): release()")], collection="app")
    store.put_source("kb", "notes.md", [Chunk("deploy notes for the release")], collection="docs")
    for mode in ("hybrid", "vector", "text"):
        assert store.search("deploy release", mode=mode, kind="event") == [], mode
        # Each name exists, never together.
        assert store.search("deploy release", mode=mode, kind="kb", collection="app") == [], mode
        assert store.search("deploy release", mode=mode, source=["gone.md"]) == [], mode
        assert store.search("deploy release", mode=mode, kind=[]) == [], mode
        found = store.search("deploy release", mode=mode, kind="kb", collection="docs")
        assert [h.source for h in found] == ["notes.md"], mode
        found = store.search("deploy release", mode=mode, source=["gone.md", "deploy.py"])
        assert [h.source for h in found] == ["deploy.py"], mode
        found = store.search("deploy release", mode=mode, kind=["event", "code", "kb"])
        assert {h.source for h in found} == {"deploy.py", "notes.md"}, mode


def test_time_range_filters(store: Store) -> None:
    now = datetime(2026, 6, 1, 12, tzinfo=UTC)
    for days in range(10):
        store.put_source(
            "event",
            f"e{days}",
            [Chunk(f"standup meeting notes {days}", ts=now - timedelta(days=days))],
        )
    since = now - timedelta(days=2, hours=1)
    for mode in ("hybrid", "vector", "text"):
        hits = store.search("standup meeting", mode=mode, limit=10, since=since)
        assert {h.source for h in hits} == {"e0", "e1", "e2"}, mode
        hits = store.search(
            "standup meeting",
            mode=mode,
            limit=10,
            since=since.isoformat(),
            until=(now - timedelta(days=1)).timestamp(),
        )
        assert {h.source for h in hits} == {"e1", "e2"}, mode


def test_vec0_engine_agrees_with_memory_engine(store: Store) -> None:
    fill(store)
    for query in ("busy timeout", "cats", "tax deadline"):
        memory = store.search(query, mode="vector", limit=4)
        vec0 = store.search(query, mode="vector", limit=4, engine="vec0")
        assert [r.id for r in memory] == [r.id for r in vec0]
        assert [r.score for r in memory] == pytest.approx([r.score for r in vec0], abs=1e-5)
    filtered = store.search("cats", mode="vector", engine="vec0", source="cats.md")
    assert [r.source for r in filtered] == ["cats.md"]


def test_mmr_prefers_diverse_results(store: Store) -> None:
    store.put_source("kb", "dup1", [Chunk("vector search with sqlite vec extension")])
    store.put_source("kb", "dup2", [Chunk("vector search with sqlite vec extension!")])
    store.put_source("kb", "other", [Chunk("vector databases store embeddings")])
    plain = store.search("vector search sqlite", mode="vector", limit=2)
    diverse = store.search("vector search sqlite", mode="vector", limit=2, mmr=0.3)
    assert {r.source for r in plain} == {"dup1", "dup2"}
    assert {r.source for r in diverse} == {"dup1", "other"} or {r.source for r in diverse} == {
        "dup2",
        "other",
    }


class LengthReranker:
    """Prefers shorter texts: an order no leg would produce."""

    def rerank(self, query: str, texts: list[str]) -> list[float]:
        return [1.0 / len(t) for t in texts]


def test_rerank_needs_a_reranker_and_reorders(location: str) -> None:
    store = Store(location, embedder=HashEmbedder(64))
    fill(store)
    with pytest.raises(RerankerNotConfiguredError):
        store.search("sqlite", rerank=True)
    store.reranker = LengthReranker()
    hits = store.search("the", rerank=True, limit=3)
    assert [len(h.text) for h in hits] == sorted(len(h.text) for h in hits)


# -- the model guard and the file --------------------------------------------------------


def test_model_guard_refuses_another_embedder(location: str) -> None:
    Store(location, embedder=HashEmbedder(64)).put_source("kb", "a", [Chunk("text")])
    with pytest.raises(EmbedderMismatchError, match=r"hash:64.*hash:32.*reembed"):
        Store(location, embedder=HashEmbedder(32))
    other = HashEmbedder(64)
    other.name = "other:64"
    with pytest.raises(EmbedderMismatchError):
        Store(location, embedder=other)
    assert Store(location, embedder=HashEmbedder(64)).count() == 1


def test_store_without_embedder_searches_text_only(location: str) -> None:
    fill(Store(location, embedder=HashEmbedder(64)))
    store = Store(location)
    assert store.embedder_name == "hash:64"
    assert store.search("cats", mode="text")
    with pytest.raises(EmbedderUnavailableError):
        store.search("cats", mode="vector")


def test_read_only_store_searches_and_refuses_writes(location: str) -> None:
    fill(Store(location, embedder=HashEmbedder(64)))
    store = Store(location, embedder=HashEmbedder(64), read_only=True)
    assert store.search("cats")[0].source == "cats.md"
    with pytest.raises(ReadOnlyError):
        store.put_source("kb", "x", [Chunk("new")])


def test_newer_schema_is_refused(location: str) -> None:
    store = Store(location, embedder=HashEmbedder(64))
    with store.transaction() as conn:
        conn.execute(
            "UPDATE meta SET value = ? WHERE key = 'schema:store'",
            (str(len(STORE_MIGRATIONS) + 1),),
        )
    store.close()
    with pytest.raises(SchemaVersionError, match="upgrade remembrances"):
        Store(location, embedder=HashEmbedder(64))


@pytest.mark.backends("sqlite")  # SQLite pragmas; tests/postgres checks the server's settings
def test_connection_settings(store: Store) -> None:
    with store.snapshot() as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        assert conn.execute("PRAGMA busy_timeout").fetchone()[0] >= 5000
        tokenizer = conn.execute(
            "SELECT sql FROM sqlite_master WHERE name = 'chunks_fts'"
        ).fetchone()[0]
    assert "porter unicode61 remove_diacritics 2" in tokenizer


def test_diacritics_and_stemming(store: Store) -> None:
    store.put_source("kb", "a", [Chunk("Le café est ouvert; running shoes are here")])
    assert store.search("cafe", mode="text")
    assert store.search("run", mode="text")


class CountingQueries(HashEmbedder):
    def __init__(self) -> None:
        super().__init__(64)
        self.queries = 0

    def embed_query(self, text: str) -> np.ndarray:
        self.queries += 1
        return super().embed_query(text)


def test_repeated_queries_are_embedded_once(location: str) -> None:
    embedder = CountingQueries()
    store = Store(location, embedder=embedder)
    fill(store)
    first = store.search("busy timeout", kind="kb")
    again = store.search("busy timeout", collection="default", mode="vector")
    assert embedder.queries == 1
    assert [r.id for r in first[:1]] == [r.id for r in again[:1]]
    store.search("another question")
    assert embedder.queries == 2


class SlowQueries(CountingQueries):
    """Embeds a query slowly, so that threads asking for it at once overlap."""

    def __init__(self, fail_first: bool = False) -> None:
        super().__init__()
        self.fail_first = fail_first

    def embed_query(self, text: str) -> np.ndarray:
        time.sleep(0.2)
        if self.fail_first and self.queries == 0:
            self.queries += 1
            raise RuntimeError("the embedding service hung up")
        return super().embed_query(text)


def test_a_query_searched_by_several_threads_at_once_is_embedded_once(location: str) -> None:
    # The enricher searches KB, events and code in parallel with one query: each
    # thread embedding it again cost every thread the whole CPU's share.
    embedder = SlowQueries()
    store = Store(location, embedder=embedder)
    fill(store)
    with ThreadPoolExecutor(4) as pool:
        found = list(pool.map(lambda _: store.search("busy timeout"), range(4)))
    assert embedder.queries == 1
    assert all([r.id for r in hits] == [r.id for r in found[0]] for hits in found)


def test_a_failed_embedding_fails_the_threads_waiting_for_it_at_once(location: str) -> None:
    # each waiting thread embedding again in turn made a failing embedder cost N times
    # its timeout, and the sources behind report "timed out" instead of its error
    embedder = SlowQueries(fail_first=True)
    store = Store(location, embedder=embedder)
    fill(store)
    with ThreadPoolExecutor(3) as pool:
        first = pool.submit(store.search, "busy timeout")
        time.sleep(0.05)
        waiting = [pool.submit(store.search, "busy timeout") for _ in range(2)]
        for future in (first, *waiting):
            with pytest.raises(RuntimeError, match="hung up"):
                future.result()
    assert embedder.queries == 1
    assert store.search("busy timeout")  # the next ask tries again
    assert embedder.queries == 2


def test_threads_share_one_embedding_without_a_cache() -> None:
    embedder = SlowQueries()
    vectors = QueryVectors(size=0)
    with ThreadPoolExecutor(3) as pool:
        found = list(pool.map(lambda _: vectors.get(embedder, "busy timeout"), range(3)))
    assert embedder.queries == 1
    assert all(v is found[0] for v in found)
    vectors.get(embedder, "busy timeout")  # nothing kept
    assert embedder.queries == 2
