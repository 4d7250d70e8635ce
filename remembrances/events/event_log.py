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
import logging
import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, NamedTuple

from ..errors import InvalidInputError, NotFoundError, StorageError
from ..progress import Progress
from ..records import Chunk, SearchResult
from ..storage.transaction import Row, Transaction
from ..store import Prepared, SearchMode, Store
from ..validation import (
    check_id,
    check_limit,
    check_min_score,
    check_name,
    check_offset,
    check_text,
    encode_metadata,
)
from .conversation import (
    INSTRUCTION_ROLES,
    Turn,
    new_turns,
    read_messages,
    scope_name,
    turn_digest,
    whose,
)
from .records import Event
from .tables import (
    EVENTS_MIGRATIONS,
    EVENTS_READABLE_FROM,
    Events,
    Scope,
)
from .times import from_micros, now_utc, parse_duration, to_micros, to_utc, window

log = logging.getLogger(__name__)

KIND = "event"
COLLECTION = "events"
#: Set in ``meta`` once every plain event's subject is in its chunk's words.
SUBJECT_WORDS = "events:subject_words"
MAX_CONTENT_CHARS = 1_000_000
MAX_SUBJECT_CHARS = 4096
MAX_LIMIT = 1000
#: How many more candidates a recency-weighted search re-ranks than it returns.
RECENCY_POOL_FACTOR = 5
#: Candidates a search re-scores when the scope holds conversation turns.
CONVERSATION_POOL = 100
#: A turn's score times this when the query names its speaker (and no other).
SPEAKER_BOOST = 1.5
#: A turn gains this times the best score of the turns beside it.
NEIGHBOUR_WEIGHT = 0.4
#: More distinct speakers than this and the query is not matched against them.
MAX_SPEAKERS = 1000

#: The most neighbouring turns ``search(window=N)`` brings on each side.
MAX_WINDOW = 20
#: Removed turns remembered per session (by digest): a client that sends the latest
#: messages of a session whose turns were all pruned lines up with at most this many.
REMOVED_KEPT = 64
#: Turns read at once to take their digests before they are removed.
REMOVED_BATCH = 500


class _Said(NamedTuple):
    """A turn of a session as a transcript logged again is lined up with it: stored,
    or removed and kept as its digest."""

    position: int
    role: str | None
    digest: str
    at: datetime
    exact: bool  # the message's own time (False: when it was logged, or a removed turn)
    user: str | None = None


class _History(NamedTuple):
    """A session as :meth:`EventLog.log_conversation` lines a transcript up with it."""

    stored: list[_Said]
    removed: list[_Said]
    last: Event | None  # the latest stored turn: the one before the first new one


@dataclass(frozen=True)
class _Pending:
    subject: str
    content: str
    metadata_json: str
    occurred_us: int
    dedup_key: str
    chunk: Chunk
    user: str | None = None
    #: The key a user's event had before keys named the user (rows logged then).
    legacy_key: str | None = None


def _subject(value: Any) -> str:
    return check_name(value, "subject", limit=MAX_SUBJECT_CHARS, strip=True, blank_ok=True)


#: A cosine below this is rounding noise, not closeness, for any model.
NOISE_COSINE = 0.01


def _has_evidence(result: SearchResult) -> bool:
    """Whether a hit has anything for the query: fused scores are never 0 (a
    pointwise score without evidence is its bias), so look at the legs' own numbers."""
    return (result.vector_score or 0.0) >= NOISE_COSINE or (result.text_score or 0.0) > 0.0


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
    return check_limit(value, MAX_LIMIT, what)


def scope_where(user: Any = None, session: Any = None) -> dict[str, str]:
    """The metadata conditions that keep event chunks to one user's and/or one
    conversation's, as ``events.search`` keeps them (for a search of the whole
    memory: ``store.search(..., kind_where={"event": scope_where(user)})``)."""
    where = {}
    if user is not None:
        where["user"] = scope_name(user, "user")
    if session is not None:
        where["session"] = scope_name(session, "session")
    return where


def _scope_keys(subject: str, session: str | None, user: str | None) -> dict[str, Any]:
    """The chunk metadata a scoped search filters on; they override same-named
    caller metadata in the index (never in the event), so a caller's own
    ``{"session": ...}`` cannot leak into another session's search."""
    return {"subject": subject, "session": session, "user": user}


def turn_text(turn: Turn) -> str:
    """What is indexed (BM25 and the embedding) for a turn: who said it, what was
    said, and the caption of a photo they shared (a question may name what the
    photo showed). Measured on LoCoMo dev: benchmarks/results/locomo.md."""
    text = f"{turn.speaker}: {turn.content}"
    if turn.caption:
        text += f"\n[shared a photo: {turn.caption}]"
    return text


def _with_previous(text: str, previous: Turn | Event | None) -> str:
    """What is embedded for a turn: the turn before it, then the turn ("Yeah, I made
    it in class yesterday." is about what was asked). BM25 indexes the turn alone."""
    if previous is None:
        return text
    if isinstance(previous, Event):
        return f"{previous.subject}: {previous.content}\n{text}"
    return f"{previous.speaker}: {previous.content}\n{text}"


def _event_chunk(
    subject: str, content: str, metadata_json: str, occurred_us: int, user: str | None
) -> Chunk:
    """A plain event's searchable text: its subject, then its content. The subject is
    what kind of event it is ("incident", "decision"), the word a question uses for it
    ("what incidents did we have last week?")."""
    return Chunk(
        text=f"{subject}\n\n{content}" if subject else content,
        metadata={**json.loads(metadata_json), **_scope_keys(subject, None, user)},
        ts=occurred_us / 1_000_000,
    )


def _turn_chunk(
    turn: Turn,
    before: Turn | Event | None,
    session: str,
    user: str | None,
    position: int,
    metadata_json: str,
    occurred_us: int,
) -> Chunk:
    """A conversation turn's searchable text (see :func:`turn_text`)."""
    text = turn_text(turn)
    return Chunk(
        text=text,
        embed_text=_with_previous(text, before),
        metadata={
            **json.loads(metadata_json),
            **_scope_keys(turn.speaker, session, user),
            "role": turn.role,
            "position": position,
        },
        ts=occurred_us / 1_000_000,
    )


@dataclass(frozen=True)
class LoggedConversation:
    """What :meth:`EventLog.log_conversation` did: the turns it added, how many of
    the messages given were already stored, and how many said nothing (tool calls
    and results, left out)."""

    session: str
    user: str | None
    added: builtins.list[Event]
    already_stored: int
    skipped: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "session": self.session,
            "user": self.user,
            "added": len(self.added),
            "already_stored": self.already_stored,
            "skipped": self.skipped,
            "events": [e.to_dict() for e in self.added],
        }


def turn_key(session: str, position: int) -> str:
    """A turn's dedup key: one row per (session, position)."""
    payload = json.dumps(["turn", session, position], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def dedup_key(subject: str, content: str, occurred_us: int, user: str | None = None) -> str:
    """One row per subject, content and time, and user: two users logging the same fact
    at the same time each have it (a second user's call returned the first's event)."""
    said: list[Any] = [subject, content, occurred_us]
    payload = json.dumps(said if user is None else [*said, user], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class EventLog:
    """A temporal log of what happened, with time windows, subjects and retention."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._write_lock = threading.Lock()
        store.migrate("events", EVENTS_MIGRATIONS, readable_from=EVENTS_READABLE_FROM)
        # A file opened read-only that never held events has no events table.
        self._has_tables = store.meta("schema:events") is not None
        self._table = Events()
        if not store.read_only and store.meta(SUBJECT_WORDS) is None:
            self._index_subject_words()

    def check_writable(self) -> None:
        """Refuse, before any work, changes to a memory opened read-only."""
        self.store.check_writable("log or delete events")

    # -- writing -----------------------------------------------------------------------

    def log(
        self,
        content: str,
        *,
        subject: str = "",
        at: datetime | str | float | None = None,
        metadata: Mapping[str, Any] | None = None,
        user: str | None = None,
    ) -> Event:
        """Record that ``content`` happened ``at`` (default now); returns the event.

        ``at`` is an aware datetime, an ISO 8601 string or epoch seconds; a naive
        one is local time. The same subject, content and time logged again returns
        the event already stored instead of a copy. ``user`` says whose memory it
        is, for searches scoped to one user.
        """
        item: dict[str, Any] = {"content": content, "subject": subject, "at": at}
        item["metadata"] = metadata
        if user is not None:
            item["user"] = user
        return self.log_many([item])[0]

    def log_many(self, events: Iterable[Mapping[str, Any] | str]) -> builtins.list[Event]:
        """Record many events: one embedding pass and one transaction for all of them.

        Each item is a content string or a mapping with ``content`` and optionally
        ``subject``, ``at``, ``metadata`` and ``user``. All are checked before anything is
        written, so one bad item writes none.
        """
        if isinstance(events, str | bytes | Mapping):
            raise InvalidInputError("log_many takes a list of events (strings or mappings)")
        self.check_writable()
        recorded = now_utc()
        pending: list[_Pending] = []
        for i, item in enumerate(events):
            pending.append(self._pending(item, i, recorded))
        if not pending:
            return []
        unique = list({p.dedup_key: p for p in pending}.values())
        existing = self._stored(unique)
        new = [p for p in unique if p.dedup_key not in existing]
        if new:
            prepared = self.store.prepare([p.chunk for p in new])
            recorded_us = to_micros(recorded)
            with self._write_lock, self.store.transaction() as tx:
                for p, prepared_chunk in zip(new, prepared.chunks, strict=True):
                    event_id = self._table.insert_event(
                        tx,
                        subject=p.subject,
                        content=p.content,
                        metadata_json=p.metadata_json,
                        occurred_us=p.occurred_us,
                        recorded_us=recorded_us,
                        dedup_key=p.dedup_key,
                        user=p.user,
                    )
                    if event_id is None:
                        continue  # another process logged it a moment ago
                    self.store.write_source(
                        KIND, COLLECTION, str(event_id), Prepared([prepared_chunk])
                    )
                # read in the write: deleted by another process once committed, they
                # were a KeyError here
                existing = self._stored(unique, tx)
        return [existing[p.dedup_key] for p in pending]

    def log_conversation(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        session: str,
        user: str | None = None,
        at: datetime | str | float | None = None,
        metadata: Mapping[str, Any] | None = None,
        progress: Progress | None = None,
    ) -> LoggedConversation:
        """Log chat messages as the turns of ``session``: one embedding pass, one transaction.

        ``messages`` are mappings with ``role`` and ``content`` (OpenAI and
        Anthropic shapes; ``content`` may be a list of ``{"type": "text", "text":
        ...}`` blocks, and ``name`` names the speaker) or with ``speaker`` and
        ``text``. A message may also have a time (``at``, ``time`` or
        ``timestamp``), ``metadata`` and the ``caption`` of a photo it shared.
        Each turn becomes an event whose subject is its speaker, with its session,
        position (from 0) and role; a message without a time happened ``at``
        (default now). Logging the session again adds only the turns not yet
        stored (see :func:`conversation.new_turns`). Every message is checked
        first: one bad message raises :class:`InvalidInputError` and nothing is
        written. ``progress("embedding", done, total)`` is called as turns are embedded (turns
        whose text is in the embedding cache are not counted).
        """
        session = scope_name(session, "session")
        user = None if user is None else scope_name(user, "user")
        turns = read_messages(messages)
        skipped = len(messages) - len(turns)
        default_at = None if at is None else to_utc(at, "at")
        base_metadata = json.loads(encode_metadata(metadata))
        self.check_writable()
        for _attempt in range(3):
            stored, removed, last = self._session_history(session)
            owners = {said.user for said in stored}
            if stored and owners != {user}:
                # Whose it is is not told: the caller may be another user's agent.
                if owners == {None}:
                    mismatch = f"belongs to no user, not {whose(user)}"
                elif user is None:
                    mismatch = "belongs to a user, and none was given"
                else:
                    mismatch = f"belongs to another user, not {whose(user)}"
                raise InvalidInputError(
                    f"session {session!r} {mismatch}; pass the same user, or use another session id"
                )
            history = sorted(
                stored + [r for r in removed if r.user == user], key=lambda said: said.position
            )
            # Instructions stored before they were left out (a system prompt at the
            # start) are not what a transcript sent now holds: compare with the rest.
            lead = _instructions_first([said.role for said in history])
            new = new_turns(
                [(said.digest, said.at, said.exact) for said in history[lead:]],
                turns,
                [said.position - lead for said in history[lead:]],
            )
            if not new:
                return LoggedConversation(session, user, [], len(turns), skipped)
            taken = [said.position for said in stored] + [r.position for r in removed]
            start = max(taken, default=-1) + 1
            seen = (len(stored), start - 1)
            recorded = now_utc()
            rows = []
            for offset, turn in enumerate(new):
                occurred = turn.at or default_at or recorded
                event_metadata = {**base_metadata, **turn.metadata}
                if turn.caption:
                    event_metadata["caption"] = turn.caption
                metadata_json = encode_metadata(event_metadata)
                rows.append((turn, start + offset, to_micros(occurred), metadata_json))
            previous = [last] + [turn for turn, *_ in rows[:-1]]
            chunks = [
                _turn_chunk(turn, before, session, user, position, metadata_json, occurred_us)
                for (turn, position, occurred_us, metadata_json), before in zip(
                    rows, previous, strict=True
                )
            ]
            prepared = self.store.prepare(chunks, progress=progress).chunks
            recorded_us = to_micros(recorded)
            with self._write_lock, self.store.transaction() as tx:
                if self._table.session_state(tx, session) != seen:
                    continue  # another writer added or removed turns meanwhile: align again
                ids = []
                for (turn, position, occurred_us, metadata_json), chunk in zip(
                    rows, prepared, strict=True
                ):
                    event_id = self._table.insert_turn(
                        tx,
                        speaker=turn.speaker,
                        content=turn.content,
                        metadata_json=metadata_json,
                        occurred_us=occurred_us,
                        recorded_us=recorded_us,
                        dedup_key=turn_key(session, position),
                        session=session,
                        position=position,
                        role=turn.role,
                        user=user,
                    )
                    ids.append(event_id)
                    self.store.write_source(KIND, COLLECTION, str(event_id), Prepared([chunk]))
                added = self._by_ids(ids, tx)
            return LoggedConversation(
                session, user, [added[i] for i in ids], len(turns) - len(new), skipped
            )
        raise StorageError(
            f"session {session!r} kept changing while it was being logged; try again"
        )

    def _index_subject_words(self) -> None:
        """Once per memory: re-chunk the plain events logged before their subject was
        indexed as words (their chunk then held it for meaning only). Their vectors
        are the same text's, so they come from the embedding cache. A memory that
        cannot do it now (no embedder) tries again on its next writable open."""
        with self.store.snapshot() as tx:
            ids = self._table.subjects_unindexed(tx, KIND, COLLECTION)
        try:
            for start in range(0, len(ids), 500):
                self.reindex(ids[start : start + 500])
        except Exception as exc:
            log.info("older events' subjects are not yet searchable as words: %s", exc)
            return
        with self.store.transaction() as tx:
            self._table.mark(tx, SUBJECT_WORDS)

    def reindex(self, event_ids: Sequence[int]) -> int:
        """Rebuild the searchable chunks of stored events from their rows; returns how
        many events were found. For a memory whose chunks were lost (a damaged file's
        recovery): conversation turns are indexed as turns again, with their session,
        speaker and previous turn, which logging them again as plain events would lose.
        """
        ids = builtins.list(event_ids)
        for event_id in ids:
            check_id(event_id, "event id")
        self.check_writable()
        events = self._by_ids(ids)
        chunks = []
        for event in events.values():
            occurred_us = to_micros(event.occurred_at)
            metadata_json = encode_metadata(event.metadata)
            if event.session is None or event.position is None:
                chunks.append(
                    _event_chunk(
                        event.subject, event.content, metadata_json, occurred_us, event.user
                    )
                )
                continue
            before = self._turn_before(event.session, event.position)
            caption = event.metadata.get("caption")
            turn = Turn(
                event.subject,
                event.role,
                event.content,
                None,
                {},
                caption if isinstance(caption, str) else None,
            )
            chunks.append(
                _turn_chunk(
                    turn,
                    before,
                    event.session,
                    event.user,
                    event.position,
                    metadata_json,
                    occurred_us,
                )
            )
        prepared = self.store.prepare(chunks)
        with self._write_lock, self.store.transaction() as tx:
            for event_id, chunk in zip(events, prepared.chunks, strict=True):
                if self._table.get(tx, event_id) is None:
                    continue  # deleted meanwhile (another process): no chunk without its event
                self.store.write_source(KIND, COLLECTION, str(event_id), Prepared([chunk]))
        return len(events)

    def _turn_before(self, session: str, position: int) -> Event | None:
        with self.store.snapshot() as tx:
            row = self._table.turn_before(tx, session, position)
        return None if row is None else _event(row)

    def _session_turns(self, session: str) -> builtins.list[Event]:
        if not self._has_tables:
            return []
        with self.store.snapshot() as tx:
            rows = self._table.session_turns(tx, session)
        return [_event(r) for r in rows]

    def _session_history(self, session: str) -> _History:
        """A session's stored turns and the turns removed from it, read together: only
        what lining up needs (a whole ``Event`` a turn cost 65 ms a log at 8,000 turns)."""
        with self.store.snapshot() as tx:
            rows = self._table.session_said(tx, session)
            removed = self._table.removed_turns(tx, session)
            last = self._table.turn_before(tx, session, 2**62) if rows else None
        stored = [
            _Said(
                int(r["position"] or 0),
                r["role"],
                turn_digest(r["subject"], r["content"]),
                from_micros(int(r["occurred_us"])),
                r["occurred_us"] != r["recorded_us"],  # logged without a time: equal
                r["user_id"],
            )
            for r in rows
        ]
        gone = [
            _Said(
                int(r["position"]),
                r["role"],
                str(r["digest"]),
                from_micros(int(r["occurred_us"])),
                False,  # a digest keeps no word of whether its time was the message's
                r["user_id"],
            )
            for r in removed
        ]
        return _History(stored, gone, None if last is None else _event(last))

    def turns(self, session: str) -> builtins.list[Event]:
        """A session's turns in the order they were said."""
        return self._session_turns(scope_name(session, "session"))

    def sessions(self, *, user: str | None = None) -> dict[str, int]:
        """Session -> number of turns, most recently active first."""
        if not self._has_tables:
            return {}
        checked = None if user is None else scope_name(user, "user")
        with self.store.snapshot() as tx:
            return self._table.sessions(tx, checked)

    def _pending(self, item: Any, index: int, recorded: datetime) -> _Pending:
        what = "event" if index == 0 else f"event {index}"
        if isinstance(item, str):
            item = {"content": item}
        if not isinstance(item, Mapping):
            raise InvalidInputError(f"{what} must be a string or a mapping with 'content'")
        unknown = set(item) - {"content", "subject", "at", "metadata", "user"}
        if unknown:
            raise InvalidInputError(
                f"{what} has unknown fields {sorted(unknown)}; "
                "use content, subject, at, metadata, user"
            )
        content = check_text(
            item.get("content"),
            f"{what} content",
            limit=MAX_CONTENT_CHARS,
            hint="store long documents in the knowledge base",
        )
        subject = _subject(item.get("subject") or "")
        at = item.get("at")
        occurred = recorded if at is None else to_utc(at, "at")
        occurred_us = to_micros(occurred)
        metadata_json = encode_metadata(item.get("metadata"))
        user = None if item.get("user") is None else scope_name(item["user"], f"{what} user")
        return _Pending(
            subject=subject,
            content=content,
            metadata_json=metadata_json,
            occurred_us=occurred_us,
            dedup_key=dedup_key(subject, content, occurred_us, user),
            chunk=_event_chunk(subject, content, metadata_json, occurred_us, user),
            user=user,
            legacy_key=None if user is None else dedup_key(subject, content, occurred_us),
        )

    def _stored(
        self, pending: Sequence[_Pending], tx: Transaction | None = None
    ) -> dict[str, Event]:
        """The events already stored for ``pending``, by their keys (read in ``tx`` when
        given); a user's event logged before keys named the user is found by its old
        key, when it is theirs."""
        keys = [p.dedup_key for p in pending] + [p.legacy_key for p in pending if p.legacy_key]
        found = self._by_keys(keys, tx)
        stored: dict[str, Event] = {}
        for p in pending:
            event = found.get(p.dedup_key)
            if event is None and p.legacy_key is not None:
                legacy = found.get(p.legacy_key)
                event = legacy if legacy is not None and legacy.user == p.user else None
            if event is not None:
                stored[p.dedup_key] = event
        return stored

    def _by_keys(self, keys: Sequence[str], tx: Transaction | None = None) -> dict[str, Event]:
        if tx is not None:
            return {row["dedup_key"]: _event(row) for row in self._table.by_keys(tx, keys)}
        if not self._has_tables:
            return {}
        with self.store.snapshot() as snapshot:
            return self._by_keys(keys, snapshot)

    def delete(self, event_id: int) -> bool:
        """Delete one event, and its cached vector unless other text shares it (its key
        is a hash of the text); False when there was none."""
        check_id(event_id, "event id")
        self.check_writable()
        with self._write_lock, self.store.transaction() as tx:
            row = self._table.get(tx, event_id)
            hashes = self._embedded_hashes([event_id])
            self._remove(tx, [] if row is None else [row])
            self.store.forget_embeddings(hashes)
        return row is not None

    def forget_session(self, session: str) -> int:
        """Delete a session's turns with nothing of them left in the memory's tables:
        not the digests that keep removed turns from coming back (so the transcript
        sent again is stored again), nor their cached vectors, whose key is a hash of
        the text; returns how many turns were deleted."""
        session = scope_name(session, "session")
        return self._forget(
            lambda tx: self._table.session_turns(tx, session),
            lambda tx: self._table.forget_removed(tx, session),
        )

    def forget_user(self, user: str) -> int:
        """Delete everything logged for ``user`` with nothing of it left, as
        :meth:`forget_session` does for one session: every turn and plain event
        logged with that user, the digests of its removed turns (including those of
        sessions whose turns were all deleted one by one, which no listing shows any
        more) and their cached vectors. Returns how many events were deleted. Events
        and documents logged without a user are shared and stay."""
        user = scope_name(user, "user")
        return self._forget(
            lambda tx: self._table.user_events(tx, user),
            lambda tx: self._table.forget_removed_of(tx, user),
        )

    def _forget(
        self,
        events: Callable[[Transaction], builtins.list[Row]],
        digests: Callable[[Transaction], None],
    ) -> int:
        """Delete ``events`` (rows with ``id`` and ``session``) and the ``digests`` of
        removed turns, in one write, with their cached vectors (keyed by a hash of the
        text); returns how many events were deleted."""
        self.check_writable()
        if not self._has_tables:
            return 0
        with self._write_lock, self.store.transaction() as tx:
            rows = events(tx)
            hashes = self._embedded_hashes([int(r["id"]) for r in rows])
            self._remove(tx, rows, digests=False)
            digests(tx)
            self.store.forget_embeddings(hashes)
        return len(rows)

    def _embedded_hashes(self, event_ids: Sequence[int]) -> builtins.list[str]:
        """The content hashes of these events' chunks: their cached vectors' keys."""
        return [
            c.content_hash
            for event_id in event_ids
            for c in self.store.get_source(KIND, str(event_id), collection=COLLECTION)
        ]

    def prune(self, *, older_than: datetime | str | float | Any, subject: str | None = None) -> int:
        """Delete events that happened before a cut-off; returns how many.

        ``older_than`` is an age (``"90d"``, a timedelta) or a time (a datetime or
        an ISO string).
        """
        cutoff = self._cutoff(older_than)
        self.check_writable()
        subjects = _subjects(subject)
        with self._write_lock, self.store.transaction() as tx:
            rows = self._table.before(tx, to_micros(cutoff), subjects)
            self._remove(tx, rows)
        return len(rows)

    def _remove(self, tx: Transaction, rows: Sequence[Row], *, digests: bool = True) -> None:
        """Delete events (rows with ``id`` and ``session``) and their chunks. A
        conversation turn leaves its digest behind (the latest ``REMOVED_KEPT`` of each
        session; not with ``digests=False``), so that the transcript sent again does not
        bring it back; turns are read a batch at a time, and plain events not at all."""
        turns = [int(r["id"]) for r in rows if digests and r["session"] is not None]
        sessions: set[str] = set()
        for start in range(0, len(turns), REMOVED_BATCH):
            for row in self._table.by_ids(tx, turns[start : start + REMOVED_BATCH]):
                self._table.add_removed(tx, row, turn_digest(row["subject"], row["content"]))
                sessions.add(row["session"])
        for row in rows:
            self._table.delete(tx, int(row["id"]))
            self.store.delete_source(KIND, str(row["id"]), collection=COLLECTION)
        for session in sessions:
            self._table.keep_removed(tx, session, REMOVED_KEPT)

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
        check_id(event_id, "event id")
        row = None
        if self._has_tables:
            with self.store.snapshot() as tx:
                row = self._table.get(tx, event_id)
        if row is None:
            raise NotFoundError(f"no event with id {event_id}")
        return _event(row)

    def _scope(
        self,
        subject: Any,
        since: Any,
        until: Any,
        last: Any,
        session: Any = None,
        user: Any = None,
    ) -> Scope:
        start, end = window(since, until, last)
        return Scope(
            subjects=_subjects(subject),
            start_us=None if start is None else to_micros(start),
            end_us=None if end is None else to_micros(end),
            session=None if session is None else scope_name(session, "session"),
            user=None if user is None else scope_name(user, "user"),
        )

    def list(
        self,
        *,
        subject: str | Sequence[str] | None = None,
        since: datetime | str | float | None = None,
        until: datetime | str | float | None = None,
        last: Any = None,
        limit: int = 50,
        offset: int = 0,
        session: str | None = None,
        user: str | None = None,
    ) -> builtins.list[Event]:
        """Events in the window (of one session or user if given), newest first."""
        scope = self._scope(subject, since, until, last, session, user)
        limit = _limit(limit)
        offset = check_offset(offset)
        if not self._has_tables:
            return []
        with self.store.snapshot() as tx:
            rows = self._table.listing(tx, scope, limit, offset)
        return [_event(r) for r in rows]

    def count(
        self,
        *,
        subject: str | Sequence[str] | None = None,
        since: datetime | str | float | None = None,
        until: datetime | str | float | None = None,
        last: Any = None,
        session: str | None = None,
        user: str | None = None,
    ) -> int:
        scope = self._scope(subject, since, until, last, session, user)
        if not self._has_tables:
            return 0
        with self.store.snapshot() as tx:
            return self._table.count(tx, scope)

    def subjects(self) -> dict[str, int]:
        """Subject -> number of events, most events first."""
        if not self._has_tables:
            return {}
        with self.store.snapshot() as tx:
            return self._table.subjects(tx)

    def stray_chunks(self) -> builtins.list[str]:
        """Sources (event ids) of chunks whose event is gone (what a check reports)."""
        if not self._has_tables:
            return []
        with self.store.snapshot() as tx:
            return self._table.stray_chunks(tx, KIND)

    def unindexed(self) -> builtins.list[int]:
        """Ids of events without their searchable chunk (a damaged file's recovery)."""
        if not self._has_tables:
            return []
        with self.store.snapshot() as tx:
            return self._table.unindexed(tx, KIND)

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
        session: str | None = None,
        user: str | None = None,
        window: int = 0,
    ) -> builtins.list[Event]:
        """Events matching ``query`` in the window, best first; no query lists newest first.

        ``session`` and ``user`` scope the search to one conversation or one
        user's events. ``window=N`` brings each conversation turn found with up
        to N turns of its session on each side (``Event.before``/``after``).

        ``recency`` (a half-life: ``"3d"``, a timedelta or seconds) multiplies each
        score by ``0.5 ** (age / half_life)``, re-ranking a pool of
        ``RECENCY_POOL_FACTOR`` × ``limit`` candidates, so an event one half-life
        old needs twice the relevance of a new one to rank level with it.
        """
        limit = _limit(limit)
        if isinstance(window, bool) or not isinstance(window, int) or not 0 <= window <= MAX_WINDOW:
            raise InvalidInputError(f"window must be an integer from 0 to {MAX_WINDOW}")
        found = self._search(
            query, subject, since, until, last, limit, recency, min_score, mode, session, user
        )
        return self._with_context(found, window) if window else found

    def _search(
        self,
        query: Any,
        subject: Any,
        since: Any,
        until: Any,
        last: Any,
        limit: int,
        recency: Any,
        min_score: Any,
        mode: SearchMode,
        session: Any,
        user: Any,
    ) -> builtins.list[Event]:
        half_life = None if recency is None else parse_duration(recency, "recency")
        if min_score is not None:
            min_score = check_min_score(min_score)
        if query is not None and not isinstance(query, str):
            raise InvalidInputError(f"query must be a string, not {type(query).__name__}")
        if query is None or not query.strip():
            return self.list(
                subject=subject,
                since=since,
                until=until,
                last=last,
                limit=limit,
                session=session,
                user=user,
            )
        start, end = window(since, until, last)
        subjects = _subjects(subject)
        # One metadata condition, not two, for a session of the user's: with both SQLite
        # ran one MATCH per event chunk (20k turns: 2.6 s a search, and enrich's events
        # were dropped at their deadline). Both left: the session is another user's.
        where: dict[str, Any] = self.scope(user, session)
        if len(where) == 2:
            return []
        if subjects is not None:
            where["subject"] = subjects
        speakers = self._speakers(session, user)
        pool = limit if half_life is None else limit * RECENCY_POOL_FACTOR
        if speakers is not None:
            pool = max(pool, CONVERSATION_POOL)
        pool = min(pool, MAX_LIMIT)
        floor = 0.0 if min_score is None else float(min_score)
        results = self.store.search(
            query,
            mode=mode,
            limit=pool,
            kind=KIND,
            collection=COLLECTION,
            where=where or None,
            since=None if start is None else to_micros(start) / 1_000_000,
            until=None if end is None else to_micros(end) / 1_000_000,
            # turns are re-scored below; a neighbour may lift one over the floor
            min_score=floor if speakers is None else 0.0,
        )
        events = self._by_ids([int(r.source) for r in results if r.source.isdigit()])
        scored = [
            replace(events[int(r.source)], score=r.score, text_score=r.text_score or 0.0)
            for r in results
            if r.source.isdigit()
            and int(r.source) in events
            # no cosine of NOISE_COSINE or more and none of the query's words: noise
            and (_has_evidence(r) or min_score is not None)
        ]
        if speakers is not None:
            scored = [
                e
                for e in _conversation_scores(query, scored, speakers)
                if (e.score or 0.0) >= floor
            ]
        if half_life is not None:
            now = now_utc()
            seconds = half_life.total_seconds()
            scored = [
                e.with_score(
                    # an event dated in the future is as far from now as the past one
                    (e.score or 0.0) * 0.5 ** (abs((now - e.occurred_at).total_seconds()) / seconds)
                )
                for e in scored
            ]
            scored.sort(key=lambda e: (-(e.score or 0.0), -e.occurred_at.timestamp()))
        return scored[:limit]

    def scope(self, user: Any = None, session: Any = None) -> dict[str, str]:
        """:func:`scope_where`, with only the session when it is ``user``'s: a session is
        one user's, and one metadata condition keeps SQLite's plan on the word index
        (for ``store.search(..., kind_where={"event": events.scope(user, session)})``)."""
        where = scope_where(user, session)
        if len(where) == 2 and self._owned_by(where["session"], where["user"]):
            del where["user"]
        return where

    def _owned_by(self, session: str, user: str) -> bool:
        """Whether ``session``'s turns are ``user``'s (True for a session with none)."""
        if not self._has_tables:
            return True
        with self.store.snapshot() as tx:
            owner = self._table.session_owner(tx, session)
        return owner is None or owner == (user,)

    def _speakers(self, session: Any, user: Any) -> frozenset[str] | None:
        """The speakers (by name, not by role) of the turns in scope; None when the
        scope holds no conversation turns at all."""
        if not self._has_tables:
            return None
        with self.store.snapshot() as tx:
            found = self._table.speakers(
                tx,
                None if session is None else scope_name(session, "session"),
                None if user is None else scope_name(user, "user"),
                MAX_SPEAKERS + 1,
            )
        if found is None:
            return None
        names = frozenset(name for name in found if name.strip())
        return names if len(names) <= MAX_SPEAKERS else frozenset()

    def _with_context(self, hits: builtins.list[Event], size: int) -> builtins.list[Event]:
        """Each turn among ``hits`` with up to ``size`` turns of its session either side."""
        out = []
        with self.store.snapshot() as tx:
            for hit in hits:
                if hit.session is None or hit.position is None:
                    out.append(hit)
                    continue
                rows = self._table.turns_around(
                    tx, hit.session, hit.position - size, hit.position + size
                )
                around = [_event(r) for r in rows]
                before = tuple(e for e in around if (e.position or 0) < hit.position)
                after = tuple(e for e in around if (e.position or 0) > hit.position)
                out.append(hit.with_context(before, after))
        return out

    def _by_ids(self, ids: Sequence[int], tx: Transaction | None = None) -> dict[int, Event]:
        if tx is not None:
            return {int(row["id"]): _event(row) for row in self._table.by_ids(tx, ids)}
        with self.store.snapshot() as snapshot:
            return self._by_ids(ids, snapshot)


def _conversation_scores(
    query: str, hits: Sequence[Event], speakers: frozenset[str]
) -> builtins.list[Event]:
    """Turns re-scored by what a conversation knows and a chunk does not.

    A question that names one speaker ("When did Melanie paint a sunrise?") is
    usually answered by that speaker's turns: they get ``SPEAKER_BOOST`` times
    their score. A turn is ambiguous alone and its answer often spans the turns
    around it, so a turn gains ``NEIGHBOUR_WEIGHT`` times the best score of the
    turns just before and after it among the candidates. Scores stay in [0, 1];
    events that are not turns keep theirs. Measured on LoCoMo dev (both raise
    recall@5 about 0.04 each): benchmarks/results/locomo.md.
    """
    named = {s for s in speakers if _mentions(query, s)}
    boosted = next(iter(named)) if len(named) == 1 else None
    by_place = {
        (e.session, e.position): e.score or 0.0
        for e in hits
        if e.session is not None and e.position is not None
    }
    out = []
    for e in hits:
        if e.session is None or e.position is None:
            out.append(e)
            continue
        score = (e.score or 0.0) * (SPEAKER_BOOST if e.subject == boosted else 1.0)
        support = max(by_place.get((e.session, e.position + d), 0.0) for d in (-1, 1))
        out.append(e.with_score(min(score + NEIGHBOUR_WEIGHT * support, 1.0)))
    out.sort(key=lambda e: (-(e.score or 0.0), e.id))
    return out


def _mentions(query: str, name: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", query, re.IGNORECASE) is not None


def _event(row: Row) -> Event:
    return Event(
        id=int(row["id"]),
        subject=row["subject"],
        content=row["content"],
        metadata=json.loads(row["metadata"]),
        occurred_at=from_micros(row["occurred_us"]),
        recorded_at=from_micros(row["recorded_us"]),
        session=row["session"],
        position=None if row["position"] is None else int(row["position"]),
        role=row["role"],
        user=row["user_id"],
    )


def _instructions_first(roles: Sequence[str | None]) -> int:
    """How many turns open the session as instructions (``system``, ``developer``): a
    session logged before they were left out (events/conversation.py) holds them."""
    count = 0
    for role in roles:
        if (role or "").lower() not in INSTRUCTION_ROLES:
            break
        count += 1
    return count
