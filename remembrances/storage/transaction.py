"""The transaction a domain layer (KB, events, code) gets from the store.

A layer never holds a driver connection: it writes SQL with ``?`` placeholders in
the subset SQLite and PostgreSQL both accept, and reads rows by column name.

Portable SQL, as the layers write it:
- ``?`` placeholders only (the PostgreSQL transaction turns them into ``%s``);
- ``INSERT ... ON CONFLICT (...) DO UPDATE SET ... = excluded....`` or ``DO NOTHING``,
  and ``RETURNING`` for generated ids; never ``INSERT OR REPLACE/IGNORE``, ``rowid``,
  ``GLOB`` or ``last_insert_rowid()``;
- a column alias for every computed column that is read by name
  (``SELECT count(*) AS n``: the engines name an unnamed expression differently).

Where a statement must differ (DDL, JSON access), the layer's table module keeps
the variants side by side, keyed by :attr:`Transaction.dialect`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, ClassVar, Literal, Protocol, SupportsIndex, overload

#: The SQL dialect of the engine behind a transaction.
Dialect = Literal["sqlite", "postgresql"]

#: Statement parameters: one value per ``?``, in order.
Params = Sequence[Any]


class Row(tuple[Any, ...]):
    """One result row: read its columns by name (``row["title"]``).

    A tuple underneath, so that it is cheap and compares equal to a tuple of its
    values; code written before the seam unpacked rows by position, and new code
    reads them by name. Every engine builds its rows with :func:`row_type`.
    """

    __slots__ = ()
    _columns: ClassVar[dict[str, int]] = {}

    @overload
    def __getitem__(self, key: str | SupportsIndex, /) -> Any: ...
    @overload
    def __getitem__(self, key: slice, /) -> tuple[Any, ...]: ...
    def __getitem__(self, key: str | SupportsIndex | slice, /) -> Any:
        if isinstance(key, str):
            try:
                return tuple.__getitem__(self, self._columns[key])
            except KeyError:
                raise KeyError(
                    f"no column {key!r} in this row (columns: {', '.join(self._columns)})"
                ) from None
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        return list(self._columns)

    def to_dict(self) -> dict[str, Any]:
        return {name: tuple.__getitem__(self, i) for name, i in self._columns.items()}

    def get(self, key: str, default: Any = None) -> Any:
        index = self._columns.get(key)
        return default if index is None else tuple.__getitem__(self, index)


@functools.lru_cache(maxsize=1024)
def row_type(columns: tuple[str, ...]) -> type[Row]:
    """The row class for one list of column names (made once, then reused)."""
    index: dict[str, int] = {}
    for i, name in enumerate(columns):
        index.setdefault(name, i)  # a repeated name reads its first column
    return type("Row", (Row,), {"__slots__": (), "_columns": index, "__getitem__": _getitem(index)})


def _getitem(index: dict[str, int]) -> Callable[[Row, Any], Any]:
    # A closure over this class's columns, with no attribute lookups: reading a
    # column by name costs about 3x less than Row.__getitem__ (listings read
    # every column of every row).
    get = tuple.__getitem__

    def __getitem__(self: Row, key: Any, /) -> Any:
        if key.__class__ is str:
            try:
                return get(self, index[key])
            except KeyError:
                raise KeyError(
                    f"no column {key!r} in this row (columns: {', '.join(index)})"
                ) from None
        return get(self, key)

    return __getitem__


class Rows(Protocol):
    """The rows of one statement, read once, in order."""

    def __iter__(self) -> Iterator[Row]: ...

    def fetchone(self) -> Row | None:
        """The next row, or None when there are no more."""
        ...

    def fetchall(self) -> list[Row]:
        """Every remaining row."""
        ...

    def scalar(self) -> Any:
        """The first column of the first row; None when there is no row."""
        ...


class Transaction(Protocol):
    """One open transaction (read or write) on the memory's database.

    Everything executed inside commits together when the ``with`` block of
    :meth:`Store.transaction` ends, or not at all when it raises. Inside
    :meth:`Store.snapshot` every statement sees the same committed state.
    """

    @property
    def dialect(self) -> Dialect:
        """Which SQL the engine speaks, for the few statements that must differ."""
        ...

    def execute(self, sql: str, params: Params = ()) -> Rows:
        """Run one statement (or, without params, a script of several)."""
        ...

    def executemany(self, sql: str, seq_of_params: Iterable[Params]) -> None:
        """Run one statement once per parameter sequence."""
        ...

    def changes(self) -> int:
        """Rows inserted, updated or deleted by the last :meth:`execute` (not by triggers)."""
        ...


def marks(count: int) -> str:
    """``?, ?, ?`` for an ``IN (...)`` list of ``count`` values."""
    return ",".join("?" * count)
