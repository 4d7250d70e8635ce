"""Which files of a repository to index, and why the others are left out.

The walk (``.gitignore`` at every level, ``.git/info/exclude``, the repository's
ignore files above the root, never-content directories, symlinks followed while
they stay inside the project, loops detected by the real directory they point
to) is :mod:`remembrances.discovery`, shared with the knowledge base. The code
index adds build output and vendored code (``build/``, ``dist/``, ``vendor/``,
...), the caller's ``exclude`` patterns, the languages it can parse, and a size
limit. Binary files are recognised later, when they are read for hashing, so
unchanged files are read only once per run.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ..discovery import (
    BUILD_OUTPUT_DIRS,
    GENERATED_FILES,
    NEVER_CONTENT_DIRS,
    SkippedFile,
    one_copy_each,
    too_large,
)
from ..discovery import discover as walk
from .parsing.languages import language_for_path

DEFAULT_MAX_FILE_BYTES = 2 * 1024 * 1024

#: Directories nobody wants in a code index: VCS data, dependencies, builds, caches.
DEFAULT_EXCLUDED_DIRS = NEVER_CONTENT_DIRS | BUILD_OUTPUT_DIRS
#: File patterns left out by default (gitignore syntax): generated or minified code.
DEFAULT_EXCLUDED_FILES = GENERATED_FILES


@dataclass(frozen=True)
class FoundFile:
    absolute: str
    path: str  # relative to the root, forward slashes
    language: str
    size: int
    mtime_ns: int


@dataclass
class Discovery:
    files: list[FoundFile] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)


def discover(
    root: str | os.PathLike[str],
    *,
    languages: Iterable[str] | None = None,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    exclude: Sequence[str] = (),
    default_excludes: bool = True,
) -> Discovery:
    """Every indexable file under ``root``, and every file left out with its reason.

    Files of languages outside ``languages`` are left out silently (they are not
    candidates at all). Ignored paths are not reported either: they are not part of
    the project as git sees it. ``default_excludes=False`` walks every directory
    but ``.git`` and keeps generated files.
    """
    wanted = set(languages) if languages is not None else None
    walked = walk(
        root,
        hidden=True,
        excluded_dirs=DEFAULT_EXCLUDED_DIRS if default_excludes else {".git"},
        excluded_files=DEFAULT_EXCLUDED_FILES if default_excludes else (),
        exclude=exclude,
        outside="the project",
    )
    found = Discovery(skipped=walked.skipped)
    candidates = []
    for item in walked.files:
        language = language_for_path(item.path.name)
        if language is None:
            found.skipped.append(SkippedFile(item.relative, "unsupported file type"))
        elif wanted is None or language in wanted:
            candidates.append(item)
    readable, copies = one_copy_each(candidates)
    found.skipped += copies
    for item in readable:
        language = language_for_path(item.path.name)
        assert language is not None
        large = too_large(item.size, max_file_bytes)
        if large is not None:
            found.skipped.append(SkippedFile(item.relative, large))
            continue
        found.files.append(
            FoundFile(str(item.path), item.relative, language, item.size, item.mtime_ns)
        )
    found.skipped.sort(key=lambda s: s.path)
    return found


__all__ = ["DEFAULT_MAX_FILE_BYTES", "Discovery", "FoundFile", "SkippedFile", "discover"]
