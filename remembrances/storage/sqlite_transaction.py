"""The :class:`~.transaction.Transaction` of the SQLite engine, over one apsw connection."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import apsw

from .transaction import Dialect, Params, Row, row_type


class SqliteRows:
    """The rows of one apsw cursor."""

    __slots__ = ("_cls", "_cursor")

    def __init__(self, cursor: apsw.Cursor) -> None:
        self._cursor = cursor
        self._cls: type[Row] | None = None

    def _row_type(self) -> type[Row]:
        # The description exists only while the statement has a row to give.
        if self._cls is None:
            self._cls = row_type(tuple(d[0] for d in self._cursor.get_description()))
        return self._cls

    def __iter__(self) -> Iterator[Row]:
        first = self.fetchone()
        if first is None:
            return
        yield first
        yield from map(type(first), self._cursor)

    def fetchone(self) -> Row | None:
        values = self._cursor.fetchone()
        return None if values is None else self._row_type()(values)

    def fetchall(self) -> list[Row]:
        return list(self)

    def scalar(self) -> Any:
        values = self._cursor.fetchone()
        return None if values is None else values[0]


class SqliteTransaction:
    """A transaction on an apsw connection the engine has already begun."""

    __slots__ = ("connection",)

    def __init__(self, connection: apsw.Connection) -> None:
        #: The apsw connection, for the SQLite engine's own use (FTS5 tokenizers,
        #: blob I/O); domain layers never touch it.
        self.connection = connection

    @property
    def dialect(self) -> Dialect:
        return "sqlite"

    def execute(self, sql: str, params: Params = ()) -> SqliteRows:
        return SqliteRows(self.connection.execute(sql, params))

    def executemany(self, sql: str, seq_of_params: Iterable[Params]) -> None:
        for _ in self.connection.executemany(sql, seq_of_params):
            pass  # a statement with RETURNING yields rows; nobody asked for them

    def changes(self) -> int:
        return int(self.connection.changes())
