"""Connections to one memory's schema: psycopg 3, explicit transactions, rows by name.

Mirrors the SQLite engine's ``Database``: one writer connection shared by the
process's threads under a lock, and a small pool of read connections that a read
transaction takes and gives back (``MAX_READERS``). Writers to one
memory are serialised by a transaction-scoped advisory lock taken right after
``BEGIN`` (the ``BEGIN IMMEDIATE`` of SQLite): the domain layers' read-then-write
logic ("skip unchanged files", "replace a document") then means the same on both
engines, two hosts never deadlock on each other's rows, and a waiting writer
gives up after ``LOCK_TIMEOUT`` with a typed error. Reads run in ``REPEATABLE
READ READ ONLY`` transactions: one snapshot for every statement of a search, and
such transactions never fail with serialisation errors.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TypeVar

from ..errors import (
    ClosedError,
    InvalidInputError,
    ReadOnlyError,
    RemembrancesError,
    StorageError,
)
from ..storage.processes import check_same_process, leave_inherited
from ..storage.transaction import Dialect, Params, Row, row_type
from .url import PostgresTarget

try:
    import psycopg
    from psycopg import errors as pg_errors
except ImportError as exc:  # pragma: no cover - the extra is part of the dev install
    raise RemembrancesError(
        "a postgresql:// memory needs the postgres extra: pip install 'remembrances[postgres]'"
    ) from exc

T = TypeVar("T")

#: Seconds a writer waits for another writer's lock (SQLite's busy timeout is 30 s too).
LOCK_TIMEOUT_S = 30
#: Seconds to wait for the server when connecting.
CONNECT_TIMEOUT_S = 10
#: The first key of every advisory lock this library takes ("rmbr"), so that it does
#: not collide with an application's own advisory locks in the same database.
LOCK_SPACE = 0x726D6272
#: Second key of the lock taken while creating the extension or a memory's schema.
BOOTSTRAP_LOCK = 0
#: Attempts of :meth:`PostgresDatabase.run_write` on a serialisation failure or deadlock.
WRITE_ATTEMPTS = 5
#: Read connections one memory keeps per process. A read takes one for its transaction
#: and gives it back; a reader per thread held about 40 connections per server, and
#: three servers took all of PostgreSQL's 100.
MAX_READERS = 4
#: Seconds a read waits for one of the ``MAX_READERS`` to be given back.
READER_WAIT_S = 60


# -- SQL text: ``?`` placeholders become psycopg's ``%s`` ----------------------------


@functools.lru_cache(maxsize=4096)
def translate(sql: str) -> str:
    """``?`` -> ``%s`` and ``%`` -> ``%%`` outside quotes, comments and dollar quotes.

    The domain layers write ``?`` (the SQLite style); psycopg wants ``%s`` and reads
    every other ``%`` as the start of a placeholder.
    """
    out: list[str] = []
    i, n = 0, len(sql)
    while i < n:
        ch = sql[i]
        if ch in ("'", '"'):
            end = i + 1
            while end < n:
                if sql[end] == ch:
                    if end + 1 < n and sql[end + 1] == ch:  # '' inside a string
                        end += 2
                        continue
                    break
                end += 1
            out.append(sql[i : end + 1].replace("%", "%%"))
            i = end + 1
        elif sql.startswith("--", i):
            end = sql.find("\n", i)
            end = n if end < 0 else end
            out.append(sql[i:end].replace("%", "%%"))
            i = end
        elif sql.startswith("/*", i):
            end = sql.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(sql[i:end].replace("%", "%%"))
            i = end
        elif ch == "$" and (tag := _dollar_tag(sql, i)) is not None:
            end = sql.find(tag, i + len(tag))
            end = n if end < 0 else end + len(tag)
            out.append(sql[i:end].replace("%", "%%"))
            i = end
        elif ch == "?":
            out.append("%s")
            i += 1
        elif ch == "%":
            out.append("%%")
            i += 1
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _dollar_tag(sql: str, start: int) -> str | None:
    end = sql.find("$", start + 1)
    if end < 0:
        return None
    tag = sql[start : end + 1]
    inner = tag[1:-1]
    if inner == "" or (inner.isidentifier() and not inner[0].isdigit()):
        return tag
    return None


# -- rows ------------------------------------------------------------------------------


def _row_factory(cursor: Any) -> Callable[[Sequence[Any]], Row]:
    description = cursor.description
    return row_type(tuple(d.name for d in description) if description else ())


class Rows:
    """The rows of one statement (none for a statement that returns no rows)."""

    __slots__ = ("_cursor",)

    def __init__(self, cursor: Any) -> None:
        self._cursor = cursor

    def __iter__(self) -> Iterator[Row]:
        if self._cursor.description is None:
            return iter(())
        return iter(self._cursor)

    def fetchone(self) -> Row | None:
        if self._cursor.description is None:
            return None
        row: Row | None = self._cursor.fetchone()
        return row

    def fetchall(self) -> list[Row]:
        if self._cursor.description is None:
            return []
        rows: list[Row] = self._cursor.fetchall()
        return rows

    def scalar(self) -> Any:
        row = self.fetchone()
        return None if row is None else row[0]


class PostgresTransaction:
    """A transaction the database has begun, as the domain layers and the engine use it."""

    __slots__ = ("_changes", "connection", "reading")

    def __init__(self, connection: psycopg.Connection[Any], *, reading: bool = False) -> None:
        #: The psycopg connection, for the PostgreSQL engine's own use only.
        self.connection = connection
        #: A read-only transaction: see :func:`_never_stored`.
        self.reading = reading
        self._changes = 0

    @property
    def dialect(self) -> Dialect:
        return "postgresql"

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Rows:
        cursor = self.connection.cursor(row_factory=_row_factory)
        if params and _deletes(sql) and any(_holds_nul(p) for p in params):
            # nothing stored holds a NUL, so nothing matches: deleted nothing, as on
            # SQLite (made U+FFFF as a lookup's is, it deleted a name holding U+FFFF)
            self._changes = 0
            return Rows(cursor)
        try:
            if params:
                values = [_never_stored(p) for p in params] if self.reading else list(params)
                cursor.execute(translate(sql), values)
            else:  # no parameters: a script of several statements may run at once
                cursor.execute(sql.encode("utf-8"))
        except psycopg.Error as exc:
            raise postgres_error(exc) from exc
        self._changes = max(cursor.rowcount, 0)
        return Rows(cursor)

    def executemany(self, sql: str, seq_of_params: Iterable[Params]) -> None:
        rows = [list(p) for p in seq_of_params]
        if not rows:
            return
        cursor = self.connection.cursor()
        try:
            cursor.executemany(translate(sql), rows)
        except psycopg.Error as exc:
            raise postgres_error(exc) from exc
        self._changes = max(cursor.rowcount, 0)

    def changes(self) -> int:
        return self._changes


def _deletes(sql: str) -> bool:
    return sql.lstrip()[:6].upper() == "DELETE"


def _holds_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    return isinstance(value, list) and any(_holds_nul(v) for v in value)


def _never_stored(value: Any) -> Any:
    """``value`` with each NUL made U+FFFF. PostgreSQL text holds no NUL, so a value
    looked up with one (a source, a symbol's name) is stored nowhere; passed as it is,
    the lookup failed ("cannot store this value") where SQLite finds nothing. U+FFFF
    is a noncharacter, which no name should hold: only one stored with it in that
    very place would be found (names are not refused for it, so that memories that
    hold one stay readable)."""
    if isinstance(value, str):
        return value.replace("\x00", "\uffff") if "\x00" in value else value
    if isinstance(value, list):
        return [_never_stored(v) for v in value]
    return value


# -- errors ----------------------------------------------------------------------------


class ConflictError(StorageError):
    """A write lost a serialisation conflict or a deadlock; running it again succeeds."""


def postgres_error(exc: BaseException, where: str = "PostgreSQL") -> RemembrancesError:
    """A psycopg exception as the typed error a user can act on."""
    if isinstance(exc, RemembrancesError):
        return exc
    if isinstance(exc, pg_errors.SerializationFailure | pg_errors.DeadlockDetected):
        return ConflictError(f"{where}: a concurrent write conflicted; try again ({exc})")
    if isinstance(exc, pg_errors.LockNotAvailable):
        return StorageError(
            f"{where} stayed locked by another writer for {LOCK_TIMEOUT_S} s; try again"
        )
    if isinstance(exc, pg_errors.ReadOnlySqlTransaction | pg_errors.InsufficientPrivilege):
        return ReadOnlyError(f"{where} refused the write: {exc}")
    if isinstance(exc, pg_errors.DiskFull | pg_errors.OutOfMemory):
        return StorageError(f"{where} is out of space; free some and retry ({exc})")
    if isinstance(exc, pg_errors.DataError | pg_errors.ProgramLimitExceeded):
        if "0x00" in str(exc) or "\\u0000" in str(exc):
            return InvalidInputError(
                f"{where} cannot store text with NUL (0x00) characters; remove them"
            )
        return InvalidInputError(f"{where} cannot store this value: {exc}")
    if isinstance(exc, psycopg.OperationalError):
        return StorageError(f"cannot reach {where}: {exc}")
    return StorageError(f"{where} failed: {type(exc).__name__}: {exc}")


# -- the connections of one process to one memory ---------------------------------------


class PostgresDatabase:
    """One writer connection (under a lock) and a pool of readers, for one memory."""

    def __init__(self, url: str, *, read_only: bool = False) -> None:
        self.target = PostgresTarget.parse(url)
        self.location = self.target.display
        self.schema = self.target.schema
        self.read_only = read_only
        self.read_only_reason = "it was opened with read_only=True"
        self.lock = threading.RLock()
        self._owner: int | None = None
        self._depth = 0
        self._local = threading.local()  # the reader this thread's read holds
        self._idle: list[psycopg.Connection[Any]] = []
        self._readers = 0  # open, idle or taken
        self._given_back = threading.Condition(threading.Lock())
        self._closed = False
        self.opened_in = os.getpid()
        self.conn = self._connect()

    # connections

    def _connect(self) -> psycopg.Connection[Any]:
        try:
            conn = psycopg.connect(
                self.target.conninfo,
                autocommit=True,  # BEGIN/COMMIT are issued here, explicitly
                connect_timeout=CONNECT_TIMEOUT_S,
                application_name="remembrances",
            )
        except psycopg.ProgrammingError as exc:  # the URL itself: no retry mends it
            raise InvalidInputError(
                f"cannot connect to {self.location}: {str(exc).strip()}; check the URL's parameters"
            ) from exc
        except psycopg.Error as exc:
            raise StorageError(f"cannot connect to {self.location}: {exc}") from exc
        try:
            # The memory's schema first; the vector type and the tsvector
            # configuration resolve there or in the schemas after it.
            extension_schema = conn.execute(
                "SELECT n.nspname FROM pg_extension e "
                "JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'vector'"
            ).fetchone()
            path = [self.schema, "public"]
            if extension_schema is not None and extension_schema[0] not in path:
                path.append(str(extension_schema[0]))
            conn.execute(
                "SELECT set_config('search_path', %s, false), "
                "set_config('lock_timeout', %s, false)",
                (", ".join(f'"{p}"' for p in path), f"{LOCK_TIMEOUT_S}s"),
            )
            if extension_schema is not None:
                self._register_vector(conn)
        except psycopg.Error as exc:
            conn.close()
            raise postgres_error(exc, self.location) from exc
        return conn

    @staticmethod
    def _register_vector(conn: psycopg.Connection[Any]) -> None:
        from pgvector.psycopg import register_vector

        register_vector(conn)
        setattr(conn, "_remembrances_vector", True)  # noqa: B010

    def ensure_vector_type(self, conn: psycopg.Connection[Any]) -> None:
        """Teach ``conn`` the vector type (after the extension was created by bootstrap)."""
        if not getattr(conn, "_remembrances_vector", False):
            self._register_vector(conn)

    @property
    def closed(self) -> bool:
        """Closed, or inherited by a forked child (``storage/processes.py``)."""
        return self._closed or os.getpid() != self.opened_in

    def close(self) -> None:
        if os.getpid() != self.opened_in:  # a forked child: the parent's sockets stay as they are
            self._closed = True
            leave_inherited(self.conn, *self._idle)
            return
        with self.lock:
            with self._given_back:
                self._closed = True
            self._drop_idle()  # a reader taken now is closed when given back
            self.conn.close()

    def _check_open(self) -> None:
        check_same_process(self.opened_in, self.location)
        if self._closed:
            raise ClosedError(f"the memory {self.location} was closed; open it again to use it")

    def _writer(self) -> psycopg.Connection[Any]:
        if self.conn.closed or self.conn.broken:  # the server restarted or dropped us
            self.conn = self._connect()
        return self.conn

    def _take_reader(self) -> psycopg.Connection[Any]:
        """An idle reader, a new one while fewer than ``MAX_READERS`` are open, or the
        first one given back."""
        with self._given_back:
            while True:
                self._check_open()
                if self._idle:
                    return self._idle.pop()
                if self._readers < MAX_READERS:
                    self._readers += 1
                    break
                if not self._given_back.wait(READER_WAIT_S):
                    raise StorageError(
                        f"{self.location}: all {MAX_READERS} read connections stayed busy "
                        f"for {READER_WAIT_S} s; try again"
                    )
        try:
            return self._connect()
        except BaseException:
            self._drop_reader(None)
            raise

    def _give_back(self, conn: psycopg.Connection[Any]) -> None:
        if conn.closed or conn.broken:
            self._drop_reader(conn)
            return
        with self._given_back:
            if not self.closed:
                self._idle.append(conn)
                self._given_back.notify()
                return
        self._drop_reader(conn)

    def _drop_idle(self) -> None:
        with self._given_back:
            idle, self._idle = self._idle, []
            self._readers -= len(idle)
            self._given_back.notify_all()
        for conn in idle:
            conn.close()

    def _drop_reader(self, conn: psycopg.Connection[Any] | None) -> None:
        if conn is not None:
            conn.close()
        with self._given_back:
            self._readers -= 1
            self._given_back.notify()

    # the schema's existence

    def bootstrap(self) -> None:
        """Create the vector extension and this memory's schema when missing.

        Under a database-wide advisory lock: two processes creating memories at
        once would otherwise race on ``CREATE ... IF NOT EXISTS``.
        """
        conn = self._writer()
        try:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (LOCK_SPACE, BOOTSTRAP_LOCK))
                has_vector = conn.execute(
                    "SELECT 1 FROM pg_extension WHERE extname = 'vector'"
                ).fetchone()
                if has_vector is None:
                    try:
                        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
                    except pg_errors.InsufficientPrivilege as exc:
                        raise StorageError(
                            f"{self.location}: the pgvector extension is not installed in this "
                            "database and this user may not install it; ask its owner to run "
                            "CREATE EXTENSION vector (pgvector 0.5 or later)"
                        ) from exc
                    except pg_errors.FeatureNotSupported as exc:  # pragma: no cover
                        raise StorageError(
                            f"{self.location}: this server has no pgvector; install pgvector "
                            "0.5 or later"
                        ) from exc
                conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{self.schema}"')
        except psycopg.Error as exc:
            raise postgres_error(exc, self.location) from exc
        if not getattr(conn, "_remembrances_vector", False):
            # The extension may have been created just now: reconnect, which
            # resolves its schema into the search path and loads the type.
            conn.close()
            self.conn = self._connect()

    def schema_exists(self) -> bool:
        conn = self._writer()
        try:
            row = conn.execute(
                "SELECT 1 FROM pg_namespace WHERE nspname = %s", (self.schema,)
            ).fetchone()
        except psycopg.Error as exc:
            raise postgres_error(exc, self.location) from exc
        return row is not None

    # transactions

    @contextlib.contextmanager
    def write(self) -> Iterator[PostgresTransaction]:
        """A write transaction holding this memory's writer lock; nested calls join it."""
        self._check_open()
        if self.read_only:
            raise ReadOnlyError(f"cannot write to {self.location}: {self.read_only_reason}")
        with self.lock:
            if self._owner == threading.get_ident():
                self._depth += 1
                try:
                    yield PostgresTransaction(self.conn)
                finally:
                    self._depth -= 1
                return
            conn = self._begin_write()
            self._owner, self._depth = threading.get_ident(), 1
            try:
                yield PostgresTransaction(conn)
                conn.execute("COMMIT")
            except BaseException as exc:
                self._rollback(conn)
                if isinstance(exc, psycopg.Error):
                    raise postgres_error(exc, self.location) from exc
                raise
            finally:
                self._owner, self._depth = None, 0

    def _begin_write(self) -> psycopg.Connection[Any]:
        """The writer in a transaction holding this memory's lock; a writer the server
        dropped meanwhile (it restarted) is reconnected once, before anything is done."""
        for attempt in (1, 2):
            conn = self._writer()
            try:
                conn.execute("BEGIN")
                conn.execute(
                    "SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (LOCK_SPACE, self.schema)
                )
                return conn
            except psycopg.OperationalError as exc:
                self._rollback(conn)
                if attempt == 2 or not (conn.closed or conn.broken):
                    raise postgres_error(exc, self.location) from exc
            except psycopg.Error as exc:
                self._rollback(conn)
                raise postgres_error(exc, self.location) from exc
        raise AssertionError("unreachable")  # pragma: no cover

    def run_write(
        self, work: Callable[[PostgresTransaction], T], *, attempts: int = WRITE_ATTEMPTS
    ) -> T:
        """``work`` in a write transaction, run again (from the start) when the
        server aborts it for a serialisation conflict or a deadlock, which our own
        writers avoid by the lock but other programs' writes to the tables may cause."""
        for attempt in range(1, attempts + 1):
            try:
                with self.write() as tx:
                    return work(tx)
            except ConflictError:
                if attempt == attempts or self.in_transaction:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    @staticmethod
    def _rollback(conn: psycopg.Connection[Any]) -> None:
        if conn.closed or conn.broken:
            return
        with contextlib.suppress(psycopg.Error):
            conn.execute("ROLLBACK")

    @contextlib.contextmanager
    def read(self) -> Iterator[PostgresTransaction]:
        """One snapshot for every statement inside (this thread's write, when in one)."""
        self._check_open()
        if self._owner == threading.get_ident():
            yield PostgresTransaction(self.conn)
            return
        held: psycopg.Connection[Any] | None = getattr(self._local, "conn", None)
        if held is not None:  # a read inside this thread's read: the same snapshot
            yield PostgresTransaction(held, reading=True)
            return
        conn = self._begin_read()
        self._local.conn = conn
        try:
            yield PostgresTransaction(conn, reading=True)
        except psycopg.Error as exc:
            raise postgres_error(exc, self.location) from exc
        finally:
            self._local.conn = None
            if not self.closed:
                self._rollback(conn)  # nothing to keep: ending it costs the same
            self._give_back(conn)

    def _begin_read(self) -> psycopg.Connection[Any]:
        """A reader in a read-only transaction. An idle reader the server dropped (it
        restarted) fails its ``BEGIN``: the other idle ones went with it, so all are
        closed and a new one is opened, rather than failing the first read of each."""
        for attempt in (1, 2):
            conn = self._take_reader()
            try:
                conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                return conn
            except psycopg.OperationalError as exc:
                self._drop_reader(conn)
                self._drop_idle()
                if attempt == 2:
                    raise postgres_error(exc, self.location) from exc
            except psycopg.Error as exc:
                self._give_back(conn)
                raise postgres_error(exc, self.location) from exc
            except BaseException:
                self._give_back(conn)
                raise
        raise AssertionError("unreachable")  # pragma: no cover

    @property
    def in_transaction(self) -> bool:
        return self._owner == threading.get_ident()


# -- whole memories ------------------------------------------------------------------


def memory_exists(url: str) -> bool:
    """Whether the memory ``url`` names has a schema on its server (nothing is created)."""
    db = PostgresDatabase(url, read_only=True)
    try:
        return db.schema_exists()
    finally:
        db.close()


def drop_memory(url: str) -> None:
    """Drop the memory ``url`` names (its schema and everything in it), when it exists."""
    target = PostgresTarget.parse(url)
    try:
        with psycopg.connect(
            target.conninfo, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S
        ) as conn:
            conn.execute(f"SET lock_timeout = '{LOCK_TIMEOUT_S}s'")
            conn.execute(f'DROP SCHEMA IF EXISTS "{target.schema}" CASCADE')
    except psycopg.Error as exc:
        raise postgres_error(exc, target.display) from exc
