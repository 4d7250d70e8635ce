"""The code layer's own tables: their schema, and every statement that reads or writes them.

Searchable text lives in the store's chunks; these tables hold the domain facts
(projects, files, symbols, and where each identifier occurs). The writer, the
reader and the repository map reach the tables only through the functions here,
so each statement exists once. The reference graph's two tables belong to
``graph.py``, which keeps its own statements.

A file row's ``content_hash`` names the content whose symbols and chunks are
stored; ``embedded`` says whether all of those chunks have vectors. A file counts
as indexed only when both hold, so a run whose embedding failed is finished by
the next one instead of being forgotten.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..connection import Connection
from ..errors import NotFoundError
from ..storage.in_lists import in_lists
from .parsing.analysis import FileAnalysis
from .records import CodeSymbol

#: The source kind of the code layer's chunks in the store (their collection is the project).
KIND = "code"

CODE_MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE code_projects (
        id         INTEGER PRIMARY KEY,
        name       TEXT NOT NULL UNIQUE,
        root       TEXT NOT NULL,
        created_at REAL NOT NULL,
        indexed_at REAL
    );
    CREATE TABLE code_files (
        id           INTEGER PRIMARY KEY,
        project_id   INTEGER NOT NULL REFERENCES code_projects (id) ON DELETE CASCADE,
        path         TEXT NOT NULL,
        language     TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        size         INTEGER NOT NULL,
        lines        INTEGER NOT NULL,
        has_error    INTEGER NOT NULL DEFAULT 0,
        embedded     INTEGER NOT NULL DEFAULT 0,
        indexed_at   REAL NOT NULL,
        UNIQUE (project_id, path)
    );
    CREATE TABLE code_symbols (
        id             INTEGER PRIMARY KEY,
        file_id        INTEGER NOT NULL REFERENCES code_files (id) ON DELETE CASCADE,
        position       INTEGER NOT NULL,
        parent         INTEGER,  -- position of the enclosing symbol in the same file
        kind           TEXT NOT NULL,
        name           TEXT NOT NULL,
        qualified_name TEXT NOT NULL,
        signature      TEXT NOT NULL,
        docstring      TEXT NOT NULL,
        start_line     INTEGER NOT NULL,
        end_line       INTEGER NOT NULL,
        start_byte     INTEGER NOT NULL,
        end_byte       INTEGER NOT NULL,
        name_line      INTEGER NOT NULL,
        name_column    INTEGER NOT NULL,
        UNIQUE (file_id, position)
    );
    CREATE INDEX code_symbols_name ON code_symbols (name);
    CREATE INDEX code_symbols_qualified ON code_symbols (qualified_name);
    CREATE TABLE code_names (
        name      TEXT NOT NULL,
        file_id   INTEGER NOT NULL REFERENCES code_files (id) ON DELETE CASCADE,
        positions TEXT NOT NULL,
        PRIMARY KEY (name, file_id)
    ) WITHOUT ROWID;
    CREATE INDEX code_names_file ON code_names (file_id);
    """,
    # 2: chunks now embed the code itself rather than the text index's header
    # (parsing/chunking.py); forgetting the files' hashes makes the next run re-chunk
    # and re-embed every file, so one index does not mix the two kinds of vector.
    """
    UPDATE code_files SET content_hash = '', embedded = 0;
    """,
    # 3: the reference graph behind the repository map (graph.py). An edge
    # says "src uses a name that dst defines" with how often src uses it; weights
    # are normalised when the graph is read, so an edge never changes because
    # another file changed and an update only touches the changed files' edges.
    """
    CREATE TABLE IF NOT EXISTS code_edges (
        name       TEXT NOT NULL,
        src_file   INTEGER NOT NULL REFERENCES code_files (id) ON DELETE CASCADE,
        dst_file   INTEGER NOT NULL REFERENCES code_files (id) ON DELETE CASCADE,
        project_id INTEGER NOT NULL,
        refs       INTEGER NOT NULL,
        PRIMARY KEY (name, src_file, dst_file)
    ) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS code_edges_src ON code_edges (src_file);
    CREATE INDEX IF NOT EXISTS code_edges_dst ON code_edges (dst_file);
    CREATE INDEX IF NOT EXISTS code_edges_project ON code_edges (project_id);
    CREATE TABLE IF NOT EXISTS code_graphs (
        project_id INTEGER PRIMARY KEY REFERENCES code_projects (id) ON DELETE CASCADE,
        built_at   REAL NOT NULL,
        updated_at REAL NOT NULL,
        updates    INTEGER NOT NULL DEFAULT 0
    );
    """,
)

# -- projects ------------------------------------------------------------------------


@dataclass(frozen=True)
class Project:
    id: int
    name: str
    root: str


def find_project(conn: Connection, name: str) -> Project | None:
    row = conn.execute("SELECT id, name, root FROM code_projects WHERE name = ?", (name,))
    found = row.fetchone()
    return None if found is None else Project(int(found[0]), str(found[1]), str(found[2]))


def project(conn: Connection, name: str) -> Project:
    """The project called ``name``; NotFoundError naming the indexed ones."""
    found = find_project(conn, name)
    if found is None:
        known = [p.name for p in projects(conn)]
        raise NotFoundError(
            f"no code project named {name!r}; indexed projects: {', '.join(known) or 'none'}"
        )
    return found


def projects(conn: Connection) -> list[Project]:
    rows = conn.execute("SELECT id, name, root FROM code_projects ORDER BY name")
    return [Project(int(i), str(n), str(r)) for i, n, r in rows]


def add_project(conn: Connection, name: str, root: str) -> int:
    row = conn.execute(
        "INSERT INTO code_projects (name, root, created_at) VALUES (?, ?, ?) RETURNING id",
        (name, root, time.time()),
    ).fetchone()
    return int(row[0])


def move_project(conn: Connection, project_id: int, root: str) -> None:
    conn.execute("UPDATE code_projects SET root = ? WHERE id = ?", (root, project_id))


def mark_indexed(conn: Connection, project_id: int) -> None:
    conn.execute("UPDATE code_projects SET indexed_at = ? WHERE id = ?", (time.time(), project_id))


def delete_project(conn: Connection, project_id: int) -> int:
    """Delete a project's rows (its chunks are the store's); returns how many files it had."""
    files = conn.execute(
        "SELECT count(*) FROM code_files WHERE project_id = ?", (project_id,)
    ).fetchone()[0]
    in_project = "file_id IN (SELECT id FROM code_files WHERE project_id = ?)"
    conn.execute(f"DELETE FROM code_names WHERE {in_project}", (project_id,))
    conn.execute(f"DELETE FROM code_symbols WHERE {in_project}", (project_id,))
    conn.execute("DELETE FROM code_files WHERE project_id = ?", (project_id,))
    conn.execute("DELETE FROM code_projects WHERE id = ?", (project_id,))
    return int(files)


def project_listing(conn: Connection) -> list[tuple[str, str, int, float | None]]:
    """(name, root, files, indexed_at) of every project, by name."""
    rows = conn.execute(
        "SELECT p.name, p.root, (SELECT count(*) FROM code_files f "
        "WHERE f.project_id = p.id), p.indexed_at FROM code_projects p ORDER BY p.name"
    )
    return [(str(n), str(r), int(c), None if t is None else float(t)) for n, r, c, t in rows]


@dataclass(frozen=True)
class ProjectCounts:
    files: int
    files_pending: int
    files_with_errors: int
    languages: dict[str, int]
    symbol_kinds: dict[str, int]
    indexed_at: float | None


def project_counts(conn: Connection, project_id: int) -> ProjectCounts:
    files, pending, errors = conn.execute(
        "SELECT count(*), coalesce(sum(embedded = 0), 0), coalesce(sum(has_error), 0) "
        "FROM code_files WHERE project_id = ?",
        (project_id,),
    ).fetchone()
    languages = conn.execute(
        "SELECT language, count(*) FROM code_files WHERE project_id = ? "
        "GROUP BY language ORDER BY language",
        (project_id,),
    ).fetchall()
    kinds = conn.execute(
        "SELECT s.kind, count(*) FROM code_symbols s JOIN code_files f "
        "ON f.id = s.file_id WHERE f.project_id = ? GROUP BY s.kind ORDER BY s.kind",
        (project_id,),
    ).fetchall()
    indexed_at = conn.execute(
        "SELECT indexed_at FROM code_projects WHERE id = ?", (project_id,)
    ).fetchone()[0]
    return ProjectCounts(
        files=int(files),
        files_pending=int(pending),
        files_with_errors=int(errors),
        languages={str(k): int(v) for k, v in languages},
        symbol_kinds={str(k): int(v) for k, v in kinds},
        indexed_at=None if indexed_at is None else float(indexed_at),
    )


# -- files ---------------------------------------------------------------------------


@dataclass(frozen=True)
class StoredFile:
    id: int
    path: str
    language: str
    content_hash: str
    embedded: bool


def files(conn: Connection, project_id: int) -> list[StoredFile]:
    rows = conn.execute(
        "SELECT id, path, language, content_hash, embedded FROM code_files WHERE project_id = ?",
        (project_id,),
    )
    return [StoredFile(int(i), str(p), str(lang), str(h), bool(e)) for i, p, lang, h, e in rows]


def file_paths(conn: Connection, project_id: int) -> dict[int, str]:
    rows = conn.execute("SELECT id, path FROM code_files WHERE project_id = ?", (project_id,))
    return {int(i): str(p) for i, p in rows}


def file_id(conn: Connection, project_id: int, path: str) -> int | None:
    row = conn.execute(
        "SELECT id FROM code_files WHERE project_id = ? AND path = ?", (project_id, path)
    ).fetchone()
    return None if row is None else int(row[0])


def is_file(conn: Connection, path: str, project: str | None) -> bool:
    """Whether ``path`` is an indexed file (of ``project``, or of any project)."""
    sql = "SELECT 1 FROM code_files f JOIN code_projects p ON p.id = f.project_id WHERE f.path = ?"
    params: list[Any] = [path]
    if project is not None:
        sql += " AND p.name = ?"
        params.append(project)
    return conn.execute(sql + " LIMIT 1", params).fetchone() is not None


def write_file(
    conn: Connection, project_id: int, analysis: FileAnalysis, *, embedded: bool, now: float
) -> int:
    """Replace one file's row, symbols and names; returns the file's id."""
    file_id = int(
        conn.execute(
            "INSERT INTO code_files (project_id, path, language, content_hash, size, "
            "lines, has_error, embedded, indexed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (project_id, path) DO UPDATE SET language = excluded.language, "
            "content_hash = excluded.content_hash, size = excluded.size, "
            "lines = excluded.lines, has_error = excluded.has_error, "
            "embedded = excluded.embedded, indexed_at = excluded.indexed_at "
            "RETURNING id",
            (
                project_id,
                analysis.path,
                analysis.language,
                analysis.content_hash,
                analysis.size,
                analysis.lines,
                int(analysis.has_error),
                int(embedded),
                now,
            ),
        ).fetchone()[0]
    )
    conn.execute("DELETE FROM code_symbols WHERE file_id = ?", (file_id,))
    conn.execute("DELETE FROM code_names WHERE file_id = ?", (file_id,))
    conn.executemany(
        "INSERT INTO code_symbols (file_id, position, parent, kind, name, "
        "qualified_name, signature, docstring, start_line, end_line, "
        "start_byte, end_byte, name_line, name_column) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                file_id,
                s.index,
                s.parent,
                s.kind,
                s.name,
                s.qualified_name,
                s.signature,
                s.docstring,
                s.start_line,
                s.end_line,
                s.start_byte,
                s.end_byte,
                s.name_line,
                s.name_column,
            )
            for s in analysis.symbols
        ],
    )
    conn.executemany(
        "INSERT INTO code_names (name, file_id, positions) VALUES (?, ?, ?)",
        [(n, file_id, p) for n, p in analysis.names.items()],
    )
    return file_id


def delete_file(conn: Connection, file_id: int) -> None:
    """Delete a file's row; its symbols, names and edges go with it (foreign keys)."""
    conn.execute("DELETE FROM code_files WHERE id = ?", (file_id,))


def unembedded_files(conn: Connection, project_id: int) -> list[tuple[int, str]]:
    rows = conn.execute(
        "SELECT id, path FROM code_files WHERE project_id = ? AND embedded = 0", (project_id,)
    )
    return [(int(i), str(p)) for i, p in rows]


def mark_embedded(conn: Connection, file_ids: Iterable[int]) -> None:
    conn.executemany("UPDATE code_files SET embedded = 1 WHERE id = ?", [(i,) for i in file_ids])


# -- symbols -------------------------------------------------------------------------

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


def like_escape(value: str) -> str:
    """``value`` matched literally by ``LIKE ... ESCAPE '\\'``."""
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def find_symbols(
    conn: Connection,
    wanted: str,
    *,
    project: str | None = None,
    kinds: Sequence[str] | None = None,
    limit: int = 100,
    ignore_case: bool = True,
) -> list[CodeSymbol]:
    """Symbols by exact name, or by qualified name (``Outer.method``, also as a suffix).

    Exact qualified matches come first. With ``ignore_case``, when nothing
    matches exactly, the match ignores case.
    """
    conditions: list[str] = []
    params: list[Any] = []
    if project is not None:
        conditions.append("p.name = ?")
        params.append(project)
    if kinds is not None:
        conditions.append(f"s.kind IN ({','.join('?' * len(kinds))})")
        params.extend(kinds)
    filters = "".join(f" AND {c}" for c in conditions)
    if "." in wanted or " > " in wanted:
        exact = (
            "(s.qualified_name = ? OR s.qualified_name LIKE ? ESCAPE '\\' "
            "OR s.qualified_name LIKE ? ESCAPE '\\')"
        )
        exact_params: list[Any] = [
            wanted,
            "%." + like_escape(wanted),
            "% > " + like_escape(wanted),
        ]
        loose = "lower(s.qualified_name) = lower(?)"
    else:
        exact, exact_params, loose = "s.name = ?", [wanted], "lower(s.name) = lower(?)"
    order = " ORDER BY (s.qualified_name = ?) DESC, p.name, f.path, s.start_line LIMIT ?"
    tries = [(exact, exact_params), (loose, [wanted])] if ignore_case else [(exact, exact_params)]
    for where, where_params in tries:
        rows = conn.execute(
            f"SELECT {_SYMBOL_COLUMNS} {_SYMBOL_FROM} WHERE {where}{filters}{order}",
            (*where_params, *params, wanted, limit),
        ).fetchall()
        if rows:
            return [_symbol(r) for r in rows]
    return []


def file_symbols(conn: Connection, file_id: int) -> list[CodeSymbol]:
    """A file's symbols in source order."""
    rows = conn.execute(
        f"SELECT {_SYMBOL_COLUMNS} {_SYMBOL_FROM} WHERE s.file_id = ? ORDER BY s.position",
        (file_id,),
    )
    return [_symbol(r) for r in rows]


def symbol_id(conn: Connection, project: str, path: str, position: int) -> int | None:
    row = conn.execute(
        "SELECT s.id FROM code_symbols s JOIN code_files f ON f.id = s.file_id "
        "JOIN code_projects p ON p.id = f.project_id "
        "WHERE p.name = ? AND f.path = ? AND s.position = ?",
        (project, path, position),
    ).fetchone()
    return None if row is None else int(row[0])


def stored_kinds(conn: Connection) -> set[str]:
    return {str(r[0]) for r in conn.execute("SELECT DISTINCT kind FROM code_symbols")}


@dataclass(frozen=True)
class SymbolSpan:
    """Where a symbol is, for placing a use in it; ``name_line/column`` is its name token."""

    position: int
    parent: int | None
    kind: str
    name: str
    qualified_name: str
    signature: str
    start_line: int
    end_line: int
    name_line: int
    name_column: int


def symbol_spans(conn: Connection, file_ids: Iterable[int]) -> dict[int, list[SymbolSpan]]:
    """The symbols of each file, in source order."""
    found: dict[int, list[SymbolSpan]] = {}
    ids = sorted(set(file_ids))
    for part, marks in in_lists(ids):
        rows = conn.execute(
            "SELECT file_id, position, parent, kind, name, qualified_name, signature, "
            "start_line, end_line, name_line, name_column FROM code_symbols "
            f"WHERE file_id IN ({marks}) ORDER BY file_id, position",
            part,
        )
        for row in rows:
            found.setdefault(int(row[0]), []).append(SymbolSpan(*row[1:]))
    return found


@dataclass(frozen=True)
class NameUses:
    """The positions of one identifier in one file."""

    positions: str
    file_id: int
    path: str
    content_hash: str
    project: str
    root: str


def name_uses(conn: Connection, name: str, project: str | None) -> list[NameUses]:
    sql = (
        "SELECT n.positions, f.id, f.path, f.content_hash, p.name, p.root FROM code_names n "
        "JOIN code_files f ON f.id = n.file_id JOIN code_projects p ON p.id = f.project_id "
        "WHERE n.name = ?"
    )
    params: list[Any] = [name]
    if project is not None:
        sql += " AND p.name = ?"
        params.append(project)
    rows = conn.execute(sql + " ORDER BY p.name, f.path", params)
    return [NameUses(str(a), int(b), str(c), str(d), str(e), str(f)) for a, b, c, d, e, f in rows]
