"""Results without noise: no evidence-free hits, no empty columns, nothing dropped silently."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

import remembrances

from .conftest import Run, as_json


def test_event_search_leaves_out_hits_with_no_evidence(tmp_path: Path) -> None:
    with remembrances.open(tmp_path / "m.db", embedder="hash:64") as memory:
        memory.events.log("deployed the payment service", subject="ops")
        for i in range(5):
            memory.events.log(f"lunch order number {i} arrived", subject="food")
        hits = memory.events.search("payment service deployed")
        assert hits and all((h.score or 0) > 0 for h in hits)
        assert hits[0].content == "deployed the payment service"
        every = memory.events.search("payment service deployed", min_score=0.0)
        assert len(every) >= len(hits)  # asked for: all of them


def test_search_since_says_it_covers_events_only(run: Run, tmp_path: Path) -> None:
    note = tmp_path / "deploy.md"
    note.write_text("# Deploy\n\nThe payment service deploy runbook.\n")
    run("kb", "add", str(note))
    run("events", "log", "deployed the payment service", "--at", "2026-11-01T09:00:00Z")
    result = run("search", "payment service", "--since", "2026-10-01T00:00:00Z")
    assert result.exit_code == 0, result.output
    assert "--since/--until select events only" in result.stderr
    quiet = run("search", "payment service", "--since", "2026-10-01T00:00:00Z", "--kind", "event")
    assert "select events only" not in quiet.stderr
    hits = as_json(run("search", "payment service", "--since", "2026-10-01T00:00:00Z", "--json"))
    assert {h["kind"] for h in hits} == {"event"}


def test_events_list_and_log_have_no_empty_score_column(run: Run) -> None:
    logged = run("events", "log", "deployed the payment service", "--subject", "ops")
    assert "score" not in logged.stdout
    listed = run("events", "list")
    assert "score" not in listed.stdout and "deployed" in listed.stdout
    found = run("events", "search", "payment service")
    assert "score" in found.stdout


def test_code_index_counts_skipped_files_once(run: Run, tmp_path: Path) -> None:
    repo = tmp_path / "app"
    repo.mkdir()
    (repo / "a.py").write_text("def f():\n    return 1\n")
    (repo / "blob.py").write_bytes(b"\x00\x01binary")
    shown = run("code", "index", str(repo))
    assert shown.exit_code == 0, shown.output
    lines = shown.stdout.splitlines()
    assert any("files_skipped" in line for line in lines)
    assert not any(line.split("│")[1].strip() == "skipped" for line in lines if "│" in line)


@pytest.mark.timeout(60)
def test_serve_mcp_http_prints_its_url(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nobody uses now
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, "-m", "remembrances.cli", "--db", str(tmp_path / "m.db"),
         "--embedder", "hash:64", "serve-mcp", "--http", "--port", str(port)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
    )  # fmt: skip
    try:
        assert process.stderr is not None
        deadline = time.monotonic() + 30
        line = ""
        while time.monotonic() < deadline and "http://" not in line:
            line = process.stderr.readline()
        assert "serving MCP" in line and f"http://127.0.0.1:{port}/mcp" in line
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_a_search_whose_hits_all_look_unrelated_says_so(run: Run, cli_db: Path) -> None:
    # Real scores (the local embedder): they estimate the chance a hit is relevant.
    cli_db.parent.mkdir(parents=True, exist_ok=True)
    with remembrances.open(cli_db, embedder="local") as memory:
        memory.kb.add("Deploys run every Friday from the release branch.", source="deploys.md")
        memory.kb.add("Production deploys are frozen during the holidays.", source="freeze.md")
        memory.kb.add("The cafeteria serves pizza on Mondays.", source="food.md")
    said = "nothing here looks related"
    unrelated = run("--embedder", "local", "search", "what is the capital of Peru?")
    assert unrelated.exit_code == 0, unrelated.output
    assert said in unrelated.stdout and "the best score is 0.00" in unrelated.stdout
    related = run("--embedder", "local", "kb", "search", "when are deploys frozen?")
    assert related.exit_code == 0 and "freeze.md" in related.stdout
    assert said not in related.stdout
    # only hybrid scores mean that; --json output stays data
    assert said not in run("--embedder", "local", "search", "Peru", "--mode", "text").stdout
    assert said not in run("--embedder", "local", "search", "Peru", "--json").stdout


def test_an_event_search_whose_hits_all_look_unrelated_says_so(run: Run, cli_db: Path) -> None:
    # events search listed every event for "what's the weather in Lisbon?" with no word
    cli_db.parent.mkdir(parents=True, exist_ok=True)
    with remembrances.open(cli_db, embedder="local") as memory:
        memory.events.log("Rolled back the 2.3 deploy: the cache warm-up crashed the API pods")
        memory.events.log("Decided to pin tomlkit to 0.13 in the release script")
    said = "under the enricher's events gate"
    unrelated = run("--embedder", "local", "events", "search", "what's the weather in Lisbon?")
    assert unrelated.exit_code == 0, unrelated.output
    assert said in unrelated.stdout
    related = run("--embedder", "local", "events", "search", "why did the deploy roll back?")
    assert related.exit_code == 0 and "Rolled back" in related.stdout
    assert said not in related.stdout
    weather = ["events", "search", "weather in Lisbon"]
    assert said not in run("--embedder", "local", *weather, "--json").stdout
    assert said not in run("--embedder", "local", *weather, "--mode", "text").stdout
