"""Finding the text files under a directory the way git would see them.

``.gitignore`` files are honoured at every level (a deeper file overrides a
shallower one, and the repository's own ignore files above the ingested
directory count too); version-control and dependency directories and hidden
files are left out. Reading a file decides whether it is text at all: binary,
non-UTF-8, empty and oversized files come back with the reason they were skipped.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

from .records import SkippedFile

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
SKIPPED_DIRS = frozenset(
    {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".remembrances"}
)
DEFAULT_MAX_BYTES = 10_000_000
_SNIFF = 8192


@dataclass(frozen=True)
class FoundFile:
    path: Path  # absolute
    relative: str  # to the ingested root, with forward slashes


@dataclass
class Discovery:
    """Files to ingest, every file git would not ignore (whatever its name), and
    the files left out with their reasons."""

    files: list[FoundFile] = field(default_factory=list)
    visible: set[str] = field(default_factory=set)
    skipped: list[SkippedFile] = field(default_factory=list)


class _IgnoreRules:
    """The .gitignore files that apply to a path, deepest first."""

    def __init__(self) -> None:
        self._specs: dict[Path, pathspec.GitIgnoreSpec | None] = {}

    def load(self, directory: Path) -> None:
        if directory in self._specs:
            return
        spec = None
        ignore_file = directory / ".gitignore"
        try:
            if ignore_file.is_file():
                lines = ignore_file.read_text(encoding="utf-8", errors="replace").splitlines()
                spec = pathspec.GitIgnoreSpec.from_lines(lines)
        except OSError:
            spec = None
        self._specs[directory] = spec

    def ignored(self, path: Path, *, is_dir: bool) -> bool:
        for base in [path.parent, *path.parent.parents]:
            spec = self._specs.get(base)
            if spec is None:
                continue
            relative = path.relative_to(base).as_posix() + ("/" if is_dir else "")
            result = spec.check_file(relative)
            if result.include is not None:
                return bool(result.include)
        return False


def _repository_parents(root: Path) -> list[Path]:
    """Directories above ``root`` up to its repository's top, whose ignore files apply."""
    parents = []
    for parent in root.parents:
        parents.append(parent)
        if (parent / ".git").exists():
            return parents
    return []  # not inside a repository: ignore files above the root do not apply


def discover(
    root: Path,
    patterns: Sequence[str] | None = None,
    *,
    include_hidden: bool = False,
) -> Discovery:
    """The files under ``root`` (a directory) that match ``patterns`` and git would keep."""
    wanted = pathspec.PathSpec.from_lines("gitignore", patterns or DEFAULT_PATTERNS)
    rules = _IgnoreRules()
    for parent in reversed(_repository_parents(root)):
        rules.load(parent)
    if rules.ignored(root, is_dir=True):
        rules = _IgnoreRules()  # asked for by name: the repository's rules do not hide it
    found = Discovery()
    real_root = Path(os.path.realpath(root))
    # os.walk does not follow directory symlinks; file symlinks are read only
    # when they stay inside the folder (a link must not widen what is read)
    for dirpath, dirnames, filenames in os.walk(root):
        directory = Path(dirpath)
        rules.load(directory)
        dirnames[:] = sorted(
            d
            for d in dirnames
            if d not in SKIPPED_DIRS
            and (include_hidden or not d.startswith("."))
            and not rules.ignored(directory / d, is_dir=True)
        )
        for name in sorted(filenames):
            path = directory / name
            if (not include_hidden and name.startswith(".")) or rules.ignored(path, is_dir=False):
                continue
            found.visible.add(str(path))
            relative = path.relative_to(root).as_posix()
            if not wanted.match_file(relative):
                continue
            if path.is_symlink() and not Path(os.path.realpath(path)).is_relative_to(real_root):
                found.skipped.append(
                    SkippedFile(relative, "symlink to a file outside the ingested folder")
                )
                continue
            found.files.append(FoundFile(path, relative))
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
    if size > max_bytes:
        return FileText(
            None,
            f"too large: {size:,} bytes (the limit is {max_bytes:,}; raise it with "
            "--max-bytes, or max_bytes= in Python)",
            size,
            mtime,
        )
    if size == 0:
        return FileText(None, "empty file", size, mtime)
    try:
        data = path.read_bytes()
    except OSError as exc:
        return FileText(None, f"cannot be read: {exc.strerror or exc}", size, mtime)
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return FileText(None, "UTF-16 text; convert it to UTF-8 to ingest it", size, mtime)
    if b"\x00" in data[:_SNIFF]:
        return FileText(None, "binary file (contains NUL bytes)", size, mtime)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return FileText(
            None, f"not valid UTF-8 (invalid byte at offset {exc.start}); convert it", size, mtime
        )
    if not text.strip():
        return FileText(None, "no text (only whitespace)", size, mtime)
    return FileText(text, None, size, mtime)


def under(path: str, roots: Iterable[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip(os.sep) + os.sep) for r in roots)
