"""The code index: repositories as symbols and searchable chunks (``svc.code``)."""

from __future__ import annotations

from ..errors import MissingExtraError

try:
    import tree_sitter  # noqa: F401  (the code extra)
except ImportError as exc:
    raise MissingExtraError(
        "the code index needs tree-sitter and its grammars: pip install 'remembrances[code]'"
    ) from exc

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
