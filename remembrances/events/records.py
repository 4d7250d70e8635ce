"""An event: what happened, about what, when it happened and when it was recorded."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class Event:
    """One event. Times are aware UTC datetimes; ``score`` is set by a search."""

    id: int
    subject: str
    content: str
    occurred_at: datetime
    recorded_at: datetime
    metadata: dict[str, Any]
    score: float | None = None

    @property
    def text(self) -> str:  # the name every other search result uses
        return self.content

    def with_score(self, score: float) -> Event:
        return replace(self, score=score)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "event",
            "id": self.id,
            "subject": self.subject,
            "content": self.content,
            "occurred_at": self.occurred_at.isoformat(),
            "recorded_at": self.recorded_at.isoformat(),
            "metadata": self.metadata,
            "score": None if self.score is None else round(self.score, 6),
        }
