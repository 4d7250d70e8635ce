"""The event log's own table. Times are integer microseconds since the epoch, UTC."""

from __future__ import annotations

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
)
