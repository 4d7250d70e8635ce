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
import hashlib
import json
import os
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..chunking import FORMATS, HEADING_SEPARATOR, Chunker, Format, format_for
from ..errors import InvalidInputError, NotFoundError
from ..progress import Progress
from ..records import Chunk
from ..store import Prepared, SearchMode, Store, Where, content_hash
from ..validation import check_min_score, check_name, check_unicode, encode_metadata
from .discovery import DEFAULT_MAX_BYTES
from .records import AddReport, Document, IngestReport, KBHit
from .schema import KB_MIGRATIONS

KIND = "kb"
MAX_DOCUMENT_CHARS = 10_000_000
#: Chunk metadata keys the knowledge base sets itself; user metadata may not use them.
RESERVED_KEYS = frozenset({"heading_path", "char_start", "char_end"})
#: Documents whose chunks are embedded in one call while ingesting.
EMBED_GROUP_CHUNKS = 64

_DOC_COLUMNS = (
    "source, collection, title, metadata, format, content_hash, chars, bytes, chunks, "
    "created_at, updated_at, path"
)


def check_metadata(metadata: Any) -> tuple[dict[str, Any], str]:
    encoded = encode_metadata(metadata, reserved=RESERVED_KEYS)
    return json.loads(encoded), encoded


def below_title(heading_path: str, title: str | None) -> str:
    """The heading path without a first heading that only repeats the title.

    "Guide > Install > Linux" in a document titled "Guide" is shown as
    "Install > Linux": the title is shown beside it anyway.
    """
    parts = heading_path.split(HEADING_SEPARATOR) if heading_path else []
    if title and parts and parts[0].strip() == title.strip():
        parts = parts[1:]
    return HEADING_SEPARATOR.join(parts)


KNOWN_COLUMNS = "source, path, fingerprint, chunks, file_size, file_mtime_ns, settings"


def known_row(row: Sequence[Any]) -> dict[str, Any]:
    return dict(zip([c.strip() for c in KNOWN_COLUMNS.split(",")], row, strict=True))


@dataclass(frozen=True)
class FileStamp:
    """Where an ingested document came from, and what it looked like then.

    ``settings`` names the chunker and the ingest metadata: a file whose stamp
    matches needs no reading at all.
    """

    path: str
    size: int
    mtime_ns: int
    settings: str


@dataclass
class StagedDocument:
    """A document chunked and ready to embed and write."""

    source: str
    collection: str
    title: str | None
    metadata_json: str
    format: str
    text: str
    content_hash: str
    fingerprint: str
    chunks: list[Chunk]
    status: str
    file: FileStamp | None = None
    label: str = ""


@dataclass
class _Committed:
    embedded: int = 0
    cached: int = 0
    chunks: int = 0
    reports: list[AddReport] = field(default_factory=list)


class KnowledgeBase:
    """Documents an agent was given, searchable by meaning and by words."""

    def __init__(self, store: Store, *, chunker: Chunker | None = None) -> None:
        self.store = store
        self.chunker = chunker or Chunker()
        self._write_lock = threading.Lock()
        store.migrate("kb", KB_MIGRATIONS)
        # A file opened read-only that never held documents has no KB tables.
        self._has_tables = store.meta("schema:kb") is not None

    def _check_writable(self) -> None:
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
        second copy.
        """
        self._check_writable()
        stamp = None
        if file is not None:
            on_disk = Path(file).expanduser().resolve()
            stat = on_disk.stat()
            stamp = FileStamp(str(on_disk), stat.st_size, stat.st_mtime_ns, "")
        staged = self._stage(
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
        return self._commit([staged]).reports[0]

    def _stage(
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
        source = check_name(source, "source")
        collection = check_name(collection, "collection")
        if not isinstance(text, str):
            raise InvalidInputError(f"document text must be a string, not {type(text).__name__}")
        if not text.strip():
            raise InvalidInputError(f"document {source!r} is empty")
        if len(text) > MAX_DOCUMENT_CHARS:
            raise InvalidInputError(
                f"document {source!r} is {len(text):,} characters; the limit is "
                f"{MAX_DOCUMENT_CHARS:,} (split it into several documents)"
            )
        check_unicode(text, f"document {source!r}")
        if title is not None:
            title = check_name(title, "title")
        if format is None:
            format = format_for(source)
        if format not in FORMATS:
            raise InvalidInputError(f"format must be one of {', '.join(FORMATS)}, not {format!r}")
        user_metadata, metadata_json = check_metadata(metadata)
        digest = content_hash(text)
        # A title left out is derived from the text (and file name, part of the
        # source), so "derived" stands for it and nothing is parsed to compare.
        fingerprint = hashlib.sha256(
            json.dumps(
                [digest, title, metadata_json, format, self.chunker.fingerprint, source]
            ).encode()
        ).hexdigest()
        row = known if known is not None else self._fingerprint_row(collection, source)
        if row is not None and row["fingerprint"] == fingerprint:
            if file is not None and (
                row["file_size"],
                row["file_mtime_ns"],
                row["settings"],
            ) != (file.size, file.mtime_ns, file.settings):
                self._touch(collection, source, file)
            return AddReport(source, collection, "unchanged", int(row["chunks"]))
        pieces = self.chunker.split(text, format=format)
        if title is None:  # the first heading, else the file's name
            headed = next((p.headings[0] for p in pieces if p.headings), None)
            title = headed or (Path(file.path).name if file else None)
        chunks = [
            Chunk(
                text=piece.text,
                metadata={
                    **user_metadata,
                    "heading_path": piece.heading_path,
                    "char_start": piece.start,
                    "char_end": piece.end,
                },
                embed_text=piece.embed_text(title),
            )
            for piece in pieces
        ]
        return StagedDocument(
            source=source,
            collection=collection,
            title=title,
            metadata_json=metadata_json,
            format=format,
            text=text,
            content_hash=digest,
            fingerprint=fingerprint,
            chunks=chunks,
            status="added" if row is None else "updated",
            file=file,
        )

    def _commit(
        self,
        staged: Sequence[StagedDocument],
        progress: Progress | None = None,
    ) -> _Committed:
        """Embed every staged document's chunks, then write them all in one transaction."""
        prepared = self.store.prepare([c for s in staged for c in s.chunks], progress=progress)
        done = _Committed(embedded=prepared.embedded, cached=prepared.cached)
        now = time.time()
        with self._write_lock, self.store.transaction() as conn:
            offset = 0
            for doc in staged:
                part = Prepared(prepared.chunks[offset : offset + len(doc.chunks)])
                offset += len(doc.chunks)
                self.store.write_source(KIND, doc.collection, doc.source, part)
                conn.execute(
                    "INSERT INTO kb_documents (collection, source, title, metadata, format, text, "
                    "content_hash, fingerprint, chars, bytes, chunks, path, file_size, "
                    "file_mtime_ns, settings, created_at, updated_at) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT (collection, source) DO UPDATE SET title = excluded.title, "
                    "metadata = excluded.metadata, format = excluded.format, "
                    "text = excluded.text, content_hash = excluded.content_hash, "
                    "fingerprint = excluded.fingerprint, chars = excluded.chars, "
                    "bytes = excluded.bytes, chunks = excluded.chunks, path = excluded.path, "
                    "file_size = excluded.file_size, file_mtime_ns = excluded.file_mtime_ns, "
                    "settings = excluded.settings, updated_at = excluded.updated_at",
                    (
                        doc.collection,
                        doc.source,
                        doc.title,
                        doc.metadata_json,
                        doc.format,
                        doc.text,
                        doc.content_hash,
                        doc.fingerprint,
                        len(doc.text),
                        len(doc.text.encode("utf-8")),
                        len(doc.chunks),
                        doc.file.path if doc.file else None,
                        doc.file.size if doc.file else None,
                        doc.file.mtime_ns if doc.file else None,
                        doc.file.settings if doc.file else None,
                        now,
                        now,
                    ),
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

    def _fingerprint_row(self, collection: str, source: str) -> dict[str, Any] | None:
        if not self._has_tables:
            return None
        with self.store.snapshot() as conn:
            row = conn.execute(
                f"SELECT {KNOWN_COLUMNS} FROM kb_documents WHERE collection = ? AND source = ?",
                (collection, source),
            ).fetchone()
        return None if row is None else known_row(row)

    def _touch(self, collection: str, source: str, file: FileStamp) -> None:
        """Record a file's new size and time when only they changed (touch, copy)."""
        with self._write_lock, self.store.transaction() as conn:
            conn.execute(
                "UPDATE kb_documents SET path = ?, file_size = ?, file_mtime_ns = ?, settings = ? "
                "WHERE collection = ? AND source = ?",
                (file.path, file.size, file.mtime_ns, file.settings, collection, source),
            )

    def source_of_file(
        self, path: str | os.PathLike[str], *, collection: str = "default"
    ) -> str | None:
        """The source of the document read from the file at ``path`` (None: there is none)."""
        collection = check_name(collection, "collection")
        if not self._has_tables:
            return None
        on_disk = str(Path(path).expanduser().resolve())
        with self.store.snapshot() as conn:
            row = conn.execute(
                "SELECT source FROM kb_documents WHERE collection = ? AND path = ?",
                (collection, on_disk),
            ).fetchone()
        return None if row is None else str(row[0])

    def resolve(self, spelling: str, *, collection: str = "default") -> str:
        """The source of the one document ``spelling`` names in ``collection``.

        Besides the source itself this accepts the document's file as a path (from
        the current folder, or absolute) and a path that ends with the source
        (``docs/cli.md`` for ``cli.md``) or that the source ends with. NotFoundError
        when none or several documents match; its message names them.
        """
        spelling = check_name(spelling, "source")
        collection = check_name(collection, "collection")
        if not self._has_tables:
            raise NotFoundError(f"no document {spelling!r} in collection {collection!r}")
        with self.store.snapshot() as conn:
            # The usual case, the source itself, by key: get() and delete() pass here.
            exact = conn.execute(
                "SELECT 1 FROM kb_documents WHERE collection = ? AND source = ?",
                (collection, spelling),
            ).fetchone()
            if exact is not None:
                return spelling
            rows = conn.execute(
                "SELECT source, path FROM kb_documents WHERE collection = ?", (collection,)
            ).fetchall()
        sources = [str(r[0]) for r in rows]
        wanted = spelling.replace("\\", "/").removeprefix("./")
        try:
            on_disk = str(Path(spelling).expanduser().resolve()) if spelling else ""
        except (OSError, RuntimeError, ValueError):
            on_disk = ""
        # The document's own file first; then the longest stretch of path shared.
        scored: dict[str, int] = {}
        for source, path in rows:
            name = str(source)
            if path is not None and path == on_disk:
                scored[name] = 1 << 30
            elif wanted.endswith("/" + name):
                scored[name] = len(name)
            elif name.endswith("/" + wanted):
                scored[name] = len(wanted)
        best = max(scored.values(), default=0)
        matches = [name for name, score in scored.items() if score == best]
        if len(matches) == 1:
            return matches[0]
        if matches:
            raise NotFoundError(
                f"{spelling!r} could be any of {', '.join(map(repr, sorted(matches)[:10]))} "
                f"in collection {collection!r}; give the full source"
            )
        close = difflib.get_close_matches(wanted, sources, n=5, cutoff=0.5)
        hint = (
            f"did you mean {', '.join(map(repr, close))}?"
            if close
            else "see what is stored with `remembrances kb list` (Python: kb.list())"
        )
        raise NotFoundError(f"no document {spelling!r} in collection {collection!r}; {hint}")

    def delete(self, source: str, *, collection: str = "default") -> bool:
        """Delete a document and its chunks; False when there was none.

        ``source`` may be spelled in any way :meth:`resolve` accepts.
        """
        source = check_name(source, "source")
        collection = check_name(collection, "collection")
        self._check_writable()
        try:
            source = self.resolve(source, collection=collection)
        except NotFoundError:
            return False
        with self._write_lock, self.store.transaction() as conn:
            self.store.delete_source(KIND, source, collection=collection)
            conn.execute(
                "DELETE FROM kb_documents WHERE collection = ? AND source = ?", (collection, source)
            )
            return bool(conn.changes())

    def delete_collection(self, collection: str) -> int:
        """Delete every document of a collection; returns how many there were."""
        collection = check_name(collection, "collection")
        self._check_writable()
        with self._write_lock, self.store.transaction() as conn:
            self.store.delete_collection(KIND, collection)
            conn.execute("DELETE FROM kb_documents WHERE collection = ?", (collection,))
            return int(conn.changes())

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
            with self.store.snapshot() as conn:
                row = conn.execute(
                    f"SELECT {_DOC_COLUMNS}, text FROM kb_documents "
                    "WHERE collection = ? AND source = ?",
                    (collection, source),
                ).fetchone()
        if row is None:
            raise NotFoundError(
                f"no document {source!r} in collection {collection!r}; "
                "see kb.list() for what is stored"
            )
        return _document(row[:-1], text=row[-1])

    def list(
        self, *, collection: str | None = None, limit: int | None = None, offset: int = 0
    ) -> list[Document]:
        """Documents (without their text), by collection and source."""
        sql = f"SELECT {_DOC_COLUMNS} FROM kb_documents"
        params: list[Any] = []
        if collection is not None:
            sql += " WHERE collection = ?"
            params.append(check_name(collection, "collection"))
        sql += " ORDER BY collection, source"
        if limit is not None or offset:
            for value, what in ((limit, "limit"), (offset, "offset")):
                if value is not None and (
                    isinstance(value, bool) or not isinstance(value, int) or value < 0
                ):
                    raise InvalidInputError(f"{what} must be a non-negative integer")
            sql += " LIMIT ? OFFSET ?"
            params.extend([-1 if limit is None else limit, offset])
        if not self._has_tables:
            return []
        with self.store.snapshot() as conn:
            rows = conn.execute(sql, params).fetchall()
        return [_document(r) for r in rows]

    def count(self, *, collection: str | None = None) -> int:
        """How many documents (in one collection, or in all)."""
        sql, params = "SELECT count(*) FROM kb_documents", []
        if collection is not None:
            sql += " WHERE collection = ?"
            params.append(check_name(collection, "collection"))
        if not self._has_tables:
            return 0
        with self.store.snapshot() as conn:
            return int(conn.execute(sql, params).fetchone()[0])

    def collections(self) -> dict[str, int]:
        """Collection name -> number of documents."""
        if not self._has_tables:
            return {}
        with self.store.snapshot() as conn:
            rows = conn.execute(
                "SELECT collection, count(*) FROM kb_documents GROUP BY collection "
                "ORDER BY collection"
            ).fetchall()
        return {str(name): int(n) for name, n in rows}

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
        """The chunks that best answer ``query``, best first.

        ``where`` filters on document metadata (``{"lang": "en"}``,
        ``{"year": {"$gte": 2024}}``) and, like ``collection``, applies inside the
        search. ``min_score`` is on the normalised [0, 1] score.
        """
        if min_score is not None:
            min_score = check_min_score(min_score)
        results = self.store.search(
            query,
            mode=mode,
            limit=limit,
            kind=KIND,
            collection=collection,
            where=where,
            min_score=0.0 if min_score is None else float(min_score),
        )
        titles = self._titles({(r.collection, r.source) for r in results})
        return [
            KBHit(
                source=r.source,
                collection=r.collection,
                title=titles.get((r.collection, r.source)),
                heading_path=below_title(
                    str(r.metadata.get("heading_path", "")), titles.get((r.collection, r.source))
                ),
                text=r.text,
                score=r.score,
                metadata={k: v for k, v in r.metadata.items() if k not in RESERVED_KEYS},
                position=r.position,
                chunk_id=r.id,
            )
            for r in results
        ]

    def _titles(self, keys: set[tuple[str, str]]) -> dict[tuple[str, str], str | None]:
        titles: dict[tuple[str, str], str | None] = {}
        if not keys:
            return titles
        with self.store.snapshot() as conn:
            for collection, source in keys:
                row = conn.execute(
                    "SELECT title FROM kb_documents WHERE collection = ? AND source = ?",
                    (collection, source),
                ).fetchone()
                titles[(collection, source)] = None if row is None else row[0]
        return titles

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
        from .ingest import ingest

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
        from .ingest import watch

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


def _document(row: Sequence[Any], *, text: str | None = None) -> Document:
    return Document(
        source=row[0],
        collection=row[1],
        title=row[2],
        metadata=json.loads(row[3]),
        format=row[4],
        content_hash=row[5],
        chars=int(row[6]),
        bytes=int(row[7]),
        chunks=int(row[8]),
        created_at=datetime.fromtimestamp(float(row[9]), UTC),
        updated_at=datetime.fromtimestamp(float(row[10]), UTC),
        path=row[11],
        text=text,
    )
