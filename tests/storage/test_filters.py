"""Filter compilation is a pure function: these tests need no database."""

from __future__ import annotations

import math

import pytest

from remembrances.errors import InvalidInputError
from remembrances.storage.filters import ChunkFilter, metadata_condition


def test_no_filter_is_true_and_unfiltered() -> None:
    f = ChunkFilter.of()
    assert f.unfiltered
    assert f.sql() == ("1", [])
    assert f.sql("postgresql") == ("TRUE", [])


def test_names_become_in_lists_with_parameters() -> None:
    f = ChunkFilter.of(kind="kb", collection=["a", "b"], source="x.md")
    assert not f.unfiltered
    sql, params = f.sql()
    assert sql == "1 AND c.kind IN (?) AND c.collection IN (?,?) AND c.source IN (?)"
    assert params == ["kb", "a", "b", "x.md"]


def test_an_empty_list_matches_nothing() -> None:
    sql, params = ChunkFilter.of(kind=[]).sql()
    assert sql == "1 AND 0" and params == []
    assert ChunkFilter.of(collection=[]).sql("postgresql") == ("TRUE AND FALSE", [])


def test_time_window() -> None:
    sql, params = ChunkFilter.of(since=10.0, until=20.0).sql()
    assert sql == "1 AND c.ts >= ? AND c.ts <= ?" and params == [10.0, 20.0]


def test_metadata_values_and_keys_are_parameters_never_sql() -> None:
    hostile = "x') OR 1=1 --"
    sql, params = ChunkFilter.of(where={hostile: hostile}).sql()
    assert hostile not in sql
    assert params == [hostile, hostile]
    assert "json_each(c.metadata)" in sql


def test_metadata_operators() -> None:
    sql, params = metadata_condition("n", {"$gte": 2, "$lt": 5})
    assert sql.count("EXISTS") == 2 and "j.value >= ?" in sql and "j.value < ?" in sql
    assert sql.count("j.type IN ('integer', 'real')") == 2  # numbers compare with numbers
    assert params == ["n", 2, "n", 5]
    sql, params = metadata_condition("tag", {"$in": ["a", "b"]})
    assert sql.count("j.type = 'text' AND j.value = ?") == 2 and params == ["tag", "a", "b"]
    assert metadata_condition("tag", []) == ("0", [])
    sql, params = metadata_condition("gone", None)
    assert "j.type = 'null'" in sql and params == ["gone"]


def test_postgresql_compares_metadata_as_jsonb() -> None:
    sql, params = metadata_condition("tag", ["a", 1], "postgresql")
    assert "jsonb_each(c.metadata)" in sql
    assert "jsonb_typeof(j.value) = 'string' AND j.value = CAST(? AS jsonb)" in sql
    assert "jsonb_typeof(j.value) = 'number' AND j.value = CAST(? AS jsonb)" in sql
    assert params == ["tag", '"a"', "1"]
    sql, _ = metadata_condition("gone", None, "postgresql")
    assert "jsonb_typeof(j.value) = 'null'" in sql


@pytest.mark.parametrize(
    "where",
    [
        {"n": {"$regex": "x"}},
        {"n": math.nan},
        {"n": 2**70},
        {"n": object()},
        {"": 1},
        {"n": {"$in": "ab"}},
        {"n": {"$gt": None}},
        "not a mapping",
    ],
)
def test_bad_conditions_are_refused_when_the_filter_is_made(where: object) -> None:
    with pytest.raises(InvalidInputError):
        ChunkFilter.of(where=where)  # type: ignore[arg-type]


def test_bad_names_are_refused() -> None:
    with pytest.raises(InvalidInputError):
        ChunkFilter.of(kind=["ok", 3])  # type: ignore[list-item]
    with pytest.raises(InvalidInputError):
        ChunkFilter.of(collection="\ud800")
