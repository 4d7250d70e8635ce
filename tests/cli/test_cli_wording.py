"""CLI errors name the CLI's own options, never the Python parameters behind them."""

from __future__ import annotations

from pathlib import Path

from .conftest import Run


def test_prune_names_the_older_than_option(run: Run) -> None:
    run("events", "log", "something")
    result = run("events", "prune", "--older-than", "forever")
    assert result.exit_code == 1
    assert "--older-than 'forever'" in result.stderr
    assert "older_than" not in result.stderr


def test_embedder_mismatch_says_which_option_to_pass(run: Run) -> None:
    run("init")
    result = run("--embedder", "hash:32", "stats")
    assert result.exit_code == 1
    assert "reembed" in result.stderr  # or how to move the file to the new embedder
    assert "--embedder hash:64" in result.stderr
    assert "embedder='hash:64'" not in result.stderr and "in Python" not in result.stderr


def test_a_hash_spec_typo_says_what_the_spec_looks_like(run: Run) -> None:
    result = run("--embedder", "hash:6x", "init")
    assert result.exit_code == 1
    assert "invalid literal" not in result.stderr
    assert "as in hash:64" in result.stderr


def test_oversized_files_point_at_an_option_that_exists(run: Run, tmp_path: Path) -> None:
    big = tmp_path / "big.md"
    big.write_text("word " * 500)
    skipped = run("kb", "ingest", str(big), "--max-bytes", "100")
    assert skipped.exit_code == 0, skipped.output
    assert "--max-bytes" in skipped.stdout and "the limit is 100" in skipped.stdout
    taken = run("kb", "ingest", str(big), "--max-bytes", "100000", "--json")
    assert '"added": [' in taken.stdout and "big.md" in taken.stdout


def test_python_hints_are_left_out_of_cli_errors(run: Run, tmp_path: Path) -> None:
    empty = tmp_path / "empty.db"
    empty.touch()
    refused = run("stats", db=empty)
    assert refused.exit_code == 1 and "remembrances --db" in refused.stderr
    assert "Python" not in refused.stderr and "create=True" not in refused.stderr
    run("init")
    missing = run("kb", "get", "nothing-here.md")
    assert missing.exit_code == 1 and "remembrances kb list" in missing.stderr
    assert "kb.list()" not in missing.stderr
