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

import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from pathlib import PurePath
from typing import Any

from ..errors import NotFoundError
from ..storage.in_lists import in_lists
from ..storage.transaction import Dialect, Row, Transaction, marks
from .parsing.analysis import FileAnalysis
from .records import CodeSymbol

#: The source kind of the code layer's chunks in the store (their collection is the project).
KIND = "code"

#: A step that makes the next index run re-chunk and re-embed every file (its hash
#: is forgotten), for when what a chunk holds changes: one index never mixes two
#: kinds of chunk. Vectors already in the embedding cache are reused.
RECHUNK = "UPDATE code_files SET content_hash = '', embedded = 0;"
#: A step that makes the next index run parse every file again (its chunks, when
#: unchanged, are kept with their vectors), for when what is read from the syntax tree
#: besides the chunks changes: the names of ``references`` and the map's graph. The
#: hash is kept behind a mark, so that until then a reference still knows whether its
#: file changed (:func:`indexed_hash`); emptied, every line showed as changed.
REPARSE_MARK = "parse again:"
REPARSE = (
    f"UPDATE code_files SET content_hash = '{REPARSE_MARK}' || content_hash "
    f"WHERE content_hash NOT LIKE '{REPARSE_MARK}%';"
)


def mark_recovered(tx: Transaction) -> None:
    """After ``check --recover``: a file may have lost symbols or chunks, so the next
    index redoes every file (vectors come from the saved embedding cache); the hash
    stays behind the mark, so references still know which files changed."""
    tx.execute(REPARSE)
    tx.execute("UPDATE code_files SET embedded = 0")


def indexed_hash(stored: str) -> str:
    """The hash of the content a file row was indexed from (a REPARSE mark taken off)."""
    return stored.removeprefix(REPARSE_MARK)


#: The SQLite schema, one numbered step per entry.
_SQLITE: tuple[str, ...] = (
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
    # (parsing/chunking.py).
    RECHUNK,
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
    # 4: every part of a split symbol now carries its own lines, and a method's
    # vector no longer reads its class's first line (parsing/chunking.py).
    RECHUNK,
    # 5: what a function defines inside itself stays in the function's chunk
    # (parsing/chunking.py).
    RECHUNK,
    # 6: import paths are no longer names (parsing/identifiers.py): parse again.
    REPARSE,
    # 7: more symbols in JavaScript, TypeScript, C and C++ (functions assigned to
    # properties, prototypes returning pointers, C++ headers named .h), bare qualified
    # names for Rust impls and C++, Markdown setext sections, and impl blocks no longer
    # defining their type in the map's graph (parsing/symbols.py, graph.py).
    REPARSE,
)

#: The same steps for PostgreSQL: identity columns instead of rowid aliases, no
#: ``WITHOUT ROWID``, and double precision for epoch times (``REAL`` is 4 bytes there).
_POSTGRESQL: tuple[str, ...] = (
    """
    CREATE TABLE code_projects (
        id         BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        name       TEXT NOT NULL UNIQUE,
        root       TEXT NOT NULL,
        created_at DOUBLE PRECISION NOT NULL,
        indexed_at DOUBLE PRECISION
    );
    CREATE TABLE code_files (
        id           BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        project_id   BIGINT NOT NULL REFERENCES code_projects (id) ON DELETE CASCADE,
        path         TEXT NOT NULL,
        language     TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        size         BIGINT NOT NULL,
        lines        BIGINT NOT NULL,
        has_error    INTEGER NOT NULL DEFAULT 0,
        embedded     INTEGER NOT NULL DEFAULT 0,
        indexed_at   DOUBLE PRECISION NOT NULL,
        UNIQUE (project_id, path)
    );
    CREATE TABLE code_symbols (
        id             BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        file_id        BIGINT NOT NULL REFERENCES code_files (id) ON DELETE CASCADE,
        position       INTEGER NOT NULL,
        parent         INTEGER,
        kind           TEXT NOT NULL,
        name           TEXT NOT NULL,
        qualified_name TEXT NOT NULL,
        signature      TEXT NOT NULL,
        docstring      TEXT NOT NULL,
        start_line     INTEGER NOT NULL,
        end_line       INTEGER NOT NULL,
        start_byte     BIGINT NOT NULL,
        end_byte       BIGINT NOT NULL,
        name_line      INTEGER NOT NULL,
        name_column    INTEGER NOT NULL,
        UNIQUE (file_id, position)
    );
    CREATE INDEX code_symbols_name ON code_symbols (name);
    CREATE INDEX code_symbols_qualified ON code_symbols (qualified_name);
    CREATE TABLE code_names (
        name      TEXT NOT NULL,
        file_id   BIGINT NOT NULL REFERENCES code_files (id) ON DELETE CASCADE,
        positions TEXT NOT NULL,
        PRIMARY KEY (name, file_id)
    );
    CREATE INDEX code_names_file ON code_names (file_id);
    """,
    RECHUNK,
    """
    CREATE TABLE IF NOT EXISTS code_edges (
        name       TEXT NOT NULL,
        src_file   BIGINT NOT NULL REFERENCES code_files (id) ON DELETE CASCADE,
        dst_file   BIGINT NOT NULL REFERENCES code_files (id) ON DELETE CASCADE,
        project_id BIGINT NOT NULL,
        refs       INTEGER NOT NULL,
        PRIMARY KEY (name, src_file, dst_file)
    );
    CREATE INDEX IF NOT EXISTS code_edges_src ON code_edges (src_file);
    CREATE INDEX IF NOT EXISTS code_edges_dst ON code_edges (dst_file);
    CREATE INDEX IF NOT EXISTS code_edges_project ON code_edges (project_id);
    CREATE TABLE IF NOT EXISTS code_graphs (
        project_id BIGINT PRIMARY KEY REFERENCES code_projects (id) ON DELETE CASCADE,
        built_at   DOUBLE PRECISION NOT NULL,
        updated_at DOUBLE PRECISION NOT NULL,
        updates    INTEGER NOT NULL DEFAULT 0
    );
    """,
    RECHUNK,
    RECHUNK,
    REPARSE,
    REPARSE,
)
#: Per dialect, the same numbered steps (a file's schema version counts them).
CODE_MIGRATIONS: dict[Dialect, tuple[str, ...]] = {"sqlite": _SQLITE, "postgresql": _POSTGRESQL}
#: The oldest version a read-only open reads as it is: steps 6 and 7 only ask for a new
#: parse.
CODE_READABLE_FROM = 5
#: The layer's tables (with graph.py's two), parents first: ``remembrances copy``
#: copies them row for row, ids kept.
TABLES = (
    "code_projects",
    "code_files",
    "code_symbols",
    "code_names",
    "code_edges",
    "code_graphs",
)


# -- projects ------------------------------------------------------------------------


@dataclass(frozen=True)
class Project:
    id: int
    name: str
    root: str


def _project(row: Row) -> Project:
    return Project(int(row["id"]), str(row["name"]), str(row["root"]))


def find_project(tx: Transaction, name: str) -> Project | None:
    row = tx.execute("SELECT id, name, root FROM code_projects WHERE name = ?", (name,)).fetchone()
    return None if row is None else _project(row)


def project(tx: Transaction, name: str) -> Project:
    """The project called ``name``; NotFoundError naming the indexed ones."""
    found = find_project(tx, name)
    if found is None:
        known = [p.name for p in projects(tx)]
        raise NotFoundError(
            f"no code project named {name!r}; indexed projects: {', '.join(known) or 'none'}"
        )
    return found


def projects(tx: Transaction) -> list[Project]:
    rows = tx.execute("SELECT id, name, root FROM code_projects ORDER BY name")
    return [_project(row) for row in rows]


def add_project(tx: Transaction, name: str, root: str) -> int:
    return int(
        tx.execute(
            "INSERT INTO code_projects (name, root, created_at) VALUES (?, ?, ?) RETURNING id",
            (name, root, time.time()),
        ).scalar()
    )


def move_project(tx: Transaction, project_id: int, root: str) -> None:
    tx.execute("UPDATE code_projects SET root = ? WHERE id = ?", (root, project_id))


def mark_indexed(tx: Transaction, project_id: int) -> None:
    tx.execute("UPDATE code_projects SET indexed_at = ? WHERE id = ?", (time.time(), project_id))


def delete_project(tx: Transaction, project_id: int) -> int:
    """Delete a project's rows (its chunks are the store's); returns how many files it had."""
    files = tx.execute(
        "SELECT count(*) AS files FROM code_files WHERE project_id = ?", (project_id,)
    ).scalar()
    in_project = "file_id IN (SELECT id FROM code_files WHERE project_id = ?)"
    tx.execute(f"DELETE FROM code_names WHERE {in_project}", (project_id,))
    tx.execute(f"DELETE FROM code_symbols WHERE {in_project}", (project_id,))
    tx.execute("DELETE FROM code_files WHERE project_id = ?", (project_id,))
    tx.execute("DELETE FROM code_projects WHERE id = ?", (project_id,))
    return int(files)


@dataclass(frozen=True)
class ProjectListing:
    name: str
    root: str
    files: int
    indexed_at: float | None


def project_listing(tx: Transaction) -> list[ProjectListing]:
    """Every project with its number of files, by name."""
    rows = tx.execute(
        "SELECT p.name AS name, p.root AS root, (SELECT count(*) FROM code_files f "
        "WHERE f.project_id = p.id) AS files, p.indexed_at AS indexed_at "
        "FROM code_projects p ORDER BY p.name"
    )
    return [
        ProjectListing(str(r["name"]), str(r["root"]), int(r["files"]), _float(r["indexed_at"]))
        for r in rows
    ]


@dataclass(frozen=True)
class ProjectCounts:
    files: int
    files_pending: int
    files_with_errors: int
    languages: dict[str, int]
    symbol_kinds: dict[str, int]
    indexed_at: float | None


def project_counts(tx: Transaction, project_id: int) -> ProjectCounts:
    totals = tx.execute(
        "SELECT count(*) AS files, "
        "coalesce(sum(CASE WHEN embedded = 0 THEN 1 ELSE 0 END), 0) AS pending, "
        "coalesce(sum(has_error), 0) AS errors FROM code_files WHERE project_id = ?",
        (project_id,),
    ).fetchone()
    assert totals is not None  # an aggregate always has its row
    languages = tx.execute(
        "SELECT language, count(*) AS files FROM code_files WHERE project_id = ? "
        "GROUP BY language ORDER BY language",
        (project_id,),
    )
    kinds = tx.execute(
        "SELECT s.kind AS kind, count(*) AS symbols FROM code_symbols s JOIN code_files f "
        "ON f.id = s.file_id WHERE f.project_id = ? GROUP BY s.kind ORDER BY s.kind",
        (project_id,),
    )
    indexed_at = tx.execute(
        "SELECT indexed_at FROM code_projects WHERE id = ?", (project_id,)
    ).scalar()
    return ProjectCounts(
        files=int(totals["files"]),
        files_pending=int(totals["pending"]),
        files_with_errors=int(totals["errors"]),
        languages={str(r["language"]): int(r["files"]) for r in languages},
        symbol_kinds={str(r["kind"]): int(r["symbols"]) for r in kinds},
        indexed_at=_float(indexed_at),
    )


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


# -- files ---------------------------------------------------------------------------


@dataclass(frozen=True)
class StoredFile:
    id: int
    path: str
    language: str
    content_hash: str
    embedded: bool


def files(tx: Transaction, project_id: int) -> list[StoredFile]:
    rows = tx.execute(
        "SELECT id, path, language, content_hash, embedded FROM code_files WHERE project_id = ?",
        (project_id,),
    )
    return [
        StoredFile(
            int(r["id"]),
            str(r["path"]),
            str(r["language"]),
            str(r["content_hash"]),
            bool(r["embedded"]),
        )
        for r in rows
    ]


def file_paths(tx: Transaction, project_id: int) -> dict[int, str]:
    rows = tx.execute("SELECT id, path FROM code_files WHERE project_id = ?", (project_id,))
    return {int(r["id"]): str(r["path"]) for r in rows}


def paths_ending(tx: Transaction, project_id: int, tail: str, limit: int = 3) -> list[str]:
    """Indexed paths of the project that end with ``/tail`` (a file named from below the
    root: ``_compat.py`` for ``boltons/_compat.py``), in any case (``README.md`` for
    ``readme.md``; SQLite's LIKE ignores case, PostgreSQL's does not)."""
    rows = tx.execute(
        "SELECT path FROM code_files WHERE project_id = ? AND lower(path) LIKE lower(?) "
        "ESCAPE '\\' "
        "ORDER BY length(path), path LIMIT ?",
        (project_id, "%/" + like_escape(tail), limit),
    )
    return [str(r["path"]) for r in rows]


def file_id(tx: Transaction, project_id: int, path: str) -> int | None:
    found = tx.execute(
        "SELECT id FROM code_files WHERE project_id = ? AND path = ?", (project_id, path)
    ).scalar()
    return None if found is None else int(found)


def is_file(tx: Transaction, path: str, project: str | None) -> bool:
    """Whether ``path`` is an indexed file (of ``project``, or of any project)."""
    sql = "SELECT 1 AS found FROM code_files f JOIN code_projects p ON p.id = f.project_id "
    sql += "WHERE f.path = ?"
    params: list[Any] = [path]
    if project is not None:
        sql += " AND p.name = ?"
        params.append(project)
    return tx.execute(sql + " LIMIT 1", params).fetchone() is not None


def write_file(
    tx: Transaction, project_id: int, analysis: FileAnalysis, *, embedded: bool, now: float
) -> int:
    """Replace one file's row, symbols and names; returns the file's id."""
    file_id = int(
        tx.execute(
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
        ).scalar()
    )
    tx.execute("DELETE FROM code_symbols WHERE file_id = ?", (file_id,))
    tx.execute("DELETE FROM code_names WHERE file_id = ?", (file_id,))
    tx.executemany(
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
    tx.executemany(
        "INSERT INTO code_names (name, file_id, positions) VALUES (?, ?, ?)",
        [(n, file_id, p) for n, p in analysis.names.items()],
    )
    return file_id


def delete_file(tx: Transaction, file_id: int) -> None:
    """Delete a file's row; its symbols, names and edges go with it (foreign keys)."""
    tx.execute("DELETE FROM code_files WHERE id = ?", (file_id,))


def unembedded_files(tx: Transaction, project_id: int) -> list[tuple[int, str]]:
    rows = tx.execute(
        "SELECT id, path FROM code_files WHERE project_id = ? AND embedded = 0", (project_id,)
    )
    return [(int(r["id"]), str(r["path"])) for r in rows]


def mark_embedded(tx: Transaction, file_ids: Iterable[int]) -> None:
    tx.executemany("UPDATE code_files SET embedded = 1 WHERE id = ?", [(i,) for i in file_ids])


# -- symbols -------------------------------------------------------------------------

#: Every column a CodeSymbol has, named as its fields.
_SYMBOL_COLUMNS = (
    "s.id AS id, p.name AS project, f.path AS path, f.language AS language, s.kind AS kind, "
    "s.name AS name, s.qualified_name AS qualified_name, s.signature AS signature, "
    "s.docstring AS docstring, s.start_line AS start_line, s.end_line AS end_line, "
    "s.start_byte AS start_byte, s.end_byte AS end_byte, q.qualified_name AS parent, "
    "q.id AS parent_id"
)
_SYMBOL_FROM = (
    "FROM code_symbols s JOIN code_files f ON f.id = s.file_id "
    "JOIN code_projects p ON p.id = f.project_id "
    "LEFT JOIN code_symbols q ON q.file_id = s.file_id AND q.position = s.parent"
)
_SYMBOL_FIELDS = tuple(f.name for f in fields(CodeSymbol))


def _symbol(row: Row) -> CodeSymbol:
    return CodeSymbol(**{name: row[name] for name in _SYMBOL_FIELDS})


def like_escape(value: str) -> str:
    """``value`` matched literally by ``LIKE ... ESCAPE '\\'``."""
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def find_symbols(
    tx: Transaction,
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
        conditions.append(f"s.kind IN ({marks(len(kinds))})")
        params.extend(kinds)
    filters = "".join(f" AND {c}" for c in conditions)
    if "." in wanted or " > " in wanted:
        # A qualified name ends with its symbol's name, so the name is one of the
        # wanted text's suffixes that start at a separator: an indexed lookup.
        names = _name_suffixes(wanted)
        exact = (
            f"s.name IN ({marks(len(names))}) AND (s.qualified_name = ? "
            "OR s.qualified_name LIKE ? ESCAPE '\\' OR s.qualified_name LIKE ? ESCAPE '\\')"
        )
        exact_params: list[Any] = [
            *names,
            wanted,
            "%." + like_escape(wanted),
            "% > " + like_escape(wanted),
        ]
        loose = "lower(s.qualified_name) = lower(?)"
    else:
        exact, exact_params, loose = "s.name = ?", [wanted], "lower(s.name) = lower(?)"
    order = (
        " ORDER BY CASE WHEN s.qualified_name = ? THEN 0 ELSE 1 END, p.name, f.path, "
        "s.start_line LIMIT ?"
    )
    tries = [(exact, exact_params), (loose, [wanted])] if ignore_case else [(exact, exact_params)]
    for number, (where, where_params) in enumerate(tries):
        rows = tx.execute(
            f"SELECT {_SYMBOL_COLUMNS} {_SYMBOL_FROM} WHERE {where}{filters}{order}",
            (*where_params, *params, wanted, limit),
        ).fetchall()
        if rows:
            return [_symbol(r) for r in rows]
        if number == 0 and "." in wanted:
            found = _in_module(tx, wanted, filters, params, limit)
            if found:
                return found
    return []


def _in_module(
    tx: Transaction, wanted: str, filters: str, params: list[Any], limit: int
) -> list[CodeSymbol]:
    """Symbols named ``module.Qualified.name`` (``json.decoder.JSONDecoder.decode``):
    each dotted suffix of ``wanted`` is a qualified name to look up, kept where the
    rest names the symbol's file (CodeSymbol.is_named). A project indexed from its
    package folder (``src/click``) has modules named without the package (``core``),
    so a name that starts with the folder's name (``click.core.Command.main``) is
    also read without it."""
    parts = wanted.split(".")
    qualified = [".".join(parts[i:]) for i in range(1, len(parts))]
    rows = tx.execute(
        f"SELECT {_SYMBOL_COLUMNS}, p.root AS root {_SYMBOL_FROM} WHERE s.name = ? "
        f"AND s.qualified_name IN ({marks(len(qualified))}){filters} "
        "ORDER BY p.name, f.path, s.start_line",
        (parts[-1], *qualified, *params),
    )
    inside = ".".join(parts[1:])
    named, in_package = [], []
    for row in rows:
        symbol = _symbol(row)
        if symbol.is_named(wanted):
            named.append(symbol)
        elif PurePath(str(row["root"])).name == parts[0] and symbol.dotted_name == inside:
            # the whole module path under the package folder; the folder's own
            # __init__.py has none (``sqlparse.format``)
            in_package.append(symbol)
    return (named or in_package)[:limit]


def _name_suffixes(wanted: str) -> list[str]:
    """``wanted`` and each of its suffixes that follows a ``.`` or `` > ``."""
    starts = {0} | {m.end() for m in re.finditer(r"\.| > ", wanted)}
    return sorted({wanted[i:] for i in starts if i < len(wanted)})


def file_symbols(tx: Transaction, file_id: int) -> list[CodeSymbol]:
    """A file's symbols in source order."""
    rows = tx.execute(
        f"SELECT {_SYMBOL_COLUMNS} {_SYMBOL_FROM} WHERE s.file_id = ? ORDER BY s.position",
        (file_id,),
    )
    return [_symbol(r) for r in rows]


def symbol_id(tx: Transaction, project: str, path: str, position: int) -> int | None:
    found = tx.execute(
        "SELECT s.id AS id FROM code_symbols s JOIN code_files f ON f.id = s.file_id "
        "JOIN code_projects p ON p.id = f.project_id "
        "WHERE p.name = ? AND f.path = ? AND s.position = ?",
        (project, path, position),
    ).scalar()
    return None if found is None else int(found)


def stored_kinds(tx: Transaction) -> set[str]:
    return {str(r["kind"]) for r in tx.execute("SELECT DISTINCT kind FROM code_symbols")}


@dataclass(frozen=True)
class SymbolSpan:
    """Where a symbol is, for placing a use in it; ``name_line/column`` is its name token."""

    file_id: int
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


_SPAN_FIELDS = tuple(f.name for f in fields(SymbolSpan))


def symbol_spans(tx: Transaction, file_ids: Iterable[int]) -> dict[int, list[SymbolSpan]]:
    """The symbols of each file, in source order."""
    found: dict[int, list[SymbolSpan]] = {}
    ids = sorted(set(file_ids))
    for part, in_marks in in_lists(ids):
        rows = tx.execute(
            f"SELECT {', '.join(_SPAN_FIELDS)} FROM code_symbols "
            f"WHERE file_id IN ({in_marks}) ORDER BY file_id, position",
            part,
        )
        for row in rows:
            span = SymbolSpan(**{name: row[name] for name in _SPAN_FIELDS})
            found.setdefault(span.file_id, []).append(span)
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


_USES_FIELDS = tuple(f.name for f in fields(NameUses))


def name_uses(tx: Transaction, name: str, project: str | None) -> list[NameUses]:
    sql = (
        "SELECT n.positions AS positions, f.id AS file_id, f.path AS path, "
        "f.content_hash AS content_hash, p.name AS project, p.root AS root FROM code_names n "
        "JOIN code_files f ON f.id = n.file_id JOIN code_projects p ON p.id = f.project_id "
        "WHERE n.name = ?"
    )
    params: list[Any] = [name]
    if project is not None:
        sql += " AND p.name = ?"
        params.append(project)
    rows = tx.execute(sql + " ORDER BY p.name, f.path", params)
    return [NameUses(**{k: row[k] for k in _USES_FIELDS}) for row in rows]
