"""``remembrances copy``: a whole memory between SQLite and PostgreSQL, vectors included.

Real files, a real server (the session's pgserver), the real code indexer; the
copy is checked through the public API of both memories, and the vectors by
their bytes (nothing is re-embedded: the copy loads no embedder at all).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import remembrances
from remembrances import (
    Chunk,
    InvalidInputError,
    MemoryExistsError,
    NotAMemoryError,
    NotFoundError,
    RemembrancesService,
    StorageError,
    Store,
)
from remembrances.cli import cli
from remembrances.embeddings import HashEmbedder
from remembrances.memory_copy import copy_memory, layers
from remembrances.postgres.connection import memory_exists

AT = datetime(2026, 11, 20, 9, 30, tzinfo=UTC)
CODE = {
    "app/retry.py": (
        "class RetryPolicy:\n"
        '    """How long to wait between attempts."""\n\n'
        "    def delay(self, attempt):\n        return 0.5 * 2 ** attempt\n\n\n"
        "def fetch_with_retry(client, url, policy=None):\n"
        "    policy = policy or RetryPolicy()\n"
        "    for attempt in range(6):\n        client.get(url)\n        policy.delay(attempt)\n"
    ),
    "app/main.py": "from app.retry import fetch_with_retry\n\n\ndef run(c):\n"
    "    return fetch_with_retry(c, 'https://example.com')\n",
}
CHAT = [
    {"role": "user", "content": "Where did I park the car?"},
    {"role": "assistant", "content": "On level 3 of the Hauptbahnhof garage."},
]


def populate(svc: RemembrancesService, root: Path) -> None:
    """One of everything a memory holds."""
    svc.kb.add(
        "# Retries\n\nBack off exponentially on HTTP 429.\n\n## Jitter\n\nAdd full jitter.",
        source="runbooks/retries.md",
        title="Retry policy",
        metadata={"team": "payments", "reviewed": True},
        collection="runbooks",
    )
    svc.kb.add("Vacation: 28 days a year.", source="handbook/vacation.md")
    svc.events.log(
        "Deployed checkout v2.14; latency rose to 900 ms.",
        subject="deploy",
        at=AT,
        metadata={"service": "checkout"},
    )
    svc.events.log_conversation(CHAT, session="trip-1", user="ana", at=AT)
    for path, text in CODE.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    svc.code.index(root, project="shop")
    svc.store.put_source("notes", "n1", [Chunk("a note stored directly", metadata={"n": 1}, ts=AT)])
    svc.store.put_source("notes", "later", [Chunk("embedded later")], embed=False)


def snapshot(svc: RemembrancesService) -> dict[str, Any]:
    """Everything the public API shows of a memory, ids and times included."""
    store = svc.store
    chunks = {}
    for kind, collection, source in store.sources():
        for c in store.get_source(kind, source, collection=collection):
            chunks[(kind, collection, source, c.position)] = (
                c.text, c.metadata, c.content_hash, c.ts, c.created_at, c.has_embedding,
            )  # fmt: skip
    documents = [d for d in svc.kb.list()]
    return {
        "model": (store.embedder_name, store.dim),
        "chunks": chunks,
        "documents": [(d, svc.kb.get(d.source, collection=d.collection).text) for d in documents],
        "events": [e.to_dict() for e in svc.events.list(limit=100)],
        "turns": [e.to_dict() for e in svc.events.turns("trip-1")],
        "projects": [(p.name, p.root) for p in svc.code.projects()],
        "code": svc.code.stats("shop"),
        "symbols": [s.qualified_name for s in svc.code.find_symbol("fetch_with_retry")],
        "outline": svc.code.outline("app/retry.py", project="shop"),
        "references": svc.code.references("fetch_with_retry", project="shop"),
        "users": svc.code.file_users("shop", ["app/retry.py"]),
    }


def blobs(svc: RemembrancesService) -> dict[tuple[str, str, str, int], bytes]:
    """Each chunk's vector as float32 bytes, by where the chunk is."""
    store = svc.store
    found = {}
    with store.snapshot() as tx:
        for kind, collection, source in store.sources():
            chunks = store.get_source(kind, source, collection=collection)
            vectors = store.engine.vectors(tx, [c.id for c in chunks])
            for c in chunks:
                if c.id in vectors:
                    found[(kind, collection, source, c.position)] = vectors[c.id].tobytes()
    return found


@pytest.mark.parametrize(
    ("source_engine", "destination_engine"),
    [("sqlite", "postgresql"), ("postgresql", "sqlite"), ("sqlite", "sqlite")],
)
def test_everything_comes_across_with_its_vectors(
    source_engine: str, destination_engine: str, tmp_path: Path, postgres_server: str
) -> None:
    import tests.conftest as shared

    with (
        shared.postgres_memory(postgres_server) as src_url,
        shared.postgres_memory(postgres_server) as dst_url,
    ):
        source = src_url if source_engine == "postgresql" else str(tmp_path / "src.db")
        destination = dst_url if destination_engine == "postgresql" else str(tmp_path / "dst.db")
        with remembrances.open(source, embedder=HashEmbedder(64)) as svc:
            populate(svc, tmp_path / "repo")
            before, vectors = snapshot(svc), blobs(svc)
            hits = [(h.kind, h.source) for h in svc.store.search("retry backoff 429", limit=5)]
        seen: list[tuple[str, int, int | None]] = []
        report = copy_memory(source, destination, progress=lambda *a: seen.append(a))

        assert report.chunks == len(before["chunks"]) and report.with_vectors == len(vectors)
        assert report.with_vectors == report.chunks - 1  # the deferred chunk has none yet
        assert report.rows["events"] == 3 and report.rows["code_files"] == 2
        assert seen and seen[-1][1] == seen[-1][2]  # the bar reaches its total
        # Opened without an embedder: the copy recorded the model, and its vectors
        # are the source's bytes.
        with remembrances.open(destination) as copy:
            assert copy.embedder is not None and copy.embedder.name == "hash:64"
            assert snapshot(copy) == before
            assert blobs(copy) == vectors
            assert [
                (h.kind, h.source) for h in copy.store.search("retry backoff 429", limit=5)
            ] == hits
            assert copy.store.backfill_embeddings() == 1  # the deferred one, as at the source
            # New rows get new ids: the copied ids are not handed out again.
            event = copy.events.log("after the copy", subject="deploy")
            assert event.id > max(e["id"] for e in before["events"])
            copy.kb.add("A new note after the copy.", source="new.md")
            (tmp_path / "other").mkdir()
            (tmp_path / "other" / "x.py").write_text("def x():\n    return 1\n")
            copy.code.index(tmp_path / "other", project="other")
            assert copy.check().ok


def test_a_destination_holding_a_memory_is_refused_unless_replaced(
    tmp_path: Path, postgres_url: str
) -> None:
    source = tmp_path / "src.db"
    with remembrances.open(source, embedder=HashEmbedder(64)) as svc:
        svc.kb.add("The source's only note.", source="s.md")
    with remembrances.open(postgres_url, embedder=HashEmbedder(32)) as svc:
        svc.kb.add("What the destination held.", source="old.md")
        svc.events.log("an old event")
    with pytest.raises(MemoryExistsError, match="--replace"):
        copy_memory(source, postgres_url)
    with remembrances.open(postgres_url) as svc:  # untouched
        assert [d.source for d in svc.kb.list()] == ["old.md"]
    report = copy_memory(source, postgres_url, replace=True)
    assert report.replaced
    with remembrances.open(postgres_url) as svc:  # the other model's index was rebuilt
        assert (svc.store.embedder_name, svc.store.dim) == ("hash:64", 64)
        assert [d.source for d in svc.kb.list()] == ["s.md"] and svc.events.count() == 0
        assert svc.kb.search("source note")[0].source == "s.md"


def test_an_empty_destination_is_not_a_memory_to_protect(tmp_path: Path) -> None:
    source, destination = tmp_path / "src.db", tmp_path / "dst.db"
    with remembrances.open(source, embedder=HashEmbedder(64)) as svc:
        svc.kb.add("note", source="n.md")
    remembrances.open(destination, embedder=HashEmbedder(16)).close()  # `init`, nothing else
    copy_memory(source, destination)
    with remembrances.open(destination) as svc:
        assert svc.store.dim == 64 and svc.kb.search("note")[0].source == "n.md"


def test_a_copy_failing_half_way_leaves_no_memory_behind(tmp_path: Path, postgres_url: str) -> None:
    """PostgreSQL refuses text with NUL characters (SQLite stores it): the copy stops at
    that chunk, after many others were written, and nothing of it remains."""
    source = tmp_path / "src.db"
    with remembrances.open(source, embedder=HashEmbedder(64)) as svc:
        for i in range(30):
            svc.kb.add(f"Note number {i} about retries.", source=f"n{i}.md")
        svc.store.put_source("notes", "nul", [Chunk("text with a \x00 inside")])
    with pytest.raises(InvalidInputError):
        copy_memory(source, postgres_url)
    assert not memory_exists(postgres_url)
    # Onto a memory it was told to replace: the old contents stay.
    with remembrances.open(postgres_url, embedder=HashEmbedder(64)) as svc:
        svc.kb.add("kept", source="kept.md")
    with pytest.raises(InvalidInputError):
        copy_memory(source, postgres_url, replace=True)
    with remembrances.open(postgres_url) as svc:
        assert [d.source for d in svc.kb.list()] == ["kept.md"] and svc.store.count() == 1


def test_hostile_sources_and_destinations(tmp_path: Path, postgres_url: str) -> None:
    memory = tmp_path / "m.db"
    with remembrances.open(memory, embedder=HashEmbedder(8)) as svc:
        svc.kb.add("note", source="n.md")
    with pytest.raises(NotFoundError, match="no memory file"):
        copy_memory(tmp_path / "missing.db", tmp_path / "out.db")
    text = tmp_path / "notes.txt"
    text.write_text("not a database")
    with pytest.raises((NotAMemoryError, StorageError)):
        copy_memory(text, tmp_path / "out.db")
    with pytest.raises(NotAMemoryError):  # a server memory that does not exist
        copy_memory(postgres_url, tmp_path / "out.db")
    assert not (tmp_path / "out.db").exists()
    with pytest.raises(InvalidInputError, match="both the source and the destination"):
        copy_memory(memory, tmp_path / "." / "m.db")
    with pytest.raises(InvalidInputError, match="both the source and the destination"):
        copy_memory(postgres_url, postgres_url)
    with pytest.raises(StorageError, match="cannot connect"):
        copy_memory(memory, "postgresql://nobody@127.0.0.1:1/none?memory=m&connect_timeout=2")
    with pytest.raises(InvalidInputError):
        copy_memory(memory, "")
    with pytest.raises(InvalidInputError, match="memory name"):
        copy_memory(memory, postgres_url.replace("memory=", "memory=Bad-Name"))


def test_every_table_of_a_memory_is_copied_or_derived(tmp_path: Path) -> None:
    """A layer adding a table without naming it in its TABLES would lose it in copies."""
    with remembrances.open(tmp_path / "m.db", embedder=HashEmbedder(8)) as svc:
        populate(svc, tmp_path / "repo")
        with svc.store.snapshot() as tx:
            names = {
                r["name"] for r in tx.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            }
    copied = {t for layer in layers() for t in layer.tables}
    store_own = {"meta", "chunks", "embedding_cache", "vector_log", "sqlite_sequence"}
    derived = {n for n in names if n.startswith(("chunks_fts", "chunks_vec", "chunks_int8"))}
    assert names - store_own - derived == copied


def test_the_copy_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("REMEMBRANCES_DB", raising=False)
    source, destination = tmp_path / "src.db", tmp_path / "dst.db"
    with remembrances.open(source, embedder=HashEmbedder(64)) as svc:
        svc.kb.add("Back off on HTTP 429.", source="retries.md")
    runner = CliRunner()
    result = runner.invoke(cli, ["copy", str(source), str(destination), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["chunks"] == 1 and data["with_vectors"] == 1, data
    assert data["embedder"] == "hash:64"
    again = runner.invoke(cli, ["copy", str(source), str(destination)])
    assert again.exit_code == 1 and "already holds a memory" in again.output
    assert "--replace" in again.output and "Traceback" not in again.output
    replaced = runner.invoke(cli, ["copy", str(source), str(destination), "--replace", "--json"])
    assert replaced.exit_code == 0 and json.loads(replaced.stdout)["replaced"] is True
    missing = runner.invoke(cli, ["copy", str(tmp_path / "nope.db"), str(destination)])
    assert missing.exit_code == 1 and "no memory file" in missing.output


@pytest.mark.parametrize("engine", ["sqlite", "postgresql"])
def test_the_embedding_cache_is_read_whole_a_page_at_a_time(
    engine: str, tmp_path: Path, postgres_server: str
) -> None:
    import tests.conftest as shared
    from remembrances.storage.row_copy import read_cache

    with shared.postgres_memory(postgres_server) as url:
        location = url if engine == "postgresql" else str(tmp_path / "m.db")
        with Store(location, embedder=HashEmbedder(64)) as store:
            store.put_source("kb", "a", [Chunk(f"text {i}") for i in range(5)])
            hashes = [c.content_hash for c in store.get_source("kb", "a")]
            with store.transaction() as tx:  # a second model's vectors of three texts
                tx.executemany(
                    "INSERT INTO embedding_cache (embedder, content_hash, embedding) "
                    "VALUES (?, ?, ?)",
                    [("other:64", h, b"\0" * 256) for h in hashes[:3]],
                )
            with store.snapshot() as tx:
                pages = list(read_cache(tx, size=2))
    rows = [(embedder, text) for page in pages for embedder, text, _ in page]
    assert len(rows) == len(set(rows)) == 8
    assert all(len(page) <= 2 for page in pages)
