"""The code index: repositories as symbols and searchable chunks (``svc.code``)."""

from __future__ import annotations

from .code_indexer import CodeIndexer
from .discovery import SkippedFile
from .languages import BY_NAME as LANGUAGES
from .records import (
    CodeHit,
    CodeSymbol,
    IndexReport,
    OutlineNode,
    ProjectInfo,
    ProjectStats,
    Reference,
)

__all__ = [
    "LANGUAGES",
    "CodeHit",
    "CodeIndexer",
    "CodeSymbol",
    "IndexReport",
    "OutlineNode",
    "ProjectInfo",
    "ProjectStats",
    "Reference",
    "SkippedFile",
]
