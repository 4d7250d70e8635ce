"""Reading commands open the memory read-only: not a byte of the file changes, even
on a memory written by an older version or one that never used a layer."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from remembrances import NotFoundError, SchemaVersionError
from remembrances import open as open_memory
from remembrances.cli import cli

READS = [
    ("stats",),
    ("search", "deploys"),
    ("search", "deploys", "--kind", "code"),
    ("kb", "search", "deploys"),
    ("kb", "list"),
    ("kb", "get", "deploys.md"),
    ("events", "search", "deploys"),
    ("events", "list"),
    ("events", "subjects"),
    ("code", "search", "deploys"),
    ("code", "projects"),
    ("code", "symbol", "deploy"),
    ("code", "refs", "deploy"),
    ("enrich", "when do deploys run?"),
    ("check",),
]


@pytest.fixture
def memory_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, CliRunner]:
    monkeypatch.delenv("REMEMBRANCES_DB", raising=False)
    monkeypatch.setenv("REMEMBRANCES_EMBEDDER", "hash:64")
    db = tmp_path / "memory.db"
    with open_memory(db, embedder="hash:64") as memory:  # a memory that only ever used the KB
        memory.kb.add("Deploys run every Friday from the release branch.", source="deploys.md")
    return db, CliRunner()


def invoke(runner: CliRunner, db: Path, *args: str) -> Result:
    return runner.invoke(cli, ["--db", str(db), *args])


def fingerprint(db: Path) -> tuple[str, list[str], list[tuple[str, str]]]:
    """The file's bytes, its tables and its recorded schema versions."""
    digest = hashlib.sha256(db.read_bytes()).hexdigest()
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master ORDER BY name")]
        meta = conn.execute("SELECT key, value FROM meta ORDER BY key").fetchall()
    finally:
        conn.close()
    return digest, tables, meta


def test_reading_commands_leave_the_file_as_it_was(memory_file: tuple[Path, CliRunner]) -> None:
    db, runner = memory_file
    before = fingerprint(db)
    assert not any(t.startswith(("events", "code_")) for t in before[1])
    for args in READS:
        result = invoke(runner, db, *args)
        assert result.exit_code == 0, (args, result.output)
        assert fingerprint(db) == before, args
    assert "Friday" in invoke(runner, db, "enrich", "when do deploys run?").stdout


def test_a_writing_command_still_writes(memory_file: tuple[Path, CliRunner]) -> None:
    db, runner = memory_file
    before = fingerprint(db)
    assert invoke(runner, db, "events", "log", "deployed 2.3").exit_code == 0
    assert fingerprint(db) != before


def test_an_older_memory_is_refused_by_reads_and_upgraded_by_init(
    memory_file: tuple[Path, CliRunner],
) -> None:
    db, runner = memory_file
    conn = sqlite3.connect(db)  # what version 1 of the KB tables looked like
    with conn:
        conn.execute("DROP TABLE kb_roots")
        conn.execute("UPDATE meta SET value = '1' WHERE key = 'schema:kb'")
    conn.close()
    before = fingerprint(db)
    for args in (("kb", "list"), ("enrich", "when do deploys run?")):
        # enrich printed nothing and exited 0: an agent's hook saw an empty memory
        result = invoke(runner, db, *args)
        assert result.exit_code == 1, args
        message = " ".join(result.stderr.split())
        assert "older remembrances" in message and f"--db {db} init" in message
        assert "Traceback" not in result.output
    assert fingerprint(db) == before
    with (
        open_memory(db, read_only=True) as memory,
        pytest.raises(SchemaVersionError, match="kb schema 1"),
    ):
        memory.kb  # noqa: B018 (building the layer is the check)
    assert fingerprint(db) == before

    upgraded = invoke(runner, db, "init")
    assert upgraded.exit_code == 0 and "upgraded" in upgraded.stdout
    assert "kb_roots" in fingerprint(db)[1]
    listed = invoke(runner, db, "kb", "list")
    assert listed.exit_code == 0 and "deploys.md" in listed.stdout
    assert "already exists" in " ".join(invoke(runner, db, "init").stdout.split())


def test_code_reads_on_a_memory_without_code_tables(memory_file: tuple[Path, CliRunner]) -> None:
    db, _ = memory_file
    with open_memory(db, read_only=True) as memory:
        code = memory.code
        assert code.projects() == []
        assert code.search("deploys") == []
        assert code.find_symbol("deploy") == []
        assert code.references("deploy") == []
        for call in (
            lambda: code.stats("app"),
            lambda: code.repo_map("app"),
            lambda: code.outline("app/main.py"),
            lambda: code.search("deploys", project="app"),
        ):
            with pytest.raises(NotFoundError, match="no code"):
                call()
    assert not any(t.startswith("code_") for t in fingerprint(db)[1])
