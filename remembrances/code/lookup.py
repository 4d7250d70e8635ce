"""Reading the code index: search, symbols by name, outlines, references, stats.

Search goes through ``Store.search`` (the one search engine) with the symbol's
fields as chunk metadata filters; everything else reads the code layer's own
tables.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import apsw

from ..errors import InvalidInputError, NotFoundError
from ..records import SearchResult
from ..store import SearchMode, Store
from ..validation import check_choices
from .analysis import file_hash
from .identifiers import decode_positions
from .indexer import KIND, check_languages, check_project_name
from .records import CodeHit, CodeSymbol, OutlineNode, ProjectInfo, ProjectStats, Reference
from .symbols import SYMBOL_KINDS

MAX_NAME = 1000
_SYMBOL_COLUMNS = (
    "s.id, p.name, f.path, f.language, s.kind, s.name, s.qualified_name, s.signature, "
    "s.docstring, s.start_line, s.end_line, s.start_byte, s.end_byte, "
    "q.qualified_name, q.id"
)
_SYMBOL_FROM = (
    "FROM code_symbols s JOIN code_files f ON f.id = s.file_id "
    "JOIN code_projects p ON p.id = f.project_id "
    "LEFT JOIN code_symbols q ON q.file_id = s.file_id AND q.position = s.parent"
)


def _symbol(row: Sequence[Any]) -> CodeSymbol:
    return CodeSymbol(*row)


def _check_name(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise InvalidInputError(f"{what} must be a string, not {type(value).__name__}")
    value = value.strip()
    if not value:
        raise InvalidInputError(f"{what} is empty")
    if len(value) > MAX_NAME:
        raise InvalidInputError(f"{what} is longer than {MAX_NAME} characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInputError(f"{what} is not valid Unicode") from exc
    return str(value)


def _like_escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


class CodeLookup:
    """The read side of the code layer."""

    def __init__(self, store: Store) -> None:
        self.store = store

    # -- projects ----------------------------------------------------------------------

    def _project(self, conn: apsw.Connection, project: Any) -> tuple[int, str, str]:
        name = check_project_name(project)
        row = conn.execute(
            "SELECT id, name, root FROM code_projects WHERE name = ?", (name,)
        ).fetchone()
        if row is None:
            known = [r[0] for r in conn.execute("SELECT name FROM code_projects ORDER BY name")]
            raise NotFoundError(
                f"no code project named {name!r}; indexed projects: {', '.join(known) or 'none'}"
            )
        return int(row[0]), str(row[1]), str(row[2])

    def projects(self) -> list[ProjectInfo]:
        with self.store.snapshot() as conn:
            rows = conn.execute(
                "SELECT p.name, p.root, (SELECT count(*) FROM code_files f "
                "WHERE f.project_id = p.id), p.indexed_at FROM code_projects p ORDER BY p.name"
            ).fetchall()
        return [ProjectInfo(str(n), str(r), int(c), _time(t)) for n, r, c, t in rows]

    def stats(self, project: str) -> ProjectStats:
        with self.store.snapshot() as conn:
            project_id, name, root = self._project(conn, project)
            files, pending_files, errors = conn.execute(
                "SELECT count(*), coalesce(sum(embedded = 0), 0), coalesce(sum(has_error), 0) "
                "FROM code_files WHERE project_id = ?",
                (project_id,),
            ).fetchone()
            languages = dict(
                conn.execute(
                    "SELECT language, count(*) FROM code_files WHERE project_id = ? "
                    "GROUP BY language ORDER BY language",
                    (project_id,),
                ).fetchall()
            )
            kinds = dict(
                conn.execute(
                    "SELECT s.kind, count(*) FROM code_symbols s JOIN code_files f "
                    "ON f.id = s.file_id WHERE f.project_id = ? GROUP BY s.kind ORDER BY s.kind",
                    (project_id,),
                ).fetchall()
            )
            indexed_at = conn.execute(
                "SELECT indexed_at FROM code_projects WHERE id = ?", (project_id,)
            ).fetchone()[0]
        return ProjectStats(
            project=name,
            root=root,
            files=int(files),
            files_pending=int(pending_files),
            symbols=sum(kinds.values()),
            chunks=self.store.count(kind=KIND, collection=name),
            pending_embeddings=self.store.pending_embeddings(kind=KIND, collection=name),
            languages={str(k): int(v) for k, v in languages.items()},
            symbol_kinds={str(k): int(v) for k, v in kinds.items()},
            files_with_errors=int(errors),
            indexed_at=_time(indexed_at),
        )

    def remove(self, project: str) -> int:
        """Forget a project: its chunks, files, symbols and names. Returns files removed."""
        with self.store.transaction() as conn:
            project_id, name, _ = self._project(conn, project)
            files = conn.execute(
                "SELECT count(*) FROM code_files WHERE project_id = ?", (project_id,)
            ).fetchone()[0]
            self.store.delete_collection(KIND, name)
            conn.execute(
                "DELETE FROM code_names WHERE file_id IN "
                "(SELECT id FROM code_files WHERE project_id = ?)",
                (project_id,),
            )
            conn.execute(
                "DELETE FROM code_symbols WHERE file_id IN "
                "(SELECT id FROM code_files WHERE project_id = ?)",
                (project_id,),
            )
            conn.execute("DELETE FROM code_files WHERE project_id = ?", (project_id,))
            conn.execute("DELETE FROM code_projects WHERE id = ?", (project_id,))
        return int(files)

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
    ) -> list[CodeHit]:
        where: dict[str, Any] = {}
        langs = check_languages(languages)
        if langs is not None:
            where["language"] = langs
        if project is not None:
            with self.store.snapshot() as conn:
                self._project(conn, project)  # an unknown one is an error naming the others
        if kinds is not None:
            kind_list = [kinds] if isinstance(kinds, str) else list(kinds)
            checked = [_check_name(k, "kind") for k in kind_list]
            where["kind"] = check_choices(checked, self._symbol_kinds(), "symbol kind")
        if path is not None:
            prefix = _check_name(path, "path").replace("\\", "/").strip("/")
            if prefix.startswith("./"):
                prefix = prefix[2:]
            if prefix and prefix != ".":
                if self._is_file(prefix, project):
                    where["path"] = prefix
                else:
                    where["path"] = {"$gte": prefix + "/", "$lt": prefix + "0"}
        collection = check_project_name(project) if project is not None else None
        if self.store.embedder is None and mode == "hybrid":
            mode = "text"  # a file opened without an embedder still answers by words
        results = self.store.search(
            query,
            mode=mode,
            limit=limit,
            kind=KIND,
            collection=collection,
            where=where or None,
        )
        return self._hits(results)

    def _symbol_kinds(self) -> set[str]:
        """Kinds a search can ask for: those the parser gives, and any stored."""
        with self.store.snapshot() as conn:
            stored = {str(r[0]) for r in conn.execute("SELECT DISTINCT kind FROM code_symbols")}
        return stored | set(SYMBOL_KINDS) | {"file"}

    def _is_file(self, rel: str, project: str | None) -> bool:
        with self.store.snapshot() as conn:
            sql = "SELECT 1 FROM code_files f JOIN code_projects p ON p.id = f.project_id "
            sql += "WHERE f.path = ?"
            params: list[Any] = [rel]
            if project is not None:
                sql += " AND p.name = ?"
                params.append(project)
            return conn.execute(sql + " LIMIT 1", params).fetchone() is not None

    def _hits(self, results: list[SearchResult]) -> list[CodeHit]:
        hits = []
        with self.store.snapshot() as conn:
            for r in results:
                meta = r.metadata
                symbol_id = None
                if meta.get("symbol") is not None:
                    row = conn.execute(
                        "SELECT s.id FROM code_symbols s JOIN code_files f ON f.id = s.file_id "
                        "JOIN code_projects p ON p.id = f.project_id "
                        "WHERE p.name = ? AND f.path = ? AND s.position = ?",
                        (r.collection, r.source, meta["symbol"]),
                    ).fetchone()
                    symbol_id = int(row[0]) if row else None
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
        """
        wanted = _check_name(name_or_qualified_name, "name").replace("::", ".")
        conditions: list[str] = []
        params: list[Any] = []
        if project is not None:
            conditions.append("p.name = ?")
            params.append(check_project_name(project))
        if kind is not None:
            kinds = [kind] if isinstance(kind, str) else list(kind)
            kinds = [_check_name(k, "kind") for k in kinds]
            conditions.append(f"s.kind IN ({','.join('?' * len(kinds))})")
            params.extend(kinds)
        filters = "".join(f" AND {c}" for c in conditions)
        qualified = "." in wanted or " > " in wanted
        if qualified:
            exact = (
                "(s.qualified_name = ? OR s.qualified_name LIKE ? ESCAPE '\\' "
                "OR s.qualified_name LIKE ? ESCAPE '\\')"
            )
            exact_params: list[Any] = [
                wanted,
                "%." + _like_escape(wanted),
                "% > " + _like_escape(wanted),
            ]
            loose = "lower(s.qualified_name) = lower(?)"
        else:
            exact = "s.name = ?"
            exact_params = [wanted]
            loose = "lower(s.name) = lower(?)"
        order = " ORDER BY (s.qualified_name = ?) DESC, p.name, f.path, s.start_line LIMIT ?"
        with self.store.snapshot() as conn:
            for where, where_params in ((exact, exact_params), (loose, [wanted])):
                rows = conn.execute(
                    f"SELECT {_SYMBOL_COLUMNS} {_SYMBOL_FROM} WHERE {where}{filters}{order}",
                    (*where_params, *params, wanted, limit),
                ).fetchall()
                if rows:
                    return [_symbol(r) for r in rows]
        return []

    def _file(self, conn: apsw.Connection, file: Any, project: str | None) -> tuple[int, str]:
        if not isinstance(file, str | os.PathLike):
            raise InvalidInputError(f"file must be a path, not {type(file).__name__}")
        raw = _check_name(os.fspath(file), "file")
        candidates: list[tuple[int, str]] = []
        projects = (
            [self._project(conn, project)]
            if project is not None
            else [
                (int(i), str(n), str(r))
                for i, n, r in conn.execute("SELECT id, name, root FROM code_projects")
            ]
        )
        for project_id, name, root in projects:
            rel = raw.replace("\\", "/")
            if Path(raw).is_absolute():
                try:
                    rel = Path(raw).resolve().relative_to(root).as_posix()
                except (ValueError, OSError):
                    continue
            rel = rel.removeprefix("./")
            row = conn.execute(
                "SELECT id FROM code_files WHERE project_id = ? AND path = ?", (project_id, rel)
            ).fetchone()
            if row is not None:
                candidates.append((int(row[0]), name))
        if not candidates:
            raise NotFoundError(f"{raw!r} is not an indexed file; index its repository first")
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
        with self.store.snapshot() as conn:
            file_id, _ = self._file(conn, file, project)
            rows = conn.execute(
                f"SELECT {_SYMBOL_COLUMNS} {_SYMBOL_FROM} WHERE s.file_id = ? ORDER BY s.position",
                (file_id,),
            ).fetchall()
        nodes: dict[int, OutlineNode] = {}
        roots: list[OutlineNode] = []
        for row in rows:
            symbol = _symbol(row)
            node = OutlineNode(symbol)
            nodes[symbol.id] = node
            parent = nodes.get(symbol.parent_id) if symbol.parent_id is not None else None
            (parent.children if parent is not None else roots).append(node)
        return roots

    # -- references ----------------------------------------------------------------------

    def references(
        self, name: str, *, project: str | None = None, limit: int = 1000
    ) -> list[Reference]:
        """Where the identifier ``name`` occurs (a qualified name looks for its last part)."""
        wanted = _check_name(name, "name").replace("::", ".").rsplit(".", 1)[-1]
        if not wanted:
            raise InvalidInputError("name is empty")
        sql = (
            "SELECT n.positions, f.id, f.path, f.content_hash, p.name, p.root FROM code_names n "
            "JOIN code_files f ON f.id = n.file_id JOIN code_projects p ON p.id = f.project_id "
            "WHERE n.name = ?"
        )
        params: list[Any] = [wanted]
        if project is not None:
            sql += " AND p.name = ?"
            params.append(check_project_name(project))
        out: list[Reference] = []
        with self.store.snapshot() as conn:
            rows = conn.execute(sql + " ORDER BY p.name, f.path", params).fetchall()
            for positions, file_id, rel, stored_hash, project_name, root in rows:
                symbols = conn.execute(
                    "SELECT qualified_name, start_line, end_line, name, name_line, name_column "
                    "FROM code_symbols WHERE file_id = ? ORDER BY position",
                    (file_id,),
                ).fetchall()
                lines, stale = _current_lines(Path(root) / rel, stored_hash)
                for line, column in decode_positions(positions):
                    enclosing = None
                    for qualified, start, end, _, _, _ in symbols:
                        if start <= line <= end:
                            enclosing = qualified  # later (inner) symbols win
                    is_definition = any(
                        n == wanted and nl == line and nc == column
                        for _, _, _, n, nl, nc in symbols
                    )
                    text = lines[line - 1] if 0 < line <= len(lines) else ""
                    out.append(
                        Reference(
                            project=project_name,
                            path=rel,
                            line=line,
                            column=column,
                            symbol=enclosing,
                            is_definition=is_definition,
                            line_text=text.rstrip("\r\n"),
                            stale=stale,
                        )
                    )
                    if len(out) >= limit:
                        return out
        return out


def source_lines(data: bytes) -> list[str]:
    """A file's lines as the parser numbers them: split at "\\n" only.

    (``str.splitlines`` also breaks at form feeds and other separators, which
    shifts every line after them.)
    """
    return [line.removesuffix("\r") for line in data.decode("utf-8", "replace").split("\n")]


def _current_lines(path: Path, stored_hash: str) -> tuple[list[str], bool]:
    try:
        data = path.read_bytes()
    except OSError:
        return [], True
    return source_lines(data), file_hash(data) != stored_hash


def _time(value: Any) -> datetime | None:
    """An epoch time from the table as an aware UTC datetime."""
    return None if value is None else datetime.fromtimestamp(float(value), UTC)
