"""The code layer's statements on PostgreSQL give what they give on SQLite.

Every function of ``code/tables.py`` and ``code/graph.py`` runs on a real SQLite
file and on a real PostgreSQL (pgserver), over the same parsed repository; the
answers must be equal. This is what lets a PostgreSQL engine run the code layer:
portable SQL, per-dialect DDL, rows read by column name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest

from remembrances import Store
from remembrances.code import graph, tables
from remembrances.code.parsing.analysis import analyze_source
from remembrances.code.parsing.languages import language_for_path
from remembrances.postgres.connection import PostgresDatabase
from remembrances.storage.schema import migrate
from remembrances.storage.transaction import Transaction
from tests.code.test_repo_map import FILES

Opener = Callable[[], AbstractContextManager[Transaction]]

CHANGED = "from core.clock import now\n\n\ndef stamp() -> str:\n    return f'{now():.0f}'\n"


def exercise(write: Opener, read: Opener, root: str) -> dict[str, Any]:
    """Write the repository through the table functions, change it, read everything back."""
    analyses = {
        path: analyze_source(path, language_for_path(path) or "", text.encode())
        for path, text in FILES.items()
    }
    with write() as tx:
        project_id = tables.add_project(tx, "calls", root)
        for analysis in analyses.values():
            tables.write_file(tx, project_id, analysis, embedded=False, now=1.0)
        edges_built = graph.build(tx, project_id)
    with write() as tx:  # an edit, a deletion and a move, as the writer does them
        report_id = tables.file_id(tx, project_id, "app/report.py")
        lonely_id = tables.file_id(tx, project_id, "tools/lonely.py")
        assert report_id is not None and lonely_id is not None
        old = graph.defined_names(tx, [report_id, lonely_id])
        edited = analyze_source("app/report.py", "python", CHANGED.encode())
        tables.write_file(tx, project_id, edited, embedded=True, now=2.0)
        tables.delete_file(tx, lonely_id)
        graph.update(tx, project_id, [report_id, lonely_id], old)
        tables.move_project(tx, project_id, root + "/moved")
        tables.mark_embedded(tx, [i for i, _ in tables.unembedded_files(tx, project_id)][:3])
        tables.mark_indexed(tx, project_id)
    with read() as tx:
        ids = tables.file_paths(tx, project_id)
        path_of = ids.get
        scheduler = tables.file_id(tx, project_id, "core/scheduler.py")
        assert scheduler is not None
        edges = graph.edges(tx, project_id)
        counts = tables.project_counts(tx, project_id)
        found = {
            "edges_built": edges_built,
            "project": tables.project(tx, "calls").root,
            "projects": [p.name for p in tables.projects(tx)],
            "listing": [(p.name, p.files) for p in tables.project_listing(tx)],
            "counts": (counts.files, counts.files_pending, counts.languages, counts.symbol_kinds),
            "files": sorted((f.path, f.language, f.embedded) for f in tables.files(tx, project_id)),
            "is_file": [
                tables.is_file(tx, "core/clock.py", None),
                tables.is_file(tx, "core/clock.py", "other"),
                tables.is_file(tx, "tools/lonely.py", "calls"),
            ],
            "next_run": [
                s.to_dict() | {"id": 0, "parent_id": 0}
                for s in tables.find_symbols(tx, "Scheduler.next_run")
            ],
            "NOW": [s.qualified_name for s in tables.find_symbols(tx, "NOW")],
            "in module": [
                (s.path, s.qualified_name)
                for name in ("core.scheduler.Scheduler.next_run", "clock.now", "web.format.now")
                for s in tables.find_symbols(tx, name)
            ],
            "NOW exact": tables.find_symbols(tx, "NOW", ignore_case=False),
            "functions": [
                s.name for s in tables.find_symbols(tx, "Open", kinds=["function"], project="calls")
            ],
            "outline": [(s.qualified_name, s.parent) for s in tables.file_symbols(tx, scheduler)],
            "kinds": sorted(tables.stored_kinds(tx)),
            "spans": {
                path_of(f): [(s.qualified_name, s.name_line, s.name_column) for s in spans]
                for f, spans in tables.symbol_spans(tx, ids).items()
            },
            "uses of now": [(u.path, u.positions) for u in tables.name_uses(tx, "now", "calls")],
            "edges": sorted(
                (edges.names[n], path_of(s), path_of(d), r)
                for n, s, d, r in zip(edges.name, edges.src, edges.dst, edges.refs, strict=True)
            ),
            "definitions": sorted(
                (path_of(f), n) for f, n in graph.definitions_in(tx, [scheduler])
            ),
            "graph updated": graph.state(tx, project_id) is not None
            and graph.exists(tx, project_id),
        }
    with write() as tx:
        found["removed files"] = tables.delete_project(tx, project_id)
        found["after removal"] = tables.find_project(tx, "calls")
    return found


@pytest.fixture
def postgres(postgres_url: str) -> Iterator[PostgresDatabase]:
    from remembrances.postgres.schema import STORE_MIGRATIONS

    db = PostgresDatabase(postgres_url)
    db.bootstrap()
    with db.write() as tx:
        migrate(tx, "store", STORE_MIGRATIONS)
        migrate(tx, "code", tables.CODE_MIGRATIONS["postgresql"])
    yield db
    db.close()


def test_the_code_tables_answer_alike_on_sqlite_and_postgresql(
    store: Store, postgres: PostgresDatabase, tmp_path: Path
) -> None:
    store.migrate("code", tables.CODE_MIGRATIONS)
    on_sqlite = exercise(store.transaction, store.snapshot, str(tmp_path))
    on_postgres = exercise(postgres.write, postgres.read, str(tmp_path))
    assert on_sqlite["next_run"][0]["qualified_name"] == "Scheduler.next_run"
    assert on_sqlite["NOW"] == ["now"] and on_sqlite["NOW exact"] == []
    assert ("formatDate", "web/view.js", "web/format.js", 2) in on_sqlite["edges"]
    assert ("now", "app/report.py", "core/clock.py", 2) in on_sqlite["edges"]  # after the edit
    assert on_sqlite["removed files"] == len(FILES) - 1 and on_sqlite["after removal"] is None
    for key, value in on_sqlite.items():
        assert on_postgres[key] == value, key
