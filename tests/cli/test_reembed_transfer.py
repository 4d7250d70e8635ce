"""remembrances.reembed and remembrances.transfer as Python APIs, on real files and on
a real PostgreSQL server (every test reaching ``location`` runs on both)."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path

import pytest

import remembrances
from remembrances import Chunk, InvalidVectorError
from remembrances.embeddings import HashEmbedder
from remembrances.reembed import reembed
from remembrances.transfer import export_jsonl, import_jsonl
from tests.conftest import postgres_memory

pytestmark = pytest.mark.backends("sqlite", "postgresql")


def _store_with_pending(path: Path | str) -> None:
    with remembrances.open(path, embedder=HashEmbedder(64)) as svc:
        svc.store.put_source("note", "a", [Chunk("alpha beta"), Chunk("gamma delta")])
        svc.store.put_source("note", "b", [Chunk("epsilon zeta")], embed=False)
        svc.store.put_source("note", "c", [Chunk("alpha beta")])  # same text as a/0


def test_reembed_swaps_every_vector_and_both_vector_engines_agree(location: str) -> None:
    path = location
    _store_with_pending(path)
    seen: list[tuple[str, int, int | None]] = []
    report = reembed(path, HashEmbedder(32), progress=lambda *a: seen.append(a))
    assert (report.old_embedder, report.new_embedder, report.dim) == ("hash:64", "hash:32", 32)
    assert report.chunks == 4 and report.texts == 3 and report.pending == 0
    assert seen[-1] == ("embedding", 3, 3)
    with remembrances.open(path) as svc:  # reopens with the recorded model
        assert svc.embedder is not None and svc.embedder.name == "hash:32"
        assert svc.check().problems == []  # FTS, vec0, blobs and the model record agree
        memory = svc.store.search("epsilon zeta", mode="vector", limit=1)
        vec0 = svc.store.search("epsilon zeta", mode="vector", limit=1, engine="vec0")
        assert memory[0].source == vec0[0].source == "b"
        assert memory[0].score == pytest.approx(vec0[0].score, abs=1e-5)


def test_reembed_again_uses_the_cache(location: str) -> None:
    path = location
    _store_with_pending(path)
    reembed(path, HashEmbedder(32))
    reembed(path, HashEmbedder(64))
    back = reembed(path, HashEmbedder(32))
    assert back.embedded == 0 and back.cached == 3


class BrokenEmbedder(HashEmbedder):
    """A real embedder whose vectors come back with the wrong length."""

    name = "broken:8"

    def embed_documents(self, texts):  # type: ignore[no-untyped-def]
        return [[0.1] * 5 for _ in texts]


def test_reembed_failure_leaves_the_file_on_its_old_model(location: str) -> None:
    path = location
    _store_with_pending(path)
    with pytest.raises(InvalidVectorError):
        reembed(path, BrokenEmbedder(8))
    with remembrances.open(path) as svc:
        assert svc.stats()["embedder"] == "hash:64"
        assert svc.store.search("alpha beta", mode="vector", limit=1)[0].source in ("a", "c")


def test_export_import_roundtrip_of_directly_stored_chunks(
    location: str, backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if backend == "postgresql":  # into a second memory on the same server
        target = request.getfixturevalue("postgres_server")
        with postgres_memory(target) as url:
            _roundtrip(location, url)
    else:
        _roundtrip(location, tmp_path / "b.db")


def _roundtrip(source: str, target: Path | str) -> None:
    with remembrances.open(source, embedder="hash:64") as svc:
        svc.store.put_source(
            "note", "n1", [Chunk("first 🙂", metadata={"k": 1}, ts=1_700_000_000.0)],
            collection="c1",
        )  # fmt: skip
        buffer = io.StringIO()
        report = export_jsonl(svc, buffer)
    assert report.counts == {"chunks": 1}
    with remembrances.open(target, embedder="hash:16") as svc:
        imported = import_jsonl(svc, buffer.getvalue().splitlines())
        assert imported.counts == {"chunks": 1}
        [chunk] = svc.store.get_source("note", "n1", collection="c1")
        assert (chunk.text, chunk.metadata) == ("first 🙂", {"k": 1})
        assert chunk.ts == datetime.fromtimestamp(1_700_000_000, UTC)  # aware, UTC
        assert '"ts": 1700000000.0' in buffer.getvalue()  # the export keeps epoch seconds
        assert chunk.has_embedding


def test_an_imported_folder_of_documents_is_ingested_again_without_copies(
    location: str, tmp_path: Path
) -> None:
    # an export keeps the documents' text and metadata, not their link to the files;
    # ingesting the folder into the imported memory stored every document twice
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "deploy.md").write_text("# Deploys\n\nDeploys run every Friday.\n")
    (docs / "notes.txt").write_text("Backups run at 02:00 UTC.\n")
    buffer = io.StringIO()
    with remembrances.open(tmp_path / "a.db", embedder="hash:64") as svc:
        svc.kb.ingest(docs)
        svc.kb.add(
            "= Rollback\n\nRoll back with the previous tag.\n",
            source="howto.txt",
            format="asciidoc",
        )
        export_jsonl(svc, buffer)
    with remembrances.open(location, embedder="hash:64") as svc:
        import_jsonl(svc, buffer.getvalue().splitlines())
        assert svc.kb.get("howto.txt").format == "asciidoc"  # not the extension's guess
        report = svc.kb.ingest(docs)
        assert report.added == [] and report.embedded == 0
        assert sorted(d.source for d in svc.kb.list()) == ["deploy.md", "howto.txt", "notes.txt"]
        assert svc.kb.ingest(docs).unchanged == ["deploy.md", "notes.txt"]  # linked again
        (docs / "deploy.md").write_text("# Deploys\n\nDeploys run every Tuesday.\n")
        assert svc.kb.ingest(docs).updated == ["deploy.md"]
        assert "Tuesday" in svc.kb.get("deploy.md").text
    # a document added by hand under a file's name is still not taken by the file
    with remembrances.open(tmp_path / "c.db", embedder="hash:64") as svc:
        svc.kb.add("Written by hand.", source="deploy.md")
        svc.kb.ingest(docs)
        assert svc.kb.get("deploy.md").text == "Written by hand."
        assert "Tuesday" in svc.kb.get(str(docs / "deploy.md")).text


def test_import_skips_code_projects_whose_root_is_gone(tmp_path: Path) -> None:
    lines = [
        '{"type": "remembrances-export", "version": 1}',
        '{"type": "code_project", "name": "gone", "root": "/nonexistent/place"}',
        '{"type": "future_thing"}',
    ]
    with remembrances.open(tmp_path / "m.db", embedder="hash:16") as svc:
        report = import_jsonl(svc, lines)
    assert report.counts == {}
    assert [s["reason"][:8] for s in report.skipped] == ["its root", "unknown "]


def test_reembed_an_empty_file_just_records_the_model(location: str) -> None:
    path = location
    remembrances.open(path, embedder="hash:64").close()
    report = reembed(path, HashEmbedder(16))
    assert (report.chunks, report.texts, report.embedded) == (0, 0, 0)
    with remembrances.open(path) as svc:
        assert svc.stats()["dim"] == 16
        svc.store.put_source("note", "x", [Chunk("now in 16 dims")])
        assert svc.store.search("dims", mode="vector", engine="vec0")[0].source == "x"
