"""The code layer's rooms keep to themselves: reading never imports writing, and
parsing knows nothing of the database (issue 17 item 6)."""

from __future__ import annotations

import ast
from pathlib import Path

import remembrances.code

CODE = Path(remembrances.code.__file__).parent


def imported(path: Path) -> set[str]:
    """Modules ``path`` imports, relative ones resolved within remembrances.code."""
    package = ["remembrances", *path.relative_to(CODE.parent.parent).parent.parts[1:]]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            found.add(module)
            found.update(f"{module}.{a.name}" for a in node.names)
    return found


def test_reading_does_not_import_writing() -> None:
    for reader in ("reader.py", "repo_map.py", "tables.py", "graph.py", "checks.py"):
        modules = imported(CODE / reader)
        assert "remembrances.code.writer" not in modules, reader
        assert "remembrances.code.code_indexer" not in modules, reader


def test_parsing_knows_nothing_of_the_database() -> None:
    for path in (CODE / "parsing").glob("*.py"):
        for module in imported(path):
            assert not module.startswith(("apsw", "remembrances.store", "remembrances.code.")) or (
                module.startswith("remembrances.code.parsing")
            ), (path.name, module)
