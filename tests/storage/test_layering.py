"""The layering DESIGN.md promises, checked on the source: a broken rule fails here."""

from __future__ import annotations

import ast
from pathlib import Path

import remembrances

PACKAGE = Path(remembrances.__file__).parent


def imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_ingest_and_staging_do_not_import_the_knowledge_base() -> None:
    for name in ("ingest.py", "staging.py", "tables.py"):
        imports = imported_modules(PACKAGE / "kb" / name)
        assert not any("knowledge_base" in m for m in imports), (name, imports)


def test_domain_sql_lives_in_the_table_modules() -> None:
    """kb and events write SQL only in their table module (code/ is moving there)."""
    for layer in ("kb", "events"):
        for path in sorted((PACKAGE / layer).glob("*.py")):
            if path.name == "tables.py":
                continue
            source = path.read_text(encoding="utf-8")
            assert ".execute(" not in source and ".executemany(" not in source, path


def test_no_chunk_sql_outside_the_storage_layer() -> None:
    allowed = {"store.py"}
    # postgres/ is the PostgreSQL engine: storage layer too.
    allowed_dirs = {"storage", "postgres"}
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE)
        if relative.parts[0] in allowed_dirs or str(relative) in allowed:
            continue
        if relative.parts[-1] == "tables.py":
            continue  # a layer's own statements may join its rows with their chunks
        source = path.read_text(encoding="utf-8")
        for needle in ("FROM chunks", "INTO chunks", "UPDATE chunks", "FROM meta"):
            assert needle not in source, (str(relative), needle)


def test_the_service_opens_the_file_through_the_store_only() -> None:
    imports = imported_modules(PACKAGE / "service.py")
    assert not any(m.endswith("connection") or m == "apsw" for m in imports), imports
