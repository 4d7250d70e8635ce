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


def test_value_errors_name_the_option_that_was_given(run: Run) -> None:
    run("init")
    cases = [
        (("search", "x", "-n", "0"), "-n/--limit must be an integer"),
        (("kb", "search", "x", "-n", "0"), "-n/--limit must be an integer"),
        (("events", "list", "-n", "0"), "-n/--limit must be an integer"),
        (("events", "search", "x", "--recency", "nan"), "--recency 'nan' is not a duration"),
        (("events", "search", "x", "--last", "nan"), "--last 'nan' is not a duration"),
        (("events", "search", "x", "--since", "nan"), "--since 'nan' is not an ISO 8601"),
        (("events", "search", "x", "--window", "99"), "--window must be an integer"),
        (("events", "log", "hi", "--at", "nan"), "--at 'nan' is not an ISO 8601"),
        (("search", "x", "--until", "nan"), "--until 'nan' is not an ISO 8601"),
        (
            ("events", "list", "--since", "2026-01-02", "--until", "2026-01-01"),
            "--since (2026-01-02T00:00:00+00:00) is after --until (",
        ),
    ]
    for args, expected in cases:
        result = run(*args)
        assert result.exit_code == 1, (args, result.output)
        assert f"Error: {expected}" in result.stderr, (args, result.stderr)
    # the same words in a message's prose are left alone
    long_query = run("search", "x" * 100_001)
    assert long_query.exit_code == 1 and "the limit is 100,000" in long_query.stderr


def test_a_non_utf8_byte_is_named_by_its_option_and_position(run: Run) -> None:
    run("init")
    # what Python makes of the Latin-1 bytes b"caf\xe9" in argv (surrogateescape)
    latin1 = b"caf\xe9".decode("utf-8", "surrogateescape")
    option = run("events", "log", "lunch", "--subject", latin1)
    assert option.exit_code == 1
    assert "--subject is not valid UTF-8 (byte 4 is 0xe9)" in option.stderr
    assert "surrogate" not in option.stderr
    argument = run("kb", "get", "x/" + latin1)
    assert "the source is not valid UTF-8 (byte 6 is 0xe9)" in argument.stderr
    assert "terminal's encoding" in argument.stderr
