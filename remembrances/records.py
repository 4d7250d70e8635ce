"""Records that cross the store's boundary: chunks going in, chunks and hits coming out."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class Chunk:
    """A piece of text to store.

    ``embed_text`` is what gets embedded when it differs from what is shown (a KB
    chunk embeds its heading path too). ``ts`` places the chunk in time, for
    time-range filters (events).
    """

    text: str
    metadata: Mapping[str, Any] = field(default_factory=dict)
    embed_text: str | None = None
    ts: float | datetime | None = None


@dataclass(frozen=True)
class StoredChunk:
    id: int
    kind: str
    collection: str
    source: str
    position: int
    text: str
    metadata: dict[str, Any]
    content_hash: str
    ts: float | None
    created_at: float
    has_embedding: bool


@dataclass
class SearchResult:
    """One hit. ``score`` is in [0, 1], higher is better, comparable across queries
    of the same mode; the per-leg scores and ranks say where it came from."""

    id: int
    kind: str
    collection: str
    source: str
    text: str
    metadata: dict[str, Any]
    score: float
    vector_score: float | None = None
    text_score: float | None = None
    vector_rank: int | None = None
    text_rank: int | None = None
    position: int = 0
    ts: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "collection": self.collection,
            "source": self.source,
            "position": self.position,
            "text": self.text,
            "metadata": self.metadata,
            "score": round(self.score, 6),
            "vector_score": None if self.vector_score is None else round(self.vector_score, 6),
            "text_score": None if self.text_score is None else round(self.text_score, 6),
            "vector_rank": self.vector_rank,
            "text_rank": self.text_rank,
            "ts": self.ts,
        }


@dataclass(frozen=True)
class WriteReport:
    """What a write did: the new chunk ids and where their vectors came from."""

    chunk_ids: list[int]
    embedded: int = 0
    cached: int = 0
    pending: int = 0
