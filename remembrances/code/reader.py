"""Reading the code index: search, symbols by name, outlines, references, stats.

Search goes through ``Store.search`` (the one search engine) with the symbol's
fields as chunk metadata filters; everything else reads the code layer's own
tables through ``tables.py``. Nothing here writes.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..errors import InvalidInputError, NotFoundError
from ..records import SearchResult
from ..storage.transaction import Transaction
from ..store import MAX_LIMIT, SearchMode, Store
from ..validation import check_choices, check_limit, check_min_score
from . import graph, ranking, tables
from .checks import check_languages, check_name, check_project_name
from .parsing.analysis import file_hash, source_lines
from .parsing.identifiers import decode_positions
from .parsing.symbols import SYMBOL_KINDS
from .records import CodeHit, CodeSymbol, OutlineNode, ProjectInfo, ProjectStats, Reference
from .tables import KIND, Project

#: Candidates each leg proposes to a hybrid code search (as many as the store's default).
HYBRID_POOL = 100
#: Hybrid candidates re-scored with the name match: this many per hit asked for, at least
#: RESCORED (also enough that folding a long symbol's parts still fills the limit).
RESCORED_PER_HIT = 5
RESCORED = 50


class IndexReader:
    """The read side of the code layer."""

    def __init__(self, store: Store) -> None:
        self.store = store

    # -- projects ----------------------------------------------------------------------

    def project(self, name: Any) -> Project:
        """The indexed project called ``name``; NotFoundError naming the others."""
        checked = check_project_name(name)
        with self.store.snapshot() as tx:
            return tables.project(tx, checked)

    def projects(self) -> list[ProjectInfo]:
        with self.store.snapshot() as tx:
            rows = tables.project_listing(tx)
        return [ProjectInfo(r.name, r.root, r.files, _time(r.indexed_at)) for r in rows]

    def stats(self, project: str) -> ProjectStats:
        with self.store.snapshot() as tx:
            found = tables.project(tx, check_project_name(project))
            counts = tables.project_counts(tx, found.id)
        return ProjectStats(
            project=found.name,
            root=found.root,
            files=counts.files,
            files_pending=counts.files_pending,
            symbols=sum(counts.symbol_kinds.values()),
            chunks=self.store.count(kind=KIND, collection=found.name),
            pending_embeddings=self.store.pending_embeddings(kind=KIND, collection=found.name),
            languages=counts.languages,
            symbol_kinds=counts.symbol_kinds,
            files_with_errors=counts.files_with_errors,
            indexed_at=_time(counts.indexed_at),
        )

    # -- search --------------------------------------------------------------------------

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
        limit = check_limit(limit, MAX_LIMIT)
        min_score = check_min_score(min_score)
        where: dict[str, Any] = {}
        langs = check_languages(languages)
        if langs is not None:
            where["language"] = langs
        if project is not None:
            self.project(project)  # an unknown one is an error naming the others
        if kinds is not None:
            kind_list = [kinds] if isinstance(kinds, str) else list(kinds)
            checked = [check_name(k, "kind") for k in kind_list]
            where["kind"] = check_choices(checked, self._symbol_kinds(), "symbol kind")
        in_tests = False  # a search limited to a test folder: tests keep their scores
        if path is not None:
            prefix = check_name(path, "path").replace("\\", "/").strip("/")
            if prefix.startswith("./"):
                prefix = prefix[2:]
            if prefix and prefix != ".":
                with self.store.snapshot() as tx:
                    is_file = tables.is_file(tx, prefix, project)
                if is_file:
                    where["path"] = prefix
                else:
                    where["path"] = {"$gte": prefix + "/", "$lt": prefix + "0"}
                in_tests = ranking.is_test(prefix if is_file else prefix + "/")
        collection = check_project_name(project) if project is not None else None
        if self.store.embedder is None and mode == "hybrid":
            mode = "text"  # a file opened without an embedder still answers by words
        if mode != "hybrid":  # one leg alone, as the store ranks it
            results = self.store.search(
                query,
                mode=mode,
                limit=limit,
                kind=KIND,
                collection=collection,
                where=where or None,
                min_score=min_score,
            )
            return self._hits(results)
        # The name match re-ranks the best RESCORED_PER_HIT x limit candidates (at least
        # RESCORED): deeper ones never reached the top 10 on the development suite.
        pool = max(limit * 5, HYBRID_POOL)
        results = self.store.search(
            query,
            limit=min(max(limit * RESCORED_PER_HIT, RESCORED), MAX_LIMIT),
            pool=pool,
            kind=KIND,
            collection=collection,
            where=where or None,
        )
        asked = where.get("kind", [])  # a search for files or constants keeps their scores
        rescored = ranking.rescored(self.store, query, results, tests=in_tests, kinds=asked)
        ranked = [r for r in rescored if r.score >= min_score]
        return self._hits(ranking.one_per_symbol(ranked, limit))

    def _symbol_kinds(self) -> set[str]:
        """Kinds a search can ask for: those the parser gives, and any stored."""
        with self.store.snapshot() as tx:
            stored = tables.stored_kinds(tx)
        return stored | set(SYMBOL_KINDS) | {"file"}

    def _hits(self, results: list[SearchResult]) -> list[CodeHit]:
        hits = []
        with self.store.snapshot() as tx:
            for r in results:
                meta = r.metadata
                symbol_id = None
                if meta.get("symbol") is not None:
                    symbol_id = tables.symbol_id(tx, r.collection, r.source, meta["symbol"])
                offset = int(meta.get("code_offset", 0))
                hits.append(
                    CodeHit(
                        score=r.score,
                        project=r.collection,
                        path=r.source,
                        language=str(meta.get("language", "")),
                        kind=str(meta.get("kind", "")),
                        name=str(meta.get("name", "")),
                        qualified_name=str(meta.get("qualified_name", "")),
                        signature=str(meta.get("signature", "")),
                        docstring=str(meta.get("docstring", "")),
                        start_line=int(meta.get("start_line", 0)),
                        end_line=int(meta.get("end_line", 0)),
                        # the first line as it stands in the file, indented
                        code=str(meta.get("indent", "")) + r.text[offset:],
                        parent=meta.get("parent"),
                        symbol_id=symbol_id,
                        part=int(meta.get("part", 1)),
                        parts=int(meta.get("parts", 1)),
                        chunk_id=r.id,
                        vector_score=r.vector_score,
                        text_score=r.text_score,
                        line_runs=meta.get("line_runs"),
                    )
                )
        return hits

    # -- symbols -------------------------------------------------------------------------

    def find_symbol(
        self,
        name_or_qualified_name: str,
        *,
        project: str | None = None,
        kind: str | Iterable[str] | None = None,
        limit: int = 100,
    ) -> list[CodeSymbol]:
        """Symbols by exact name or qualified name (``Outer.method``, ``a::b`` too).

        A qualified name also matches as a suffix (``Inner.run`` finds
        ``Outer.Inner.run``); when nothing matches exactly, the match ignores case.
        Generic arguments are read past (``Box<T>::value`` is ``Box.value``), as the
        index names symbols, and a path written with ``::`` that finds nothing is
        tried without its leading parts, down to two (``crate::other::Bar::hi``, then
        ``other.Bar.hi``, then ``Bar.hi``).
        """
        written = check_name(name_or_qualified_name, "name")
        wanted = _without_generics(written).replace("::", ".")
        limit = check_limit(limit, MAX_SYMBOLS)
        kinds = None
        if kind is not None:  # as search checks them: a typo is an error, "methods" a kind
            kinds = [check_name(k, "kind") for k in ([kind] if isinstance(kind, str) else kind)]
            kinds = check_choices(kinds, self._symbol_kinds(), "symbol kind")
        name = check_project_name(project) if project is not None else None
        paths = [wanted]
        if "::" in written:  # a Rust or C++ path: its module parts may not be in the names
            parts = wanted.split(".")
            paths += [".".join(parts[i:]) for i in range(1, len(parts) - 1)]
        with self.store.snapshot() as tx:
            for path in paths:
                found = tables.find_symbols(tx, path, project=name, kinds=kinds, limit=limit)
                if found:
                    return found
        return []

    def _file(self, tx: Transaction, file: Any, project: str | None) -> tuple[int, str]:
        if not isinstance(file, str | os.PathLike):
            raise InvalidInputError(f"file must be a path, not {type(file).__name__}")
        raw = check_name(os.fspath(file), "file")
        candidates: list[tuple[int, str]] = []
        if project is not None:
            projects = [tables.project(tx, check_project_name(project))]
        else:
            projects = tables.projects(tx)
        for candidate in projects:
            for rel in _spellings(raw, candidate.root):
                found = tables.file_id(tx, candidate.id, rel)
                if found is not None:
                    candidates.append((found, candidate.name))
                    break
        if not candidates:
            if not projects:
                raise NotFoundError(f"{raw!r} is not an indexed file; index its repository first")
            tail = raw.replace("\\", "/").removeprefix("./").lstrip("/")
            near = [(p, path) for p in projects for path in tables.paths_ending(tx, p.id, tail)]
            if len(near) == 1:  # named from below the root ("others.py"): the one file
                project_of, path = near[0]
                found = tables.file_id(tx, project_of.id, path)
                if found is not None:
                    return found, project_of.name
            names = ", ".join(p.name for p in projects)
            spelled = [f"{p.name}:{path}" if len(projects) > 1 else path for p, path in near]
            hint = (
                f"did you mean {', '.join(spelled[:3])}?"
                if near
                else "if it was added or renamed since, index the repository again"
            )
            raise NotFoundError(f"{raw!r} is not an indexed file of {names}: {hint}")
        if len(candidates) > 1:
            raise InvalidInputError(
                f"{raw!r} is indexed in several projects "
                f"({', '.join(n for _, n in candidates)}); pass project=..."
            )
        return candidates[0]

    def outline(
        self, file: str | os.PathLike[str], *, project: str | None = None
    ) -> list[OutlineNode]:
        """The nested symbol tree of one file, in source order."""
        with self.store.snapshot() as tx:
            file_id, _ = self._file(tx, file, project)
            symbols = tables.file_symbols(tx, file_id)
        nodes: dict[int, OutlineNode] = {}
        roots: list[OutlineNode] = []
        for symbol in symbols:
            node = OutlineNode(symbol)
            nodes[symbol.id] = node
            parent = nodes.get(symbol.parent_id) if symbol.parent_id is not None else None
            (parent.children if parent is not None else roots).append(node)
        return roots

    def file_users(self, project: str, paths: Iterable[str]) -> dict[str, int]:
        """How many other files use what each of ``paths`` defines (from the reference graph).

        A path that is not indexed, or that nobody uses, is left out.
        """
        wanted = set(paths)
        with self.store.snapshot() as tx:
            found = tables.project(tx, check_project_name(project))
            ids = {i: p for i, p in tables.file_paths(tx, found.id).items() if p in wanted}
            counts = graph.users(tx, ids)
        return {ids[i]: n for i, n in counts.items()}

    # -- references ----------------------------------------------------------------------

    def references(
        self, name: str, *, project: str | None = None, limit: int = 1000
    ) -> list[Reference]:
        """Where the identifier ``name`` occurs (a qualified name looks for its last part)."""
        wanted = check_name(name, "name").replace("::", ".").rsplit(".", 1)[-1]
        if not wanted:
            raise InvalidInputError("name is empty")
        limit = check_limit(limit, MAX_REFERENCES)
        in_project = check_project_name(project) if project is not None else None
        out: list[Reference] = []
        with self.store.snapshot() as tx:
            for uses in tables.name_uses(tx, wanted, in_project):
                symbols = tables.symbol_spans(tx, [uses.file_id]).get(uses.file_id, [])
                lines, stale = _current_lines(
                    Path(uses.root) / uses.path, tables.indexed_hash(uses.content_hash)
                )
                for line, column in decode_positions(uses.positions):
                    enclosing = None
                    for s in symbols:
                        if s.start_line <= line <= s.end_line:
                            enclosing = s.qualified_name  # later (inner) symbols win
                    is_definition = any(
                        s.name == wanted and s.name_line == line and s.name_column == column
                        for s in symbols
                    )
                    text = lines[line - 1] if 0 < line <= len(lines) else ""
                    out.append(
                        Reference(
                            project=uses.project,
                            path=uses.path,
                            line=line,
                            column=column,
                            symbol=enclosing,
                            is_definition=is_definition,
                            line_text=_around(text.rstrip("\r\n"), column),
                            stale=stale,
                        )
                    )
                    if len(out) >= limit:
                        return out
        return out


def _current_lines(path: Path, stored_hash: str) -> tuple[list[str], bool]:
    try:
        data = path.read_bytes()
    except OSError:
        return [], True
    return source_lines(data), file_hash(data) != stored_hash


def _time(value: Any) -> datetime | None:
    """An epoch time from the table as an aware UTC datetime."""
    return None if value is None else datetime.fromtimestamp(float(value), UTC)


#: A line longer than this (minified code) is shown as the stretch around the use.
MAX_LINE_TEXT = 400
#: The most symbols one ``find_symbol`` returns, and references one ``references`` does.
MAX_SYMBOLS = 10_000
MAX_REFERENCES = 100_000


def _around(text: str, column: int) -> str:
    """``text``, or on a minified line the MAX_LINE_TEXT characters around ``column``
    (a byte column: exact for the ASCII of minified code), marked cut with "…"."""
    if len(text) <= MAX_LINE_TEXT:
        return text
    start = max(min(column - 1 - MAX_LINE_TEXT // 2, len(text) - MAX_LINE_TEXT), 0)
    end = start + MAX_LINE_TEXT
    return ("…" if start else "") + text[start:end] + ("…" if end < len(text) else "")


_GENERIC = re.compile(r"(?<=[A-Za-z0-9_])<[^<>]*>")
#: C++'s ``operator<``, ``operator=`` (not ``operator_registry``).
_OPERATOR = re.compile(r"(?<![\w])operator(?=\s*[^\w\s])")


def _without_generics(name: str) -> str:
    """``name`` without its generic arguments (``Box<T>``, ``Map<K, Vec<V>>``), as symbols
    are named; an operator's name (``operator<``, ``operator<=>``) is left whole."""
    operator = _OPERATOR.search(name)
    if operator is not None and operator.start() > 0:  # Box<T>::operator< : the path only
        return _without_generics(name[: operator.start()]) + name[operator.start() :]
    if operator is not None:
        return name
    while True:
        bare = _GENERIC.sub("", name)
        if bare == name:
            return name.strip()
        name = bare


def _spellings(raw: str, root: str) -> list[str]:
    """The project paths ``raw`` may mean: as written (relative to the project's root),
    and, read from the current folder, its path under the root (a shell in the folder
    above a package indexed on its own: ``sqlparse/filters/others.py``)."""
    written = raw.replace("\\", "/")
    spellings = [] if Path(raw).is_absolute() else [written.removeprefix("./")]
    with contextlib.suppress(ValueError, OSError):
        spellings.append(Path(raw).resolve().relative_to(root).as_posix())
    return list(dict.fromkeys(spellings))
