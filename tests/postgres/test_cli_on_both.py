"""The CLI with ``--db`` naming a SQLite file or a ``postgresql://`` memory: the same
commands give the same answers. One memory per backend, filled through the CLI
once; each test reads or writes it as a user would."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from remembrances.cli import cli

pytestmark = pytest.mark.backends("sqlite", "postgresql")

Run = Callable[..., Result]

CODE = (
    "class RetryPolicy:\n"
    "    def delay(self, attempt):\n"
    "        return 0.5 * 2 ** attempt\n\n\n"
    "def fetch_with_retry(client, url):\n"
    "    for attempt in range(6):\n"
    "        client.get(url)\n"
)


@pytest.fixture(scope="module")
def run(module_location: str, tmp_path_factory: pytest.TempPathFactory) -> Run:
    """``run("kb", "search", "x", "--json")`` on this backend's memory, filled once."""
    runner = CliRunner()
    env = {"REMEMBRANCES_EMBEDDER": "hash:64", "REMEMBRANCES_DB": None}

    def invoke(*args: str, input: str | None = None) -> Result:
        return runner.invoke(cli, ["--db", module_location, *args], input=input, env=env)

    files = tmp_path_factory.mktemp("cli-files")
    (files / "retries.md").write_text("# Retries\n\nBack off exponentially on HTTP 429.\n")
    (files / "repo").mkdir()
    (files / "repo" / "retry.py").write_text(CODE)
    for args in (
        ("init",),
        ("kb", "add", str(files / "retries.md")),
        ("events", "log", "Payment API answered 429 for 20 minutes", "--subject", "incident"),
        ("code", "index", str(files / "repo"), "--project", "shop"),
    ):
        result = invoke(*args)
        assert result.exit_code == 0, (args, result.output)
    return invoke


def as_json(result: Result) -> Any:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_each_layer_finds_what_was_added(run: Run) -> None:
    [doc] = as_json(run("kb", "search", "exponential backoff", "--json"))[:1]
    assert doc["source"].endswith("retries.md")
    [event] = as_json(run("events", "search", "payment 429", "--json"))[:1]
    assert event["subject"] == "incident"
    code = as_json(run("code", "search", "fetch_with_retry", "--json"))
    assert code[0]["qualified_name"] == "fetch_with_retry"
    hits = as_json(run("search", "429", "--json"))
    assert {h["kind"] for h in hits} >= {"kb", "event"}


def test_enrich_brings_the_memory_that_helps(run: Run) -> None:
    data = as_json(run("enrich", "how do we handle HTTP 429 from the payment API?", "--json"))
    assert "Payment API answered 429" in data["context"]
    assert as_json(run("enrich", "what's the capital of Australia?", "--json"))["context"] == ""


def test_stats_and_check(run: Run, backend: str) -> None:
    stats = as_json(run("stats", "--json"))
    assert stats["embedder"] == "hash:64" and stats["chunks_by_kind"].keys() >= {"kb", "event"}
    assert stats["path"].startswith("postgresql://") == (backend == "postgresql")
    check = as_json(run("check", "--json"))
    assert check["ok"] and check["problems"] == []


def test_writes_and_errors_read_the_same(run: Run, tmp_path: Path) -> None:
    added = run("kb", "add", "-", "--source", "it/vpn.md", input="The VPN needs MFA.")
    assert added.exit_code == 0, added.output
    assert as_json(run("kb", "get", "it/vpn.md", "--json"))["text"] == "The VPN needs MFA."
    missing = run("kb", "get", "nowhere.md")
    assert missing.exit_code == 1 and "Traceback" not in missing.output
    wrong = run("--embedder", "hash:32", "kb", "search", "vpn")
    assert wrong.exit_code == 1 and "hash:64" in wrong.output  # the model guard, one line
