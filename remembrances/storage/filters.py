"""Search filters as SQL: ``kind``/``collection``/``source``/time/metadata -> a WHERE fragment.

A pure function of its input (no database needed to build or test it), so every
engine and both search legs apply the same filter inside the search, never after
it. Values are always parameters; metadata keys are compared as data, never
spliced into the SQL. The fragment reads the chunk table under the alias ``c``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..errors import InvalidInputError
from ..validation import check_name
from .transaction import Dialect, marks

Where = Mapping[str, Any]
OPERATORS = {"$eq": "=", "$ne": "!=", "$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}

#: Per dialect: the always-true and always-false conditions, and a metadata
#: condition on one top-level key (its ``{}`` is the test on ``j.value``).
_TRUE = {"sqlite": "1", "postgresql": "TRUE"}
_FALSE = {"sqlite": "0", "postgresql": "FALSE"}
_EXISTS = {
    "sqlite": "EXISTS (SELECT 1 FROM json_each(c.metadata) j WHERE j.key = ? AND {})",
    "postgresql": "EXISTS (SELECT 1 FROM jsonb_each(c.metadata) j WHERE j.key = ? AND {})",
}
_IS_NULL = {"sqlite": "j.type = 'null'", "postgresql": "jsonb_typeof(j.value) = 'null'"}
#: Metadata keys the chunk table has an index on (store step 7), by dialect: the
#: expression the index holds. The event log scopes a search to a user or a session by
#: these; read through ``json_each`` alone, keeping 2,000 of 100,000 events to one user
#: read every event's metadata (40 ms). An equality on a text value adds the indexed
#: term, so the rows come from the index; the ``json_each`` test stays, so what matches
#: does not change.
INDEXED_KEYS = {
    "user": {
        "sqlite": "json_extract(c.metadata, '$.user')",
        "postgresql": "(c.metadata ->> 'user')",
    },
    "session": {
        "sqlite": "json_extract(c.metadata, '$.session')",
        "postgresql": "(c.metadata ->> 'session')",
    },
}
#: How a value is compared with ``j.value``: SQLite's json_each gives SQL values,
#: PostgreSQL's jsonb_each gives jsonb (compared with the value as JSON).
_VALUE = {"sqlite": "?", "postgresql": "CAST(? AS jsonb)"}
#: A stored value of the JSON type of the filter's value. Comparisons hold only
#: between values of one JSON type, so both engines agree: left alone, SQLite reads
#: ``true`` as 1 (``{"flag": 1}`` matched ``true``) and ranks any text above any
#: number, while jsonb compares across types by its own type order.
_OF_TYPE = {
    "sqlite": {
        "number": "j.type IN ('integer', 'real')",
        "string": "j.type = 'text'",
        "boolean": "j.type IN ('true', 'false')",
    },
    "postgresql": {
        "number": "jsonb_typeof(j.value) = 'number'",
        "string": "jsonb_typeof(j.value) = 'string'",
        "boolean": "jsonb_typeof(j.value) = 'boolean'",
    },
}


def _json_type(value: str | int | float | bool) -> str:
    if isinstance(value, bool):
        return "boolean"
    return "string" if isinstance(value, str) else "number"


def names(value: str | Sequence[str] | None, what: str) -> list[str] | None:
    """One name or several as a checked list (None: no filter; []: matches nothing)."""
    if value is None:
        return None
    if isinstance(value, str):
        return [check_name(value, what)]
    # bytes and mappings iterate, but as ints and keys: never what was meant
    if isinstance(value, bytes | bytearray | Mapping) or not isinstance(value, Iterable):
        raise InvalidInputError(
            f"{what} must be a name or a list of names, not {type(value).__name__}"
        )
    return [check_name(v, what) for v in value]


def _scalar(value: Any, key: str) -> Any:
    if value is None or isinstance(value, str | int | float | bool):
        if isinstance(value, float) and not math.isfinite(value):
            raise InvalidInputError(f"filter value for {key!r} must be finite")
        if isinstance(value, int) and not -(2**63) <= value < 2**63:
            raise InvalidInputError(f"filter value for {key!r} does not fit in 64 bits")
        return value
    raise InvalidInputError(
        f"filter value for {key!r} must be a string, number, boolean or None, "
        f"not {type(value).__name__}"
    )


@dataclass(frozen=True)
class ChunkFilter:
    """Which chunks a search or a count may see; every field None means all of them."""

    kinds: list[str] | None = None
    collections: list[str] | None = None
    sources: list[str] | None = None
    where: Where | None = None
    since: float | None = None
    until: float | None = None
    #: Per kind, metadata conditions only that kind's chunks must meet (a search of the
    #: whole memory kept to one user's events: documents and code are shared).
    kind_where: Mapping[str, Where] | None = None

    @classmethod
    def of(
        cls,
        *,
        kind: str | Sequence[str] | None = None,
        collection: str | Sequence[str] | None = None,
        source: str | Sequence[str] | None = None,
        where: Where | None = None,
        since: float | None = None,
        until: float | None = None,
        kind_where: Mapping[str, Where] | None = None,
    ) -> ChunkFilter:
        """A checked filter: a bad name or metadata condition raises here, before any work."""
        if where and not isinstance(where, Mapping):
            raise InvalidInputError("where must be a mapping of metadata key to value")
        if kind_where is not None and (
            not isinstance(kind_where, Mapping)
            or not all(isinstance(w, Mapping) for w in kind_where.values())
        ):
            raise InvalidInputError(
                "kind_where must map a kind to a mapping of metadata conditions"
            )
        scoped = {check_name(k, "kind"): dict(w) for k, w in (kind_where or {}).items() if w}
        made = cls(
            names(kind, "kind"),
            names(collection, "collection"),
            names(source, "source"),
            where or None,
            since,
            until,
            scoped or None,
        )
        made.sql("sqlite")  # validates the metadata conditions
        return made

    @property
    def unfiltered(self) -> bool:
        return all(
            v is None
            for v in (
                self.kinds,
                self.collections,
                self.sources,
                self.where,
                self.since,
                self.until,
                self.kind_where,
            )
        )

    @property
    def by_metadata(self) -> bool:
        """Whether it asks for more than the vector index's columns (kind, collection,
        time) can tell: sources or metadata, which only SQL over the chunks answers."""
        return self.sources is not None or bool(self.where) or bool(self.kind_where)

    def sql(self, dialect: Dialect = "sqlite") -> tuple[str, list[Any]]:
        """The WHERE fragment over the chunk alias ``c``, and its parameters."""
        clauses: list[str] = [_TRUE[dialect]]
        params: list[Any] = []
        for column, values in (
            ("kind", self.kinds),
            ("collection", self.collections),
            ("source", self.sources),
        ):
            if values is not None:
                if not values:  # an empty list matches nothing
                    clauses.append(_FALSE[dialect])
                    continue
                clauses.append(f"c.{column} IN ({marks(len(values))})")
                params.extend(values)
        if self.since is not None:
            clauses.append("c.ts >= ?")
            params.append(self.since)
        if self.until is not None:
            clauses.append("c.ts <= ?")
            params.append(self.until)
        if self.where:
            for key, value in self.where.items():
                clause, values = metadata_condition(key, value, dialect)
                clauses.append(clause)
                params.extend(values)
        for kind, conditions in (self.kind_where or {}).items():
            parts, values = [], [kind]
            for key, value in conditions.items():
                clause, given = metadata_condition(key, value, dialect)
                parts.append(clause)
                values.extend(given)
            clauses.append(f"(c.kind <> ? OR ({' AND '.join(parts)}))")
            params.extend(values)
        return " AND ".join(clauses), params


def metadata_condition(key: Any, value: Any, dialect: Dialect = "sqlite") -> tuple[str, list[Any]]:
    """One metadata condition: ``{"key": value}``, a list (any of), or ``{"$op": value}``."""
    if not isinstance(key, str) or not key:
        raise InvalidInputError(f"metadata filter keys must be non-empty strings, got {key!r}")
    check_name(key, "metadata filter key")
    exists, operand = _EXISTS[dialect], _VALUE[dialect]

    def compare(sign: str, given: Any) -> tuple[str, list[Any]]:
        """``j.value <sign> given`` between values of one JSON type (None: JSON null)."""
        v = _scalar(given, key)
        if v is None:
            if sign not in ("=", "!="):
                raise InvalidInputError(
                    f"filter on {key!r}: None (null) can be matched with $eq or $ne only"
                )
            null = _IS_NULL[dialect]
            return (null if sign == "=" else f"NOT {null}"), []
        typed = _OF_TYPE[dialect][_json_type(v)]
        bound = json.dumps(v) if dialect == "postgresql" else v
        if sign == "!=":  # any other value, of any type
            return f"NOT ({typed} AND j.value = {operand})", [bound]
        return f"({typed} AND j.value {sign} {operand})", [bound]

    if isinstance(value, list | tuple | set | frozenset):
        parts = [compare("=", v) for v in value]
        if not parts:
            return _FALSE[dialect], []
        either = " OR ".join(clause for clause, _ in parts)
        return exists.format(f"({either})"), [key, *(p for _, ps in parts for p in ps)]
    if isinstance(value, Mapping):
        clauses, params = [], []
        for op, given in value.items():
            if op == "$in":
                if not isinstance(given, list | tuple | set | frozenset):
                    raise InvalidInputError(f"$in for {key!r} takes a list of values")
                clause, values = metadata_condition(key, list(given), dialect)
                clauses.append(clause)
                params.extend(values)
            elif op in OPERATORS:
                clause, values = compare(OPERATORS[op], given)
                clauses.append(exists.format(clause))
                params.extend([key, *values])
            else:
                raise InvalidInputError(
                    f"unknown filter operator {op!r} for {key!r}; use one of "
                    f"{', '.join([*OPERATORS, '$in'])}"
                )
        return "(" + " AND ".join(clauses or [_TRUE[dialect]]) + ")", params
    clause, values = compare("=", value)
    if key in INDEXED_KEYS and isinstance(value, str):
        indexed = INDEXED_KEYS[key][dialect]
        return f"({indexed} = ? AND {exists.format(clause)})", [value, key, *values]
    return exists.format(clause), [key, *values]


def as_timestamp(value: float | datetime | str | None, what: str) -> float | None:
    """Seconds since the epoch (UTC). Naive datetimes are local time."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError as exc:
            raise InvalidInputError(f"{what} {value!r} is not an ISO 8601 time") from exc
    if isinstance(value, datetime):
        return value.timestamp()
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InvalidInputError(f"{what} must be a datetime, an ISO string or epoch seconds")
    return float(value)
