"""Indexing a repository: discovery rules, incremental runs, removal, failed embeddings."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from remembrances import Store
from remembrances.code import CodeIndexer
from remembrances.embeddings import HashEmbedder
from tests.code.repo_builder import INDEXED, MAX_FILE_BYTES, write
from tests.code.sample_sources import EXPECTED_LANGUAGES
from tests.conftest import FlakyEmbedder


def test_discovery_honours_gitignore_excludes_and_limits(code: CodeIndexer, repo: Path) -> None:
    report = code.index(repo)
    assert report.project == "shop"
    stats = code.stats("shop")
    assert stats.files == len(INDEXED)
    assert report.files_indexed == len(INDEXED)
    reasons = {s.path: s.reason for s in report.skipped}
    assert reasons["c/blob.c"] == "binary"
    assert reasons["logo.png"] == "unsupported file type"
    assert reasons["src/huge.py"].startswith("larger than the size limit")
    assert reasons["src/loop"].startswith("symlink loop")
    # Ignored and default-excluded files are neither indexed nor reported.
    for hidden in (
        "src/generated_skip.py",
        "secret/hidden.py",
        "debug.log",
        "local_only.py",
        "node_modules/lib/index.js",
        "build/out.py",
    ):
        assert hidden not in reasons
    assert code.find_symbol("generated") == []
    assert code.find_symbol("hidden") == []
    assert code.find_symbol("local") == []
    assert code.find_symbol("vendored") == []
    assert [s.path for s in code.find_symbol("kept")] == ["src/generated_keep.py"]
    assert report.parse_errors == ["src/broken.py"]
    assert [s.name for s in code.find_symbol("still_found")] == ["still_found"]
    assert report.skipped_by_reason()["symlink loop"] == 1
    assert report.skipped_by_reason()["larger than the size limit"] == 1  # not per size
    assert report.files_seen == len(INDEXED) + len(report.skipped)
    assert set(stats.languages) == EXPECTED_LANGUAGES


def test_report_counts_and_timings(code: CodeIndexer, repo: Path, embedder: HashEmbedder) -> None:
    calls: list[tuple[str, int, int]] = []
    report = code.index(repo, project="shop", progress=lambda *a: calls.append(a))
    phases = [c[0] for c in calls]
    assert phases[0] == "hashed" and "written" in phases and phases[-1] == "embedded"
    # fewer files than a write batch: parsing still ends at its total (a terminal's bar
    # stopped at the last full batch, "parsed 768/798")
    parsed = [c for c in calls if c[0] == "parsed"]
    assert parsed and parsed[-1][1] == parsed[-1][2] >= report.files_indexed
    assert len(parsed) == len(set(parsed))  # each count once
    assert calls[-1][1] == calls[-1][2] == report.embedded_chunks
    assert report.symbols == code.stats("shop").symbols > 60
    assert report.chunks == code.stats("shop").chunks
    assert report.embedded_chunks == report.chunks == embedder.calls
    assert report.pending_embeddings == 0
    assert report.embedding_error is None
    for phase in (
        "discovery",
        "hashing",
        "parsing",
        "writing",
        "embedding",
        "text_searchable",
        "total",
    ):
        assert report.timings[phase] >= 0
    assert report.to_dict()["files_skipped"] == len(report.skipped)


def test_unchanged_repository_costs_no_parsing_and_no_embedding(
    code: CodeIndexer, repo: Path, embedder: HashEmbedder
) -> None:
    first = code.index(repo)
    calls = embedder.calls
    chunk_ids = {c.id for c in code.store.get_source("code", "src/upload.py")}
    second = code.index(repo)
    assert second.files_indexed == 0
    assert second.files_unchanged == first.files_indexed
    assert second.chunks == 0 and second.symbols == 0
    assert embedder.calls == calls
    assert {c.id for c in code.store.get_source("code", "src/upload.py")} == chunk_ids


def test_changed_file_is_replaced_and_only_it_is_embedded(
    code: CodeIndexer, repo: Path, embedder: HashEmbedder
) -> None:
    code.index(repo)
    calls = embedder.calls
    path = repo / "src/upload.py"
    path.write_text(
        path.read_text().replace(
            "def getUserName(self, request):", "def fetchAccount(self, request):"
        )
    )
    report = code.index(repo)
    assert report.files_indexed == 1
    assert report.files_unchanged == len(INDEXED) - 1
    # Only the chunks whose text changed needed new vectors (the rest were cached).
    assert 0 < embedder.calls - calls < report.chunks
    assert code.find_symbol("getUserName") == []
    [symbol] = code.find_symbol("Session.fetchAccount")
    assert symbol.path == "src/upload.py" and symbol.start_line == 25


def test_vanished_files_are_removed_with_their_symbols(code: CodeIndexer, repo: Path) -> None:
    code.index(repo)
    assert code.find_symbol("Mailer")
    os.remove(repo / "php/Mailer.php")
    report = code.index(repo)
    assert report.files_removed == 1
    assert code.find_symbol("Mailer") == []
    assert code.find_symbol("Mailer.send") == []
    assert code.references("helper") == []
    assert code.store.get_source("code", "php/Mailer.php") == []
    assert all(h.path != "php/Mailer.php" for h in code.search("mail send retries", limit=50))
    assert code.stats("shop").files == len(INDEXED) - 1


def test_a_file_that_becomes_too_large_leaves_the_index(code: CodeIndexer, repo: Path) -> None:
    code.index(repo)
    write(repo / "src/upload.py", "Y = 2\n" * (MAX_FILE_BYTES // 6 + 10))
    report = code.index(repo)
    assert report.files_removed == 1
    assert code.find_symbol("retry_upload") == []


def test_failed_embedding_is_retried_by_the_next_run(db_path: Path, repo: Path) -> None:
    flaky = FlakyEmbedder(64, fail_on="deploying")
    store = Store(db_path, embedder=flaky)
    try:
        code = CodeIndexer(store, max_file_bytes=MAX_FILE_BYTES, workers=1)
        report = code.index(repo)
        assert report.embedding_error is not None
        assert "embedding service unavailable" in report.embedding_error
        assert report.pending_embeddings > 0
        stats = code.stats("shop")
        assert stats.pending_embeddings == report.pending_embeddings
        assert stats.files_pending >= 1  # never marked indexed while vectors are missing
        # Text search works already.
        assert any(h.name == "deploy" for h in code.search("deploying", mode="text"))

        flaky.fail_on = "\x00never"
        again = code.index(repo)
        assert again.files_indexed == 0  # nothing is parsed again
        assert again.embedding_error is None
        assert again.embedded_chunks == report.pending_embeddings
        assert again.pending_embeddings == 0
        assert again.files_embedded == stats.files_pending
        assert code.stats("shop").files_pending == 0
    finally:
        store.close()


def test_index_without_embedding_then_backfill(code: CodeIndexer, repo: Path) -> None:
    report = code.index(repo, embed=False)
    assert report.pending_embeddings == report.chunks > 0
    assert code.stats("shop").files_pending == len(INDEXED)
    assert code.search("retry upload", mode="text")[0].qualified_name == "retry_upload"
    assert code.backfill("shop", limit=5) == 5
    assert code.stats("shop").pending_embeddings == report.chunks - 5
    assert code.backfill("shop") == report.chunks - 5
    stats = code.stats("shop")
    assert stats.pending_embeddings == 0 and stats.files_pending == 0


def test_languages_filter_and_project_conflicts(
    code: CodeIndexer, repo: Path, tmp_path: Path
) -> None:
    report = code.index(repo, languages=["py", "Go"])
    assert report.files_indexed == 5  # four python files and one go file
    assert set(code.stats("shop").languages) == {"python", "go"}
    other = tmp_path / "elsewhere" / "shop"
    write(other / "a.py", "def a(): pass\n")
    # the CLI's option and the API's argument are both named
    with pytest.raises(Exception, match=r"already indexed from .*\(--project, project=\)"):
        code.index(other)
    assert code.index(other, project="shop-2").files_indexed == 1
    assert [p.name for p in code.projects()] == ["shop", "shop-2"]
    assert code.remove("shop-2") == 1
    assert [p.name for p in code.projects()] == ["shop"]
    assert code.store.count(kind="code", collection="shop-2") == 0


def test_parsing_in_worker_processes_matches_parsing_in_process(
    store: Store, tmp_path: Path
) -> None:
    root = tmp_path / "many"
    for i in range(60):
        write(
            root / f"pkg/mod_{i}.py",
            f"class Thing{i}:\n    def run_{i}(self):\n        return {i}\n",
        )
    parallel = CodeIndexer(store, workers=2).index(root, project="parallel", embed=False)
    serial = CodeIndexer(store, workers=1).index(root, project="serial", embed=False)
    assert parallel.files_indexed == serial.files_indexed == 60
    assert parallel.symbols == serial.symbols == 120
    [symbol] = store and CodeIndexer(store).find_symbol("Thing42.run_42", project="parallel")
    assert symbol.path == "pkg/mod_42.py" and symbol.start_line == 2


def test_symlinks_out_of_the_project_are_not_followed(code: CodeIndexer, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    write(outside / "private.py", "def private_helper(): pass\n")
    write(outside / "pkg" / "inner.py", "def inner_helper(): pass\n")
    root = tmp_path / "project"
    write(root / "src" / "app.py", "def app_main(): pass\n")
    os.symlink(outside / "private.py", root / "linked.py")
    os.symlink(outside / "pkg", root / "linked_pkg")
    os.symlink(root / "src", root / "src_alias")  # inside: followed, once
    report = code.index(root)
    reasons = {s.path: s.reason for s in report.skipped}
    assert reasons["linked.py"] == "symlink to a path outside the project"
    assert reasons["linked_pkg"] == "symlink to a path outside the project"
    assert reasons["src_alias"] == "symlink to a directory already indexed"
    assert code.find_symbol("private_helper") == []
    assert code.find_symbol("inner_helper") == []
    assert [s.path for s in code.find_symbol("app_main")] == ["src/app.py"]


def older_index(store: Store, root: Path, version: int, damage: str) -> CodeIndexer:
    """An index of two files as code schema ``version`` left it (``damage`` undoes
    what the later steps changed); the indexer built on it runs the migrations."""
    write(root / "a.py", "def alpha():\n    return 1\n")
    write(root / "b.py", "class Beta:\n    def run(self):\n        return 2\n")
    assert CodeIndexer(store).index(root).files_indexed == 2
    with store.db.write() as conn:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'schema:code'", (str(version),))
        conn.execute(damage)
    return CodeIndexer(store)


def test_an_index_from_before_the_embedding_change_is_rechunked_once(
    store: Store, tmp_path: Path
) -> None:
    root = tmp_path / "proj"
    damage = "UPDATE chunks SET embed_text = NULL WHERE kind = 'code'"
    code = older_index(store, root, 1, damage)  # migration 2 runs here
    report = code.index(root)
    assert (report.files_indexed, report.files_unchanged) == (2, 0)
    method = next(h for h in code.search("run", mode="text") if h.qualified_name == "Beta.run")
    with store.db.read() as conn:
        (embedded,) = conn.execute(
            "SELECT embed_text FROM chunks WHERE id = ?", (method.chunk_id,)
        ).fetchone()
    assert embedded is not None and embedded.startswith("def run(self):")
    assert code.index(root).files_unchanged == 2  # and only once


def test_an_index_from_before_per_part_lines_is_rechunked_once(
    store: Store, tmp_path: Path
) -> None:
    root = tmp_path / "proj"
    damage = "UPDATE code_symbols SET start_line = 40, end_line = 90"
    code = older_index(store, root, 3, damage)  # migration 4 runs here
    report = code.index(root)
    assert (report.files_indexed, report.files_unchanged) == (2, 0)
    [run] = code.find_symbol("Beta.run")
    assert (run.start_line, run.end_line) == (2, 3)
    assert code.index(root).files_unchanged == 2  # and only once


def test_an_index_from_before_step_7_is_parsed_again_once(store: Store, tmp_path: Path) -> None:
    """Step 7 finds more symbols (``app.listen = function``): files unchanged since an
    older version indexed them are parsed again, once, and their chunks kept."""
    root = tmp_path / "proj"
    write(root / "app.js", "app.listen = function (port) {\n  return port;\n};\n")
    write(root / "b.py", "def beta():\n    return 2\n")
    code = CodeIndexer(store)
    assert code.index(root).files_indexed == 2
    with store.db.write() as conn:
        conn.execute("UPDATE meta SET value = '6' WHERE key = 'schema:code'")
        conn.execute("DELETE FROM code_symbols WHERE name = 'listen'")  # as step 6 saw it
    code = CodeIndexer(store)
    assert code.find_symbol("app.listen") == []
    embedder = store.embedder
    assert isinstance(embedder, HashEmbedder)
    texts_before = embedder.calls
    report = code.index(root)
    assert (report.files_indexed, report.files_unchanged) == (2, 0)
    assert [s.qualified_name for s in code.find_symbol("app.listen")] == ["app.listen"]
    assert embedder.calls - texts_before <= 1  # b.py's chunk kept its vector
    assert code.index(root).files_unchanged == 2  # and only once


def test_parsing_progress_counts_each_batch_once(
    code: CodeIndexer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from remembrances.code import writer

    monkeypatch.setattr(writer, "WRITE_BATCH_FILES", 4)  # 8 files: two full batches
    for i in range(8):
        (tmp_path / "p" / f"m{i}.py").parent.mkdir(exist_ok=True)
        (tmp_path / "p" / f"m{i}.py").write_text(f"def f{i}():\n    return {i}\n")
    calls: list[tuple[str, int, int]] = []
    code.index(tmp_path / "p", progress=lambda *a: calls.append(a))
    assert [c for c in calls if c[0] == "parsed"] == [("parsed", 4, 8), ("parsed", 8, 8)]
