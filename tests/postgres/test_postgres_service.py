"""The service on a PostgreSQL memory, reached the ways a user names it."""

from __future__ import annotations

from pathlib import Path

import pytest

import remembrances
from remembrances.embeddings import HashEmbedder
from remembrances.errors import InvalidInputError, NotFoundError


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


def test_a_lookup_with_a_nul_finds_nothing_on_both_engines(
    postgres_url: str, tmp_path: Path
) -> None:
    """PostgreSQL text holds no NUL, so nothing stored has one: a lookup with one finds
    nothing, as on SQLite, instead of failing with "cannot store this value"."""
    project = tmp_path / "proj"
    project.mkdir()
    (project / "a.py").write_text("def deploy():\n    return 1\n")
    for location in (str(tmp_path / "m.db"), postgres_url):
        with remembrances.open(location, embedder=HashEmbedder(64)) as svc:
            svc.kb.add("deploy notes", source="d.md")
            svc.events.log("deployed", subject="ops")
            svc.code.index(project, project="proj")
            with pytest.raises(NotFoundError):
                svc.kb.get("d.md\x00")
            assert svc.kb.list(collection="default\x00") == []
            with pytest.raises(InvalidInputError, match="control character"):
                svc.events.list(subject="ops\x00")  # a name typed by people: refused
            with pytest.raises(InvalidInputError, match="control character"):
                svc.code.find_symbol("deploy\x00")
            assert svc.store.search("deploy", collection=["default\x00"]) == []
            assert svc.store.search("deploy", source="d.md\x00") == []
            assert svc.kb.delete("d.md\x00") is False  # a delete deletes nothing
            assert svc.kb.delete_collection("default\x00") == 0
            assert svc.store.delete_source("kb", "d.md\x00") == 0
            assert svc.kb.get("d.md").text == "deploy notes"
            # not even a name with U+FFFF in that place, which a lookup reads NUL as
            svc.kb.add("keep me", source="a\uffff")
            svc.kb.add("keep me too", source="doc", collection="c\uffff")
            assert svc.kb.delete("a\x00") is False
            assert svc.kb.delete("doc", collection="c\x00") is False
            assert svc.kb.delete_collection("c\x00") == 0
            assert svc.kb.get("doc", collection="c\uffff").text == "keep me too"
            assert svc.kb.get("a\uffff").text == "keep me"
    with (
        remembrances.open(postgres_url) as svc,
        pytest.raises(InvalidInputError, match="cannot store text with NUL"),
    ):
        svc.kb.add("text with a \x00 inside", source="n.md")  # a write says why
