"""The event log's own table and every statement on it.

Times are integer microseconds since the epoch, UTC. The SQL is the portable
subset (storage/transaction.py); rows are read by name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..storage.in_lists import in_lists
from ..storage.transaction import Row, Transaction, marks

EVENTS_MIGRATIONS: tuple[str, ...] = (
    # 1: events. ``dedup_key`` is a hash of (subject, content, occurred_us): logging the
    # same thing at the same time twice stores it once, even from two processes.
    """
    CREATE TABLE events (
        id          INTEGER PRIMARY KEY AUTOINCREMENT,
        subject     TEXT NOT NULL,
        content     TEXT NOT NULL,
        metadata    TEXT NOT NULL DEFAULT '{}',
        occurred_us INTEGER NOT NULL,
        recorded_us INTEGER NOT NULL,
        dedup_key   TEXT NOT NULL UNIQUE
    );
    CREATE INDEX events_occurred ON events (occurred_us);
    CREATE INDEX events_subject_occurred ON events (subject, occurred_us);
    """,
    # 2: conversations. A turn is an event with its session, its position in it, the
    # role its message had (user, assistant...) and whose memory it is (user_id);
    # the subject is the speaker. One row per (session, position), even from two
    # processes logging the same transcript at once.
    """
    ALTER TABLE events ADD COLUMN session TEXT;
    ALTER TABLE events ADD COLUMN position INTEGER;
    ALTER TABLE events ADD COLUMN role TEXT;
    ALTER TABLE events ADD COLUMN user_id TEXT;
    CREATE UNIQUE INDEX events_session_position ON events (session, position)
        WHERE session IS NOT NULL;
    CREATE INDEX events_user ON events (user_id, occurred_us) WHERE user_id IS NOT NULL;
    """,
    # 3: the speakers of the turns, which every search over turns reads to match a
    # question's names against; covering, so it reads no event rows (50k turns:
    # about 7x faster).
    """
    CREATE INDEX events_turn_speakers ON events (subject, role) WHERE session IS NOT NULL;
    """,
)


#: The columns an event is read with.
COLUMNS = (
    "id, subject, content, metadata, occurred_us, recorded_us, session, position, role, user_id"
)
#: The same columns on a file opened read-only before conversations (schema 1).
LEGACY_COLUMNS = (
    "id, subject, content, metadata, occurred_us, recorded_us, NULL AS session, "
    "NULL AS position, NULL AS role, NULL AS user_id"
)


@dataclass(frozen=True)
class Scope:
    """Which events a listing or count sees (every field checked by the caller)."""

    subjects: list[str] | None = None
    start_us: int | None = None
    end_us: int | None = None
    session: str | None = None
    user: str | None = None

    def sql(self, legacy: bool) -> tuple[str, list[Any]]:
        clauses: list[str] = ["TRUE"]
        params: list[Any] = []
        if self.session is not None:
            clauses.append("FALSE" if legacy else "session = ?")
            params.extend([] if legacy else [self.session])
        if self.user is not None:
            clauses.append("FALSE" if legacy else "user_id = ?")
            params.extend([] if legacy else [self.user])
        if self.subjects is not None:
            clauses.append(f"subject IN ({marks(len(self.subjects))})")
            params.extend(self.subjects)
        if self.start_us is not None:
            clauses.append("occurred_us >= ?")
            params.append(self.start_us)
        if self.end_us is not None:
            clauses.append("occurred_us <= ?")
            params.append(self.end_us)
        return " AND ".join(clauses), params


class Events:
    """The statements on ``events``, read with ``columns`` (legacy files lack turn columns)."""

    def __init__(self, columns: str = COLUMNS) -> None:
        self.columns = columns

    @property
    def legacy(self) -> bool:
        return self.columns == LEGACY_COLUMNS

    def insert_event(
        self,
        tx: Transaction,
        *,
        subject: str,
        content: str,
        metadata_json: str,
        occurred_us: int,
        recorded_us: int,
        dedup_key: str,
        user: str | None,
    ) -> int | None:
        """The new event's id; None when the same event is already stored."""
        value = tx.execute(
            "INSERT INTO events (subject, content, metadata, occurred_us, recorded_us, "
            "dedup_key, user_id) VALUES (?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (dedup_key) DO NOTHING RETURNING id",
            (subject, content, metadata_json, occurred_us, recorded_us, dedup_key, user),
        ).scalar()
        return None if value is None else int(value)

    def insert_turn(
        self,
        tx: Transaction,
        *,
        speaker: str,
        content: str,
        metadata_json: str,
        occurred_us: int,
        recorded_us: int,
        dedup_key: str,
        session: str,
        position: int,
        role: str | None,
        user: str | None,
    ) -> int:
        return int(
            tx.execute(
                "INSERT INTO events (subject, content, metadata, occurred_us, "
                "recorded_us, dedup_key, session, position, role, user_id) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                (
                    speaker,
                    content,
                    metadata_json,
                    occurred_us,
                    recorded_us,
                    dedup_key,
                    session,
                    position,
                    role,
                    user,
                ),
            ).scalar()
        )

    def session_size(self, tx: Transaction, session: str) -> int:
        return int(
            tx.execute("SELECT count(*) AS n FROM events WHERE session = ?", (session,)).scalar()
        )

    def by_keys(self, tx: Transaction, keys: Sequence[str]) -> list[Row]:
        """Events by dedup key; each row also has its ``dedup_key``."""
        rows: list[Row] = []
        for part, part_marks in in_lists(keys):
            rows += tx.execute(
                f"SELECT {self.columns}, dedup_key FROM events WHERE dedup_key IN ({part_marks})",
                part,
            ).fetchall()
        return rows

    def by_ids(self, tx: Transaction, ids: Sequence[int]) -> list[Row]:
        rows: list[Row] = []
        for part, part_marks in in_lists(ids):
            rows += tx.execute(
                f"SELECT {self.columns} FROM events WHERE id IN ({part_marks})", part
            ).fetchall()
        return rows

    def get(self, tx: Transaction, event_id: int) -> Row | None:
        return tx.execute(f"SELECT {self.columns} FROM events WHERE id = ?", (event_id,)).fetchone()

    def turn_before(self, tx: Transaction, session: str, position: int) -> Row | None:
        return tx.execute(
            f"SELECT {self.columns} FROM events WHERE session = ? AND position < ? "
            "ORDER BY position DESC LIMIT 1",
            (session, position),
        ).fetchone()

    def session_turns(self, tx: Transaction, session: str) -> list[Row]:
        return tx.execute(
            f"SELECT {self.columns} FROM events WHERE session = ? ORDER BY position",
            (session,),
        ).fetchall()

    def turns_around(self, tx: Transaction, session: str, first: int, last: int) -> list[Row]:
        return tx.execute(
            f"SELECT {self.columns} FROM events WHERE session = ? "
            "AND position BETWEEN ? AND ? ORDER BY position",
            (session, first, last),
        ).fetchall()

    def sessions(self, tx: Transaction, user: str | None) -> dict[str, int]:
        """Session -> number of turns, most recently active first."""
        sql = (
            "SELECT session, count(*) AS n, max(occurred_us) AS t FROM events "
            "WHERE session IS NOT NULL"
        )
        params: list[Any] = []
        if user is not None:
            sql += " AND user_id = ?"
            params.append(user)
        rows = tx.execute(sql + " GROUP BY session ORDER BY t DESC, session", params).fetchall()
        return {str(r["session"]): int(r["n"]) for r in rows}

    def delete(self, tx: Transaction, event_id: int) -> bool:
        tx.execute("DELETE FROM events WHERE id = ?", (event_id,))
        return bool(tx.changes())

    def ids_before(self, tx: Transaction, cutoff_us: int, subjects: list[str] | None) -> list[int]:
        sql = "SELECT id FROM events WHERE occurred_us < ?"
        params: list[Any] = [cutoff_us]
        if subjects is not None:
            sql += f" AND subject IN ({marks(len(subjects))})"
            params.extend(subjects)
        return [int(r["id"]) for r in tx.execute(sql, params)]

    def listing(self, tx: Transaction, scope: Scope, limit: int, offset: int) -> list[Row]:
        """Events in scope, newest first."""
        sql, params = scope.sql(self.legacy)
        return tx.execute(
            f"SELECT {self.columns} FROM events WHERE {sql} "
            "ORDER BY occurred_us DESC, id DESC LIMIT ? OFFSET ?",
            (*params, limit, offset),
        ).fetchall()

    def count(self, tx: Transaction, scope: Scope) -> int:
        sql, params = scope.sql(self.legacy)
        return int(tx.execute(f"SELECT count(*) AS n FROM events WHERE {sql}", params).scalar())

    def subjects(self, tx: Transaction) -> dict[str, int]:
        rows = tx.execute(
            "SELECT subject, count(*) AS n FROM events GROUP BY subject ORDER BY n DESC, subject"
        ).fetchall()
        return {str(r["subject"]): int(r["n"]) for r in rows}

    def speakers(
        self, tx: Transaction, session: str | None, user: str | None, most: int
    ) -> list[str] | None:
        """Up to ``most`` speaker names (not roles) of the turns in scope; None when the
        scope holds no turns at all."""
        scope, params = "session IS NOT NULL", []
        if session is not None:
            scope += " AND session = ?"
            params.append(session)
        if user is not None:
            scope += " AND user_id = ?"
            params.append(user)
        found = tx.execute(f"SELECT 1 AS found FROM events WHERE {scope} LIMIT 1", params)
        if found.fetchone() is None:
            return None
        rows = tx.execute(
            f"SELECT DISTINCT subject FROM events WHERE {scope} "
            "AND (role IS NULL OR subject != role) LIMIT ?",
            (*params, most),
        ).fetchall()
        return [str(r["subject"]) for r in rows]

    def unindexed(self, tx: Transaction, kind: str) -> list[int]:
        """Ids of events without a chunk of ``kind`` (their chunks were lost)."""
        rows = tx.execute(
            "SELECT e.id FROM events e WHERE NOT EXISTS (SELECT 1 FROM chunks c "
            "WHERE c.kind = ? AND c.source = CAST(e.id AS TEXT))",
            (kind,),
        ).fetchall()
        return [int(r["id"]) for r in rows]
