"""Writing the code index: discover, hash, parse what changed, write, then embed.

The order is what keeps a large repository usable and the index correct:
- text first: chunks are written without vectors as soon as files are parsed,
  so keyword search works before a single vector exists;
- vectors later: a backfill phase (resumable, also callable on its own) embeds
  in batches outside any write transaction;
- a file is "indexed" only when its hash is stored *and* all of its chunks have
  vectors (``embedded``), so a failed embedding is retried by the next run;
- each file's chunks, symbols and names are replaced in one transaction, and
  files that disappeared are removed with everything they had.

Parsing is the ``parsing`` package's (in worker processes for large batches);
reading is ``reader.py``'s; this module only writes.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from ..errors import InvalidInputError
from ..progress import Progress
from ..store import Store
from . import graph, tables
from .checks import check_languages, check_project_name, check_root
from .discovery import DEFAULT_MAX_FILE_BYTES, FoundFile, SkippedFile, discover
from .parsing.analysis import (
    FileAnalysis,
    ParseTask,
    analyze,
    analyze_source,
    file_hash,
    read_checked,
)
from .parsing.chunking import DEFAULT_CHUNK_CHARS
from .parsing.workers import ParseWorkers
from .records import IndexReport
from .tables import KIND, StoredFile

log = logging.getLogger(__name__)

#: Below this many changed files, parsing in this process beats starting workers.
PARALLEL_MIN_FILES = 48
#: Files per write transaction (each file stays atomic; batching saves commits).
WRITE_BATCH_FILES = 64
WRITE_BATCH_CHUNKS = 4000
#: When more files changed than this (or a quarter of the project), the
#: reference graph is rebuilt whole after the run instead of updated per batch.
GRAPH_REBUILD_MIN_FILES = 64


def default_workers() -> int:
    """Parsing processes: one per core, at most four (writing is serial anyway)."""
    return min(os.cpu_count() or 1, 4)


class IndexWriter:
    """Runs ``index``, ``backfill`` and ``remove`` for one store (the write side)."""

    def __init__(
        self,
        store: Store,
        *,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
        chunk_chars: int = DEFAULT_CHUNK_CHARS,
        workers: int | None = None,
        embed_batch: int = 256,
    ) -> None:
        self.store = store
        self.max_file_bytes = max_file_bytes
        self.chunk_chars = chunk_chars
        self.workers = workers if workers is not None else default_workers()
        self.embed_batch = embed_batch

    # -- projects --------------------------------------------------------------------

    def _project_id(self, name: str, root: Path) -> int:
        with self.store.transaction() as tx:
            found = tables.find_project(tx, name)
            if found is None:
                return tables.add_project(tx, name, str(root))
            if found.root != str(root) and Path(found.root).exists():
                raise InvalidInputError(
                    f"project {name!r} is already indexed from {found.root}; give {root} "
                    f"another project name (--project, project=), or remove {name!r} first"
                )
            if found.root != str(root):  # the repository moved: follow it
                tables.move_project(tx, found.id, str(root))
            return found.id

    def _existing(self, project_id: int, languages: list[str] | None) -> dict[str, StoredFile]:
        with self.store.snapshot() as tx:
            stored = tables.files(tx, project_id)
        return {f.path: f for f in stored if languages is None or f.language in languages}

    def remove(self, project: str) -> int:
        """Forget a project: its chunks, files, symbols and names. Returns files removed."""
        name = check_project_name(project)
        with self.store.transaction() as tx:
            found = tables.project(tx, name)
            self.store.delete_collection(KIND, found.name)
            return tables.delete_project(tx, found.id)

    # -- index -----------------------------------------------------------------------

    def index(
        self,
        path: str | os.PathLike[str],
        *,
        project: str | None = None,
        languages: Iterable[str] | str | None = None,
        exclude: Sequence[str] = (),
        embed: bool = True,
        progress: Progress | None = None,
    ) -> IndexReport:
        started = time.perf_counter()
        root = check_root(path)
        name = check_project_name(project if project is not None else root.name or "root")
        wanted = check_languages(languages)
        if isinstance(exclude, str):
            exclude = [exclude]
        project_id = self._project_id(name, root)
        report = IndexReport(project=name, root=str(root))
        timings = report.timings

        mark = time.perf_counter()
        found = discover(
            root, languages=wanted, max_file_bytes=self.max_file_bytes, exclude=list(exclude)
        )
        report.skipped.extend(found.skipped)
        report.files_seen = len(found.files) + len(found.skipped)
        timings["discovery"] = time.perf_counter() - mark

        mark = time.perf_counter()
        existing = self._existing(project_id, wanted)
        keep: set[str] = set()
        changed: list[tuple[FoundFile, bytes | None]] = []
        held_bytes = 0
        for item in found.files:
            data, reason = read_checked(item.absolute, self.max_file_bytes)
            if data is None:
                report.skipped.append(SkippedFile(item.path, reason or "unreadable"))
                continue
            before = existing.get(item.path)
            if before is not None and before.content_hash == file_hash(data):
                keep.add(item.path)
                report.files_unchanged += 1
                continue
            held = data if held_bytes < 256 * 1024 * 1024 else None
            held_bytes += len(data) if held is not None else 0
            changed.append((item, held))
        timings["hashing"] = time.perf_counter() - mark
        if progress is not None:
            progress("hashed", len(found.files), len(found.files))

        if len(changed) > max(GRAPH_REBUILD_MIN_FILES, len(existing) // 4):
            with self.store.transaction() as tx:  # cheaper to rebuild than to update
                graph.invalidate(tx, project_id)

        mark = time.perf_counter()
        write_time = 0.0
        batch: list[FileAnalysis] = []
        done = told = 0
        for analysis in self._analyses(changed):
            done += 1
            if analysis.skipped is not None:
                report.skipped.append(SkippedFile(analysis.path, analysis.skipped))
                continue
            keep.add(analysis.path)
            batch.append(analysis)
            if len(batch) >= WRITE_BATCH_FILES or sum(len(a.chunks) for a in batch) >= (
                WRITE_BATCH_CHUNKS
            ):
                write_time += self._write(project_id, name, batch, report)
                batch = []
                if progress is not None:
                    progress("parsed", done, len(changed))
                    told = done
        if batch:
            write_time += self._write(project_id, name, batch, report)
        if progress is not None and told < done:  # the last batch is rarely a full one
            progress("parsed", done, len(changed))
        timings["parsing"] = max(time.perf_counter() - mark - write_time, 0.0)

        mark = time.perf_counter()
        vanished = [(p, e.id) for p, e in existing.items() if p not in keep]
        if vanished:
            with self.store.transaction() as tx:
                old_names = graph.defined_names(tx, [i for _, i in vanished])
                for rel, file_id in vanished:
                    self.store.delete_source(KIND, rel, collection=name)
                    tables.delete_file(tx, file_id)
                if graph.exists(tx, project_id):
                    graph_mark = time.perf_counter()
                    graph.update(tx, project_id, [i for _, i in vanished], old_names)
                    timings["graph"] = timings.get("graph", 0.0) + time.perf_counter() - graph_mark
        report.files_removed = len(vanished)
        graph_mark = time.perf_counter()
        with self.store.transaction() as tx:
            if not graph.exists(tx, project_id):
                graph.build(tx, project_id)
        timings["graph"] = timings.get("graph", 0.0) + time.perf_counter() - graph_mark
        timings["writing"] = write_time + time.perf_counter() - mark
        timings["text_searchable"] = time.perf_counter() - started
        if progress is not None:
            progress("written", len(changed), len(changed))

        mark = time.perf_counter()
        if embed:
            try:
                report.embedded_chunks = self._embed(name, progress=progress)
            except Exception as exc:  # the text index stands; the next run retries
                log.warning("embedding for project %r failed: %s", name, exc)
                report.embedding_error = f"{type(exc).__name__}: {exc}"
        report.files_embedded = self._mark_embedded(project_id, name)
        timings["embedding"] = time.perf_counter() - mark
        report.pending_embeddings = self.store.pending_embeddings(kind=KIND, collection=name)
        with self.store.transaction() as tx:
            tables.mark_indexed(tx, project_id)
        timings["total"] = time.perf_counter() - started
        return report

    def _analyses(self, changed: list[tuple[FoundFile, bytes | None]]) -> Iterator[FileAnalysis]:
        """Parse results in input order: in worker processes for large batches."""
        if len(changed) >= PARALLEL_MIN_FILES and self.workers > 1:
            tasks = [
                ParseTask(f.absolute, f.path, f.language, self.max_file_bytes, self.chunk_chars)
                for f, _ in changed
            ]
            with ParseWorkers(self.workers) as workers:
                yield from workers.map(tasks)
            return
        for item, data in changed:
            if data is None:
                yield analyze(
                    ParseTask(
                        item.absolute,
                        item.path,
                        item.language,
                        self.max_file_bytes,
                        self.chunk_chars,
                    )
                )
            else:
                yield analyze_source(item.path, item.language, data, budget=self.chunk_chars)

    def _write(
        self, project_id: int, project: str, batch: list[FileAnalysis], report: IndexReport
    ) -> float:
        """Replace each file of ``batch`` atomically: chunks, symbols, names, file row."""
        mark = time.perf_counter()
        prepared = [self.store.prepare(a.chunks, embed=False) for a in batch]
        now = time.time()
        with self.store.transaction() as tx:
            graph_kept = graph.exists(tx, project_id)
            graph_old: set[str] = set()
            written: list[int] = []
            for analysis, ready in zip(batch, prepared, strict=True):
                self.store.write_source(KIND, project, analysis.path, ready)
                if graph_kept:
                    stored = tables.file_id(tx, project_id, analysis.path)
                    if stored is not None:
                        graph_old |= graph.defined_names(tx, [stored])
                file_id = tables.write_file(
                    tx, project_id, analysis, embedded=ready.pending == 0, now=now
                )
                written.append(file_id)
                report.files_indexed += 1
                report.symbols += len(analysis.symbols)
                report.chunks += len(analysis.chunks)
                if analysis.has_error:
                    report.parse_errors.append(analysis.path)
            if graph_kept:
                graph_mark = time.perf_counter()
                graph.update(tx, project_id, written, graph_old)
                timings = report.timings
                timings["graph"] = timings.get("graph", 0.0) + time.perf_counter() - graph_mark
        return time.perf_counter() - mark

    # -- embeddings --------------------------------------------------------------------

    def backfill(
        self, project: str, *, limit: int | None = None, progress: Progress | None = None
    ) -> int:
        """Embed the project's chunks still waiting for vectors; returns how many got one.

        Marks files whose chunks all have vectors as indexed. ``progress("embedded",
        done, total)`` counts the chunks as they are embedded.
        """
        name = check_project_name(project)
        with self.store.snapshot() as tx:
            project_id = tables.project(tx, name).id  # NotFoundError for an unknown one
        done = self._embed(name, limit=limit, progress=progress)
        self._mark_embedded(project_id, name)
        return done

    def _embed(
        self, project: str, *, limit: int | None = None, progress: Progress | None = None
    ) -> int:
        total = self.store.pending_embeddings(kind=KIND, collection=project)
        if limit is not None:
            total = min(total, limit)
        return self.store.backfill_embeddings(
            kind=KIND,
            collection=project,
            batch_size=self.embed_batch,
            limit=limit,
            progress=(lambda phase, n, _: progress(phase, n, total)) if progress else None,
        )

    def _mark_embedded(self, project_id: int, project: str) -> int:
        """Mark files whose chunks all have vectors; returns how many were marked."""
        with self.store.transaction() as tx:
            pending = tables.unembedded_files(tx, project_id)
            if not pending:
                return 0
            if self.store.pending_embeddings(kind=KIND, collection=project) == 0:
                ready = [i for i, _ in pending]
            else:
                ready = [
                    i
                    for i, rel in pending
                    if all(
                        c.has_embedding
                        for c in self.store.get_source(KIND, rel, collection=project)
                    )
                ]
            tables.mark_embedded(tx, ready)
            return len(ready)
