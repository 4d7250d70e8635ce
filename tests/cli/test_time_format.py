"""One time format: aware datetimes in Python, ISO 8601 UTC in JSON and in text."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import remembrances
from remembrances.mcp import text as mcp_text

from .conftest import Run, as_json


def _is_iso_utc(value: object) -> bool:
    return isinstance(value, str) and datetime.fromisoformat(value).utcoffset() is not None


def test_python_records_carry_aware_datetimes(tmp_path: Path) -> None:
    repo = tmp_path / "app"
    repo.mkdir()
    (repo / "a.py").write_text("def f():\n    return 1\n")
    with remembrances.open(tmp_path / "m.db", embedder="hash:64") as memory:
        memory.kb.add("# Note\n\nsome text", source="note.md")
        doc = memory.kb.get("note.md")
        assert isinstance(doc.created_at, datetime) and doc.created_at.tzinfo is not None
        assert abs((datetime.now(UTC) - doc.updated_at).total_seconds()) < 600
        assert _is_iso_utc(doc.to_dict()["created_at"])
        memory.code.index(repo, project="app")
        (project,) = memory.code.projects()
        assert isinstance(project.indexed_at, datetime) and project.indexed_at.tzinfo is not None
        assert _is_iso_utc(memory.code.stats("app").to_dict()["indexed_at"])


def test_cli_json_shows_iso_times_everywhere(run: Run, tmp_path: Path) -> None:
    note = tmp_path / "note.md"
    note.write_text("# Note\n\nthe payment service notes")
    run("kb", "add", str(note))
    run("events", "log", "deployed the payment service", "--subject", "ops",
        "--at", "2026-11-01T09:00:00Z")  # fmt: skip
    repo = tmp_path / "app"
    repo.mkdir()
    (repo / "a.py").write_text("def f():\n    return 1\n")
    run("code", "index", str(repo))
    (doc,) = as_json(run("kb", "list", "--json"))
    assert _is_iso_utc(doc["created_at"]) and _is_iso_utc(doc["updated_at"])
    hits = as_json(run("search", "payment service", "--kind", "event", "--json"))
    assert hits[0]["ts"] == "2026-11-01T09:00:00+00:00"
    (project,) = as_json(run("code", "projects", "--json"))
    assert _is_iso_utc(project["indexed_at"])
    exported = tmp_path / "out.jsonl"
    run("export", str(exported))
    header = json.loads(exported.read_text().splitlines()[0])
    assert _is_iso_utc(header["exported_at"])


def test_text_for_models_shows_no_epoch_floats() -> None:
    hit = {"kind": "event", "source": "7", "ts": 1761987600.0, "text": "deployed",
           "metadata": {"subject": "ops"}}  # fmt: skip
    message, data = mcp_text.hits([hit])
    assert "1761987600" not in message and "2025-11-01 09:00 UTC" in message
    assert data[0]["at"] == "2025-11-01T09:00:00+00:00"
    summary, _ = mcp_text.summary({"indexed_at": 1761987600.0, "name": "app"})
    assert "indexed_at: 2025-11-01T09:00:00+00:00" in summary
