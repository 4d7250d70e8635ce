"""Metadata filters mean the same on SQLite's JSON and PostgreSQL's jsonb, also when the
stored values and the filter's are of different JSON types: a value matches only
values of its own type (numbers match numbers, ``1`` never matches ``true`` or
``"1"``), and ``$ne`` matches every present value that is not equal. The keys the
chunk table indexes (``user``, ``session``: filters.INDEXED_KEYS) mean the same."""

from __future__ import annotations

from typing import Any

import pytest

from remembrances import Chunk, InvalidInputError, Store

pytestmark = pytest.mark.backends("sqlite", "postgresql")

STORED: dict[str, Any] = {
    "true": True,
    "false": False,
    "one": 1,
    "one_real": 1.0,
    "zero": 0,
    "five": 5,
    "big": 2**40,
    "text_one": "1",
    "text_ten": "10",
    "text_b": "b",
    "null": None,
    "list": [1],
    "object": {"a": 1},
}

CASES: list[tuple[Any, set[str]]] = [
    (True, {"true"}),
    (False, {"false"}),
    (1, {"one", "one_real"}),
    (1.0, {"one", "one_real"}),
    (0, {"zero"}),
    ("1", {"text_one"}),
    (None, {"null"}),
    ([True, "1", 5], {"true", "text_one", "five"}),
    ({"$in": [0, False]}, {"zero", "false"}),
    ({"$gt": 0}, {"one", "one_real", "five", "big"}),
    ({"$gte": 1, "$lt": 5}, {"one", "one_real"}),
    ({"$gt": "0"}, {"text_one", "text_ten", "text_b"}),
    ({"$lt": "b"}, {"text_one", "text_ten"}),
    ({"$gte": False}, {"false", "true"}),
    ({"$gt": 2**39}, {"big"}),
    ({"$ne": 1}, set(STORED) - {"one", "one_real"}),
    ({"$ne": True}, set(STORED) - {"true"}),
    ({"$ne": None}, set(STORED) - {"null"}),
    ({"$eq": None}, {"null"}),
    ("[1]", set()),  # a list is not its JSON text
    ('{"a":1}', set()),  # nor an object (json_extract gives an object as its text)
]
KEYS = ["v", "user", "session"]


@pytest.fixture(params=KEYS)
def key(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def typed(store: Store, key: str) -> Store:
    for name, value in STORED.items():
        store.put_source("kb", name, [Chunk(f"item {name}", metadata={key: value})])
    store.put_source("kb", "absent", [Chunk("item absent", metadata={"other": 1})])
    return store


@pytest.mark.parametrize(("condition", "expected"), CASES, ids=[repr(c[0]) for c in CASES])
def test_each_json_type_matches_its_own(
    typed: Store, key: str, condition: Any, expected: set[str]
) -> None:
    for mode in ("text", "vector"):
        hits = typed.search("item", mode=mode, where={key: condition}, limit=50)
        assert {h.source for h in hits} == expected, mode
    assert typed.count() == len(STORED) + 1


def test_null_cannot_be_ordered(typed: Store, key: str) -> None:
    with pytest.raises(InvalidInputError, match=r"\$eq or \$ne"):
        typed.search("item", where={key: {"$lt": None}})
