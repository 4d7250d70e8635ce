"""Which files of a repository to index, and why the others are left out.

Honours ``.gitignore`` at every level (deeper files override shallower ones, as
in git), ``.git/info/exclude``, default excludes for vendored, build and cache
directories, a size limit, and symlinks (followed while they stay inside the
project, so a link cannot widen what is read; a loop is detected by the real
directory it points to, not by a depth limit). Binary files are
recognised later, when they are read for hashing, so unchanged files are read
only once per run.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

from .parsing.languages import language_for_path

DEFAULT_MAX_FILE_BYTES = 2 * 1024 * 1024

#: Directories nobody wants in a code index: VCS data, dependencies, builds, caches.
DEFAULT_EXCLUDED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".bzr",
        "node_modules",
        "bower_components",
        "jspm_packages",
        "__pycache__",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        ".eggs",
        "site-packages",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".hypothesis",
        ".cache",
        ".gradle",
        ".idea",
        ".next",
        ".nuxt",
        ".svelte-kit",
        ".terraform",
        ".serverless",
        "build",
        "dist",
        "target",
        "vendor",
        "Pods",
        "DerivedData",
        "coverage",
        "htmlcov",
        ".remembrances",
    }
)
#: File patterns left out by default (gitignore syntax): generated or minified code.
DEFAULT_EXCLUDED_FILES = ("*.min.js", "*.min.css", "*.bundle.js", "*.map", "*.egg-info/")


@dataclass(frozen=True)
class FoundFile:
    absolute: str
    path: str  # relative to the root, forward slashes
    language: str
    size: int
    mtime_ns: int


@dataclass(frozen=True)
class SkippedFile:
    path: str
    reason: str


@dataclass
class Discovery:
    files: list[FoundFile] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)


@dataclass(frozen=True)
class _Rules:
    base: str  # directory the patterns are relative to ("" for the root)
    spec: pathspec.GitIgnoreSpec


def _read_patterns(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []


def _ignored(rules: Sequence[_Rules], path: str, is_dir: bool) -> bool:
    """git's answer: the deepest file with a matching pattern decides."""
    decision = False
    for rule in rules:
        relative = path[len(rule.base) + 1 :] if rule.base else path
        result = rule.spec.check_file(relative + "/" if is_dir else relative)
        if result.include is not None:
            decision = bool(result.include)
    return decision


def _link_reason(root: Path, link: str) -> str:
    try:
        target = (root / link).resolve()
        inside = (root / link).parent.resolve()
    except (OSError, RuntimeError):
        return "symlink loop"
    if inside == target or target in inside.parents:
        return "symlink loop (points to a directory that contains it)"
    return "symlink to a directory already indexed"


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
    the project as git sees it.
    """
    root_path = Path(root)
    wanted = set(languages) if languages is not None else None
    found = Discovery()
    base_rules: list[_Rules] = []
    patterns = _read_patterns(root_path / ".git" / "info" / "exclude")
    if default_excludes:
        patterns = list(DEFAULT_EXCLUDED_FILES) + patterns
    patterns += list(exclude)
    if patterns:
        base_rules.append(_Rules("", pathspec.GitIgnoreSpec.from_lines(patterns)))

    seen_dirs: set[tuple[int, int]] = set()
    try:
        info = os.stat(root_path)
    except OSError:
        return found
    real_root = Path(os.path.realpath(root_path))
    seen_dirs.add((info.st_dev, info.st_ino))
    stack: list[tuple[str, list[_Rules]]] = [("", base_rules)]
    deferred: list[tuple[str, list[_Rules], tuple[int, int]]] = []
    while stack or deferred:
        if not stack:
            link, link_rules, key = deferred.pop(0)
            if key in seen_dirs:
                found.skipped.append(SkippedFile(link, _link_reason(root_path, link)))
            else:
                seen_dirs.add(key)
                stack.append((link, link_rules))
            continue
        rel_dir, rules = stack.pop()
        directory = root_path / rel_dir if rel_dir else root_path
        gitignore = _read_patterns(directory / ".gitignore")
        if gitignore:
            rules = [*rules, _Rules(rel_dir, pathspec.GitIgnoreSpec.from_lines(gitignore))]
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as exc:
            found.skipped.append(
                SkippedFile(rel_dir or ".", f"unreadable directory: {exc.strerror}")
            )
            continue
        subdirs: list[tuple[str, list[_Rules]]] = []
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                rel.encode("utf-8")
            except UnicodeEncodeError:  # bytes that are not UTF-8 in the name
                shown = rel.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
                found.skipped.append(SkippedFile(shown, "file name is not valid UTF-8"))
                continue
            try:
                is_link = entry.is_symlink()
                st = entry.stat(follow_symlinks=True)
            except OSError:
                if entry.is_symlink():
                    found.skipped.append(SkippedFile(rel, "broken symlink"))
                continue
            if is_link and not Path(os.path.realpath(entry.path)).is_relative_to(real_root):
                found.skipped.append(SkippedFile(rel, "symlink to a path outside the project"))
                continue
            if stat.S_ISDIR(st.st_mode):
                if default_excludes and entry.name in DEFAULT_EXCLUDED_DIRS:
                    continue
                if _ignored(rules, rel, True):
                    continue
                key = (st.st_dev, st.st_ino)
                if is_link:  # after the real directories, so those keep their own paths
                    deferred.append((rel, rules, key))
                    continue
                if key not in seen_dirs:
                    seen_dirs.add(key)
                    subdirs.append((rel, rules))
                continue
            if not stat.S_ISREG(st.st_mode):
                continue
            if _ignored(rules, rel, False):
                continue
            language = language_for_path(entry.name)
            if language is None:
                found.skipped.append(SkippedFile(rel, "unsupported file type"))
                continue
            if wanted is not None and language not in wanted:
                continue
            if st.st_size > max_file_bytes:
                found.skipped.append(
                    SkippedFile(
                        rel,
                        f"larger than the size limit ({st.st_size:,} > {max_file_bytes:,} bytes)",
                    )
                )
                continue
            found.files.append(
                FoundFile(
                    os.path.join(directory, entry.name), rel, language, st.st_size, st.st_mtime_ns
                )
            )
        stack.extend(reversed(subdirs))
    found.files.sort(key=lambda f: f.path)
    return found
