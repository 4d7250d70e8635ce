"""The code index: repositories as symbols and searchable chunks (``svc.code``)."""

from __future__ import annotations

from .code_indexer import CodeIndexer
from .discovery import SkippedFile
from .parsing.languages import BY_NAME as LANGUAGES
from .records import (
    CodeHit,
    CodeSymbol,
    IndexReport,
    OutlineNode,
    ProjectInfo,
    ProjectStats,
    Reference,
)
from .repo_map import MapFile, MapSymbol, RepoMap

__all__ = [
    "LANGUAGES",
    "CodeHit",
    "CodeIndexer",
    "CodeSymbol",
    "IndexReport",
    "MapFile",
    "MapSymbol",
    "OutlineNode",
    "ProjectInfo",
    "ProjectStats",
    "Reference",
    "RepoMap",
    "SkippedFile",
]
