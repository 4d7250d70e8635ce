"""Which files of a folder are documents, and reading one as text.

The walk itself (``.gitignore`` files, ``.git/info/exclude``, the repository's
ignore files above the folder, excluded directories, symlinks) is
:mod:`remembrances.discovery`, shared with the code index. Here: which names are
documents (``patterns``), hidden files left out unless asked for, and reading a
file, which decides whether it is text at all: binary, non-UTF-8, empty and
oversized files come back with the reason they were skipped.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pathspec

from ..discovery import FoundFile, SkippedFile, decode_text, one_copy_each, too_large
from ..discovery import discover as walk
from ..errors import InvalidInputError

#: The formats people keep notes and docs in. Structured data (CSV, JSON) is left
#: out: chunked as prose it retrieves badly; pass ``patterns`` to include it anyway.
DEFAULT_PATTERNS: tuple[str, ...] = (
    "*.md",
    "*.markdown",
    "*.mdown",
    "*.mkd",
    "*.mdx",
    "*.txt",
    "*.text",
    "*.rst",
    "*.rest",
    "*.adoc",
    "*.asciidoc",
    "*.org",
)
DEFAULT_MAX_BYTES = 10_000_000


@dataclass
class Discovery:
    """Files to ingest, every file git would not ignore (whatever its name), and
    the files left out with their reasons."""

    files: list[FoundFile] = field(default_factory=list)
    visible: set[str] = field(default_factory=set)
    skipped: list[SkippedFile] = field(default_factory=list)


def file_patterns(patterns: Sequence[str] | None) -> pathspec.PathSpec[Any]:
    """``patterns`` (gitignore-style globs) as a matcher; one the matcher cannot read, a
    blank one, or only ``!negations`` would quietly select no file, so they are refused."""
    if patterns is None or len(patterns) == 0:
        return pathspec.PathSpec.from_lines("gitignore", DEFAULT_PATTERNS)
    if isinstance(patterns, str):
        patterns = [patterns]
    advice = "use gitignore-style globs such as '*.md' or 'docs/**'"
    selecting = False
    for pattern in patterns:
        if not isinstance(pattern, str):
            raise InvalidInputError(f"a pattern must be a string, not {type(pattern).__name__}")
        try:
            compiled = pathspec.PathSpec.from_lines("gitignore", [pattern])
        except (ValueError, re.error):  # pathspec's GitIgnorePatternError, "[z-a]"
            raise InvalidInputError(f"pattern {pattern!r} is not a valid glob; {advice}") from None
        if all(p.include is None for p in compiled.patterns):
            raise InvalidInputError(f"pattern {pattern!r} is blank or a # comment; {advice}")
        selecting = selecting or any(p.include for p in compiled.patterns)
    if not selecting:
        raise InvalidInputError(
            "!negations alone select no file; add the files to keep, such as '*.md'"
        )
    return pathspec.PathSpec.from_lines("gitignore", patterns)


def discover(
    root: Path,
    patterns: Sequence[str] | None = None,
    *,
    include_hidden: bool = False,
) -> Discovery:
    """The files under ``root`` (a directory) that match ``patterns`` and git would keep."""
    wanted = file_patterns(patterns)
    walked = walk(root, hidden=include_hidden, outside="the ingested folder")
    found = Discovery(skipped=walked.skipped)
    selected = []
    for item in walked.files:
        found.visible.add(str(item.path))
        if wanted.match_file(item.relative):
            selected.append(item)
    found.files, copies = one_copy_each(selected)
    found.skipped = sorted(found.skipped + copies, key=lambda s: s.path)
    return found


@dataclass(frozen=True)
class FileText:
    """A file read as text, or the reason it cannot be."""

    text: str | None
    reason: str | None
    size: int
    mtime_ns: int


def read_text(path: Path, *, max_bytes: int = DEFAULT_MAX_BYTES) -> FileText:
    """The file's text when it is non-empty UTF-8 under ``max_bytes``; else why not."""
    try:
        stat = path.stat()
    except OSError as exc:
        return FileText(None, f"cannot be read: {exc.strerror or exc}", 0, 0)
    size, mtime = stat.st_size, stat.st_mtime_ns
    if not path.is_file():
        return FileText(None, "not a regular file", size, mtime)
    large = too_large(size, max_bytes)
    if large is not None:
        hint = "; raise it with --max-bytes, or max_bytes= in Python"
        return FileText(None, large + hint, size, mtime)
    if size == 0:
        return FileText(None, "empty file", size, mtime)
    try:
        data = path.read_bytes()
    except OSError as exc:
        return FileText(None, f"cannot be read: {exc.strerror or exc}", size, mtime)
    text, reason = decode_text(data)
    if text is None:
        return FileText(None, reason, size, mtime)
    if not text.strip():
        return FileText(None, "no text (only whitespace)", size, mtime)
    return FileText(text, None, size, mtime)


def under(path: str, roots: Iterable[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip(os.sep) + os.sep) for r in roots)


__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_PATTERNS",
    "Discovery",
    "FileText",
    "FoundFile",
    "SkippedFile",
    "discover",
    "read_text",
    "under",
]
