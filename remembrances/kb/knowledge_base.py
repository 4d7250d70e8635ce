"""The knowledge base: documents split into searchable chunks, replaced atomically.

A document is identified by ``(collection, source)``. Adding it again replaces it
in one transaction, after its chunks were embedded: a failed embedding leaves the
previous version searchable. Chunk vectors come from the store's embedding cache
when their text did not change, and a document whose text, title, metadata and
chunking settings are all unchanged costs nothing at all.
"""

from __future__ import annotations

import builtins
import difflib
import json
import os
import re
import threading
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .. import fusion
from ..chunking import MAX_LEAD_CHARS, Chunker, Format, sentence_lead
from ..cjk import cjk_words
from ..errors import AmbiguousNameError, InvalidInputError, NotFoundError
from ..name_match import name_matches
from ..progress import Progress
from ..records import SearchResult
from ..storage.transaction import Row
from ..store import MAX_LIMIT, Prepared, SearchMode, Store, Where
from ..validation import check_limit, check_min_score, check_name, check_offset
from . import tables
from .discovery import DEFAULT_MAX_BYTES, under
from .ingest import ingest, watch
from .passages import CANDIDATES_PER_HIT, Passage, passages
from .records import AddReport, Document, IngestReport, KBHit
from .staging import (
    MAX_DOCUMENT_CHARS,
    RESERVED_KEYS,
    Committed,
    FileStamp,
    StagedDocument,
    StoredStamp,
    below_title,
    stage,
)

KIND = "kb"
__all__ = ["KIND", "MAX_DOCUMENT_CHARS", "KnowledgeBase"]


class KnowledgeBase:
    """Documents an agent was given, searchable by meaning and by words."""

    def __init__(self, store: Store, *, chunker: Chunker | None = None) -> None:
        self.store = store
        self.chunker = chunker or Chunker()
        self._write_lock = threading.Lock()
        store.migrate("kb", tables.KB_MIGRATIONS)
        # A file opened read-only that never held documents has no KB tables.
        self._has_tables = store.meta("schema:kb") is not None

    def check_writable(self) -> None:
        """Refuse, before any work, changes to a memory opened read-only."""
        self.store.check_writable("change documents")

    # -- writing -----------------------------------------------------------------------

    def add(
        self,
        text: str,
        *,
        source: str,
        title: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        collection: str = "default",
        format: Format | None = None,
        file: str | os.PathLike[str] | None = None,
    ) -> AddReport:
        """Add a document or atomically replace the one with the same source.

        ``format`` ("markdown", "rst", "asciidoc", "org", "text") decides where
        headings are; by default it follows the source's file extension, and
        Markdown otherwise. ``file`` records the file the text was read from, so
        that ingesting its folder later updates this document instead of adding a
        second copy; re-adding a file without ``metadata`` keeps the metadata its
        document has (an ingest's ``path``), so an unchanged file stays unchanged.
        """
        self.check_writable()
        stamp = None
        if file is not None:
            on_disk = Path(file).expanduser().resolve()
            stat = on_disk.stat()
            stamp = FileStamp(str(on_disk), stat.st_size, stat.st_mtime_ns, "")
            if metadata is None and self.source_of_file(on_disk, collection=collection) == source:
                metadata = self.get(source, collection=collection).metadata
        staged = self.stage(
            text,
            source=source,
            title=title,
            metadata=metadata,
            collection=collection,
            format=format,
            file=stamp,
        )
        if isinstance(staged, AddReport):
            return staged
        return self.commit([staged]).reports[0]

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
    ) -> StagedDocument | AddReport:
        """Check and chunk a document for :meth:`commit` (see ``staging.py``).

        ``known`` is the stored row of :meth:`known` when the caller already has it.
        An unchanged document is reported as such, with its file's new size and
        time recorded when only they changed (a touch, a copy).
        """
        source = check_name(source, "source")
        collection = check_name(collection, "collection")
        row = known if known is not None else self.known(collection, source)
        staged = stage(
            self.chunker,
            text,
            source=source,
            title=title,
            metadata=metadata,
            collection=collection,
            format=format,
            file=file,
            stored=None
            if row is None
            else StoredStamp(
                row["fingerprint"],
                int(row["chunks"]),
                row["file_size"],
                row["file_mtime_ns"],
                row["settings"],
            ),
        )
        if isinstance(staged, StagedDocument) and file is None and row and _linked(row):
            # Text added by hand over a file's document stays that file's: the next
            # ingest reads the file again into it (a stamp no file has), rather than
            # adding the file a second time under its absolute path. A file that is
            # gone leaves the text to the hand that wrote it.
            staged.file = FileStamp(str(row["path"]), -1, -1, "")
        if (
            isinstance(staged, AddReport)
            and row is not None
            and file is not None
            and (row["path"], row["file_size"], row["file_mtime_ns"], row["settings"])
            != (file.path, file.size, file.mtime_ns, file.settings)
        ):
            with self._write_lock, self.store.transaction() as tx:
                tables.touch(
                    tx,
                    collection,
                    source,
                    path=file.path,
                    size=file.size,
                    mtime_ns=file.mtime_ns,
                    settings=file.settings,
                )
        return staged

    def rebuild(self, source: str, *, collection: str = "default") -> AddReport:
        """Chunk and embed a stored document again from its stored text (a repair of
        lost chunks). The new chunks replace the old in one transaction once they are
        embedded: an embedder that fails leaves the document as it was."""
        doc = self.get(source, collection=collection)
        row = self.known(doc.collection, doc.source) or {}
        file = None
        if row.get("path"):
            file = FileStamp(
                row["path"], row["file_size"], row["file_mtime_ns"], row["settings"] or ""
            )
        staged = stage(  # nothing stored to compare with: always chunked again
            self.chunker,
            doc.text or "",
            source=doc.source,
            title=doc.title,
            metadata=doc.metadata,
            collection=doc.collection,
            format=doc.format,
            stored=None,
            file=file,
        )
        if isinstance(staged, AddReport):
            return staged
        return self.commit([staged]).reports[0]

    def commit(
        self,
        staged: Sequence[StagedDocument],
        progress: Progress | None = None,
    ) -> Committed:
        """Embed every staged document's chunks, then write them all in one transaction."""
        prepared = self.store.prepare([c for s in staged for c in s.chunks], progress=progress)
        done = Committed(embedded=prepared.embedded, cached=prepared.cached)
        now = time.time()
        with self._write_lock, self.store.transaction() as tx:
            offset = 0
            for doc in staged:
                part = Prepared(prepared.chunks[offset : offset + len(doc.chunks)])
                offset += len(doc.chunks)
                self.store.write_source(KIND, doc.collection, doc.source, part)
                tables.upsert(
                    tx,
                    tables.DocumentWrite(
                        collection=doc.collection,
                        source=doc.source,
                        title=doc.title,
                        metadata_json=doc.metadata_json,
                        format=doc.format,
                        text=doc.text,
                        content_hash=doc.content_hash,
                        fingerprint=doc.fingerprint,
                        chunks=len(doc.chunks),
                        path=doc.file.path if doc.file else None,
                        file_size=doc.file.size if doc.file else None,
                        file_mtime_ns=doc.file.mtime_ns if doc.file else None,
                        settings=doc.file.settings if doc.file else None,
                    ),
                    now,
                )
                done.chunks += len(doc.chunks)
                done.reports.append(
                    AddReport(
                        doc.source,
                        doc.collection,
                        doc.status,
                        len(doc.chunks),
                        embedded=prepared.embedded if len(staged) == 1 else 0,
                        cached=prepared.cached if len(staged) == 1 else 0,
                    )
                )
        return done

    def known(self, collection: str, source: str) -> dict[str, Any] | None:
        """What an ingest needs of a stored document (``tables.KNOWN_COLUMNS``), or None."""
        if not self._has_tables:
            return None
        with self.store.snapshot() as tx:
            row = tables.known(tx, collection, source)
        return None if row is None else row.to_dict()

    def known_files(self, collection: str) -> dict[str, dict[str, Any]]:
        """The documents of ``collection`` read from files, by absolute path."""
        if not self._has_tables:
            return {}
        with self.store.snapshot() as tx:
            rows = tables.known_files(tx, collection)
        return {row["path"]: row.to_dict() for row in rows}

    def collection_root(self, collection: str, folder: Path, *, holds_root: bool = True) -> Path:
        """The folder ``collection``'s documents are named from: the first one ingested,
        recorded now if ``folder`` is the first, if the recorded one no longer exists
        (the folder was moved: its documents follow it), or if ``folder`` holds it (a
        parent ingested after its subfolder: names are from the parent on). The
        folder of a single file ingested (``holds_root`` False) never takes over."""
        with self._write_lock, self.store.transaction() as tx:
            root = tables.root(tx, collection)
            if root is not None and under(str(folder), [root]):
                return Path(root)
            parent = holds_root and root is not None and under(root, [str(folder)])
            if root is None or not Path(root).is_dir() or parent:
                tables.set_root(tx, collection, str(folder))
        return folder

    def source_of_file(
        self, path: str | os.PathLike[str], *, collection: str = "default"
    ) -> str | None:
        """The source of the document read from the file at ``path`` (None: there is none)."""
        collection = check_name(collection, "collection")
        if not self._has_tables:
            return None
        on_disk = str(Path(path).expanduser().resolve())
        with self.store.snapshot() as tx:
            return tables.source_of_path(tx, collection, on_disk)

    def resolve(self, spelling: str, *, collection: str = "default") -> str:
        """The source of the one document ``spelling`` names in ``collection``.

        Besides the source itself this accepts the document's file as a path (from
        the current folder, or absolute) and a path that ends with the source
        (``docs/cli.md`` for ``cli.md``) or that the source ends with, and, when none
        does, those without the extension (``Atomic Habits``, as a wikilink names
        ``Books/Atomic Habits.md``). NotFoundError when none or several documents
        match; its message names them.
        """
        spelling = check_name(spelling, "source")
        collection = check_name(collection, "collection")
        if not self._has_tables:
            raise NotFoundError(f"no document {spelling!r} in collection {collection!r}")
        with self.store.snapshot() as tx:
            # The usual case, the source itself, by key: get() and delete() pass here.
            if tables.exists(tx, collection, spelling):
                return spelling
            rows = tables.sources_and_paths(tx, collection)
            elsewhere = tables.other_collections(tx, collection, spelling)
            matches = _named(rows, spelling)
            if not matches and not elsewhere:  # named as a document of another collection?
                elsewhere = [
                    other
                    for other in tables.collections(tx)
                    if other != collection and _named(tables.sources_and_paths(tx, other), spelling)
                ]
        if len(matches) == 1:
            return matches[0]
        if matches:
            raise AmbiguousNameError(
                f"{spelling!r} could be any of {', '.join(map(repr, sorted(matches)[:10]))} "
                f"in collection {collection!r}; give the full source"
            )
        sources = [source for source, _ in rows]
        wanted = spelling.replace("\\", "/").removeprefix("./")
        close = difflib.get_close_matches(wanted, sources, n=5, cutoff=0.5)
        if elsewhere:
            hint = f"it is in collection {', '.join(map(repr, elsewhere))}; pass that collection"
        elif close:
            hint = f"did you mean {', '.join(map(repr, close))}?"
        else:
            hint = "see what is stored with `remembrances kb list` (Python: kb.list())"
        raise NotFoundError(f"no document {spelling!r} in collection {collection!r}; {hint}")

    def delete(self, source: str, *, collection: str = "default") -> bool:
        """Delete a document and its chunks; False when there was none.

        ``source`` may be spelled in any way :meth:`resolve` accepts.
        """
        source = check_name(source, "source")
        collection = check_name(collection, "collection")
        self.check_writable()
        try:
            source = self.resolve(source, collection=collection)
        except NotFoundError:
            return False
        with self._write_lock, self.store.transaction() as tx:
            self.store.delete_source(KIND, source, collection=collection)
            return bool(tables.delete(tx, collection, source))

    def rename(self, renames: Mapping[str, str], *, collection: str = "default") -> None:
        """Give documents new names (old -> new), in place (their chunks and vectors
        stay) and all at once: each new name must be free when its turn comes (one an
        earlier rename left is), else nothing is renamed."""
        collection = check_name(collection, "collection")
        self.check_writable()
        with self._write_lock, self.store.transaction() as tx:
            for old, new in renames.items():
                if tables.document(tx, collection, new) is not None:
                    raise InvalidInputError(f"{new!r} is already a document of {collection!r}")
                self.store.rename_source(KIND, collection, old, new)
                tables.rename(tx, collection, old, new)

    def delete_collection(self, collection: str) -> int:
        """Delete every document of a collection; returns how many there were."""
        collection = check_name(collection, "collection")
        self.check_writable()
        with self._write_lock, self.store.transaction() as tx:
            self.store.delete_collection(KIND, collection)
            return tables.delete_collection(tx, collection)

    # -- reading -----------------------------------------------------------------------

    def get(self, source: str, *, collection: str = "default") -> Document:
        """The document with its full text; NotFoundError when there is none.

        ``source`` may be spelled in any way :meth:`resolve` accepts.
        """
        source = check_name(source, "source")
        collection = check_name(collection, "collection")
        source = self.resolve(source, collection=collection)
        row = None
        if self._has_tables:
            with self.store.snapshot() as tx:
                row = tables.document(tx, collection, source)
        if row is None:
            raise NotFoundError(
                f"no document {source!r} in collection {collection!r}; "
                "see kb.list() for what is stored"
            )
        return _document(row, text=row["text"])

    def list(
        self, *, collection: str | None = None, limit: int | None = None, offset: int = 0
    ) -> list[Document]:
        """Documents (without their text), by collection and source."""
        if collection is not None:
            collection = check_name(collection, "collection")
        if limit is not None:
            limit = check_offset(limit, "limit")  # 0 is allowed here: no documents
        offset = check_offset(offset)
        if not self._has_tables:
            return []
        with self.store.snapshot() as tx:
            rows = tables.documents(tx, collection, limit, offset)
        return [_document(r) for r in rows]

    def count(self, *, collection: str | None = None) -> int:
        """How many documents (in one collection, or in all)."""
        if collection is not None:
            collection = check_name(collection, "collection")
        if not self._has_tables:
            return 0
        with self.store.snapshot() as tx:
            return tables.count(tx, collection)

    def collections(self) -> dict[str, int]:
        """Collection name -> number of documents."""
        if not self._has_tables:
            return {}
        with self.store.snapshot() as tx:
            return tables.collections(tx)

    def stray_chunks(self) -> builtins.list[tuple[str, str]]:
        """(collection, source) of chunks whose document is gone (what a check reports)."""
        if not self._has_tables:
            return []
        with self.store.snapshot() as tx:
            return tables.stray_chunks(tx)

    def incomplete_documents(self) -> builtins.list[tuple[str, str]]:
        """(collection, source) of documents missing some of their chunks (a damaged
        file's recovery re-adds them from their stored text)."""
        if not self._has_tables:
            return []
        with self.store.snapshot() as tx:
            return tables.short_documents(tx)

    # -- searching ---------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        limit: int = 5,
        collection: str | Sequence[str] | None = None,
        where: Where | None = None,
        min_score: float | None = None,
        mode: SearchMode = "hybrid",
    ) -> builtins.list[KBHit]:
        """The passages that best answer ``query``, best first.

        A passage is a matching chunk, joined with the adjacent chunks of its section
        that match too (:mod:`.passages`). ``where`` filters on document metadata
        (``{"lang": "en"}``, ``{"year": {"$gte": 2024}}``) and, like ``collection``,
        applies inside the search. ``min_score`` is on the normalised [0, 1] score.
        """
        limit = check_limit(limit, MAX_LIMIT)
        if min_score is not None:
            min_score = check_min_score(min_score)
        results = self.store.search(
            query,
            mode=mode,
            limit=min(limit * CANDIDATES_PER_HIT, MAX_LIMIT),
            kind=KIND,
            collection=collection,
            where=where,
            min_score=0.0 if min_score is None or mode == "hybrid" else float(min_score),
        )
        if mode == "hybrid":
            results = self._named(query, results)
            if min_score is not None:
                results = [r for r in results if r.score >= min_score]
        found = passages(results, limit)
        self._add_leads(found)
        titles = self._titles({(p.best.collection, p.best.source) for p in found})
        hits: builtins.list[KBHit] = []
        for passage in found:
            best, title = passage.best, titles.get((passage.best.collection, passage.best.source))
            hits.append(
                KBHit(
                    source=best.source,
                    collection=best.collection,
                    title=title,
                    heading_path=below_title(str(best.metadata.get("heading_path", "")), title),
                    text=passage.text,
                    score=best.score,
                    metadata={k: v for k, v in best.metadata.items() if k not in RESERVED_KEYS},
                    position=passage.first.position,
                    chunk_id=best.id,
                    best_span=passage.best_span,
                    vector_score=best.vector_score,
                    text_score=best.text_score,
                    last_position=passage.parts[-1].position,
                )
            )
        return hits

    def _named(
        self, query: str, results: builtins.list[SearchResult]
    ) -> builtins.list[SearchResult]:
        """Hybrid results with the words of their document's title and heading path as
        evidence too (``fusion.KIND_PARAMS["kb"].name_weight``, :mod:`..name_match`): the
        embedder reads them, the word index only the chunk's text."""
        weight = fusion.params_for(KIND, query).name_weight
        if not weight or not results:
            return results
        titles = self._titles({(r.collection, r.source) for r in results})
        named = {
            r.id: _WORDS.findall(
                cjk_words(
                    f"{_FILE_EXTENSION.sub('', titles.get((r.collection, r.source)) or '')} "
                    f"{r.metadata.get('heading_path', '')}"
                ).lower()
            )
            for r in results
        }
        shares = name_matches(self.store, query, named)
        for result in results:
            if shares.get(result.id):
                result.score = fusion.with_added_logit(result.score, weight * shares[result.id])
        return sorted(results, key=lambda r: (-r.score, r.id))

    def _add_leads(self, found: builtins.list[Passage]) -> None:
        """Start each passage that starts mid-sentence at its sentence, after the head
        of the table or code fence it starts inside (:mod:`.passages`)."""
        inside = [p for p in found if p.start > 0]
        if not inside or not self._has_tables:
            return
        with self.store.snapshot() as tx:
            for passage in inside:
                first = passage.first
                reach = min(passage.start, MAX_LEAD_CHARS)
                around = tables.text_span(
                    tx,
                    first.collection,
                    first.source,
                    passage.start - reach,
                    len(first.text) + reach,
                )
                # The search read the chunks in its own snapshot: a document replaced
                # since then no longer holds them where they were, and gets no lead.
                if around[reach:] == first.text:
                    head = first.metadata.get("_block_head")
                    passage.lead = sentence_lead(around[:reach])
                    if isinstance(head, str) and head:
                        passage.lead = f"{head}\n{passage.lead}"

    def _titles(self, keys: set[tuple[str, str]]) -> dict[tuple[str, str], str | None]:
        titles: dict[tuple[str, str], str | None] = {}
        if not keys:
            return titles
        with self.store.snapshot() as tx:
            return tables.titles(tx, keys)

    # -- files -------------------------------------------------------------------------

    def ingest(
        self,
        path: str | Path,
        *,
        collection: str = "default",
        patterns: Sequence[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
        max_bytes: int = DEFAULT_MAX_BYTES,
        include_hidden: bool = False,
        progress: Progress | None = None,
    ) -> IngestReport:
        """Bring a file or a directory tree into ``collection``; see :mod:`.ingest`."""
        return ingest(
            self,
            path,
            collection=collection,
            patterns=patterns,
            metadata=metadata,
            max_bytes=max_bytes,
            include_hidden=include_hidden,
            progress=progress,
        )

    def watch(
        self,
        path: str | Path,
        *,
        collection: str = "default",
        patterns: Sequence[str] | None = None,
        interval: float = 1.0,
        stop_event: threading.Event | None = None,
        on_change: Any = None,
        max_bytes: int = DEFAULT_MAX_BYTES,
    ) -> int:
        """Keep ``collection`` in sync with ``path`` until ``stop_event`` is set.

        Polls every ``interval`` seconds (an unchanged file costs one ``stat``);
        ``on_change(report)`` is called after each pass that changed something.
        Returns the number of passes made.
        """
        return watch(
            self,
            path,
            collection=collection,
            patterns=patterns,
            interval=interval,
            stop_event=stop_event,
            on_change=on_change,
            max_bytes=max_bytes,
        )


def _document(row: Row, *, text: str | None = None) -> Document:
    return Document(
        source=row["source"],
        collection=row["collection"],
        title=row["title"],
        metadata=json.loads(row["metadata"]),
        format=row["format"],
        content_hash=row["content_hash"],
        chars=int(row["chars"]),
        bytes=int(row["bytes"]),
        chunks=int(row["chunks"]),
        created_at=datetime.fromtimestamp(float(row["created_at"]), UTC),
        updated_at=datetime.fromtimestamp(float(row["updated_at"]), UTC),
        path=row["path"],
        text=text,
    )


def _linked(row: Mapping[str, Any]) -> bool:
    """Whether a stored document was read from a file that is still there."""
    if not row["path"]:
        return False
    try:
        return Path(row["path"]).is_file()
    except OSError:
        return False


def _named(rows: list[tuple[str, str | None]], spelling: str) -> list[str]:
    """The sources among ``rows`` (source, file path) that ``spelling`` names best
    (:meth:`KnowledgeBase.resolve`): the document's own file first; then the longest
    stretch of path shared; then a name without its extension."""
    wanted = spelling.replace("\\", "/").removeprefix("./")
    try:
        on_disk = str(Path(spelling).expanduser().resolve()) if spelling else ""
    except (OSError, RuntimeError, ValueError):
        on_disk = ""
    scored: dict[str, int] = {}
    for name, path in rows:
        if path is not None and path == on_disk:
            scored[name] = 1 << 30
        elif wanted.endswith("/" + name):
            scored[name] = len(name)
        elif name.endswith("/" + wanted):
            scored[name] = len(wanted)
    if not scored:
        # a name without its extension, as a wikilink names a note ([[Atomic Habits]])
        for name, _ in rows:
            bare = _without_extension(name)
            if bare == wanted or bare.endswith("/" + wanted):
                scored[name] = len(wanted)
    best = max(scored.values(), default=0)
    return [name for name, score in scored.items() if score == best]


def _without_extension(source: str) -> str:
    head, _, last = source.rpartition("/")
    stem = last.rsplit(".", 1)[0] if "." in last.strip(".") else last
    return f"{head}/{stem}" if head else stem


#: A file name's extension, as a title made from the file's name ends (``list.md``).
_FILE_EXTENSION = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,4}$")
#: A title's words, in any script (``✈️ Packing list.md``: packing, list, md).
_WORDS = re.compile(r"[^\W_]+")
