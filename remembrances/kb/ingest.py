"""Keeping a collection in step with files on disk: one pass (ingest) or a loop (watch).

A pass is incremental. A file whose size and modification time are what was
recorded is not even read; one whose bytes hash the same is not re-chunked; a
changed file is replaced atomically, with only its changed chunks embedded. Files
that disappeared (or are now ignored, or no longer readable as text) lose their
documents, but only files under the ingested path: other roots sharing the
collection are left alone. Documents are embedded in groups, then each group is
written in one short transaction.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from ..chunking import Chunker, format_for
from ..errors import InvalidInputError, NotFoundError
from ..progress import Progress
from ..store import content_hash
from ..validation import check_name
from .discovery import DEFAULT_MAX_BYTES, FoundFile, SkippedFile, discover, read_text, under
from .records import AddReport, IngestReport
from .staging import Committed, FileStamp, StagedDocument, check_metadata

log = logging.getLogger(__name__)

#: Documents whose chunks are embedded in one call while ingesting.
EMBED_GROUP_CHUNKS = 64


class Documents(Protocol):
    """What an ingest needs of the knowledge base (``KnowledgeBase`` is one)."""

    @property
    def chunker(self) -> Chunker: ...

    def check_writable(self) -> None: ...

    def known(self, collection: str, source: str) -> dict[str, Any] | None: ...

    def known_files(self, collection: str) -> dict[str, dict[str, Any]]: ...

    def collection_root(
        self, collection: str, folder: Path, *, holds_root: bool = True
    ) -> Path: ...

    def stage(
        self,
        text: Any,
        *,
        source: Any,
        title: Any,
        metadata: Any,
        collection: Any,
        format: Any,
        file: FileStamp | None = None,
        known: Mapping[str, Any] | None = None,
    ) -> StagedDocument | AddReport: ...

    def commit(
        self,
        staged: Sequence[StagedDocument],
        progress: Progress | None = None,
    ) -> Committed: ...

    def delete(self, source: str, *, collection: str = "default") -> bool: ...

    def rename(self, renames: Mapping[str, str], *, collection: str = "default") -> None: ...


def _check_max_bytes(max_bytes: Any) -> int:
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1:
        raise InvalidInputError("max_bytes must be a positive integer")
    return max_bytes


def ingest(
    kb: Documents,
    path: str | os.PathLike[str],
    *,
    collection: str = "default",
    patterns: Sequence[str] | None = None,
    metadata: Mapping[str, Any] | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    include_hidden: bool = False,
    progress: Progress | None = None,
) -> IngestReport:
    """One incremental pass over a file or a directory tree; see the module docstring.

    ``progress("files", done, total)`` is called as files are read and chunked;
    while a group of them is embedded, ``progress("embedding", done, total)``
    counts the chunks that need the embedder, and then files are counted again.

    A file named directly is ingested whatever its extension; in a directory only
    files matching ``patterns`` (gitignore-style globs; default: Markdown, text,
    reStructuredText, AsciiDoc, Org) are.
    """
    kb.check_writable()
    collection = check_name(collection, "collection")
    metadata = check_metadata(metadata)[0]
    max_bytes = _check_max_bytes(max_bytes)
    if patterns is not None and (
        isinstance(patterns, str) or not all(isinstance(p, str) for p in patterns)
    ):
        raise InvalidInputError('patterns must be a list of globs like ["*.md", "docs/**"]')
    if not isinstance(path, str | os.PathLike):
        raise InvalidInputError(f"path must be a path, not {type(path).__name__}")
    root = Path(path).expanduser()
    if not root.exists():
        raise NotFoundError(f"{str(root)!r} does not exist; pass a file or a directory")
    root = root.resolve()
    report = IngestReport(root=str(root), collection=collection)
    if root.is_dir():
        found = discover(root, patterns, include_hidden=include_hidden)
        files, visible = found.files, found.visible
        report.skipped.extend(found.skipped)
    else:
        files, visible = [FoundFile.at(root, root.name)], {str(root)}

    settings = hashlib.sha256(
        json.dumps([kb.chunker.fingerprint, metadata], sort_keys=True, default=str).encode()
    ).hexdigest()[:16]
    known = kb.known_files(collection)
    base = kb.collection_root(
        collection, root if root.is_dir() else root.parent, holds_root=root.is_dir()
    )
    below = _named_from_below(kb, collection, known, base, files)
    if below:  # first, so that the names they leave are free for this ingest's files
        # in place and at once; the loop then reads each file again into its document
        renames = {str(known[str(p)]["source"]): name for p, name in below.items()}
        kb.rename(renames, collection=collection)
        known = kb.known_files(collection)
    taken = {row["source"]: key for key, row in known.items()}
    renamed: list[str] = []  # documents named by their absolute path before
    replacing: set[str] = set()  # the files whose document takes over a renamed one
    kept: set[str] = set()
    group: list[StagedDocument] = []
    for done, item in enumerate(files):
        if progress is not None:
            progress("files", done, len(files))
        key = str(item.path)
        row = known.get(key)
        legacy = row is not None and row["source"] == key  # named by its absolute path
        if (
            row is not None
            and not legacy
            and row["settings"] == settings
            and _same_stat(item.path, row)
        ):
            report.unchanged.append(item.relative)
            kept.add(key)
            continue
        content = read_text(item.path, max_bytes=max_bytes)
        if content.text is None:
            report.skipped.append(SkippedFile(item.relative, content.reason or "unreadable"))
            continue
        # what this ingest would store: a document imported from an export of it is it
        written = ({**metadata, "path": item.relative}, content_hash(content.text))
        source = _source_for(item.path, base, root, row, taken, kb, collection, written)
        if row is not None and row["source"] != source:
            renamed.append(row["source"])
            replacing.add(item.relative)
            row = None
        elif row is None and source != key and _imported_as(kb, collection, key, written):
            renamed.append(key)  # imported from an export that named it by its absolute path
            replacing.add(item.relative)
        try:
            staged = kb.stage(
                content.text,
                source=source,
                title=None,
                metadata={**metadata, "path": item.relative},
                collection=collection,
                format=format_for(key, "text"),
                file=FileStamp(key, content.size, content.mtime_ns, settings),
                known=row,
            )
        except InvalidInputError as exc:
            report.skipped.append(SkippedFile(item.relative, str(exc)))
            continue
        kept.add(key)
        if isinstance(staged, AddReport):
            report.unchanged.append(item.relative)
            continue
        staged.label = item.relative
        group.append(staged)
        if sum(len(s.chunks) for s in group) >= EMBED_GROUP_CHUNKS:
            _flush(kb, group, report, replacing, _embedding(progress, done + 1, len(files)))
            group = []
    if group:
        _flush(kb, group, report, replacing, _embedding(progress, len(files), len(files)))
    for old in renamed:
        kb.delete(old, collection=collection)
    if progress is not None:
        progress("files", len(files), len(files))

    for key, row in known.items():
        if key in kept or row["source"] in renamed or not under(key, [str(root)]):
            continue
        if key in visible and not _was_skipped(key, root, report):
            continue  # still there, just not selected by these patterns
        if not include_hidden and _is_hidden(key, root) and Path(key).is_file():
            continue  # still there, ingested with include_hidden: not this ingest's to drop
        kb.delete(row["source"], collection=collection)
        report.removed.append(_relative(key, root))
    return report


def _named_from_below(
    kb: Documents,
    collection: str,
    known: Mapping[str, Mapping[str, Any]],
    base: Path,
    files: Sequence[FoundFile],
) -> dict[Path, str]:
    """The files stored under their name below a folder inside ``base`` (ingested from
    that subfolder first: ``index.md`` for ``api/index.md``), with their name under
    ``base``. Ingesting the parent then named the parent's own ``index.md`` by its
    absolute path, as the subfolder's document held the name."""
    found: dict[Path, str] = {}
    for item in files:
        row = known.get(str(item.path))
        if row is None or row["source"] == str(item.path):
            continue  # new, or named by its absolute path (the loop renames those)
        try:
            full = item.path.relative_to(base).as_posix()
        except ValueError:
            continue
        if full.endswith("/" + str(row["source"])) and kb.known(collection, full) is None:
            found[item.path] = full
    return found


def _source_for(
    path: Path,
    base: Path,
    root: Path,
    row: Mapping[str, Any] | None,
    taken: dict[str, str],
    kb: Documents,
    collection: str,
    written: tuple[dict[str, Any], str],
) -> str:
    """A document's name: its path under the collection's folder ("guide/install.md").

    A file already stored keeps its name, unless that name was its absolute path
    (how earlier versions named them). A name another file or a hand-added document
    holds keeps that one's document; the newcomer is then named by its absolute path.
    """
    key = str(path)
    if row is not None and row["source"] != key:
        return str(row["source"])
    try:
        name = path.relative_to(base).as_posix()
    except ValueError:
        name = path.relative_to(root).as_posix() if path != root else path.name
    holder = taken.get(name)
    if holder is not None and holder != key and Path(holder).exists():
        return key  # another file holds the name (a file that is gone was moved here)
    if holder is None:
        stored = kb.known(collection, name)
        if stored is not None and not _imported_copy(stored, *written):
            return key  # a document added by hand under that name
    taken[name] = key
    return name


def _imported_as(
    kb: Documents, collection: str, name: str, written: tuple[dict[str, Any], str]
) -> bool:
    """Whether a document no file is linked to, named ``name``, is an imported copy of
    what this ingest would store (:func:`_imported_copy`)."""
    stored = kb.known(collection, name)
    return stored is not None and _imported_copy(stored, *written)


def _imported_copy(stored: Mapping[str, Any], metadata: dict[str, Any], digest: str) -> bool:
    """Whether a document no file is linked to is what this ingest would store for the
    file: its text, and its metadata but for the ``path`` an ingest writes. So it was
    read from this file and came back through an export, which keeps the text and
    metadata but not the link; the file takes it back instead of being stored a second
    time under its absolute path. A document written by hand differs in one or the
    other. The ``path`` is relative to the folder an ingest read the file from, so a
    file last ingested with its subfolder had another one, and was stored twice."""
    try:
        found = json.loads(stored.get("metadata") or "{}")
    except ValueError:
        return False
    if not isinstance(found, dict) or not isinstance(found.get("path"), str):
        return False  # no ingest wrote it
    return stored.get("content_hash") == digest and _without_path(found) == _without_path(metadata)


def _without_path(metadata: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in metadata.items() if k != "path"}


def _embedding(progress: Progress | None, files_done: int, files: int) -> Progress | None:
    """The group's embedding as its own phase; files are counted again when it ends."""
    if progress is None:
        return None

    def report(phase: str, done: int, total: int | None) -> None:
        progress(phase, done, total)
        if done == total:
            progress("files", files_done, files)

    return report


def _flush(
    kb: Documents,
    group: list[StagedDocument],
    report: IngestReport,
    replacing: set[str],
    progress: Progress | None = None,
) -> None:
    """Store a group of documents; one that takes over a renamed document is "updated"
    (the file was in memory already, under its old name)."""
    done = kb.commit(group, progress)
    report.embedded += done.embedded
    report.cached += done.cached
    report.chunks += done.chunks
    for staged in group:
        added = staged.status == "added" and staged.label not in replacing
        (report.added if added else report.updated).append(staged.label)


def _same_stat(path: Path, row: Mapping[str, Any]) -> bool:
    try:
        stat = path.stat()
    except OSError:
        return False
    return (stat.st_size, stat.st_mtime_ns) == (row["file_size"], row["file_mtime_ns"])


def _was_skipped(key: str, root: Path, report: IngestReport) -> bool:
    relative = _relative(key, root)
    return any(s.path == relative for s in report.skipped)


def _is_hidden(key: str, root: Path) -> bool:
    """Whether a file under ``root`` is hidden there (a part of its path starts with ".")."""
    return any(part.startswith(".") for part in Path(_relative(key, root)).parts)


def _relative(key: str, root: Path) -> str:
    path = Path(key)
    if path == root:
        return root.name
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return key


def watch(
    kb: Documents,
    path: str | os.PathLike[str],
    *,
    collection: str = "default",
    patterns: Sequence[str] | None = None,
    interval: float = 1.0,
    stop_event: threading.Event | None = None,
    on_change: Callable[[IngestReport], Any] | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> int:
    """Ingest ``path`` every ``interval`` seconds until ``stop_event`` is set.

    Without a ``stop_event`` it runs until interrupted (Ctrl-C). Returns the number
    of passes made.
    """
    if (
        isinstance(interval, bool)
        or not isinstance(interval, int | float)
        or not math.isfinite(interval)
        or interval <= 0
    ):
        raise InvalidInputError("interval must be a positive number of seconds")
    if on_change is not None and not callable(on_change):
        raise InvalidInputError("on_change must be callable")
    stop = stop_event or threading.Event()
    passes = 0
    try:
        while not stop.is_set():
            try:
                report = ingest(
                    kb, path, collection=collection, patterns=patterns, max_bytes=max_bytes
                )
            except NotFoundError:
                # Gone for now (unmounted, being replaced): keep the documents and wait.
                log.warning("kb watch: %s does not exist; waiting for it", path)
                passes += 1
                stop.wait(interval)
                continue
            passes += 1
            if report.changed:
                log.info(
                    "kb watch %s: %d added, %d updated, %d removed",
                    report.root,
                    len(report.added),
                    len(report.updated),
                    len(report.removed),
                )
                if on_change is not None:
                    on_change(report)
            stop.wait(interval)
    except KeyboardInterrupt:
        pass
    return passes
