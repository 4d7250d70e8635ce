"""Events in an export file and back: a conversation turn stays a turn.

An exported turn keeps its session, position, role and user, and is imported
through :meth:`EventLog.log_conversation`, so it comes back searchable by session
and user, with its neighbours. The events of one import are stored all or none:
every record is checked before anything is written, and if a write still fails
(an embedder that goes away), what this import added is removed again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInputError
from .conversation import read_messages, scope_name, whose
from .records import Event

if TYPE_CHECKING:
    from .event_log import EventLog

#: Keys of an event record besides ``type``.
EVENT_KEYS = frozenset(
    {"subject", "content", "at", "metadata", "user", "session", "position", "role"}
)


def event_record(event: Event) -> dict[str, Any]:
    """An event as an export record."""
    record: dict[str, Any] = {
        "type": "event",
        "subject": event.subject,
        "content": event.content,
        "at": event.occurred_at.isoformat(),
        "metadata": event.metadata,
    }
    if event.user is not None:
        record["user"] = event.user
    if event.session is not None:
        record.update(session=event.session, position=event.position, role=event.role)
    return record


@dataclass
class _Session:
    user: str | None
    turns: list[tuple[int, int, dict[str, Any]]] = field(default_factory=list)


class EventImport:
    """Collects an export's event records (:meth:`add`), then stores them (:meth:`write`)."""

    def __init__(self, log: EventLog | None = None) -> None:
        self.log = log  # given: a session another user owns is refused at its first line
        self.plain: list[dict[str, Any]] = []
        self.sessions: dict[str, _Session] = {}
        self.count = 0

    def add(self, number: int, record: Mapping[str, Any]) -> None:
        """Check one record's shape; ``number`` is its line, for errors."""
        unknown = set(record) - EVENT_KEYS - {"type"}
        if unknown:
            raise InvalidInputError(f"line {number} (event) has unknown keys {sorted(unknown)}")
        if "content" not in record:
            raise InvalidInputError(f"line {number} (event) has no 'content'")
        if record.get("metadata") is not None and not isinstance(record["metadata"], Mapping):
            raise InvalidInputError(f"line {number} (event) metadata must be a mapping")
        self.count += 1
        user = record.get("user")
        if record.get("session") is None:
            event = {k: record.get(k) for k in ("content", "subject", "at", "metadata", "user")}
            self.plain.append({**event, "subject": event["subject"] or ""})
            return
        session = scope_name(record["session"], f"line {number} session")
        position = record.get("position")
        if isinstance(position, bool) or not isinstance(position, int) or position < 0:
            raise InvalidInputError(
                f"line {number} (turn of {session!r}) needs a position (an integer from 0)"
            )
        if session not in self.sessions and self.log is not None:
            _check_owner(self.log, session, user, f"line {number}: ")
        known = self.sessions.setdefault(session, _Session(user))
        if known.user != user:
            raise InvalidInputError(
                f"line {number}: session {session!r} has turns of {whose(known.user)} and "
                f"of {whose(user)}; a session belongs to one user"
            )
        known.turns.append((position, number, dict(record)))

    def _conversations(self) -> list[tuple[str, str | None, list[dict[str, Any]]]]:
        """Each session's turns as chat messages in order, every one checked."""
        out = []
        for session, known in self.sessions.items():
            ordered = sorted(known.turns, key=lambda t: t[0])
            positions = [p for p, _, _ in ordered]
            if len(set(positions)) != len(positions):
                raise InvalidInputError(f"session {session!r} has two turns at one position")
            messages = [_message(record) for _, _, record in ordered]
            try:
                read_messages(messages)
            except InvalidInputError as exc:
                first = ordered[0][1]
                raise InvalidInputError(f"session {session!r} (from line {first}): {exc}") from exc
            out.append((session, known.user, messages))
        return out

    def write(self, log: EventLog) -> int:
        """Store every collected event, or none; returns how many records there were."""
        if not self.count:
            return 0
        conversations = self._conversations()
        for session, user, _ in conversations:  # refused later, after other writes: check now
            _check_owner(log, session, user)
        added: list[int] = []
        try:
            for session, user, messages in conversations:
                logged = log.log_conversation(messages, session=session, user=user)
                added += [e.id for e in logged.added]
            if self.plain:
                log.log_many(self.plain)  # last: it writes everything or nothing itself
        except Exception:  # an embedder failing half-way: take back what this import added
            for event_id in added:
                log.delete(event_id)
            raise
        return self.count


def _check_owner(log: EventLog, session: str, user: str | None, where: str = "") -> None:
    owners = {e.user for e in log.turns(session)}
    if owners and owners != {user}:
        raise InvalidInputError(
            f"{where}session {session!r} already belongs to {whose(next(iter(owners)))} in "
            f"this memory, not {whose(user)}; no event of this import was stored"
        )


def _message(record: Mapping[str, Any]) -> dict[str, Any]:
    """A turn record as the chat message that logs it again."""
    metadata = dict(record.get("metadata") or {})
    caption = metadata.pop("caption", None)
    subject, role = record.get("subject"), record.get("role")
    if role is not None:
        message: dict[str, Any] = {"role": role, "content": record.get("content")}
        if subject and subject != role:
            message["name"] = subject
    else:
        message = {"speaker": subject, "text": record.get("content")}
    if record.get("at") is not None:
        message["at"] = record["at"]
    if metadata:
        message["metadata"] = metadata
    if caption is not None:
        message["caption"] = caption
    return message
