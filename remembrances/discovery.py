"""Which files under a folder belong to it, the way git sees them, and why the rest are left out.

The knowledge base and the code index both walk folders with this module, so a
file is left out for the same reasons in both (the rules, and why each one is
there, are in ``docs/discovery.md``):

- ``.gitignore`` files at every level, deeper ones overriding shallower ones and
  ``!negations`` re-including, as git does; the repository's ``.git/info/exclude``;
  and, when the folder is inside a repository, the ignore files of the folders
  above it up to the repository's top (unless the folder itself is ignored
  there: a folder asked for by name is walked);
- directories that are never anyone's content (version control, installed
  dependencies, caches, virtualenvs) and generated files (minified bundles,
  source maps, ``*.egg-info``); a layer may add more (the code index adds build
  output such as ``build/`` and ``vendor/``);
- hidden files and directories, when the layer asks;
- symlinks are followed while they stay inside the folder; a link out of it, a
  broken link, a loop, a link to a directory found under its own path, a name that
  is not UTF-8 and an unreadable directory are reported with their reason; a layer
  drops the links to files it reads under their own paths (:func:`one_copy_each`).

Ignored and excluded paths are not reported: they are not part of the folder as
git sees it. What a file holds (binary, too large, not UTF-8) is the reader's
business; :func:`too_large` and :func:`is_binary` give both layers the same words.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

#: Directories that are never anyone's notes or code: version control data,
#: installed dependencies, caches, virtualenvs and IDE state.
NEVER_CONTENT_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".bzr",
        "node_modules",
        "bower_components",
        "jspm_packages",
        "Pods",
        "site-packages",
        "__pycache__",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        ".eggs",
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
        "DerivedData",
        ".remembrances",
    }
)
#: Build output and vendored code in a repository. Ordinary folder names in a
#: folder of notes ("build", "vendor"), so only the code index leaves them out.
BUILD_OUTPUT_DIRS = frozenset({"build", "dist", "target", "vendor", "coverage", "htmlcov"})
#: Generated files (gitignore syntax): minified bundles, source maps, package metadata.
GENERATED_FILES = ("*.min.js", "*.min.css", "*.bundle.js", "*.map", "*.egg-info/")
#: Bytes read to decide whether a file is binary (git reads 8,000).
BINARY_SNIFF_BYTES = 8192


@dataclass(frozen=True)
class SkippedFile:
    """A file (or directory) left out, with why; ``path`` is relative to the walked folder."""

    path: str
    reason: str


@dataclass(frozen=True)
class FoundFile:
    path: Path  # the walked folder joined with ``relative`` (links are not resolved)
    relative: str  # to the walked folder, with forward slashes
    size: int
    mtime_ns: int
    #: (device, inode) of the file (a link's target): :func:`one_copy_each` drops a
    #: link to a file that is read under its own path too.
    identity: tuple[int, int] = (0, 0)
    is_link: bool = False

    @classmethod
    def at(cls, path: Path, relative: str) -> FoundFile:
        """One file given by name (not found by a walk)."""
        st = path.stat()
        return cls(path, relative, st.st_size, st.st_mtime_ns, (st.st_dev, st.st_ino))


@dataclass
class Discovery:
    files: list[FoundFile] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)


@dataclass(frozen=True)
class _Rules:
    """One ignore file's patterns; a path relative to the folder is matched as
    ``prefix + path[strip:]`` (relative to the ignore file's directory)."""

    prefix: str
    strip: int
    spec: pathspec.GitIgnoreSpec

    def decide(self, path: str, is_dir: bool) -> bool | None:
        relative = self.prefix + path[self.strip :]
        result = self.spec.check_file(relative + "/" if is_dir else relative)
        return None if result.include is None else bool(result.include)


def _ignored(rules: Sequence[_Rules], path: str, is_dir: bool) -> bool:
    """git's answer: the last (deepest, most specific) rule with a matching pattern decides."""
    decision = False
    for rule in rules:
        verdict = rule.decide(path, is_dir)
        if verdict is not None:
            decision = verdict
    return decision


def _read_patterns(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:  # absent, a directory, or unreadable: no patterns
        return []


def _spec(lines: Sequence[str]) -> pathspec.GitIgnoreSpec:
    """An ignore file's rules; a line no glob can be made of (a reversed range such as
    ``[z-a]``) matches nothing, as in git, instead of stopping the walk."""
    try:
        return pathspec.GitIgnoreSpec.from_lines(lines)
    except (ValueError, re.error):
        return pathspec.GitIgnoreSpec.from_lines(line for line in lines if _readable(line))


def _readable(line: str) -> bool:
    try:
        pathspec.GitIgnoreSpec.from_lines([line])
    except (ValueError, re.error):
        return False
    return True


def _repository_rules(root: Path) -> list[_Rules]:
    """The ignore rules that reach ``root`` from its repository, lowest precedence first.

    ``.git/info/exclude``, then each ``.gitignore`` from the repository's top down
    to ``root``'s parent. Empty when ``root`` is not inside a repository, or when
    those rules ignore ``root`` or a folder on the way to it: the user asked for
    that folder by name.
    """
    root = Path(os.path.abspath(root))
    chain = [root, *root.parents]
    top = next((p for p in chain if (p / ".git").exists()), None)
    if top is None:
        return []
    found: list[tuple[Path, pathspec.GitIgnoreSpec]] = []
    exclude = _read_patterns(top / ".git" / "info" / "exclude")
    if exclude:
        found.append((top, _spec(exclude)))
    for directory in reversed(chain[1 : chain.index(top) + 1]):
        lines = _read_patterns(directory / ".gitignore")
        if lines:
            found.append((directory, _spec(lines)))
    for folder in reversed(chain[: chain.index(top)]):  # top-down, the root last
        decision = False
        for base, spec in found:
            if base in folder.parents:
                result = spec.check_file(folder.relative_to(base).as_posix() + "/")
                if result.include is not None:
                    decision = bool(result.include)
        if decision:
            return []
    return [_Rules(_prefix(root, base), 0, spec) for base, spec in found]


def _prefix(root: Path, base: Path) -> str:
    """``root``'s path from ``base``, as a prefix for paths under ``root``."""
    offset = root.relative_to(base).as_posix()
    return "" if offset == "." else offset + "/"


def discover(
    root: str | os.PathLike[str],
    *,
    hidden: bool = True,
    excluded_dirs: Collection[str] = NEVER_CONTENT_DIRS,
    excluded_files: Sequence[str] = GENERATED_FILES,
    exclude: Sequence[str] = (),
    outside: str = "the folder",
) -> Discovery:
    """Every file under ``root`` that git would keep, and what was left out with why.

    ``hidden=False`` leaves out names starting with a dot. ``excluded_dirs`` are
    directory names left out at any depth; ``excluded_files`` are gitignore
    patterns with the lowest precedence (a ``.gitignore`` may re-include one),
    ``exclude`` patterns the highest (as git's command line). ``outside`` names
    the folder in the reason given for a link that leaves it.
    """
    root_path = Path(root)
    found = Discovery()
    base: list[_Rules] = []
    if excluded_files:
        base.append(_Rules("", 0, _spec(excluded_files)))
    base += _repository_rules(root_path)
    last: list[_Rules] = [_Rules("", 0, _spec(exclude))] if exclude else []
    try:
        info = os.stat(root_path)
    except OSError:
        return found
    real_root = Path(os.path.realpath(root_path))
    seen_dirs: set[tuple[int, int]] = {(info.st_dev, info.st_ino)}
    stack: list[tuple[str, list[_Rules]]] = [("", base)]
    # Directory links are walked after the real directories, so that those keep
    # their own paths and a link to one of them is reported, not walked twice.
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
        lines = _read_patterns(directory / ".gitignore")
        if lines:
            strip = len(rel_dir) + 1 if rel_dir else 0
            rules = [*rules, _Rules("", strip, _spec(lines))]
        every = [*rules, *last]
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as exc:
            reason = f"unreadable directory: {exc.strerror or exc}"
            found.skipped.append(SkippedFile(rel_dir or ".", reason))
            continue
        subdirs: list[tuple[str, list[_Rules]]] = []
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            if not hidden and entry.name.startswith("."):
                continue
            try:
                rel.encode("utf-8")
            except UnicodeEncodeError:  # bytes that are not UTF-8 in the name
                shown = rel.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
                found.skipped.append(SkippedFile(shown, "file name is not valid UTF-8"))
                continue
            try:
                is_link = entry.is_symlink()
                st = entry.stat(follow_symlinks=True)
            except OSError as exc:
                if entry.is_symlink():
                    loop = exc.errno == errno.ELOOP  # links that point at each other
                    found.skipped.append(
                        SkippedFile(rel, "symlink loop" if loop else "broken symlink")
                    )
                continue
            if is_link and not Path(os.path.realpath(entry.path)).is_relative_to(real_root):
                found.skipped.append(SkippedFile(rel, f"symlink to a path outside {outside}"))
                continue
            if stat.S_ISDIR(st.st_mode):
                if entry.name in excluded_dirs or _ignored(every, rel, True):
                    continue
                key = (st.st_dev, st.st_ino)
                if is_link:
                    deferred.append((rel, rules, key))
                elif key not in seen_dirs:
                    seen_dirs.add(key)
                    subdirs.append((rel, rules))
                continue
            if not stat.S_ISREG(st.st_mode) or _ignored(every, rel, False):
                continue
            identity = (st.st_dev, st.st_ino)
            found.files.append(
                FoundFile(
                    directory / entry.name, rel, st.st_size, st.st_mtime_ns, identity, is_link
                )
            )
        stack.extend(reversed(subdirs))
    found.files.sort(key=lambda f: f.relative)
    found.skipped.sort(key=lambda s: s.path)
    return found


def one_copy_each(files: Sequence[FoundFile]) -> tuple[list[FoundFile], list[SkippedFile]]:
    """``files`` without the symlinks to a file that is among them under its own path (or
    under an earlier link's): a second copy of every symbol and passage in search,
    references and the map. Run on the files a layer selected, not on all it walked: a
    link whose target was not selected (``*.md`` linking to a ``.txt``) is its one copy."""
    kept = {f.identity for f in files if not f.is_link}
    out: list[FoundFile] = []
    copies: list[SkippedFile] = []
    for f in files:
        if f.is_link:
            if f.identity in kept:
                copies.append(SkippedFile(f.relative, "symlink to a file already indexed"))
                continue
            kept.add(f.identity)
        out.append(f)
    return out, copies


def _link_reason(root: Path, link: str) -> str:
    try:
        target = (root / link).resolve()
        inside = (root / link).parent.resolve()
    except (OSError, RuntimeError):
        return "symlink loop"
    if inside == target or target in inside.parents:
        return "symlink loop (points to a directory that contains it)"
    return "symlink to a directory already indexed"


def too_large(size: int, limit: int) -> str | None:
    """Why a file of ``size`` bytes is skipped under ``limit``, or None when it fits."""
    if size <= limit:
        return None
    return f"larger than the size limit: {size:,} bytes, the limit is {limit:,}"


def is_binary(data: bytes) -> bool:
    """git's rule: a NUL byte near the start means binary."""
    return b"\0" in data[:BINARY_SNIFF_BYTES]


def decode_text(data: bytes) -> tuple[str | None, str | None]:
    """``data`` as text when it is UTF-8 (a BOM allowed), else None and why not: what
    the knowledge base ingests, and what ``kb add`` takes from a file or stdin."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return None, "UTF-16 text; convert it to UTF-8"
    if is_binary(data):
        return None, "binary file (contains NUL bytes)"
    try:
        return data.decode("utf-8-sig"), None
    except UnicodeDecodeError as exc:
        byte = data[exc.start]
        return None, f"not valid UTF-8 (byte {exc.start + 1} is 0x{byte:02x}); convert it"
