"""The event log: things that happened, searchable by words, meaning and time.

Each event is a row in the ``events`` table and one chunk in the store (kind
"event", collection "events", source = the event id, ``ts`` = when it happened),
so a text query goes through the one search engine with the time window and the
subject applied inside the search, never after it.
"""

from __future__ import annotations

import builtins
import hashlib
import json
import math
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..errors import InvalidInputError, NotFoundError
from ..records import Chunk
from ..store import Prepared, SearchMode, Store
from ..validation import check_unicode
from .records import Event
from .schema import EVENTS_MIGRATIONS
from .times import from_micros, now_utc, parse_duration, to_micros, to_utc, window

KIND = "event"
COLLECTION = "events"
MAX_CONTENT_CHARS = 1_000_000
MAX_SUBJECT_CHARS = 4096
MAX_LIMIT = 1000
#: How many more candidates a recency-weighted search re-ranks than it returns.
RECENCY_POOL_FACTOR = 5

_COLUMNS = "id, subject, content, metadata, occurred_us, recorded_us"


@dataclass(frozen=True)
class _Pending:
    subject: str
    content: str
    metadata_json: str
    occurred_us: int
    dedup_key: str
    chunk: Chunk


def _subject(value: Any) -> str:
    if not isinstance(value, str):
        raise InvalidInputError(f"subject must be a string, not {type(value).__name__}")
    if len(value) > MAX_SUBJECT_CHARS:
        raise InvalidInputError(f"subject is longer than {MAX_SUBJECT_CHARS} characters")
    check_unicode(value, "subject")
    return value.strip()


def _subjects(value: Any) -> list[str] | None:
    if value is None:
        return None
    values = [value] if isinstance(value, str) else value
    if not isinstance(values, Sequence | set | frozenset):
        raise InvalidInputError("subject must be a string or a list of strings")
    if not values:
        raise InvalidInputError("subject is an empty list; pass None for every subject")
    return [_subject(v) for v in values]


def _limit(value: Any, what: str = "limit") -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_LIMIT:
        raise InvalidInputError(f"{what} must be an integer from 1 to {MAX_LIMIT}")
    return value


def _metadata_json(metadata: Any) -> str:
    if metadata is None:
        return "{}"
    if not isinstance(metadata, Mapping):
        raise InvalidInputError(f"metadata must be a mapping, not {type(metadata).__name__}")
    bad_keys = [k for k in metadata if not isinstance(k, str)]
    if bad_keys:
        raise InvalidInputError(f"metadata keys must be strings (JSON), got {bad_keys[0]!r}")
    try:
        encoded = json.dumps(
            dict(metadata), ensure_ascii=False, allow_nan=False, sort_keys=True, default=str
        )
        encoded.encode("utf-8")
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"metadata cannot be stored as JSON: {exc}") from exc
    return encoded


def dedup_key(subject: str, content: str, occurred_us: int) -> str:
    payload = json.dumps([subject, content, occurred_us], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class EventLog:
    """A temporal log of what happened, with time windows, subjects and retention."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._write_lock = threading.Lock()
        store.migrate("events", EVENTS_MIGRATIONS)
        # A file opened read-only that never held events has no events table.
        self._has_tables = store.meta("schema:events") is not None

    def _check_writable(self) -> None:
        self.store.check_writable("log or delete events")

    # -- writing -----------------------------------------------------------------------

    def log(
        self,
        content: str,
        *,
        subject: str = "",
        at: datetime | str | float | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Event:
        """Record that ``content`` happened ``at`` (default now); returns the event.

        ``at`` is an aware datetime, an ISO 8601 string or epoch seconds; a naive
        one is local time. The same subject, content and time logged again returns
        the event already stored instead of a copy.
        """
        return self.log_many(
            [{"content": content, "subject": subject, "at": at, "metadata": metadata}]
        )[0]

    def log_many(self, events: Iterable[Mapping[str, Any] | str]) -> builtins.list[Event]:
        """Record many events: one embedding pass and one transaction for all of them.

        Each item is a content string or a mapping with ``content`` and optionally
        ``subject``, ``at`` and ``metadata``. All are checked before anything is
        written, so one bad item writes none.
        """
        if isinstance(events, str | bytes | Mapping):
            raise InvalidInputError("log_many takes a list of events (strings or mappings)")
        self._check_writable()
        recorded = now_utc()
        pending: list[_Pending] = []
        for i, item in enumerate(events):
            pending.append(self._pending(item, i, recorded))
        if not pending:
            return []
        unique = list({p.dedup_key: p for p in pending}.values())
        existing = self._by_keys([p.dedup_key for p in unique])
        new = [p for p in unique if p.dedup_key not in existing]
        if new:
            prepared = self.store.prepare([p.chunk for p in new])
            recorded_us = to_micros(recorded)
            with self._write_lock, self.store.transaction() as conn:
                for p, prepared_chunk in zip(new, prepared.chunks, strict=True):
                    row = conn.execute(
                        "INSERT INTO events (subject, content, metadata, occurred_us, recorded_us, "
                        "dedup_key) VALUES (?, ?, ?, ?, ?, ?) "
                        "ON CONFLICT (dedup_key) DO NOTHING RETURNING id",
                        (
                            p.subject,
                            p.content,
                            p.metadata_json,
                            p.occurred_us,
                            recorded_us,
                            p.dedup_key,
                        ),
                    ).fetchone()
                    if row is None:
                        continue  # another process logged it a moment ago
                    self.store.write_source(
                        KIND, COLLECTION, str(row[0]), Prepared([prepared_chunk])
                    )
            existing = self._by_keys([p.dedup_key for p in unique])
        return [existing[p.dedup_key] for p in pending]

    def _pending(self, item: Any, index: int, recorded: datetime) -> _Pending:
        what = "event" if index == 0 else f"event {index}"
        if isinstance(item, str):
            item = {"content": item}
        if not isinstance(item, Mapping):
            raise InvalidInputError(f"{what} must be a string or a mapping with 'content'")
        unknown = set(item) - {"content", "subject", "at", "metadata"}
        if unknown:
            raise InvalidInputError(
                f"{what} has unknown fields {sorted(unknown)}; use content, subject, at, metadata"
            )
        content = item.get("content")
        if not isinstance(content, str):
            raise InvalidInputError(
                f"{what} content must be a string, not {type(content).__name__}"
            )
        if not content.strip():
            raise InvalidInputError(f"{what} content is empty")
        if len(content) > MAX_CONTENT_CHARS:
            raise InvalidInputError(
                f"{what} content is {len(content):,} characters; the limit is "
                f"{MAX_CONTENT_CHARS:,} (store long documents in the knowledge base)"
            )
        check_unicode(content, f"{what} content")
        subject = _subject(item.get("subject") or "")
        at = item.get("at")
        occurred = recorded if at is None else to_utc(at, "at")
        occurred_us = to_micros(occurred)
        metadata_json = _metadata_json(item.get("metadata"))
        chunk_metadata = {**json.loads(metadata_json), "subject": subject}
        return _Pending(
            subject=subject,
            content=content,
            metadata_json=metadata_json,
            occurred_us=occurred_us,
            dedup_key=dedup_key(subject, content, occurred_us),
            chunk=Chunk(
                text=content,
                metadata=chunk_metadata,
                embed_text=f"{subject}\n\n{content}" if subject else None,
                ts=occurred_us / 1_000_000,
            ),
        )

    def _by_keys(self, keys: Sequence[str]) -> dict[str, Event]:
        found: dict[str, Event] = {}
        if not self._has_tables:
            return found
        with self.store.snapshot() as conn:
            for start in range(0, len(keys), 500):
                part = list(keys[start : start + 500])
                marks = ",".join("?" * len(part))
                for row in conn.execute(
                    f"SELECT {_COLUMNS}, dedup_key FROM events WHERE dedup_key IN ({marks})", part
                ):
                    found[row[-1]] = _event(row)
        return found

    def delete(self, event_id: int) -> bool:
        """Delete one event; False when there was none."""
        if isinstance(event_id, bool) or not isinstance(event_id, int):
            raise InvalidInputError(f"event id must be an integer, not {event_id!r}")
        self._check_writable()
        with self._write_lock, self.store.transaction() as conn:
            conn.execute("DELETE FROM events WHERE id = ?", (event_id,))
            deleted = bool(conn.changes())
            self.store.delete_source(KIND, str(event_id), collection=COLLECTION)
        return deleted

    def prune(self, *, older_than: datetime | str | float | Any, subject: str | None = None) -> int:
        """Delete events that happened before a cut-off; returns how many.

        ``older_than`` is an age (``"90d"``, a timedelta) or a time (a datetime or
        an ISO string).
        """
        cutoff = self._cutoff(older_than)
        self._check_writable()
        sql = "SELECT id FROM events WHERE occurred_us < ?"
        params: builtins.list[Any] = [to_micros(cutoff)]
        subjects = _subjects(subject)
        if subjects is not None:
            sql += f" AND subject IN ({','.join('?' * len(subjects))})"
            params.extend(subjects)
        with self._write_lock, self.store.transaction() as conn:
            ids = [int(r[0]) for r in conn.execute(sql, params).fetchall()]
            for event_id in ids:
                conn.execute("DELETE FROM events WHERE id = ?", (event_id,))
                self.store.delete_source(KIND, str(event_id), collection=COLLECTION)
        return len(ids)

    @staticmethod
    def _cutoff(older_than: Any) -> datetime:
        if older_than is None:
            raise InvalidInputError("prune needs older_than (an age such as '90d', or a time)")
        if isinstance(older_than, datetime):
            return to_utc(older_than, "older_than")
        if isinstance(older_than, str):
            try:
                return now_utc() - parse_duration(older_than, "older_than")
            except InvalidInputError:
                try:
                    return to_utc(older_than, "older_than")
                except InvalidInputError:
                    raise InvalidInputError(
                        f"older_than {older_than[:64]!r} is neither an age (90d, 12w) "
                        "nor an ISO 8601 time"
                    ) from None
        try:
            return now_utc() - parse_duration(older_than, "older_than")
        except OverflowError as exc:
            raise InvalidInputError("older_than reaches too far back") from exc

    # -- reading -----------------------------------------------------------------------

    def get(self, event_id: int) -> Event:
        if isinstance(event_id, bool) or not isinstance(event_id, int):
            raise InvalidInputError(f"event id must be an integer, not {event_id!r}")
        row = None
        if self._has_tables:
            with self.store.snapshot() as conn:
                row = conn.execute(
                    f"SELECT {_COLUMNS} FROM events WHERE id = ?", (event_id,)
                ).fetchone()
        if row is None:
            raise NotFoundError(f"no event with id {event_id}")
        return _event(row)

    def _where(
        self, subject: Any, since: Any, until: Any, last: Any
    ) -> tuple[str, builtins.list[Any]]:
        start, end = window(since, until, last)
        clauses: builtins.list[str] = ["1"]
        params: builtins.list[Any] = []
        subjects = _subjects(subject)
        if subjects is not None:
            clauses.append(f"subject IN ({','.join('?' * len(subjects))})")
            params.extend(subjects)
        if start is not None:
            clauses.append("occurred_us >= ?")
            params.append(to_micros(start))
        if end is not None:
            clauses.append("occurred_us <= ?")
            params.append(to_micros(end))
        return " AND ".join(clauses), params

    def list(
        self,
        *,
        subject: str | Sequence[str] | None = None,
        since: datetime | str | float | None = None,
        until: datetime | str | float | None = None,
        last: Any = None,
        limit: int = 50,
        offset: int = 0,
    ) -> builtins.list[Event]:
        """Events in the window, newest first."""
        sql, params = self._where(subject, since, until, last)
        limit = _limit(limit)
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            raise InvalidInputError("offset must be a non-negative integer")
        if not self._has_tables:
            return []
        with self.store.snapshot() as conn:
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM events WHERE {sql} "
                "ORDER BY occurred_us DESC, id DESC LIMIT ? OFFSET ?",
                (*params, limit, offset),
            ).fetchall()
        return [_event(r) for r in rows]

    def count(
        self,
        *,
        subject: str | Sequence[str] | None = None,
        since: datetime | str | float | None = None,
        until: datetime | str | float | None = None,
        last: Any = None,
    ) -> int:
        sql, params = self._where(subject, since, until, last)
        if not self._has_tables:
            return 0
        with self.store.snapshot() as conn:
            return int(
                conn.execute(f"SELECT count(*) FROM events WHERE {sql}", params).fetchone()[0]
            )

    def subjects(self) -> dict[str, int]:
        """Subject -> number of events, most events first."""
        if not self._has_tables:
            return {}
        with self.store.snapshot() as conn:
            rows = conn.execute(
                "SELECT subject, count(*) AS n FROM events GROUP BY subject ORDER BY n DESC, subject"
            ).fetchall()
        return {str(s): int(n) for s, n in rows}

    def search(
        self,
        query: str | None = None,
        *,
        subject: str | Sequence[str] | None = None,
        since: datetime | str | float | None = None,
        until: datetime | str | float | None = None,
        last: Any = None,
        limit: int = 10,
        recency: Any = None,
        min_score: float | None = None,
        mode: SearchMode = "hybrid",
    ) -> builtins.list[Event]:
        """Events matching ``query`` in the window, best first; no query lists newest first.

        ``recency`` (a half-life: ``"3d"``, a timedelta or seconds) multiplies each
        score by ``0.5 ** (age / half_life)``, re-ranking a pool of
        ``RECENCY_POOL_FACTOR`` × ``limit`` candidates, so an event one half-life
        old needs twice the relevance of a new one to rank level with it.
        """
        limit = _limit(limit)
        half_life = None if recency is None else parse_duration(recency, "recency")
        if min_score is not None and (
            isinstance(min_score, bool)
            or not isinstance(min_score, int | float)
            or not math.isfinite(min_score)
        ):
            raise InvalidInputError("min_score must be a number from 0 to 1")
        if query is not None and not isinstance(query, str):
            raise InvalidInputError(f"query must be a string, not {type(query).__name__}")
        if query is None or not query.strip():
            return self.list(subject=subject, since=since, until=until, last=last, limit=limit)
        start, end = window(since, until, last)
        subjects = _subjects(subject)
        pool = limit if half_life is None else min(limit * RECENCY_POOL_FACTOR, MAX_LIMIT)
        results = self.store.search(
            query,
            mode=mode,
            limit=pool,
            kind=KIND,
            collection=COLLECTION,
            where=None if subjects is None else {"subject": subjects},
            since=None if start is None else to_micros(start) / 1_000_000,
            until=None if end is None else to_micros(end) / 1_000_000,
            min_score=0.0 if min_score is None else float(min_score),
        )
        events = self._by_ids([int(r.source) for r in results if r.source.isdigit()])
        scored = [
            events[int(r.source)].with_score(r.score)
            for r in results
            if r.source.isdigit()
            and int(r.source) in events
            # a 0 score is no evidence at all (the bottom of both legs): noise, unless asked
            and (r.score > 0 or min_score is not None)
        ]
        if half_life is not None:
            now = now_utc()
            seconds = half_life.total_seconds()
            scored = [
                e.with_score(
                    (e.score or 0.0)
                    * 0.5 ** (max((now - e.occurred_at).total_seconds(), 0.0) / seconds)
                )
                for e in scored
            ]
            scored.sort(key=lambda e: (-(e.score or 0.0), -e.occurred_at.timestamp()))
        return scored[:limit]

    def _by_ids(self, ids: Sequence[int]) -> dict[int, Event]:
        found: dict[int, Event] = {}
        with self.store.snapshot() as conn:
            for start in range(0, len(ids), 500):
                part = list(ids[start : start + 500])
                marks = ",".join("?" * len(part))
                for row in conn.execute(
                    f"SELECT {_COLUMNS} FROM events WHERE id IN ({marks})", part
                ):
                    found[int(row[0])] = _event(row)
        return found


def _event(row: Sequence[Any]) -> Event:
    return Event(
        id=int(row[0]),
        subject=row[1],
        content=row[2],
        metadata=json.loads(row[3]),
        occurred_at=from_micros(row[4]),
        recorded_at=from_micros(row[5]),
    )
