"""One shape for the progress reports of every long call.

Ingesting a folder, indexing a repository, embedding a backlog, re-embedding a
file and logging a long conversation all report the same three things: which
phase they are in, how much of it is done, and how much there is (None when the
call cannot know, e.g. while reading a stream). A caller writes one callback
and passes it to any of them; the CLI turns it into a bar without guessing.
"""

from __future__ import annotations

from typing import Protocol


class Progress(Protocol):
    """``progress(phase, done, total)``: ``done`` of ``total`` items of ``phase``.

    Called with ``done`` rising within a phase; a new ``phase`` starts a new
    count. ``total`` is None when it is not known in advance. Each call names
    its phases in its docstring (e.g. ``"files"``/``"embedding"`` for a KB
    ingest; ``"hashed"``/``"parsed"``/``"written"``/``"embedded"`` for a code index).
    """

    def __call__(self, phase: str, done: int, total: int | None, /) -> None: ...
