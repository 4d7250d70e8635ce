"""The reference graph between files: "this file uses a name that file defines".

It is built from the index's own tables (``code_names`` holds every identifier a
file uses, ``code_symbols`` every name it defines) and persisted in
``code_edges`` so the repository map does not re-derive it on every call. An
edge stores only how often ``src`` uses the name; how much it weighs (split
between the name's definers) is worked out when the graph is read. So when a
file changes, only two kinds of edge can change: those leaving it, and those of
the names it defined before or defines now. ``update`` recomputes exactly
those, in the indexer's write transaction, so the graph never disagrees with
the files. A ``code_graphs`` row says a project's graph is complete; without it
(a first index, an index made before the graph existed, a large change) the
graph is rebuilt whole.
"""

from __future__ import annotations

import builtins
import json
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..storage.transaction import Dialect, Transaction

#: A name defined in more files than this (``__init__``, ``run``, ``main``) says
#: nothing about which one a use means; it gets no edges.
MAX_DEFINERS = 25
#: Sections of a document are symbols too, but nobody calls them; a Rust ``impl`` block
#: or a Swift ``extension`` is named after the type it adds to, and a use of that name
#: means the type (counted as definers, serde_json's twelve ``impl Value`` blocks made
#: ``Value`` a generic name, and the enum fell out of the map).
_NOT_DEFINITIONS = ("section", "impl", "extension")
#: Kinds that, inside an impl block, name a trait's member, not a type of their own
#: (``type Value = Map;`` in ``impl Deserializer for Map``).
_IMPL_MEMBERS = ("type", "constant")
#: A definition inside a function is local to it: no other file can use it.
_LOCAL_SCOPES = ("function", "method")
#: A module that defines ``str`` or ``open`` is not what every ``str(x)`` means.
_PYTHON_BUILTINS = tuple(sorted(n for n in dir(builtins) if not n.startswith("_")))
#: Languages whose files can use each other's names.
_LANGUAGE_GROUP = (
    "CASE {col} WHEN 'typescript' THEN 'javascript' WHEN 'tsx' THEN 'javascript' "
    "WHEN 'cpp' THEN 'c' ELSE {col} END"
)


def _quoted(values: tuple[str, ...]) -> str:
    return ",".join(f"'{v}'" for v in values)


def _group(col: str) -> str:
    return _LANGUAGE_GROUP.format(col=col)


# Definitions that other files can use: not sections, not local to a function
# (the parent and the grandparent are checked; deeper nesting is rare). The
# repository map's focus uses the same rule (``definitions_in``).
_ENCLOSING = """
LEFT JOIN code_symbols p ON p.file_id = s.file_id AND p.position = s.parent
LEFT JOIN code_symbols g ON g.file_id = s.file_id AND g.position = p.parent
"""
_USABLE = f"""
s.kind NOT IN ({_quoted(_NOT_DEFINITIONS)})
  AND NOT (s.kind IN ({_quoted(_IMPL_MEMBERS)}) AND coalesce(p.kind, '') = 'impl')
  AND coalesce(p.kind, '') NOT IN ({_quoted(_LOCAL_SCOPES)})
  AND coalesce(g.kind, '') NOT IN ({_quoted(_LOCAL_SCOPES)})
"""
_DEFINITIONS = f"""
SELECT s.name AS name, s.file_id AS file_id, {_group("f.language")} AS language_group
FROM code_symbols s JOIN code_files f ON f.id = s.file_id {_ENCLOSING}
WHERE f.project_id = ? AND {_USABLE}
"""
_USES = f"""
SELECT n.name AS name, n.file_id AS file_id, {_group("f.language")} AS language_group,
       length(n.positions) - length(replace(n.positions, ' ', '')) + 1 AS refs
FROM code_names n JOIN code_files f ON f.id = n.file_id
WHERE f.project_id = ?
"""
#: ``IN`` over a list passed as one JSON array parameter (any length, one statement).
_IN_JSON: dict[Dialect, str] = {
    "sqlite": "(SELECT value FROM json_each(?))",
    "postgresql": "(SELECT value FROM json_array_elements_text(CAST(? AS json)))",
}
_IN_JSON_IDS: dict[Dialect, str] = {
    "sqlite": "(SELECT value FROM json_each(?))",
    "postgresql": "(SELECT CAST(value AS bigint) FROM json_array_elements_text(CAST(? AS json)))",
}


def _by_list(sql: str) -> str:
    """Look rows up by the listed names or files, not by scanning the project's files.

    (A unary ``+`` keeps SQLite from driving the query from the project index.)
    """
    return sql.replace("WHERE f.project_id = ?", "WHERE +f.project_id = ?")


_Row = tuple[str, int, int, int, int]  # name, src, dst, project, refs


def _definers(
    tx: Transaction, project_id: int, names: str | None
) -> dict[tuple[str, str], list[int]]:
    """(name, language group) -> files defining it, for names that say which file they mean."""
    params: list[Any] = [project_id]
    sql = _DEFINITIONS
    if names is not None:
        in_names = _IN_JSON[tx.dialect]
        sql, params = _by_list(sql) + f" AND s.name IN {in_names}", [project_id, names]
    found: dict[tuple[str, str], set[int]] = {}
    for row in tx.execute(sql, params):
        name, group = str(row["name"]), str(row["language_group"])
        if group == "python" and name in _PYTHON_BUILTINS:
            continue
        found.setdefault((name, group), set()).add(int(row["file_id"]))
    return {k: sorted(v) for k, v in found.items() if len(v) <= MAX_DEFINERS}


def _edges(
    tx: Transaction,
    project_id: int,
    definers: dict[tuple[str, str], list[int]],
    uses: Iterable[tuple[str, int, str, int]],
) -> list[_Row]:
    """An edge per use of a defined name by another file of the same language group.

    A file that defines the name itself is not counted as using the other
    definitions (an override is not a call).
    """
    rows: list[_Row] = []
    wanted: list[tuple[str, int, list[int], int]] = []
    for name, src, group, refs in uses:
        files = definers.get((name, group))
        if files is not None:
            wanted.append((name, src, files, refs))
    if not wanted:
        return rows
    own = {
        (str(row["name"]), int(row["file_id"]))
        for row in tx.execute(
            "SELECT s.name AS name, s.file_id AS file_id FROM code_symbols s "
            "JOIN code_files f ON f.id = s.file_id "
            f"WHERE +f.project_id = ? AND s.name IN {_IN_JSON[tx.dialect]}",
            (project_id, json.dumps(sorted({w[0] for w in wanted}))),
        )
    }
    for name, src, files, refs in wanted:
        if (name, src) in own:
            continue
        rows.extend((name, src, dst, project_id, refs) for dst in files if dst != src)
    return rows


def _insert(tx: Transaction, rows: list[_Row]) -> None:
    tx.executemany(
        "INSERT INTO code_edges (name, src_file, dst_file, project_id, refs) "
        "VALUES (?, ?, ?, ?, ?) ON CONFLICT (name, src_file, dst_file) DO NOTHING",
        rows,
    )


@dataclass(frozen=True)
class Edges:
    """A project's edges as parallel arrays (``name[i]`` indexes ``names``)."""

    names: list[str]
    name: npt.NDArray[np.int64]
    src: npt.NDArray[np.int64]  # file ids
    dst: npt.NDArray[np.int64]
    refs: npt.NDArray[np.float64]


def exists(tx: Transaction, project_id: int) -> bool:
    row = tx.execute("SELECT 1 AS found FROM code_graphs WHERE project_id = ?", (project_id,))
    return row.fetchone() is not None


def definitions_in(tx: Transaction, file_ids: Iterable[int]) -> set[tuple[int, str]]:
    """(file, name) of the definitions other files can use, in the given files."""
    ids = json.dumps(sorted(set(file_ids)))
    return {
        (int(row["file_id"]), str(row["name"]))
        for row in tx.execute(
            "SELECT DISTINCT s.file_id AS file_id, s.name AS name FROM code_symbols s "
            f"{_ENCLOSING} WHERE s.file_id IN {_IN_JSON_IDS[tx.dialect]} AND {_USABLE}",
            (ids,),
        )
    }


def users(tx: Transaction, file_ids: Iterable[int]) -> dict[int, int]:
    """How many other files use a name each file defines (its in-degree in the graph)."""
    ids = json.dumps(sorted(set(file_ids)))
    rows = tx.execute(
        "SELECT dst_file, count(DISTINCT src_file) AS users FROM code_edges "
        f"WHERE dst_file IN {_IN_JSON_IDS[tx.dialect]} GROUP BY dst_file",
        (ids,),
    )
    return {int(r["dst_file"]): int(r["users"]) for r in rows}


def state(tx: Transaction, project_id: int) -> tuple[Any, ...] | None:
    """When the project's graph was built and updated: a key that changes with the graph."""
    row = tx.execute(
        "SELECT built_at, updated_at, updates FROM code_graphs WHERE project_id = ?",
        (project_id,),
    ).fetchone()
    return None if row is None else (row["built_at"], row["updated_at"], row["updates"])


def defined_names(tx: Transaction, file_ids: Iterable[int]) -> set[str]:
    """Names the files define now (call before their symbols are replaced)."""
    ids = json.dumps(list(file_ids))
    return {
        str(r["name"])
        for r in tx.execute(
            f"SELECT DISTINCT name FROM code_symbols WHERE file_id IN {_IN_JSON_IDS[tx.dialect]}",
            (ids,),
        )
    }


def build(tx: Transaction, project_id: int) -> int:
    """(Re)build a project's whole graph; returns the number of edges."""
    tx.execute("DELETE FROM code_edges WHERE project_id = ?", (project_id,))
    definers = _definers(tx, project_id, None)
    rows = _edges(tx, project_id, definers, _uses(tx, _USES, [project_id]))
    _insert(tx, rows)
    now = time.time()
    tx.execute(
        "INSERT INTO code_graphs (project_id, built_at, updated_at, updates) VALUES (?, ?, ?, 0) "
        "ON CONFLICT (project_id) DO UPDATE SET built_at = excluded.built_at, "
        "updated_at = excluded.updated_at, updates = 0",
        (project_id, now, now),
    )
    return len(rows)


def _uses(tx: Transaction, sql: str, params: list[Any]) -> Iterable[tuple[str, int, str, int]]:
    for row in tx.execute(sql, params):
        yield str(row["name"]), int(row["file_id"]), str(row["language_group"]), int(row["refs"])


def invalidate(tx: Transaction, project_id: int) -> None:
    """Forget a project's graph; the next index run (or map) builds it whole."""
    tx.execute("DELETE FROM code_edges WHERE project_id = ?", (project_id,))
    tx.execute("DELETE FROM code_graphs WHERE project_id = ?", (project_id,))


def update(
    tx: Transaction, project_id: int, changed: Iterable[int], old_names: Iterable[str]
) -> None:
    """Bring the graph up to date after ``changed`` files were rewritten or deleted.

    ``old_names`` are the names those files defined before; with the names they
    define now, they are the names whose definers may have changed. Runs in the
    caller's write transaction.
    """
    changed_ids = sorted(set(changed))
    if not changed_ids:
        return
    ids = json.dumps(changed_ids)
    affected = json.dumps(sorted(set(old_names) | defined_names(tx, changed_ids)))
    in_ids, in_names = _IN_JSON_IDS[tx.dialect], _IN_JSON[tx.dialect]
    tx.execute(f"DELETE FROM code_edges WHERE src_file IN {in_ids}", (ids,))
    tx.execute(
        f"DELETE FROM code_edges WHERE +project_id = ? AND name IN {in_names}",
        (project_id, affected),
    )
    # Edges leaving the changed files (any name they use), and edges of the
    # affected names (from any file).
    by_list = _by_list(_USES)
    leaving = list(_uses(tx, by_list + f" AND n.file_id IN {in_ids}", [project_id, ids]))
    arriving = list(_uses(tx, by_list + f" AND n.name IN {in_names}", [project_id, affected]))
    names = json.dumps(sorted({u[0] for u in leaving} | set(json.loads(affected))))
    definers = _definers(tx, project_id, names)
    _insert(tx, _edges(tx, project_id, definers, leaving + arriving))
    tx.execute(
        "UPDATE code_graphs SET updated_at = ?, updates = updates + 1 WHERE project_id = ?",
        (time.time(), project_id),
    )


def edges(tx: Transaction, project_id: int) -> Edges:
    """The project's edges: persisted ones, or derived on the fly when there are none yet."""
    cursor: Iterable[tuple[Any, ...]]
    if exists(tx, project_id):
        cursor = (
            (r["name"], r["src_file"], r["dst_file"], r["refs"])
            for r in tx.execute(
                "SELECT name, src_file, dst_file, refs FROM code_edges WHERE project_id = ? "
                "ORDER BY name",
                (project_id,),
            )
        )
    else:  # e.g. a read-only file indexed before the graph existed
        definers = _definers(tx, project_id, None)
        derived = _edges(tx, project_id, definers, _uses(tx, _USES, [project_id]))
        cursor = iter(sorted((n, s, d, r) for n, s, d, _, r in derived))
    names: list[str] = []
    index: dict[str, int] = {}
    rows: list[tuple[int, int, int, int]] = []
    for name, src, dst, refs in cursor:
        at = index.get(name)
        if at is None:
            at = index[name] = len(names)
            names.append(name)
        rows.append((at, src, dst, refs))
    table = np.array(rows, dtype=np.int64).reshape(-1, 4)
    return Edges(names, table[:, 0], table[:, 1], table[:, 2], table[:, 3].astype(np.float64))


__all__ = [
    "MAX_DEFINERS",
    "Edges",
    "build",
    "defined_names",
    "definitions_in",
    "edges",
    "exists",
    "invalidate",
    "state",
    "update",
    "users",
]
