"""init, stats, search, enrich, reembed, exit codes and help texts, through click's runner."""

from __future__ import annotations

from pathlib import Path
from zoneinfo import ZoneInfo

import click
import pytest
from click.testing import CliRunner

from remembrances import Chunk, Store
from remembrances.cli import cli
from remembrances.embeddings import HashEmbedder
from tests.days import yesterday_only_in

from .conftest import Run, as_json


def test_init_creates_the_file_and_records_the_embedder(run: Run, cli_db: Path) -> None:
    data = as_json(run("init", "--json"))
    assert data == {
        "path": str(cli_db),
        "created": True,
        "upgraded": False,
        "embedder": "hash:64",
        "dim": 64,
    }
    assert cli_db.exists()
    again = as_json(run("--json", "init"))
    assert again["created"] is False


def test_init_human_output_names_the_file(run: Run, cli_db: Path) -> None:
    result = run("init")
    assert result.exit_code == 0
    assert "created" in result.stdout and "hash:64" in result.stdout


def test_stats_json_shape(run: Run) -> None:
    run("init")
    data = as_json(run("stats", "--json"))
    assert data["chunks"] == 0
    assert data["embedder"] == "hash:64"
    assert {"sources", "chunks_by_kind", "pending_embeddings", "dim", "file_bytes"} <= set(data)


def test_reading_a_missing_file_is_a_one_line_user_error(run: Run, cli_db: Path) -> None:
    result = run("stats")
    assert result.exit_code == 1
    assert "no memory file at" in result.stderr
    assert "Traceback" not in result.output
    assert not cli_db.exists()


def test_a_folder_or_an_empty_string_as_db_is_a_usage_error(run: Run, tmp_path: Path) -> None:
    folder = tmp_path / "dbdir"
    folder.mkdir()
    for command in (("stats",), ("search", "x"), ("init",)):
        result = run("--db", str(folder), *command)  # the last --db wins
        assert result.exit_code == 2, result.output
        assert f"'{folder}' is a directory" in result.stderr
        assert str(folder / "memory.db") in result.stderr  # what to give instead
        assert "I/O error" not in result.stderr
    assert list(folder.iterdir()) == []
    empty = run("--db", "", "stats")
    assert empty.exit_code == 2 and "an empty string is not a file path" in empty.stderr
    slash = run("--db", f"{tmp_path / 'new'}/", "init")  # would make a file named "new"
    assert slash.exit_code == 2 and "ends with a slash" in slash.stderr
    assert not (tmp_path / "new").exists()
    from_env = CliRunner().invoke(cli, ["stats"], env={"REMEMBRANCES_DB": str(folder)})
    assert from_env.exit_code == 2
    assert "REMEMBRANCES_DB" in from_env.stderr and "is a directory" in from_env.stderr


def test_unknown_option_is_a_usage_error(run: Run) -> None:
    result = run("search", "--bogus", "x")
    assert result.exit_code == 2
    assert "No such option" in result.stderr


def test_missing_argument_is_a_usage_error(run: Run) -> None:
    assert run("search").exit_code == 2


def test_unknown_embedder_is_a_user_error(run: Run) -> None:
    result = run("--embedder", "nope:1", "init")
    assert result.exit_code == 1
    assert "unknown embedder" in result.stderr
    assert "Traceback" not in result.output


def _seed(path: Path) -> None:
    with Store(path, embedder=HashEmbedder(64)) as store:
        store.put_source("note", "deploy", [Chunk("We deploy with make ship on Fridays.")])
        store.put_source("note", "vpn", [Chunk("The VPN needs MFA since March.")])


def test_search_across_sources_json_shape(run: Run, cli_db: Path) -> None:
    run("init")
    _seed(cli_db)
    hits = as_json(run("search", "how do we deploy?", "--json", "-n", "1"))
    assert len(hits) == 1
    assert hits[0]["source"] == "deploy"
    assert 0.0 <= hits[0]["score"] <= 1.0
    assert {"kind", "collection", "text", "metadata"} <= set(hits[0])
    assert "embedding" not in hits[0]


@pytest.mark.parametrize(
    "query",
    ['"unbalanced', "deploy AND (vpn OR", "NEAR(a b)", "col:value*", "-", "?", "🙂 ' \" ^"],
)
def test_search_with_fts_syntax_in_the_query_works(run: Run, cli_db: Path, query: str) -> None:
    run("init")
    _seed(cli_db)
    result = run("search", query, "--json")
    assert result.exit_code == 0, result.output


def test_search_kind_filter_and_human_output(run: Run, cli_db: Path) -> None:
    run("init")
    _seed(cli_db)
    result = run("search", "VPN MFA", "--kind", "note")
    assert result.exit_code == 0
    assert "vpn" in result.stdout and "MFA" in result.stdout
    assert as_json(run("search", "VPN", "--kind", "code", "--json")) == []


def test_search_bad_limit_is_a_user_error(run: Run) -> None:
    run("init")
    result = run("search", "x", "--limit", "0")
    assert result.exit_code == 1
    assert "limit" in result.stderr


def test_search_bad_time_is_a_user_error(run: Run) -> None:
    run("init")
    result = run("search", "x", "--since", "last tuesday")
    assert result.exit_code == 1
    assert "ISO 8601" in result.stderr
    assert "note:" not in result.stderr  # not "searching events" before the error


def test_enrich_json_and_empty_memory(run: Run) -> None:
    run("init")
    data = as_json(run("enrich", "what is the capital of Peru?", "--json"))
    assert data == {"prompt": "what is the capital of Peru?", "context": ""}


def test_enrich_finds_a_kb_document(run: Run, tmp_path: Path) -> None:
    doc = tmp_path / "rollback.md"
    doc.write_text("# Rollback\n\nTo roll back a deploy, run make rollback VERSION=previous.\n")
    run("init")
    assert run("kb", "add", str(doc)).exit_code == 0
    result = run("enrich", "how do I roll back a deploy with make rollback?")
    assert result.exit_code == 0
    assert "make rollback" in result.stdout


def test_enrich_reads_a_long_prompt_from_stdin(run: Run, tmp_path: Path) -> None:
    # a 190 kB paste failed in the shell ("Argument list too long") before reaching us
    doc = tmp_path / "rollback.md"
    doc.write_text("# Rollback\n\nTo roll back a deploy, run make rollback VERSION=previous.\n")
    run("init")
    run("kb", "add", str(doc))
    paste = "Traceback (most recent call last):\n" + "  frame line\n" * 20_000
    prompt = paste + "how do I roll back a deploy with make rollback?"
    result = run("enrich", "-", "--json", input=prompt)
    assert result.exit_code == 0, result.output
    data = as_json(result)
    assert data["prompt"] == prompt and "make rollback" in data["context"]
    binary = run("enrich", "-", input=b"\x00\x01\x02PNG")
    assert binary.exit_code == 1 and "enrich takes a text prompt" in binary.stderr


def test_enrich_reads_yesterday_in_the_zone_given(run: Run, cli_db: Path) -> None:
    run("init")
    hour = yesterday_only_in(ZoneInfo("Asia/Tokyo"))  # not yesterday in UTC, the suite's
    assert (
        run("events", "log", "Shipped the billing export", "--at", hour.isoformat()).exit_code == 0
    )
    assert "billing export" not in run("enrich", "what happened yesterday?").stdout
    result = run("enrich", "what happened yesterday?", "--tz", "Asia/Tokyo")
    assert result.exit_code == 0 and "billing export" in result.stdout
    result = run("enrich", "what happened yesterday?", "--tz", "Mars/Olympus")
    assert result.exit_code == 1 and "unknown time zone 'Mars/Olympus'" in result.stderr


def test_reembed_switches_the_file_to_the_new_model(run: Run, cli_db: Path) -> None:
    run("init")
    _seed(cli_db)
    report = as_json(run("reembed", "--embedder", "hash:32", "--json"))
    assert report["old_embedder"] == "hash:64"
    assert report["new_embedder"] == "hash:32"
    assert report["chunks"] == 2 and report["pending"] == 0
    stats = as_json(run("stats", "--json"))
    assert (stats["embedder"], stats["dim"]) == ("hash:32", 32)
    hits = as_json(run("search", "VPN MFA", "--mode", "vector", "--json", "-n", "1"))
    assert hits[0]["source"] == "vpn"


def test_check_reports_a_consistent_file(run: Run, cli_db: Path) -> None:
    run("init")
    _seed(cli_db)
    data = as_json(run("check", "--json"))
    assert data["ok"] is True and data["chunks"] == 2 and data["problems"] == []
    assert "ok" in run("check").stdout


def test_compact_drops_unused_vectors_and_reports_the_sizes(run: Run, cli_db: Path) -> None:
    run("init")
    _seed(cli_db)
    with Store(cli_db, embedder=HashEmbedder(64)) as store:
        store.delete_source("note", "vpn")
    data = as_json(run("compact", "--json"))
    assert data["vectors_dropped"] == 1
    assert 0 < data["bytes_after"] <= data["bytes_before"]
    assert "dropped 0 unused cached vectors" in run("compact").stdout
    assert as_json(run("check", "--json"))["ok"] is True


def test_reembed_needs_a_model(run: Run) -> None:
    run("init")
    result = run("reembed")
    assert result.exit_code == 2
    assert "--embedder" in result.stderr


def test_debug_shows_the_traceback(run: Run) -> None:
    run("init")
    result = run("--debug", "search", "x", "--limit", "0")
    assert result.exit_code == 1
    assert result.exception is not None  # re-raised, so click's runner sees it


def _commands(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = []
    for name, command in group.commands.items():
        found.append((*prefix, name))
        if isinstance(command, click.Group):
            found.extend(_commands(command, (*prefix, name)))
    return found


ALL_COMMANDS = _commands(cli)


def test_every_required_command_exists() -> None:
    names = {" ".join(c) for c in ALL_COMMANDS}
    expected = {
        "init", "stats", "check", "compact", "search", "enrich", "reembed", "export", "import", "serve-mcp", "eval",
        "kb add", "kb ingest", "kb search", "kb get", "kb rm", "kb list", "kb watch",
        "events log", "events search", "events list", "events rm", "events prune",
        "events subjects", "code index", "code search", "code symbol", "code outline",
        "code refs", "code projects", "code rm", "code watch",
    }  # fmt: skip
    assert expected <= names, sorted(expected - names)


@pytest.mark.parametrize("command", [(), *ALL_COMMANDS], ids=lambda c: " ".join(c) or "root")
def test_every_help_has_an_example(run: Run, command: tuple[str, ...]) -> None:
    result = run(*command, "--help")
    assert result.exit_code == 0
    assert "Example" in result.stdout, result.stdout
