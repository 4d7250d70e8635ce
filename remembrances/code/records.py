"""What the code index returns: reports, hits, symbols, outlines, references."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import PurePosixPath
from typing import Any

from ..formatting import code_label
from .discovery import SkippedFile


@dataclass
class IndexReport:
    """What one ``index`` run did. ``pending_embeddings`` chunks are searchable by
    text already and get their vectors from a later backfill."""

    project: str
    root: str
    files_seen: int = 0
    files_indexed: int = 0
    files_unchanged: int = 0
    files_removed: int = 0
    files_embedded: int = 0  # files that became fully indexed by getting their vectors
    skipped: list[SkippedFile] = field(default_factory=list)
    parse_errors: list[str] = field(default_factory=list)  # indexed, but with syntax errors
    symbols: int = 0  # symbols in the files indexed by this run
    chunks: int = 0  # chunks written by this run
    embedded_chunks: int = 0  # chunks that got a vector in this run
    pending_embeddings: int = 0  # project chunks still without a vector
    embedding_error: str | None = None
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def files_skipped(self) -> int:
        return len(self.skipped)

    def skipped_by_reason(self) -> dict[str, int]:
        """Skipped files per reason, without each file's details (its size, its error)."""
        counts: dict[str, int] = {}
        for item in self.skipped:
            key = re.split(r" \(|: ", item.reason, maxsplit=1)[0]
            counts[key] = counts.get(key, 0) + 1
        return counts

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["files_skipped"] = self.files_skipped
        data["skipped_by_reason"] = self.skipped_by_reason()
        return data


@dataclass(frozen=True)
class CodeSymbol:
    """A definition in an indexed file."""

    id: int
    project: str
    path: str
    language: str
    kind: str
    name: str
    qualified_name: str
    signature: str
    docstring: str
    start_line: int
    end_line: int
    start_byte: int
    end_byte: int
    parent: str | None  # the parent's qualified name
    parent_id: int | None = None

    @property
    def module(self) -> str:
        """The file as a dotted module name (``encodings/cp500.py`` is ``encodings.cp500``,
        a package's ``__init__.py`` is the package), for names written ``module.Class.method``."""
        return module_name(self.path)

    @property
    def dotted_name(self) -> str:
        """The qualified name behind its module (``encodings.cp500.Codec.encode``); a
        root ``__init__.py``'s module is the project's folder, so its symbols have none."""
        return f"{self.module}.{self.qualified_name}" if self.module else self.qualified_name

    def is_named(self, name: str) -> bool:
        """Whether ``name`` names this symbol: a bare name is its name; a dotted one is
        its qualified name or a suffix of it (``Inner.run``), or its qualified name
        behind its module or the module's tail (``cp500.Codec.encode``)."""
        if "." not in name:
            return self.name == name
        return any(
            n == name or n.endswith("." + name) for n in (self.qualified_name, self.dotted_name)
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def module_name(path: str) -> str:
    """``path`` as a dotted module name: no extension, ``/`` as ``.``, no ``__init__``."""
    parts = list(PurePosixPath(path).with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@dataclass
class CodeHit:
    """One search hit: the symbol (or file part), where it is, and its code (a
    :class:`~remembrances.records.Hit`; ``kind`` is the symbol's kind)."""

    score: float
    project: str
    path: str
    language: str
    kind: str
    name: str
    qualified_name: str
    signature: str
    docstring: str
    start_line: int
    end_line: int
    code: str
    parent: str | None
    symbol_id: int | None
    part: int = 1
    parts: int = 1
    chunk_id: int = 0
    vector_score: float | None = None
    text_score: float | None = None
    #: Where the numbering of ``code`` jumps over elided children: ``[line in code
    #: (0-based), source line]`` per run of consecutive lines; None when it does not.
    line_runs: list[list[int]] | None = None

    @property
    def source_kind(self) -> str:
        return "code"

    @property
    def text(self) -> str:
        return self.code

    @property
    def metadata(self) -> dict[str, Any]:
        return {}  # code carries no caller metadata

    @property
    def label(self) -> str:
        """``[app] src/cart.py:3-9 Cart.total (method)``."""
        return code_label(
            self.path, self.start_line, self.end_line, self.qualified_name, self.kind, self.project
        )

    def to_dict(self) -> dict[str, Any]:
        data = {**asdict(self), "label": self.label}
        for key in ("score", "vector_score", "text_score"):  # as every other hit rounds them
            if data[key] is not None:
                data[key] = round(data[key], 6)
        return data


@dataclass
class OutlineNode:
    symbol: CodeSymbol
    children: list[OutlineNode] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.symbol.to_dict(),
            "children": [c.to_dict() for c in self.children],
        }


@dataclass(frozen=True)
class Reference:
    """An identifier token equal to the name asked for, as the parser saw it."""

    project: str
    path: str
    line: int  # 1-based
    column: int  # 1-based byte column
    symbol: str | None  # qualified name of the innermost enclosing symbol
    is_definition: bool  # the token is the name of a symbol being defined here
    line_text: str  # the source line now on disk ("" if the file is gone)
    stale: bool  # the file changed on disk since it was indexed

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ProjectInfo:
    name: str
    root: str
    files: int
    indexed_at: datetime | None  # aware, UTC

    def to_dict(self) -> dict[str, Any]:
        return _iso(asdict(self))


@dataclass(frozen=True)
class ProjectStats:
    project: str
    root: str
    files: int
    files_pending: int  # files whose chunks are not all embedded yet
    symbols: int
    chunks: int
    pending_embeddings: int
    languages: dict[str, int]
    symbol_kinds: dict[str, int]
    files_with_errors: int
    indexed_at: datetime | None  # aware, UTC

    def to_dict(self) -> dict[str, Any]:
        return _iso(asdict(self))


def _iso(data: dict[str, Any]) -> dict[str, Any]:
    """Times as ISO 8601 strings, as every record's ``to_dict`` gives them."""
    return {k: v.isoformat() if isinstance(v, datetime) else v for k, v in data.items()}
