"""A memory belongs to the process that opened it, not to a child forked from it.

SQLite connections, PostgreSQL sockets, locks held by other threads and worker
threads do not survive ``fork()``: a child that used the memory its parent opened
(gunicorn ``--preload``, ``multiprocessing`` with the fork start method) got an empty
``enrich_context`` after its timeout, or hung on a lock a vanished thread held. So
a child's first use raises :class:`~remembrances.errors.ClosedError`, saying to open
the memory again in that process; what it inherited is never touched (closing a
copied SQLite connection can act on the parent's locks and files), only kept.
"""

from __future__ import annotations

import os

from ..errors import ClosedError

#: What forked children inherited and must neither use nor close.
_INHERITED: list[object] = []


def check_same_process(opened_in: int, location: str) -> None:
    """Raise ``ClosedError`` when this is not the process ``opened_in``."""
    if os.getpid() != opened_in:
        raise ClosedError(
            f"the memory {location} was opened in process {opened_in}, and this process "
            f"({os.getpid()}) was forked from it; open it again here (in a server, once "
            "per worker after the fork: gunicorn's post_fork, a worker's startup)"
        )


def leave_inherited(*things: object) -> None:
    """Keep ``things`` (connections a forked child inherited) referenced and unused."""
    _INHERITED.extend(things)
