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
