"""Records that cross the store's boundary: chunks going in, chunks and hits coming out.

:class:`Hit` is what every search result has in common, whichever layer made it
(a store :class:`SearchResult`, a KB hit, an event, a code hit, an enrichment
item), so that one renderer (:mod:`remembrances.formatting`) shows them all.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol, runtime_checkable

from .formatting import label_of


@runtime_checkable
class Hit(Protocol):
    """One search result, from any layer.

    - ``source_kind``: the layer it comes from: "kb", "event" or "code" (or a chunk
      kind of the caller's own). A code hit's ``kind`` is its symbol's kind, hence
      the separate name.
    - ``score``: in [0, 1], higher is better; None when it was listed, not scored.
    - ``text``: what matched (a chunk, an event's content, a symbol's code).
    - ``label``: where it comes from, in a few words (``Guide › Install
      (guide.md)``, ``ops · 2026-11-01 09:00 UTC``, ``[app] a.py:3-9 f (function)``).
    - ``metadata``: the caller's metadata (empty when the layer has none).
    - ``to_dict()``: JSON-ready fields (times as ISO 8601 text), ``label`` included.
    """

    @property
    def source_kind(self) -> str: ...

    @property
    def score(self) -> float | None: ...

    @property
    def text(self) -> str: ...

    @property
    def label(self) -> str: ...

    @property
    def metadata(self) -> Mapping[str, Any]: ...

    def to_dict(self) -> dict[str, Any]: ...


def utc_time(value: float | datetime | None) -> datetime | None:
    """Epoch seconds (as stored) or a datetime as an aware UTC datetime."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return (value if value.tzinfo else value.replace(tzinfo=UTC)).astimezone(UTC)
    return datetime.fromtimestamp(float(value), UTC)


#: The kinds of chunk the domain layers write (Store.search's ``kind``).
SOURCE_KINDS = ("kb", "event", "code")


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
    """A chunk as stored. ``ts`` and ``created_at`` are aware UTC datetimes (the
    store's epoch seconds are converted on the way out)."""

    id: int
    kind: str
    collection: str
    source: str
    position: int
    text: str
    metadata: dict[str, Any]
    content_hash: str
    ts: datetime | None
    created_at: datetime
    has_embedding: bool

    def __post_init__(self) -> None:
        object.__setattr__(self, "ts", utc_time(self.ts))
        object.__setattr__(self, "created_at", utc_time(self.created_at))


@dataclass
class SearchResult:
    """One hit of :meth:`Store.search` (a :class:`Hit`). ``score`` is in [0, 1],
    higher is better, comparable across queries of the same mode; the per-leg
    scores and ranks say where it came from. ``ts`` (an aware UTC datetime) is
    when an event happened; None for other kinds."""

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
    ts: datetime | None = None

    def __post_init__(self) -> None:
        self.ts = utc_time(self.ts)

    @property
    def source_kind(self) -> str:
        return self.kind

    @property
    def label(self) -> str:
        return label_of(self._fields())

    def to_dict(self) -> dict[str, Any]:
        data = self._fields()
        data["label"] = label_of(data)
        return data

    def _fields(self) -> dict[str, Any]:
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
            "ts": None if self.ts is None else self.ts.isoformat(),
        }


@dataclass(frozen=True)
class WriteReport:
    """What a write did: the new chunk ids and where their vectors came from."""

    chunk_ids: list[int]
    embedded: int = 0
    cached: int = 0
    pending: int = 0
