"""A file that is not a memory is refused untouched unless a memory is asked for there."""

from __future__ import annotations

import hashlib
from pathlib import Path

import apsw
import pytest
from click.testing import CliRunner

import remembrances
from remembrances import NotAMemoryError, Store
from remembrances.cli import cli
from remembrances.embeddings import HashEmbedder


def _other_program(path: Path) -> Path:
    conn = apsw.Connection(str(path))
    conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    conn.execute("INSERT INTO invoices (total) VALUES (12.5)")
    conn.close()
    return path


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _tables(path: Path) -> set[str]:
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    finally:
        conn.close()


@pytest.mark.parametrize("command", [["stats"], ["search", "x"], ["kb", "list"], ["check"]])
def test_reading_commands_refuse_another_programs_file_and_write_nothing(
    tmp_path: Path, command: list[str]
) -> None:
    path = _other_program(tmp_path / "other.db")
    before = _digest(path)
    result = CliRunner().invoke(cli, ["--db", str(path), "--embedder", "hash:64", *command])
    assert result.exit_code == 1, result.output
    assert "not a remembrances memory" in result.stderr
    assert "init" in result.stderr  # says how to make one there on purpose
    assert _digest(path) == before
    assert _tables(path) == {"invoices"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.db"]  # no -wal, no -shm


@pytest.mark.parametrize("command", [["stats"], ["events", "list"]])
def test_reading_commands_refuse_an_empty_file_and_leave_it_empty(
    tmp_path: Path, command: list[str]
) -> None:
    path = tmp_path / "zero.db"
    path.touch()
    result = CliRunner().invoke(cli, ["--db", str(path), "--embedder", "hash:64", *command])
    assert result.exit_code == 1
    assert "is empty" in result.stderr
    assert path.stat().st_size == 0


def test_writing_commands_refuse_another_programs_file(tmp_path: Path) -> None:
    path = _other_program(tmp_path / "other.db")
    before = _digest(path)
    result = CliRunner().invoke(
        cli, ["--db", str(path), "--embedder", "hash:64", "events", "log", "hello"]
    )
    assert result.exit_code == 1
    assert "not a remembrances memory" in result.stderr
    assert _digest(path) == before


def test_init_makes_a_memory_where_asked_and_keeps_the_other_tables(tmp_path: Path) -> None:
    path = _other_program(tmp_path / "other.db")
    result = CliRunner().invoke(cli, ["--db", str(path), "--embedder", "hash:64", "init"])
    assert result.exit_code == 0, result.output
    assert "created" in result.stdout
    assert {"invoices", "meta", "chunks"} <= _tables(path)
    stats = CliRunner().invoke(cli, ["--db", str(path), "stats"])
    assert stats.exit_code == 0, stats.output


def test_python_api_refuses_another_programs_file_unless_create_true(tmp_path: Path) -> None:
    path = _other_program(tmp_path / "other.db")
    before = _digest(path)
    with pytest.raises(NotAMemoryError, match="create=True"):
        Store(path, embedder=HashEmbedder(64))
    with pytest.raises(NotAMemoryError):
        remembrances.open(path, embedder="hash:64")
    with pytest.raises(NotAMemoryError):
        Store(path, read_only=True)
    assert _digest(path) == before
    with Store(path, embedder=HashEmbedder(64), create=True) as store:
        assert store.count() == 0
    with Store(path, embedder=HashEmbedder(64)) as store:  # a memory now
        assert store.count() == 0


def test_python_api_new_and_empty_files_become_memories_unless_create_false(
    tmp_path: Path,
) -> None:
    with pytest.raises(NotAMemoryError, match="no memory file"):
        Store(tmp_path / "new.db", create=False)
    assert not (tmp_path / "new.db").exists()
    empty = tmp_path / "empty.db"
    empty.touch()
    with pytest.raises(NotAMemoryError, match="is empty"):
        Store(empty, create=False)
    assert empty.stat().st_size == 0
    with Store(empty, embedder=HashEmbedder(64)) as store:
        assert store.count() == 0
    with Store(tmp_path / "new.db", embedder=HashEmbedder(64)) as store:
        assert store.count() == 0


def test_a_file_that_is_not_sqlite_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_text("just some text, not a database\n" * 100)
    with pytest.raises(NotAMemoryError, match="not a SQLite database"):
        Store(path, embedder=HashEmbedder(64), create=True)
    assert path.read_text().startswith("just some text")
