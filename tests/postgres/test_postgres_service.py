"""The service on a PostgreSQL memory, reached the ways a user names it."""

from __future__ import annotations

from pathlib import Path

import pytest

import remembrances
from remembrances.embeddings import HashEmbedder


def test_remembrances_db_naming_a_server_opens_that_memory(
    postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``REMEMBRANCES_DB=postgresql://...`` and ``remembrances.open()``: the memory on
    the server, not a new SQLite file named after the URL (whose enrich gave '')."""
    with remembrances.open(postgres_url, embedder=HashEmbedder(64)) as svc:
        svc.kb.add("The deploy pipeline uses blue-green releases on Kubernetes.", source="d.md")
        svc.events.log("Deploy failed: the Kubernetes secret was missing.", subject="ops")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("REMEMBRANCES_DB", postgres_url)
    with remembrances.open() as svc:
        assert svc.store.engine.dialect == "postgresql"
        assert svc.embedder is not None and svc.embedder.name == "hash:64"
        context = svc.enrich_context("why did the kubernetes deploy fail?")
    assert "blue-green releases" in context and "secret was missing" in context
    assert list(tmp_path.iterdir()) == []  # no file was made in the working directory
