"""Running the CLI in-process (click's runner) on a real file in a temporary directory."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from remembrances.cli import cli

Run = Callable[..., Result]


@pytest.fixture
def cli_db(tmp_path: Path) -> Path:
    return tmp_path / "cli" / "memory.db"


@pytest.fixture
def run(cli_db: Path, monkeypatch: pytest.MonkeyPatch) -> Run:
    """``run("kb", "list", "--json")`` against ``cli_db`` with the hash embedder."""
    monkeypatch.delenv("REMEMBRANCES_DB", raising=False)
    monkeypatch.setenv("REMEMBRANCES_EMBEDDER", "hash:64")
    runner = CliRunner()

    def invoke(*args: str, input: str | bytes | None = None, db: Path | None = None) -> Result:
        return runner.invoke(cli, ["--db", str(db or cli_db), *args], input=input)

    return invoke


def as_json(result: Result) -> Any:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)
