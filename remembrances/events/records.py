"""An event: what happened, about what, when it happened and when it was recorded."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from ..formatting import event_label


@dataclass(frozen=True)
class Event:
    r"""One event. Times are aware UTC datetimes; ``score`` is set by a search (a
    search's events are :class:`~remembrances.records.Hit`\ s)."""

    id: int
    subject: str
    content: str
    occurred_at: datetime
    recorded_at: datetime
    metadata: dict[str, Any]
    score: float | None = None
    #: Conversation turns only: the session, the turn's place in it (from 0), the
    #: role of its message (user, assistant...) and whose memory it is.
    session: str | None = None
    position: int | None = None
    role: str | None = None
    user: str | None = None
    #: With ``search(window=N)``: up to N turns of the same session before and after.
    before: tuple[Event, ...] = ()
    after: tuple[Event, ...] = ()
    #: Set by a search: the share of the query's words the event holds (word
    #: coverage, docs/search.md); 0 when its score comes from meaning (or its
    #: neighbours) alone. The enricher asks more of such events.
    text_score: float | None = field(default=None, compare=False)

    @property
    def text(self) -> str:  # the name every other search result uses
        return self.content

    @property
    def source_kind(self) -> str:
        return "event"

    @property
    def label(self) -> str:
        """``ops · 2026-11-01 09:00 UTC``: the subject (a turn's speaker) and the time,
        and whose memory it is when it has a user (``user (alice) · ...``)."""
        return event_label(self.subject, self.occurred_at, self.user, role=self.role)

    def with_score(self, score: float) -> Event:
        return replace(self, score=score)

    def with_context(self, before: tuple[Event, ...], after: tuple[Event, ...]) -> Event:
        return replace(self, before=before, after=after)

    def to_dict(self) -> dict[str, Any]:
        data = self._fields()
        if self.before or self.after:
            data["before"] = [e._fields() for e in self.before]
            data["after"] = [e._fields() for e in self.after]
        return data

    def _fields(self) -> dict[str, Any]:
        return {
            "kind": "event",
            "label": self.label,
            "id": self.id,
            "subject": self.subject,
            "content": self.content,
            "occurred_at": self.occurred_at.isoformat(),
            "recorded_at": self.recorded_at.isoformat(),
            "metadata": self.metadata,
            "score": None if self.score is None else round(self.score, 6),
            "session": self.session,
            "position": self.position,
            "role": self.role,
            "user": self.user,
        }
