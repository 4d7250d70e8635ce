"""The PostgreSQL connection layer against a real server (pgserver: PostgreSQL 16 + pgvector)."""

from __future__ import annotations

import gc
import threading
import weakref
from collections.abc import Iterator

import pytest

from remembrances.errors import InvalidInputError, ReadOnlyError, StorageError
from remembrances.postgres.connection import MAX_READERS, PostgresDatabase, translate
from remembrances.postgres.schema import STORE_MIGRATIONS, vector_script
from remembrances.postgres.tsquery import tsquery_text
from remembrances.postgres.url import PostgresTarget, is_postgres_url
from remembrances.storage.schema import migrate


@pytest.fixture
def database(postgres_url: str) -> Iterator[PostgresDatabase]:
    db = PostgresDatabase(postgres_url)
    db.bootstrap()
    with db.write() as tx:
        migrate(tx, "store", STORE_MIGRATIONS)
    yield db
    db.close()


def test_placeholders_become_psycopg_ones_outside_quotes() -> None:
    assert translate("SELECT ? , '?', \"a?\" -- ?\n, ?") == "SELECT %s , '?', \"a?\" -- ?\n, %s"
    assert translate("SELECT 'it''s ?', 5 % 2, ?") == "SELECT 'it''s ?', 5 %% 2, %s"
    assert translate("SELECT $$ ? $$, $x$?$x$, ?") == "SELECT $$ ? $$, $x$?$x$, %s"


def test_url_names_the_memory_and_hides_the_password() -> None:
    target = PostgresTarget.parse(
        "postgresql://me:secret@db.example/app?memory=team&sslmode=require"
    )
    assert target.schema == "team"
    assert target.conninfo == "postgresql://me:secret@db.example/app?sslmode=require"
    assert "secret" not in target.display and "memory=team" in target.display
    assert PostgresTarget.parse("postgres://h/db").schema == "remembrances"
    shown = PostgresTarget.parse("postgresql://u@/db?host=/tmp/s&password=pw").display
    assert shown == "postgresql://u@/db?host=/tmp/s&memory=remembrances"  # usable as --db
    assert is_postgres_url("postgresql://h/db") and not is_postgres_url("notes.db")
    for bad in ("Team", "pg_x", "public", "1a", "a-b", "x" * 64, "a;drop"):
        with pytest.raises(InvalidInputError, match="memory name"):
            PostgresTarget.parse(f"postgresql://h/db?memory={bad}")
    with pytest.raises(InvalidInputError):
        PostgresTarget.parse("postgresql://h/db?memory=a&memory=b")


def test_url_tunes_the_vector_search_and_keeps_it_from_libpq() -> None:
    target = PostgresTarget.parse("postgresql://h/db?memory=m&ef_search=100&exact_below=0")
    assert (target.ef_search, target.exact_below) == (100, 0)
    assert target.conninfo == "postgresql://h/db"  # libpq would refuse them
    assert "ef_search=100" in target.display and "exact_below=0" in target.display
    assert PostgresTarget.parse("postgresql://h/db").ef_search is None
    for bad in ("ef_search=0", "ef_search=1001", "ef_search=x", "exact_below=-1", "ef_search="):
        with pytest.raises(InvalidInputError, match="whole number"):
            PostgresTarget.parse(f"postgresql://h/db?{bad}")
    with pytest.raises(InvalidInputError, match="once"):
        PostgresTarget.parse("postgresql://h/db?ef_search=10&ef_search=20")


def test_a_parameter_libpq_does_not_know_is_the_urls_fault(postgres_url: str) -> None:
    # it was a StorageError, which HTTP answers with 503, "try again later"
    with pytest.raises(InvalidInputError, match=r"bogus.*check the URL"):
        PostgresDatabase(postgres_url + "&bogus=1")


def test_pgvector_is_installed_with_hnsw(database: PostgresDatabase) -> None:
    with database.write() as tx:
        tx.execute(vector_script(3))
        version = tx.execute(
            "SELECT extversion FROM pg_extension WHERE extname = ?", ("vector",)
        ).scalar()
        method = tx.execute(
            "SELECT am.amname AS method FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
            "JOIN pg_am am ON am.oid = c.relam WHERE c.relname = 'chunks_embedding'"
        ).fetchone()
    assert tuple(int(p) for p in version.split(".")[:2]) >= (0, 5)
    assert method is not None and method["method"] == "hnsw"


def _insert(tx: object, source: str, text: str) -> int:
    return int(
        tx.execute(  # type: ignore[attr-defined]
            "INSERT INTO chunks (kind, collection, source, position, text, tsv, content_hash, "
            "created_at) VALUES ('kb', 'default', ?, 0, ?, to_tsvector('remembrances_text', ?), "
            "'h', 0) RETURNING id",
            (source, text, text),
        ).scalar()
    )


def test_rows_read_by_name_and_position(database: PostgresDatabase) -> None:
    with database.write() as tx:
        chunk_id = _insert(tx, "a", "hello world")
        assert tx.changes() == 1
    with database.read() as tx:
        row = tx.execute("SELECT id, source, text FROM chunks WHERE id = ?", (chunk_id,)).fetchone()
        assert row is not None
        assert row["source"] == "a" and row[2] == "hello world"
        assert list(row.keys()) == ["id", "source", "text"]
        assert tx.execute("SELECT id FROM chunks WHERE id = ?", (-1,)).fetchone() is None
        assert tx.execute("SELECT count(*) AS n FROM chunks").scalar() == 1


def test_failed_write_leaves_nothing(database: PostgresDatabase) -> None:
    with pytest.raises(RuntimeError), database.write() as tx:
        _insert(tx, "a", "first")
        raise RuntimeError("boom")
    with pytest.raises(StorageError), database.write() as tx:
        _insert(tx, "b", "second")
        tx.execute("SELECT * FROM no_such_table")
    with database.read() as tx:
        assert tx.execute("SELECT count(*) AS n FROM chunks").scalar() == 0
    with database.write() as tx:  # the connection is usable after both failures
        _insert(tx, "c", "third")


def test_nested_writes_join_and_reads_inside_see_them(database: PostgresDatabase) -> None:
    with database.write() as outer:
        _insert(outer, "a", "one")
        with database.write() as inner:
            _insert(inner, "b", "two")
        with database.read() as read:
            assert read.execute("SELECT count(*) AS n FROM chunks").scalar() == 2
        assert database.in_transaction
    assert not database.in_transaction


def test_a_snapshot_does_not_see_later_commits(database: PostgresDatabase) -> None:
    with database.read() as tx:
        assert tx.execute("SELECT count(*) AS n FROM chunks").scalar() == 0
        done = threading.Event()

        def write() -> None:
            with database.write() as w:
                _insert(w, "later", "text")
            done.set()

        thread = threading.Thread(target=write)
        thread.start()
        thread.join()
        assert done.is_set()
        assert tx.execute("SELECT count(*) AS n FROM chunks").scalar() == 0
    with database.read() as tx:
        assert tx.execute("SELECT count(*) AS n FROM chunks").scalar() == 1


def test_read_only_refuses_writes(database: PostgresDatabase, postgres_url: str) -> None:
    reader = PostgresDatabase(postgres_url, read_only=True)
    try:
        with pytest.raises(ReadOnlyError), reader.write():
            pass
        with reader.read() as tx, pytest.raises(ReadOnlyError):
            _insert(tx, "a", "x")
    finally:
        reader.close()


def test_memories_in_one_database_are_separate(postgres_server: str) -> None:
    import psycopg

    urls = [f"{postgres_server}&memory=sep_{n}" for n in ("a", "b")]
    dbs = [PostgresDatabase(u) for u in urls]
    try:
        for db, text in zip(dbs, ("alpha", "beta"), strict=True):
            db.bootstrap()
            with db.write() as tx:
                migrate(tx, "store", STORE_MIGRATIONS)
                _insert(tx, "s", text)
        for db, text in zip(dbs, ("alpha", "beta"), strict=True):
            with db.read() as tx:
                assert [r["text"] for r in tx.execute("SELECT text FROM chunks")] == [text]
    finally:
        for db in dbs:
            db.close()
        with psycopg.connect(postgres_server, autocommit=True) as conn:
            conn.execute("DROP SCHEMA IF EXISTS sep_a CASCADE; DROP SCHEMA IF EXISTS sep_b CASCADE")


def test_word_statistics_follow_inserts_updates_and_deletes(database: PostgresDatabase) -> None:
    def recount() -> tuple[dict[str, int], dict[str, int], tuple[int, int], tuple[int, int]]:
        with database.read() as tx:
            kept = {
                r["term"]: r["chunks"] for r in tx.execute("SELECT term, chunks FROM text_terms")
            }
            truth = {
                r["word"]: r["ndoc"]
                for r in tx.execute("SELECT word, ndoc FROM ts_stat('SELECT tsv FROM chunks')")
            }
            totals = tx.execute("SELECT chunks, tokens FROM text_totals").fetchone()
            real = tx.execute(
                "SELECT (SELECT count(*) FROM chunks) AS chunks, "
                "(SELECT coalesce(sum(cardinality(u.positions)), 0) "
                "FROM chunks c, unnest(c.tsv) u) AS tokens"
            ).fetchone()
        assert totals is not None and real is not None
        return kept, truth, (totals[0], totals[1]), (real[0], real[1])

    with database.write() as tx:
        ids = [
            _insert(tx, f"s{i}", t)
            for i, t in enumerate(
                ["Deploying the servers", "the server deploys", "cats and dogs", "The the the"]
            )
        ]
    kept, truth, totals, real = recount()
    assert kept == truth and totals == real
    assert kept["deploy"] == 2 and kept["the"] == 3  # stemmed; stop words kept
    with database.write() as tx:
        tx.execute(
            "UPDATE chunks SET text = 'only cats', "
            "tsv = to_tsvector('remembrances_text', 'only cats') WHERE id = ?",
            (ids[0],),
        )
        tx.execute("UPDATE chunks SET embed_text = 'x' WHERE id = ?", (ids[1],))
        tx.execute("DELETE FROM chunks WHERE id = ?", (ids[3],))
    kept, truth, totals, real = recount()
    assert kept == truth and totals == real
    assert kept["deploy"] == 1 and kept["cat"] == 2
    with database.write() as tx:
        tx.execute("DELETE FROM chunks")
    kept, truth, totals, real = recount()
    assert kept == {} and totals == (0, 0)


HOSTILE = [
    "what's new?",
    "a & b | !c <-> d:* (e)",
    "'; DROP TABLE chunks; --",
    "\\ \\\\ ' '' \"",
    "NEAR AND OR NOT",
    "to be or not to be",
    "résumé naïve 東京 emoji🎉",
    "foo_bar getUserName x-y 3.14",
    "\x00\x01",
    "?",
]


@pytest.mark.parametrize("query", HOSTILE)
def test_hostile_queries_become_valid_or_queries(database: PostgresDatabase, query: str) -> None:
    with database.write() as tx:
        _insert(tx, "a", "what is new in the user name handling? to be, or not")
    text = tsquery_text(query)
    with database.read() as tx:
        if text is None:
            assert not any(ch.isalnum() for ch in query)
            return
        found = tx.execute(
            "SELECT count(*) AS n FROM chunks WHERE tsv @@ to_tsquery('remembrances_text', ?)",
            (text,),
        ).scalar()
    assert found >= 0
    assert " | " in text or len(text.split("'")) == 3


def test_or_query_finds_any_word_and_stop_word_queries_work(database: PostgresDatabase) -> None:
    with database.write() as tx:
        _insert(tx, "a", "The deployment failed on Tuesday")
        _insert(tx, "b", "to be or not to be")
    with database.read() as tx:

        def hits(query: str) -> list[str]:
            return sorted(
                r["source"]
                for r in tx.execute(
                    "SELECT source FROM chunks WHERE tsv @@ to_tsquery('remembrances_text', ?)",
                    (tsquery_text(query),),
                )
            )

        assert hits("why did the deployments fail?") == ["a"]  # stems, OR over the words
        assert hits("to be or not to be") == ["b"]  # only stop words: still a query
        assert hits("nothing matches zebra") == []


def _backends(database: PostgresDatabase) -> set[int]:
    """The server processes of this database's connections (readers and writer)."""
    with database.write() as tx:
        rows = tx.execute(
            "SELECT pid FROM pg_stat_activity WHERE application_name = 'remembrances'"
        ).fetchall()
    return {int(r["pid"]) for r in rows}


def test_reads_share_a_few_connections_however_many_threads_read(
    database: PostgresDatabase,
) -> None:
    # a server's worker threads never end: a reader per thread held about 40
    # connections per server, and three servers took all of PostgreSQL's 100
    before = _backends(database)
    started, release = threading.Barrier(17), threading.Event()
    seen: set[int] = set()

    def read_and_wait() -> None:
        with database.read() as tx:
            seen.add(int(tx.execute("SELECT pg_backend_pid() AS pid").scalar()))
        started.wait()
        release.wait()  # the thread lives on, as a server's do
        with database.read() as tx:
            tx.execute("SELECT 1")

    threads = [threading.Thread(target=read_and_wait, daemon=True) for _ in range(16)]
    for thread in threads:
        thread.start()
    try:
        started.wait(timeout=60)
        assert len(seen) <= MAX_READERS
        assert len(_backends(database) - before) <= MAX_READERS
    finally:
        release.set()
        for thread in threads:
            thread.join(timeout=60)
    with database.read() as tx:  # this thread reads too
        assert tx.execute("SELECT 2 AS n").scalar() == 2


def test_a_read_inside_a_read_sees_the_same_snapshot(database: PostgresDatabase) -> None:
    with database.read() as outer, database.read() as inner:
        pid = "SELECT pg_backend_pid() AS pid"
        assert outer.execute(pid).scalar() == inner.execute(pid).scalar()


def test_connections_the_server_dropped_are_replaced_not_failed(
    database: PostgresDatabase, postgres_url: str
) -> None:
    # after PostgreSQL restarted, the first call on each old connection failed
    with database.read() as tx:
        reader = int(tx.execute("SELECT pg_backend_pid() AS pid").scalar())
    with database.write() as tx:
        writer = int(tx.execute("SELECT pg_backend_pid() AS pid").scalar())
    other = PostgresDatabase(postgres_url)
    try:
        with other.write() as tx:
            for pid in (reader, writer):
                tx.execute("SELECT pg_terminate_backend(?)", (pid,))
    finally:
        other.close()
    with database.read() as tx:
        assert tx.execute("SELECT pg_backend_pid() AS pid").scalar() != reader
    with database.write() as tx:
        assert tx.execute("SELECT pg_backend_pid() AS pid").scalar() != writer


def test_the_first_read_after_every_reader_was_dropped_succeeds(
    database: PostgresDatabase, postgres_url: str
) -> None:
    # a restart drops every idle reader: replacing one and taking the next dead one
    # failed the first two reads
    together = threading.Barrier(MAX_READERS)
    pids: list[int] = []

    def hold() -> None:
        with database.read() as tx:
            pids.append(int(tx.execute("SELECT pg_backend_pid() AS pid").scalar()))
            together.wait(timeout=60)

    threads = [threading.Thread(target=hold) for _ in range(MAX_READERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(set(pids)) == MAX_READERS
    other = PostgresDatabase(postgres_url)
    try:
        with other.write() as tx:
            for pid in pids:
                tx.execute("SELECT pg_terminate_backend(?)", (pid,))
    finally:
        other.close()
    with database.read() as tx:
        assert tx.execute("SELECT 1 AS n").scalar() == 1


def test_a_closed_database_is_freed_though_its_threads_live_on(postgres_url: str) -> None:
    gone = []
    for _ in range(5):
        db = PostgresDatabase(postgres_url)
        db.bootstrap()
        with db.read() as tx:  # this (long-lived) thread gets a reader
            tx.execute("SELECT 1")
        db.close()
        gone.append(weakref.ref(db))
        del db, tx
    gc.collect()
    assert [ref() for ref in gone] == [None] * 5
