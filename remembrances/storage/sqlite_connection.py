"""Opening the one SQLite file: apsw, sqlite-vec, and the settings every connection needs.

apsw is used instead of the standard ``sqlite3`` module because it bundles a current
SQLite (FTS5, JSON1) and can always load extensions; many platform builds cannot.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal, cast

import apsw
import sqlite_vec

from ..errors import (
    ClosedError,
    CorruptFileError,
    NotAMemoryError,
    ReadOnlyError,
    RemembrancesError,
    StorageError,
)
from . import text_match
from .processes import check_same_process, leave_inherited

log = logging.getLogger(__name__)

#: An apsw connection, typed loosely: apsw types every value as the union of SQLite
#: types, and our SQL knows what each column holds.
Connection = Any

#: How long a writer waits for another process's write lock before giving up.
BUSY_TIMEOUT_MS = 30_000
#: A WAL larger than this is started over after a commit (``Database._bound_wal``).
WAL_RESTART_BYTES = 64 * 1024 * 1024
#: How long a commit that restarts the WAL waits for the reads using it to end.
WAL_RESTART_WAIT_MS = 250
#: How long ``Database.vacuum`` tries to copy its rewrite back while reads use the WAL.
VACUUM_SETTLE_S = 5.0


def connect(
    path: str | os.PathLike[str],
    *,
    read_only: bool = False,
    inspect: Callable[[apsw.Connection], None] | None = None,
) -> apsw.Connection:
    """Open ``path`` with sqlite-vec loaded and the pragmas below applied.

    ``inspect`` sees the connection before anything is written to the file (the
    WAL setting is the first write); whatever it raises closes the connection.
    """
    path = Path(path)
    if read_only:
        flags = apsw.SQLITE_OPEN_READONLY
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        flags = apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE
    conn: apsw.Connection | None = None
    try:
        conn = apsw.Connection(str(path), flags=flags)
        try:
            _configure(conn, inspect)
        except (apsw.ReadOnlyError, apsw.CantOpenError):
            # A WAL file in a folder this user cannot write, or on a read-only file
            # system (no -shm can be made): readable only as an immutable snapshot,
            # which does not read the -wal file, so only when that holds nothing.
            if not path.is_file():
                raise
            _check_no_pending_wal(path)
            conn.close()
            uri = "file:" + urllib.parse.quote(str(path.resolve())) + "?immutable=1"
            conn = apsw.Connection(uri, flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
            _configure(conn, inspect)
    except BaseException as exc:
        if conn is not None:
            conn.close()
        if isinstance(exc, apsw.Error):
            raise _open_error(exc, path) from exc
        raise
    return conn


def _check_no_pending_wal(path: Path) -> None:
    """StorageError when ``path``'s -wal file holds writes not yet in the file: read as
    an immutable snapshot, the memory would silently lack them."""
    wal = Path(f"{path}-wal")
    try:
        pending = wal.stat().st_size > 0
    except OSError:
        return  # no -wal file
    if pending:
        raise StorageError(
            f"cannot open the memory file {str(path)!r} here: its -wal file holds changes "
            f"not yet written into it, which this user cannot read ({why_not_writable(path)}); "
            "open it once where it is writable (any command writes them in), or copy the "
            "file with its -wal and -shm files somewhere writable"
        )


def _open_error(exc: apsw.Error, path: Path) -> RemembrancesError:
    if isinstance(exc, apsw.CantOpenError):
        if not path.exists() and not _writable_folder(path):
            return StorageError(
                f"cannot create the memory file {str(path)!r}: its folder is not writable "
                "by this user; choose another path (--db) or change the folder's permissions"
            )
        return StorageError(f"cannot open the memory file {str(path)!r}: {exc}")
    if isinstance(exc, apsw.NotADBError):
        return NotAMemoryError(
            f"{str(path)!r} is not a SQLite database, so not a remembrances memory; "
            "point --db at a memory file (or a new path to create one)"
        )
    return sqlite_error(exc, str(path))


def _writable_folder(path: Path) -> bool:
    return os.access(path.parent, os.W_OK | os.X_OK)


def why_not_writable(path: Path) -> str:
    """Why SQLite opened ``path`` read-only: the file, or its folder, where a memory in
    WAL mode keeps its ``-wal`` and ``-shm`` files."""
    if _read_only_file_system(path):
        return "it is on a read-only file system"
    if os.access(path, os.W_OK) and not _writable_folder(path):
        return (
            f"its folder {str(path.parent)!r} is not writable by this user (SQLite keeps "
            "the memory's -wal and -shm files beside it)"
        )
    return "the file is not writable by this user"


def _read_only_file_system(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):  # statvfs: not on Windows
        return False


FileKind = Literal["new", "empty", "memory", "other"]


def file_kind(path: str | os.PathLike[str]) -> FileKind:
    """What is at ``path``, looked at without writing a byte to it.

    "new": nothing there; "empty": a 0-byte file or a SQLite file without tables;
    "memory": a file whose ``meta`` table records a store schema; "other": a SQLite
    file holding someone else's tables. Not SQLite at all raises NotAMemoryError.
    """
    path = Path(path)
    if not path.exists():
        return "new"
    if path.is_file() and path.stat().st_size == 0:
        return "empty"
    conn = connect(path, read_only=True)
    try:
        with _mapped(str(path)):
            return kind_of(conn)
    finally:
        conn.close()


def kind_of(conn: apsw.Connection) -> FileKind:
    """What an open file holds: "empty", "memory" or "other" (see :func:`file_kind`)."""
    names = {str(r[0]) for r in conn.execute("SELECT name FROM sqlite_master")}
    if not names:
        return "empty"
    if "meta" not in names:
        return "other"
    row = conn.execute("SELECT 1 FROM meta WHERE key = 'schema:store'").fetchone()
    return "memory" if row is not None else "other"


def _set_wal(conn: apsw.Connection) -> None:
    """``PRAGMA journal_mode=WAL``, waiting like any write. On a new file (still in
    rollback mode) SQLite answers "locked" at once, without the busy handler, while
    another connection holds its write lock (waiting could deadlock them): two
    processes creating one memory at once then failed. So wait here, and retry."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except apsw.BusyError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.02)


def _configure(
    conn: apsw.Connection, inspect: Callable[[apsw.Connection], None] | None = None
) -> None:
    # Wait (instead of failing with "database is locked") while another
    # process holds the write lock.
    conn.set_busy_timeout(BUSY_TIMEOUT_MS)
    conn.enable_load_extension(True)
    conn.load_extension(sqlite_vec.loadable_path())
    conn.enable_load_extension(False)
    if inspect is not None:
        inspect(conn)
    if not conn.readonly("main"):
        # WAL: readers never block the writer and the writer never blocks readers.
        _set_wal(conn)
        # A WAL that was reset is cut back to this size rather than kept at its peak.
        conn.execute(f"PRAGMA journal_size_limit={WAL_RESTART_BYTES}")
    # In WAL mode NORMAL is durable across application crashes (not power loss)
    # and avoids an fsync per commit.
    conn.execute("PRAGMA synchronous=NORMAL")
    # Domain tables reference each other (files -> projects, symbols -> files).
    conn.execute("PRAGMA foreign_keys=ON")
    # 64 MiB page cache: vec0 bulk inserts slow down sharply with the default 2 MiB.
    conn.execute("PRAGMA cache_size=-65536")
    # Temporary b-trees (sorts, large IN lists) in memory, not in temp files.
    conn.execute("PRAGMA temp_store=MEMORY")
    # fts_totals(chunks_fts): the store's size behind text scores (text_match.py).
    text_match.register(conn)


def sqlite_error(exc: apsw.Error, path: str) -> RemembrancesError:
    """An apsw exception as the typed error a user can act on (none leaves the API)."""
    if isinstance(exc, apsw.FullError):
        return StorageError(f"the disk holding {path!r} is full; free space and retry ({exc})")
    if isinstance(exc, apsw.ReadOnlyError):
        return ReadOnlyError(f"{path!r} is not writable: {exc}")
    if isinstance(exc, apsw.IOError):
        return StorageError(f"I/O error on {path!r} (disk full or failing?): {exc}")
    if isinstance(exc, apsw.BusyError):
        return StorageError(f"{path!r} is locked by another writer; try again ({exc})")
    if isinstance(exc, apsw.CorruptError | apsw.NotADBError):
        return CorruptFileError(
            f"{path!r} is damaged ({exc}); run `remembrances --db {path} check` to see what "
            "can be saved"
        )
    if isinstance(exc, apsw.ConnectionClosedError):
        return ClosedError(f"the memory {path!r} was closed; open it again to use it")
    return StorageError(f"SQLite failed on {path!r}: {type(exc).__name__}: {exc}")


@contextlib.contextmanager
def _mapped(path: str) -> Iterator[None]:
    try:
        yield
    except apsw.Error as exc:
        raise sqlite_error(exc, path) from exc


class Database:
    """The connections of one process to one file: one writer, a reader per thread.

    Writes go through one connection guarded by a re-entrant lock, so that a
    transaction (several statements) is atomic with respect to the other threads;
    they start with ``BEGIN IMMEDIATE`` so that the write lock is taken up front
    and the busy timeout applies, instead of failing later when a read lock cannot
    be upgraded. Reads use a connection of their own thread: in WAL mode readers
    never wait for each other or for the writer, so searches from many threads
    run at the same time. A thread that has ended leaves its reader to the next new
    thread (the others it left are closed): a server's worker threads come and go
    (anyio's end after 10 s idle), and readers kept until ``close`` ran ``serve`` out
    of file descriptors.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        read_only: bool = False,
        inspect: Callable[[apsw.Connection], None] | None = None,
    ) -> None:
        self.path = str(path)
        self.read_only = read_only
        self.conn = connect(path, read_only=read_only, inspect=inspect)
        # SQLite opens a file it cannot write read-only: searches work, writes are refused.
        self.read_only_reason = "it was opened with read_only=True"
        if not read_only and self.conn.readonly("main"):
            self.read_only = True
            self.read_only_reason = why_not_writable(Path(path))
        self.lock = threading.RLock()
        self._depth = 0
        self._owner: int | None = None  # the thread inside a write transaction
        self._local = threading.local()
        self._readers: list[tuple[threading.Thread, apsw.Connection]] = []
        self._readers_lock = threading.Lock()
        self._closed = False
        self.opened_in = os.getpid()
        self._wal_retry_above = 0

    @property
    def closed(self) -> bool:
        """Closed, or inherited by a forked child (:mod:`.processes`)."""
        return self._closed or os.getpid() != self.opened_in

    def close(self) -> None:
        if os.getpid() != self.opened_in:  # a forked child: its copies stay untouched
            self._closed = True
            leave_inherited(self.conn, *(r for _, r in self._readers))
            return
        with self.lock, self._readers_lock:
            self._closed = True
            for _, reader in self._readers:
                try:
                    reader.close()
                except apsw.ThreadingViolationError:
                    # a search past its deadline still reads with it (enrichment leaves
                    # late searches running): it is closed once that search lets go
                    log.debug("a reader of %s is busy in another thread; left to close", self.path)
            self._readers.clear()
            self.conn.close()

    def _check_open(self) -> None:
        check_same_process(self.opened_in, repr(self.path))
        if self._closed:
            raise ClosedError(f"the memory {self.path!r} was closed; open it again to use it")

    @contextlib.contextmanager
    def write(self) -> Iterator[Connection]:
        """A write transaction; nested calls on the same thread join the outer one."""
        self._check_open()  # first: a forked child's lock may be held by no thread
        if self.read_only:
            raise ReadOnlyError(f"cannot write to {self.path!r}: {self.read_only_reason}")
        with self.lock:
            if self._owner == threading.get_ident():
                self._depth += 1
                try:
                    yield self.conn
                finally:
                    self._depth -= 1
                return
            try:
                self.conn.execute("BEGIN IMMEDIATE")
            except apsw.ReadOnlyError as exc:
                raise ReadOnlyError(f"{self.path!r} is not writable: {exc}") from exc
            except apsw.BusyError as exc:
                raise self._locked() from exc
            except apsw.Error as exc:
                raise sqlite_error(exc, self.path) from exc
            self._owner, self._depth = threading.get_ident(), 1
            try:
                yield self.conn
                self.conn.execute("COMMIT")
                self._bound_wal()
            except BaseException as exc:
                if not self.conn.get_autocommit():
                    with contextlib.suppress(apsw.Error):  # a damaged file may refuse even this
                        self.conn.execute("ROLLBACK")
                if isinstance(exc, apsw.Error):
                    raise sqlite_error(exc, self.path) from exc
                raise
            finally:
                self._owner, self._depth = None, 0

    def _locked(self) -> StorageError:
        return StorageError(
            f"{self.path!r} stayed locked by another writer for "
            f"{BUSY_TIMEOUT_MS // 1000} s; try again"
        )

    def _bound_wal(self) -> None:
        """Start the WAL over (and truncate it) once it passes ``WAL_RESTART_BYTES``.
        SQLite's own checkpoints copy pages back but never start the WAL over while some
        read is open, and with threads searching back to back one always is: a 31 MB
        memory grew a 2.3 GB WAL in 90 s. The checkpoint waits (``WAL_RESTART_WAIT_MS``
        at most) for the reads that use the WAL to end; reads that begin after it read
        the database file."""
        try:
            size = os.path.getsize(self.path + "-wal")
        except OSError:
            return
        if size <= max(WAL_RESTART_BYTES, self._wal_retry_above):
            return
        # a read held open (an export) keeps it from restarting: try again only once the
        # WAL has grown by as much again, not at every commit (each would wait)
        self._wal_retry_above = 0 if self._truncate_wal() else size + WAL_RESTART_BYTES

    def _truncate_wal(self) -> bool | None:
        """One checkpoint that copies the WAL back and truncates it, waiting at most
        ``WAL_RESTART_WAIT_MS`` for the reads using it: True when it did, False when
        reads were still in the way, None when it failed."""
        self.conn.set_busy_timeout(WAL_RESTART_WAIT_MS)
        try:
            busy = self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()[0][0]
        except apsw.Error as exc:  # a full disk, say: a later checkpoint does it
            log.debug("could not copy back the WAL of %s: %s", self.path, exc)
            return None
        finally:
            self.conn.set_busy_timeout(BUSY_TIMEOUT_MS)
        return not busy

    @contextlib.contextmanager
    def read(self) -> Iterator[Connection]:
        """A read snapshot: every statement inside sees the same committed state.

        Inside this thread's own write transaction it reads through the writer, so
        that it sees what the transaction wrote so far.
        """
        self._check_open()
        if self._owner == threading.get_ident():
            yield self.conn
            return
        with _mapped(self.path):
            conn = self._reader()
            if not conn.get_autocommit():  # a nested read on this thread
                yield conn
                return
            conn.execute("BEGIN")
            try:
                yield conn
            finally:
                if not self.closed:
                    conn.execute("COMMIT")

    def _reader(self) -> apsw.Connection:
        conn: apsw.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._new_reader()
            self._local.conn = conn
        return conn

    def _new_reader(self) -> apsw.Connection:
        """This thread's reader: one an ended thread left, else a new one."""
        with self._readers_lock:
            kept: list[tuple[threading.Thread, apsw.Connection]] = []
            left: list[apsw.Connection] = []
            for thread, reader in self._readers:
                if thread.is_alive():
                    kept.append((thread, reader))
                else:
                    left.append(reader)
            conn: apsw.Connection | None = None
            for reader in left:
                if conn is None and reader.get_autocommit():  # no read left open in it
                    conn = reader
                else:
                    with contextlib.suppress(apsw.Error):
                        reader.close()
            if conn is None:
                conn = connect(self.path, read_only=self.read_only)
            self._readers = [*kept, (threading.current_thread(), conn)]
        return conn

    def vacuum(self) -> int:
        """Rewrite the file without its free pages, then copy the rewrite back from the
        WAL so that the file itself shrinks; returns the file's size once it has.

        SQLite reuses the pages deletes free but never gives them back to the disk by
        itself. Holds the write lock throughout (other writers wait, as for any long
        write); reads go on, on the file as it was. A read begun before the rewrite
        keeps it in the WAL: after ``VACUUM_SETTLE_S`` the file is left to shrink at the
        checkpoint after those reads end.
        """
        self._check_open()
        if self.read_only:
            raise ReadOnlyError(f"cannot compact {self.path!r}: {self.read_only_reason}")
        with self.lock:
            if self._owner is not None:
                raise StorageError("cannot compact the file inside a write transaction")
            try:
                # VACUUM builds the new file in a temporary database: on disk (the temp
                # folder), not in memory, where a 640 MB file took 770 MB of RAM
                self.conn.execute("PRAGMA temp_store=FILE")
                try:
                    self.conn.execute("VACUUM")
                finally:
                    self.conn.execute("PRAGMA temp_store=MEMORY")
                size = self.conn.execute(
                    "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()"
                ).fetchall()[0][0]
            except apsw.BusyError as exc:
                raise self._locked() from exc
            except apsw.Error as exc:
                raise sqlite_error(exc, self.path) from exc
            self._settle_wal(VACUUM_SETTLE_S)
            return cast(int, size)

    def _settle_wal(self, seconds: float) -> None:
        """Copy the WAL back into the file and truncate it, trying for up to ``seconds``
        while reads begun before the last commit still use it."""
        deadline = time.monotonic() + seconds
        while self._truncate_wal() is False and time.monotonic() < deadline:
            pass  # each try waits for the reads (WAL_RESTART_WAIT_MS)

    @property
    def in_transaction(self) -> bool:
        """Whether this thread is inside a write transaction."""
        return self._owner == threading.get_ident()
