"""The CLI with ``--url`` / ``REMEMBRANCES_URL``: the same commands, the same output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from remembrances.cli import cli

from .conftest import REPO, Server, ServerFactory

Run = Callable[..., Result]


@pytest.fixture
def served(serve: ServerFactory, tmp_path: Path) -> Iterator[Server]:
    server = serve(db=tmp_path / "served.db")
    repo = server.root / "app"
    repo.mkdir()
    (repo / "upload.py").write_text(
        "class Uploader:\n"
        "    def upload_file(self, path):\n"
        '        """Send one file, retrying on failure."""\n'
        "        return retry(lambda: self.send(path))\n\n\n"
        "def retry(fn):\n    return fn()\n",
        encoding="utf-8",
    )
    notes = server.root / "notes"
    notes.mkdir()
    (notes / "deploy.md").write_text("# Deploys\n\nThe VPN needs MFA first.\n", encoding="utf-8")
    yield server


def both(runner: CliRunner, server: Server, local_db: Path, *args: str, input: str | None = None
         ) -> tuple[Result, Result]:  # fmt: skip
    """The command on a local file, then the same command through the server."""
    local = runner.invoke(cli, ["--db", str(local_db), *args], input=input)
    remote = runner.invoke(cli, ["--url", server.url, *args], input=input)
    return local, remote


def same(local: Result, remote: Result) -> str:
    assert local.exit_code == remote.exit_code, (local.output, remote.output)
    assert remote.stdout == local.stdout
    return remote.stdout


WRITES: list[tuple[str, ...]] = [
    ("kb", "add", "-", "--source", "it/vpn", "--title", "VPN", "--meta", "team=ops"),
    ("events", "log", "Alice fixed the upload retry bug", "--subject", "uploads",
     "--at", "2026-11-20T15:00:00+00:00"),
    ("events", "log", "Old outage", "--at", "2020-01-01T00:00:00Z"),
]  # fmt: skip

READS: list[tuple[str, ...]] = [
    ("search", "upload retry"),
    ("search", "VPN", "--kind", "kb", "--mode", "text"),
    ("search", "upload retry", "--user", "alice"),  # plain events belong to no user
    ("search", "upload retry", "--session", "s1"),
    ("enrich", "how do I fix the upload retry in Uploader?"),
    ("enrich", "how do I fix the upload retry in Uploader?", "--project", "app"),
    ("kb", "search", "VPN MFA"),
    ("kb", "get", "it/vpn"),
    ("kb", "list"),
    ("events", "search", "upload", "--subject", "uploads"),
    ("events", "search", "upload", "--mode", "text", "--min-score", "0.1"),
    ("events", "list", "-n", "5"),
    ("events", "subjects"),
    ("events", "sessions"),
    ("events", "sessions", "--user", "alice"),
    ("code", "search", "upload file retry", "--project", "app"),
    ("code", "search", "upload", "--mode", "text", "--min-score", "0.1"),
    ("code", "symbol", "Uploader.upload_file"),
    ("code", "outline", "upload.py", "--project", "app"),
    ("code", "refs", "retry", "--project", "app"),
    ("code", "projects"),
    ("check",),
]


def test_every_command_prints_the_same_through_a_server(
    runner: CliRunner, served: Server, tmp_path: Path
) -> None:
    local_db = tmp_path / "local.db"
    for args in WRITES:
        local, remote = both(runner, served, local_db, *args, input="The VPN needs MFA.")
        same(local, remote)
    for args in (
        ("kb", "ingest", str(served.root / "notes"), "--collection", "notes"),
        ("code", "index", str(served.root / "app"), "--project", "app", "--json"),
    ):
        local, remote = both(runner, served, local_db, *args)
        assert local.exit_code == remote.exit_code == 0, (local.output, remote.output)
        if "--json" in args:  # timings differ from run to run; everything else must not
            mine, theirs = json.loads(local.stdout), json.loads(remote.stdout)
            mine.pop("timings"), theirs.pop("timings")
            assert mine == theirs
        else:
            same(local, remote)

    # Reads: the served file read directly, and through the server.
    for args in READS:
        for extra in ((), ("--json",)):
            local, remote = both(runner, served, served.db, *args, *extra)
            assert local.exit_code == 0, local.output
            out = same(local, remote)
            assert out.strip() or args[0] == "enrich", args  # something was compared
    stats_local, stats_remote = both(runner, served, served.db, "stats", "--json")
    # as docs/http.md says: the one field that differs is the answering process's index
    mine, theirs = json.loads(stats_local.stdout), json.loads(stats_remote.stdout)
    assert mine.pop("index_bytes") == 0 and theirs.pop("index_bytes") > 0
    assert mine == theirs

    # Deletes and errors, on two files with the same history.
    for args in (
        ("kb", "rm", "it/vpn"),
        ("kb", "rm", "it/vpn"),  # gone: the same error, the same exit code
        ("kb", "get", "it/vpn"),
        ("events", "rm", "1"),
        ("events", "rm", "1"),
        ("events", "prune", "--older-than", "2021-01-01T00:00:00Z"),
        ("events", "forget", "--user", "alice"),
        ("events", "forget", "--session", "s1", "--json"),
        ("events", "forget", "--user", "alice "),
        ("code", "rm", "app"),
        ("code", "outline", "upload.py", "--project", "app"),
        ("events", "log", "", "--subject", "x"),
        ("search", "x", "--since", "not a time"),
        ("enrich", "fix the upload retry", "--project", "nope"),  # names the projects
    ):
        local, remote = both(runner, served, local_db, *args)
        same(local, remote)
        assert remote.stderr == local.stderr, args


def test_a_project_named_with_slashes_is_removed_through_a_server(
    runner: CliRunner, served: Server, tmp_path: Path
) -> None:
    local_db = tmp_path / "local.db"
    index = ("code", "index", str(served.root / "app"), "--project", "acme/app", "--json")
    local, remote = both(runner, served, local_db, *index)
    assert local.exit_code == remote.exit_code == 0, (local.output, remote.output)
    local, remote = both(runner, served, local_db, "code", "rm", "acme/app")
    assert same(local, remote) == "removed project acme/app (1 files)\n"
    local, remote = both(runner, served, local_db, "code", "rm", "acme/app")  # gone: same error
    same(local, remote)
    assert local.exit_code != 0 and remote.stderr == local.stderr


def test_enrich_output_matches_with_the_hook_in_a_fresh_process(
    served: Server, tmp_path: Path
) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO), "REMEMBRANCES_EMBEDDER": "hash:64"}
    for name in ("REMEMBRANCES_DB", "REMEMBRANCES_TOKEN"):
        env.pop(name, None)
    command = [sys.executable, "-m", "remembrances.cli", "--db", str(served.db)]

    def run(*args: str, url: str | None = None) -> subprocess.CompletedProcess[str]:
        extra = {"REMEMBRANCES_URL": url} if url else {}
        return subprocess.run(
            [*command, *args], env={**env, **extra}, capture_output=True, text=True, timeout=120
        )

    empty = run("kb", "add", "-", "--source", "retries", url=served.url)  # no stdin text
    assert empty.returncode == 1 and empty.stderr == "Error: document 'retries' is empty\n"
    note = tmp_path / "note.md"
    note.write_text("Uploads retry three times with exponential backoff.", encoding="utf-8")
    assert run("kb", "add", str(note), "--source", "retries", url=served.url).returncode == 0
    prompt = "how many times do uploads retry?"
    through_server = run("enrich", prompt, url=served.url)
    direct = run("enrich", prompt)
    assert through_server.returncode == direct.returncode == 0, through_server.stderr
    assert "exponential backoff" in through_server.stdout
    assert through_server.stdout == direct.stdout


def test_commands_on_a_local_file_refuse_a_url(runner: CliRunner, tmp_path: Path) -> None:
    for args in (("init",), ("export", "-"), ("reembed", "--embedder", "hash:32")):
        result = runner.invoke(cli, ["--url", "http://127.0.0.1:9", *args])
        assert result.exit_code == 2, result.output
        assert "works on a local file" in result.stderr
    assert not list(tmp_path.iterdir())


def test_an_unreachable_server_is_a_one_line_error(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["--url", "http://127.0.0.1:9", "stats"])
    assert result.exit_code == 1
    assert "cannot reach the server at http://127.0.0.1:9" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    bad = runner.invoke(cli, ["--url", "ftp://x", "stats"])
    assert bad.exit_code == 1 and "is not a server URL" in bad.stderr


def test_the_token_comes_from_the_environment(
    runner: CliRunner, serve: ServerFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = serve("--token", "tok-123")
    monkeypatch.setenv("REMEMBRANCES_URL", server.url)
    refused = runner.invoke(cli, ["stats"])
    assert refused.exit_code == 1 and "bearer token" in refused.stderr
    monkeypatch.setenv("REMEMBRANCES_TOKEN", "tok-123")
    allowed = runner.invoke(cli, ["stats", "--json"])
    assert allowed.exit_code == 0, allowed.output
    assert json.loads(allowed.stdout)["embedder"] == "hash:64"
