"""What the knowledge base hands back: documents, search hits and ingest reports."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..discovery import SkippedFile
from ..formatting import document_label


@dataclass(frozen=True)
class Document:
    """A stored document. ``text`` is filled by ``get`` and left out of listings."""

    source: str
    collection: str
    title: str | None
    metadata: dict[str, Any]
    format: str
    content_hash: str
    chars: int
    bytes: int
    chunks: int
    created_at: datetime  # aware, UTC
    updated_at: datetime
    path: str | None = None
    text: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "collection": self.collection,
            "title": self.title,
            "metadata": self.metadata,
            "format": self.format,
            "content_hash": self.content_hash,
            "chars": self.chars,
            "bytes": self.bytes,
            "chunks": self.chunks,
            "created_at": self.created_at.isoformat(),
            "updated_at": self.updated_at.isoformat(),
            "path": self.path,
            **({"text": self.text} if self.text is not None else {}),
        }


@dataclass
class KBHit:
    """One matching passage of a document (a chunk, or adjacent chunks of one section
    joined: ``kb/passages.py``), with where it sits in the document (a
    :class:`~remembrances.records.Hit`). ``position`` is its first chunk's and
    ``last_position`` its last chunk's (None when not known); ``chunk_id``, ``score``
    and ``best_span`` (where in ``text`` it lies) are its best-scoring chunk's."""

    source: str
    collection: str
    title: str | None
    heading_path: str
    text: str
    score: float
    metadata: dict[str, Any]
    position: int
    chunk_id: int
    kind: str = "kb"
    best_span: tuple[int, int] | None = None
    #: The best chunk's cosine and word coverage (None in a search that did not use
    #: that leg), as for a store or code hit.
    vector_score: float | None = None
    text_score: float | None = None
    last_position: int | None = None

    @property
    def source_kind(self) -> str:
        return "kb"

    def overlaps(self, other: KBHit) -> bool:
        """Whether the two passages share a chunk (two searches found one section); an
        unknown ``last_position`` counts as the first chunk alone."""
        if (self.collection, self.source) != (other.collection, other.source):
            return False
        return self.position <= other._last and other.position <= self._last

    @property
    def _last(self) -> int:
        return self.position if self.last_position is None else self.last_position

    @property
    def label(self) -> str:
        """``Guide › Install (guide.md)``: the title, the headings, the source."""
        return document_label(self.title, self.heading_path, self.source)

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "label": self.label,
            "source": self.source,
            "collection": self.collection,
            "title": self.title,
            "heading_path": self.heading_path,
            "position": self.position,
            "last_position": self.last_position,
            "chunk_id": self.chunk_id,
            "best_span": None if self.best_span is None else list(self.best_span),
            "score": round(self.score, 6),
            "vector_score": None if self.vector_score is None else round(self.vector_score, 6),
            "text_score": None if self.text_score is None else round(self.text_score, 6),
            "text": self.text,
            "metadata": self.metadata,
        }


@dataclass(frozen=True)
class AddReport:
    """What ``add`` did. ``status`` is "added", "updated" or "unchanged"."""

    source: str
    collection: str
    status: str
    chunks: int
    embedded: int = 0
    cached: int = 0


@dataclass
class IngestReport:
    """What one ingest pass did; paths are relative to the ingested root."""

    root: str
    collection: str
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)
    chunks: int = 0
    embedded: int = 0
    cached: int = 0

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed)

    def to_dict(self) -> dict[str, Any]:
        return {
            "root": self.root,
            "collection": self.collection,
            "added": self.added,
            "updated": self.updated,
            "unchanged": len(self.unchanged),
            "removed": self.removed,
            "skipped": [{"path": s.path, "reason": s.reason} for s in self.skipped],
            "chunks": self.chunks,
            "embedded": self.embedded,
            "cached": self.cached,
        }
