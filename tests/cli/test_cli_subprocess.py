"""The installed command as a separate process on a real file: pipes, exit codes, env."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def cli(
    *args: str, cwd: Path, input: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PYTHONPATH": str(REPO), "REMEMBRANCES_EMBEDDER": "hash:64"}
    environment.pop("REMEMBRANCES_DB", None)
    environment.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "remembrances.cli", *args],
        cwd=cwd,
        input=input,
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
    )


def test_a_session_in_pipes(tmp_path: Path) -> None:
    db = str(tmp_path / "m.db")
    init = cli("--db", db, "init", "--json", cwd=tmp_path)
    assert init.returncode == 0, init.stderr
    assert json.loads(init.stdout)["created"] is True

    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "deploy.md").write_text("# Deploy\n\nWe deploy with make ship.\n")
    ingest = cli("--db", db, "kb", "ingest", str(notes), cwd=tmp_path)
    assert ingest.returncode == 0
    assert ingest.stderr == ""  # no progress bars or colour codes when not a terminal
    assert "\x1b[" not in ingest.stdout

    added = cli(
        "--db", db, "kb", "add", "-", "--source", "vpn", input="VPN needs MFA.", cwd=tmp_path
    )
    assert added.returncode == 0, added.stderr
    hits = json.loads(cli("--db", db, "--json", "search", "VPN MFA", cwd=tmp_path).stdout)
    assert hits[0]["source"] == "vpn"


def test_default_db_comes_from_the_environment(tmp_path: Path) -> None:
    db = tmp_path / "env.db"
    result = cli("init", cwd=tmp_path, env={"REMEMBRANCES_DB": str(db)})
    assert result.returncode == 0, result.stderr
    assert db.exists()
    assert not (tmp_path / ".remembrances").exists()


def test_default_db_is_under_the_current_directory(tmp_path: Path) -> None:
    assert cli("init", cwd=tmp_path).returncode == 0
    assert (tmp_path / ".remembrances" / "memory.db").exists()


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (("stats",), 1, "no memory file"),
        (("--embedder", "bogus", "init"), 1, "unknown embedder"),
        (("search",), 2, "Missing argument"),
        (("frobnicate",), 2, "No such command"),
        (("events", "log", "x", "--at", "not a time"), 1, "ISO"),
    ],
)
def test_errors_are_one_line_with_the_right_exit_code(
    tmp_path: Path, args: tuple[str, ...], code: int, message: str
) -> None:
    result = cli("--db", str(tmp_path / "m.db"), *args, cwd=tmp_path)
    assert result.returncode == code, result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    if code == 1:
        assert result.stderr.strip().count("\n") == 0, result.stderr


def test_debug_prints_the_traceback(tmp_path: Path) -> None:
    result = cli(
        "--db", str(tmp_path / "m.db"), "--debug", "--embedder", "bogus", "init", cwd=tmp_path
    )
    assert result.returncode == 1
    assert "Traceback" in result.stderr


def test_version(tmp_path: Path) -> None:
    result = cli("--version", cwd=tmp_path)
    assert result.returncode == 0 and "0.1.0" in result.stdout


def test_invalid_utf8_in_arguments_is_a_user_error(tmp_path: Path) -> None:
    db = str(tmp_path / "m.db")
    assert cli("--db", db, "init", cwd=tmp_path).returncode == 0
    environment = {**os.environ, "PYTHONPATH": str(REPO), "LC_ALL": "C.UTF-8"}
    result = subprocess.run(
        [sys.executable, "-m", "remembrances.cli", "--db", db, "search", b"caf\xe9 \xff"],
        capture_output=True,
        env=environment,
        timeout=120,
    )
    assert result.returncode == 1, result.stderr
    assert b"Traceback" not in result.stderr
    # the argument and the byte as the shell passed them, not Python's "lone surrogate"
    assert b"the query is not valid UTF-8 (byte 4 is 0xe9)" in result.stderr
    assert b"terminal's encoding" in result.stderr and b"surrogate" not in result.stderr
