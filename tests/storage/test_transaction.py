"""The transaction the store hands to domain layers: on a real SQLite file and on a
real PostgreSQL server (the same tests, through the backend fixture)."""

from __future__ import annotations

import pytest

from remembrances import Store
from remembrances.storage.transaction import Transaction, marks, row_type

pytestmark = pytest.mark.backends("sqlite", "postgresql")


def test_rows_read_by_column_name(store: Store) -> None:
    dialect = store.engine.dialect
    with store.transaction() as tx:
        tx.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, title TEXT, n INTEGER)")
        tx.executemany(
            "INSERT INTO notes (id, title, n) VALUES (?, ?, ?)", [(1, "a", 1), (2, "b", 2)]
        )
    with store.snapshot() as tx:
        assert tx.dialect == dialect
        rows = tx.execute("SELECT id, title, n AS count FROM notes ORDER BY id").fetchall()
        assert [(r["title"], r["count"]) for r in rows] == [("a", 1), ("b", 2)]
        assert rows[0].keys() == ["id", "title", "count"]
        assert rows[0].get("missing") is None
        with pytest.raises(KeyError, match="no column 'nope'"):
            rows[0]["nope"]
        assert tx.execute("SELECT count(*) AS n FROM notes").scalar() == 2
        assert tx.execute("SELECT 1 FROM notes WHERE title = 'z'").fetchone() is None
        assert tx.execute("SELECT 1 FROM notes WHERE title = 'z'").scalar() is None
        assert [r["title"] for r in tx.execute("SELECT title FROM notes")] == ["a", "b"]


def test_rows_stay_tuples_for_positional_callers(store: Store) -> None:
    with store.snapshot() as tx:
        row = tx.execute("SELECT 1 AS one, 'x' AS two").fetchone()
    assert row == (1, "x") and row[0] == 1 and row["two"] == "x"
    one, two = row
    assert (one, two) == (1, "x")


def test_changes_counts_the_last_statement(store: Store) -> None:
    with store.transaction() as tx:
        tx.execute("CREATE TABLE t (k TEXT PRIMARY KEY)")
        tx.executemany("INSERT INTO t (k) VALUES (?)", [("a",), ("b",), ("c",)])
        tx.execute("DELETE FROM t WHERE k IN (" + marks(2) + ")", ("a", "b"))
        assert tx.changes() == 2
        inserted = tx.execute(
            "INSERT INTO t (k) VALUES (?) ON CONFLICT (k) DO NOTHING RETURNING k", ("c",)
        ).fetchall()
        assert inserted == []


def test_a_failing_block_writes_nothing(store: Store) -> None:
    with store.transaction() as tx:
        tx.execute("CREATE TABLE t (k TEXT PRIMARY KEY)")
    with pytest.raises(RuntimeError), store.transaction() as tx:
        tx.execute("INSERT INTO t (k) VALUES ('kept?')")
        raise RuntimeError("boom")
    with store.snapshot() as tx:
        assert tx.execute("SELECT count(*) AS n FROM t").fetchone()["n"] == 0


def test_the_transaction_meets_the_protocol(store: Store) -> None:
    with store.snapshot() as tx:
        typed: Transaction = tx
        assert typed.execute("SELECT 2 AS two").fetchone() == (2,)


def test_row_types_are_shared_per_column_list() -> None:
    assert row_type(("a", "b")) is row_type(("a", "b"))
    assert row_type(("a", "a"))((1, 2))["a"] == 1  # a repeated name reads its first column
