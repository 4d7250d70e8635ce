"""The knowledge base: documents, chunked by their headings, searchable as one memory."""

from __future__ import annotations

from ..discovery import SkippedFile
from .discovery import DEFAULT_MAX_BYTES, DEFAULT_PATTERNS
from .knowledge_base import KnowledgeBase
from .records import AddReport, Document, IngestReport, KBHit

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_PATTERNS",
    "AddReport",
    "Document",
    "IngestReport",
    "KBHit",
    "KnowledgeBase",
    "SkippedFile",
]
