"""Long ``IN (?, ?, ...)`` lists, cut into statements of a bounded size.

A query by many ids or hashes binds one parameter per value. SQLite allows
32,766 parameters per statement and PostgreSQL 65,535, and a very long list
also makes each statement slower to prepare, so callers bind at most
:data:`IN_LIST_SIZE` values at a time and merge the rows themselves.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TypeVar

from .transaction import marks

T = TypeVar("T")

#: Values bound per statement: far below either engine's limit (the size every
#: batched lookup used before this module existed).
IN_LIST_SIZE = 500


def in_lists(values: Sequence[T], size: int = IN_LIST_SIZE) -> Iterator[tuple[list[T], str]]:
    """``values`` in slices of at most ``size``, each with its ``?,?,...`` placeholders
    (:func:`~remembrances.storage.transaction.marks`).

    ``for part, marks in in_lists(ids): execute(f"... IN ({marks})", part)``
    """
    for start in range(0, len(values), size):
        part = list(values[start : start + size])
        yield part, marks(len(part))
