"""CodeIndexer: the code layer's public API (reached as ``svc.code``).

It joins the rooms behind it: ``writer.py`` indexes (parsing with the
``parsing`` package), ``reader.py`` answers searches and lookups, and
``repo_map.py`` ranks the repository; all of them reach the tables through
``tables.py``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Sequence

from ..errors import NotFoundError
from ..progress import Progress
from ..store import SearchMode, Store
from ..validation import check_min_score
from .checks import check_languages, check_root
from .discovery import DEFAULT_MAX_FILE_BYTES, discover
from .parsing.chunking import DEFAULT_CHUNK_CHARS
from .reader import IndexReader
from .records import (
    CodeHit,
    CodeSymbol,
    IndexReport,
    OutlineNode,
    ProjectInfo,
    ProjectStats,
    Reference,
)
from .repo_map import DEFAULT_BUDGET_TOKENS, RepoMap, RepoMapper, TokenCounter
from .tables import CODE_MIGRATIONS, CODE_READABLE_FROM
from .writer import IndexWriter


class CodeIndexer:
    """Repositories indexed into symbols and searchable chunks.

    ``index`` is incremental (only changed files are parsed and embedded) and
    makes text search available before the vectors are computed; ``backfill``
    finishes the vectors later if a run was told not to embed or was interrupted.
    """

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
        store.migrate("code", CODE_MIGRATIONS, readable_from=CODE_READABLE_FROM)
        # A file opened read-only that never indexed code has no code tables.
        self._has_tables = store.meta("schema:code") is not None
        self._writer = IndexWriter(
            store,
            max_file_bytes=max_file_bytes,
            chunk_chars=chunk_chars,
            workers=workers,
            embed_batch=embed_batch,
        )
        self._reader = IndexReader(store)
        self._mapper = RepoMapper(store)

    # -- writing ---------------------------------------------------------------------

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
        """Index (or re-index) a repository; the project name defaults to its directory's.

        ``exclude`` adds gitignore-style patterns. With ``embed=False`` the chunks
        are searchable by text at once and :meth:`backfill` embeds them later.
        """
        return self._writer.index(
            path,
            project=project,
            languages=languages,
            exclude=exclude,
            embed=embed,
            progress=progress,
        )

    def backfill(
        self, project: str, *, limit: int | None = None, progress: Progress | None = None
    ) -> int:
        """Embed chunks still waiting for vectors; returns how many got one.

        ``progress("embedded", done, total)`` counts them as they are embedded.
        """
        return self._writer.backfill(project, limit=limit, progress=progress)

    def remove(self, project: str) -> int:
        """Forget a project entirely; returns how many files it had."""
        return self._writer.remove(project)

    def watch(
        self,
        path: str | os.PathLike[str],
        *,
        project: str | None = None,
        languages: Iterable[str] | str | None = None,
        exclude: Sequence[str] = (),
        interval: float = 2.0,
        stop_event: threading.Event | None = None,
        on_index: Callable[[IndexReport], None] | None = None,
        max_runs: int | None = None,
    ) -> IndexReport:
        """Index now, then re-index whenever a file's size or mtime changes.

        Polls every ``interval`` seconds until ``stop_event`` is set (or after
        ``max_runs`` index runs). Returns the last report.
        """
        root = check_root(path)
        wanted = check_languages(languages)
        stop = stop_event or threading.Event()

        def fingerprint() -> tuple[tuple[str, int, int], ...]:
            found = discover(
                root,
                languages=wanted,
                max_file_bytes=self._writer.max_file_bytes,
                exclude=list(exclude),
            )
            return tuple((f.path, f.size, f.mtime_ns) for f in found.files)

        last = fingerprint()
        report = self.index(root, project=project, languages=wanted, exclude=exclude)
        runs = 1
        if on_index is not None:
            on_index(report)
        while not stop.is_set() and (max_runs is None or runs < max_runs):
            if stop.wait(interval):
                break
            current = fingerprint()
            if current == last and report.pending_embeddings == 0:
                continue
            last = current
            report = self.index(root, project=project, languages=wanted, exclude=exclude)
            runs += 1
            if on_index is not None:
                on_index(report)
        return report

    # -- reading -----------------------------------------------------------------------

    def _empty(self, project: str | None = None) -> bool:
        """True when there are no code tables (a file opened read-only that never
        indexed code): the reads answer as an empty index, and a named project is
        not found, as in any index without it."""
        if self._has_tables:
            return False
        if project is not None:
            raise NotFoundError(
                f"no code project named {project!r}; this memory has no code indexed yet"
            )
        return True

    def search(
        self,
        query: str,
        *,
        project: str | None = None,
        limit: int = 10,
        languages: Iterable[str] | str | None = None,
        kinds: Iterable[str] | str | None = None,
        path: str | None = None,
        mode: SearchMode = "hybrid",
        min_score: float = 0.0,
    ) -> list[CodeHit]:
        """Symbols and code by meaning and words; ``path`` is a file or a directory prefix.

        ``min_score`` is on the [0, 1] score, as for the KB and events (docs/search.md).
        """
        min_score = check_min_score(min_score)
        if self._empty(project):
            return []
        return self._reader.search(
            query,
            project=project,
            limit=limit,
            languages=languages,
            kinds=kinds,
            path=path,
            mode=mode,
            min_score=min_score,
        )

    def find_symbol(
        self,
        name_or_qualified_name: str,
        *,
        project: str | None = None,
        kind: str | Iterable[str] | None = None,
        limit: int = 100,
    ) -> list[CodeSymbol]:
        if self._empty(project):
            return []
        return self._reader.find_symbol(
            name_or_qualified_name, project=project, kind=kind, limit=limit
        )

    def outline(
        self, file: str | os.PathLike[str], *, project: str | None = None
    ) -> list[OutlineNode]:
        if self._empty(project):
            raise NotFoundError(f"{os.fspath(file)!r} is not indexed; this memory has no code yet")
        return self._reader.outline(file, project=project)

    def file_users(self, project: str, paths: Iterable[str]) -> dict[str, int]:
        """How many other files use what each file defines: which of several
        same-named definitions a repository leans on."""
        self._empty(project)
        return self._reader.file_users(project, paths)

    def references(
        self, name: str, *, project: str | None = None, limit: int = 1000
    ) -> list[Reference]:
        if self._empty(project):
            return []
        return self._reader.references(name, project=project, limit=limit)

    def repo_map(
        self,
        project: str,
        *,
        budget_tokens: int = DEFAULT_BUDGET_TOKENS,
        focus: Sequence[str | os.PathLike[str]] | str | None = None,
        token_counter: TokenCounter | None = None,
        strict_focus: bool = True,
    ) -> RepoMap:
        """The project's most important files and signatures, within ``budget_tokens``.

        Ranked by PageRank over the reference graph; ``focus`` (file paths or
        symbol names) pulls the ranking towards those files and what they use.
        A focus that names nothing indexed is an error, or skipped with
        ``strict_focus=False``. ``token_counter`` defaults to about four
        characters a token.
        """
        self._empty(project)
        return self._mapper.repo_map(
            project,
            budget_tokens=budget_tokens,
            focus=focus,
            token_counter=token_counter,
            strict_focus=strict_focus,
        )

    def projects(self) -> list[ProjectInfo]:
        return [] if self._empty() else self._reader.projects()

    def stats(self, project: str) -> ProjectStats:
        self._empty(project)
        return self._reader.stats(project)


__all__ = ["CodeIndexer"]
