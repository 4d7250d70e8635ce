"""Documents are named as a user knows them and found by any unambiguous spelling."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from remembrances import InvalidInputError, NotFoundError, Store
from remembrances.cli import cli
from remembrances.kb import KnowledgeBase

ALL = ["README.md", "cli.md", "guide/README.md", "guide/install.md"]


@pytest.fixture
def kb(store: Store) -> KnowledgeBase:
    return KnowledgeBase(store)


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    root = tmp_path / "project" / "docs"
    (root / "guide").mkdir(parents=True)
    (root / "cli.md").write_text("# CLI\n\nThe command line reference.\n")
    (root / "guide" / "install.md").write_text("# Install\n\nRun pip install.\n")
    (root / "guide" / "README.md").write_text("# Guide readme\n\nStart here.\n")
    (root / "README.md").write_text("# Docs readme\n\nAll the docs.\n")
    return root


@pytest.fixture
def in_project(docs: Path) -> Iterator[Path]:
    before = Path.cwd()
    os.chdir(docs.parent)
    try:
        yield docs.parent
    finally:
        os.chdir(before)


def test_ingested_documents_are_named_from_the_ingested_folder(
    kb: KnowledgeBase, docs: Path
) -> None:
    kb.ingest(docs)
    assert sorted(d.source for d in kb.list()) == ALL
    assert kb.get("cli.md").path == str(docs / "cli.md")  # the file is still known


def test_a_subfolder_ingested_later_keeps_the_collections_names(
    kb: KnowledgeBase, docs: Path
) -> None:
    kb.ingest(docs)
    (docs / "guide" / "upgrade.md").write_text("# Upgrade\n\nRun pip install -U.\n")
    report = kb.ingest(docs / "guide")
    assert report.added == ["upgrade.md"]
    assert "guide/upgrade.md" in {d.source for d in kb.list()}
    assert kb.count() == 5


def test_the_parent_ingested_after_its_subfolder_names_every_file_from_the_parent(
    kb: KnowledgeBase, docs: Path
) -> None:
    kb.ingest(docs / "guide")  # "README.md", "install.md"
    report = kb.ingest(docs)
    # the subfolder's documents take their names under docs/, so the parent's own
    # README.md is "README.md" too (it was named by its absolute path)
    assert sorted(d.source for d in kb.list()) == ALL
    assert kb.get("README.md").title == "Docs readme"
    assert sorted(report.updated) == ["guide/README.md", "guide/install.md"]
    assert sorted(report.added) == ["README.md", "cli.md"] and report.cached >= 2
    assert kb.count() == 4
    # from now on the collection is named from docs/: the subfolder again, or a new file
    (docs / "guide" / "upgrade.md").write_text("# Upgrade\n\nRun pip install -U.\n")
    again = kb.ingest(docs / "guide")
    assert again.added == ["upgrade.md"] and again.updated == []
    assert "guide/upgrade.md" in {d.source for d in kb.list()}
    assert kb.ingest(docs).updated == []


def test_a_file_ingested_alone_from_a_parent_folder_renames_nothing(
    kb: KnowledgeBase, docs: Path
) -> None:
    kb.ingest(docs / "guide")
    kb.ingest(docs / "cli.md")  # one file: its folder does not become the collection's
    assert kb.ingest(docs / "guide").updated == []
    assert sorted(d.source for d in kb.list()) == ["README.md", "cli.md", "install.md"]


def test_renames_are_made_all_at_once_or_not_at_all(kb: KnowledgeBase, docs: Path) -> None:
    kb.ingest(docs / "guide")  # "README.md", "install.md"
    with pytest.raises(InvalidInputError, match="already a document"):
        kb.rename({"install.md": "guide/install.md", "README.md": "guide/install.md"})
    assert sorted(d.source for d in kb.list()) == ["README.md", "install.md"]
    assert [h.source for h in kb.search("pip install", limit=1)] == ["install.md"]
    kb.rename({"install.md": "guide/install.md"})
    assert [h.source for h in kb.search("pip install", limit=1)] == ["guide/install.md"]
    assert kb.get("guide/install.md").path == str(docs / "guide" / "install.md")


def test_a_name_held_by_hand_is_not_taken_by_a_document_named_from_below(
    kb: KnowledgeBase, docs: Path
) -> None:
    kb.ingest(docs / "guide")
    kb.add("# Mine\n\nWritten by hand.\n", source="guide/install.md")
    kb.ingest(docs)
    assert kb.get("guide/install.md").title == "Mine"
    assert kb.get(str(docs / "guide" / "install.md")).title == "Install"
    assert kb.count() == 5


def test_any_unambiguous_spelling_finds_the_document(
    kb: KnowledgeBase, docs: Path, in_project: Path
) -> None:
    kb.ingest(docs)
    for spelling in ("cli.md", "docs/cli.md", "./docs/cli.md", str(docs / "cli.md")):
        assert kb.get(spelling).source == "cli.md", spelling
    assert kb.get("install.md").source == "guide/install.md"
    with pytest.raises(NotFoundError, match=r"did you mean 'cli\.md'"):
        kb.get("cli.mdx")


def test_a_note_is_found_by_its_name_without_the_extension(kb: KnowledgeBase) -> None:
    """A wikilink names a note without its extension: [[Atomic Habits]]."""
    kb.add("# Atomic Habits\n\nSmall habits.\n", source="Books/Atomic Habits.md")
    kb.add("# Atomic\n\nPhysics.\n", source="science/atomic.md")
    assert kb.get("Atomic Habits").source == "Books/Atomic Habits.md"
    assert kb.get("Books/Atomic Habits").source == "Books/Atomic Habits.md"
    assert kb.get("atomic").source == "science/atomic.md"
    kb.add("# Atomic (notes)\n\nMore.\n", source="notes/atomic.txt")
    with pytest.raises(NotFoundError, match="could be any of"):
        kb.get("atomic")  # two notes of that name: both named
    with pytest.raises(NotFoundError):
        kb.get("Habits")  # a whole name, not part of one
    kb.add("Release notes.", source="v1.2 notes.md")
    kb.add("Who.", source="people/Dr. Who.md")
    assert kb.get("v1.2 notes").source == "v1.2 notes.md"  # dots in the name itself
    assert kb.get("Dr. Who").source == "people/Dr. Who.md"


def test_a_document_in_another_collection_is_named_with_it(kb: KnowledgeBase) -> None:
    kb.add("Rotate keys every 90 days.", source="keys.md", collection="notes")
    with pytest.raises(NotFoundError, match=r"it is in collection 'notes'; pass that collection"):
        kb.get("keys.md")
    assert not kb.delete("keys.md") and kb.get("keys.md", collection="notes").text
    with pytest.raises(NotFoundError, match=r"see what is stored with"):
        kb.get("nothing-like-it.md")
    # spelt as resolve() reads names, without the extension or by the path's end
    kb.add("Caches.", source="guide/cacheutils.rst", collection="boltons")
    for spelling in ("cacheutils", "cacheutils.rst"):
        with pytest.raises(NotFoundError, match=r"it is in collection 'boltons'"):
            kb.get(spelling)
        assert kb.get(spelling, collection="boltons").source == "guide/cacheutils.rst"


def test_a_spelling_two_documents_share_names_both(kb: KnowledgeBase, docs: Path) -> None:
    kb.ingest(docs)
    kb.add("# Other\n\nOther install notes.\n", source="other/install.md")
    assert kb.get("x/guide/README.md").source == "guide/README.md"  # the longest match
    with pytest.raises(NotFoundError, match="could be any of") as ambiguous:
        kb.get("install.md")
    message = str(ambiguous.value)
    assert "'guide/install.md'" in message and "'other/install.md'" in message
    assert kb.delete("install.md") is False  # nothing deleted when ambiguous
    assert kb.count() == 5


def test_cli_add_after_ingest_replaces_the_document_instead_of_copying_it(
    tmp_path: Path, docs: Path, in_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REMEMBRANCES_EMBEDDER", "hash:64")
    db = str(tmp_path / "m.db")
    runner = CliRunner()
    assert runner.invoke(cli, ["--db", db, "kb", "ingest", "docs"]).exit_code == 0
    (docs / "cli.md").write_text("# CLI\n\nThe command line reference, revised.\n")
    added = runner.invoke(cli, ["--db", db, "kb", "add", "docs/cli.md"])
    assert added.exit_code == 0, added.output
    assert "cli.md" in added.stdout
    listed = runner.invoke(cli, ["--db", db, "kb", "list", "--json"])
    assert sorted(d["source"] for d in json.loads(listed.stdout)) == ALL
    hits = runner.invoke(cli, ["--db", db, "kb", "search", "command line reference", "--json"])
    sources = [h["source"] for h in json.loads(hits.stdout)]
    assert sources.count("cli.md") == 1
    for spelling in ("cli.md", "docs/cli.md"):
        got = runner.invoke(cli, ["--db", db, "kb", "get", spelling])
        assert got.exit_code == 0 and "revised" in got.stdout, spelling
    # a file added first, then its folder ingested: still one document
    (docs / "new.md").write_text("# New\n\nA new page.\n")
    assert runner.invoke(cli, ["--db", db, "kb", "add", "docs/new.md"]).exit_code == 0
    assert runner.invoke(cli, ["--db", db, "kb", "ingest", "docs"]).exit_code == 0
    listed = json.loads(runner.invoke(cli, ["--db", db, "kb", "list", "--json"]).stdout)
    assert [d["source"] for d in listed].count("docs/new.md") == 1
    assert "new.md" not in [d["source"] for d in listed]
    missing = runner.invoke(cli, ["--db", db, "kb", "rm", "clii.md"])
    assert missing.exit_code == 1 and "did you mean 'cli.md'" in missing.stderr


def test_adding_an_ingested_file_that_did_not_change_changes_nothing(
    tmp_path: Path, docs: Path, in_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REMEMBRANCES_EMBEDDER", "hash:64")
    db = str(tmp_path / "m.db")
    runner = CliRunner()
    assert runner.invoke(cli, ["--db", db, "kb", "ingest", "docs"]).exit_code == 0
    ingested = json.loads(runner.invoke(cli, ["--db", db, "kb", "get", "cli.md", "--json"]).stdout)
    added = runner.invoke(cli, ["--db", db, "kb", "add", "docs/cli.md"])
    assert added.exit_code == 0 and added.stdout.startswith("unchanged: cli.md"), added.output
    again = json.loads(runner.invoke(cli, ["--db", db, "kb", "get", "cli.md", "--json"]).stdout)
    assert again["metadata"] == ingested["metadata"] == {"path": "cli.md"}
    assert again["updated_at"] == ingested["updated_at"]


def test_documents_named_by_absolute_path_before_are_renamed_on_the_next_ingest(
    kb: KnowledgeBase, docs: Path
) -> None:
    kb.ingest(docs)
    with kb.store.transaction() as conn:  # how earlier versions named them
        for source, path in conn.execute("SELECT source, path FROM kb_documents").fetchall():
            conn.execute("UPDATE chunks SET source = ? WHERE source = ?", (path, source))
            conn.execute("UPDATE kb_documents SET source = ? WHERE source = ?", (path, source))
    assert kb.get("cli.md").source == str(docs / "cli.md")
    report = kb.ingest(docs)
    assert sorted(d.source for d in kb.list()) == ALL
    # the files were in memory already: renamed, not added (the report said "added")
    assert (report.added, sorted(report.updated), report.embedded) == ([], ALL, 0)
    hits = kb.search("command line reference", limit=10)
    assert [h.source for h in hits].count("cli.md") == 1
    assert not any(h.source.startswith("/") for h in hits)


def test_an_import_of_an_export_that_named_files_by_absolute_path_is_taken_back(
    docs: Path, tmp_path: Path
) -> None:
    # earlier versions' exports hold the absolute path as the source; imported, each
    # document had no file to take it back, and the next ingest stored every file again
    import io

    import remembrances
    from remembrances.transfer import export_jsonl, import_jsonl

    with remembrances.open(tmp_path / "a.db", embedder="hash:64") as source:
        source.kb.ingest(docs)
        out = io.StringIO()
        export_jsonl(source, out)
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    for record in records:
        if record["type"] == "kb_document":
            record["source"] = str(docs / record["metadata"]["path"])
    legacy = "".join(json.dumps(r) + "\n" for r in records)
    with remembrances.open(tmp_path / "b.db", embedder="hash:64") as target:
        import_jsonl(target, io.StringIO(legacy))
        report = target.kb.ingest(docs)
        assert sorted(d.source for d in target.kb.list()) == ALL
        assert (report.added, sorted(report.updated), report.embedded) == ([], ALL, 0)
        assert target.kb.source_of_file(docs / "cli.md") == "cli.md"


@pytest.mark.parametrize("order", [("cli.md", "guide", ""), ("", "guide")])
def test_a_file_ingested_with_its_subfolder_is_stored_once_after_an_import(
    docs: Path, tmp_path: Path, order: tuple[str, ...]
) -> None:
    # its metadata's path is relative to the folder it was last read from ("install.md"
    # from guide/); an export of it was no longer what an ingest of docs/ writes, and
    # the import plus an ingest stored it twice
    import io

    import remembrances
    from remembrances.transfer import export_jsonl, import_jsonl

    with remembrances.open(tmp_path / "a.db", embedder="hash:64") as source:
        for folder in order:
            source.kb.ingest(docs / folder if folder else docs)
        # ingests of the folder and of its subfolder, in turn, leave the file alone
        assert source.kb.ingest(docs / "guide").unchanged == ["README.md", "install.md"]
        assert source.kb.ingest(docs).updated == []
        assert source.kb.ingest(docs / "guide").updated == []
        out = io.StringIO()
        export_jsonl(source, out)
    with remembrances.open(tmp_path / "b.db", embedder="hash:64") as target:
        import_jsonl(target, io.StringIO(out.getvalue()))
        report = target.kb.ingest(docs)
        assert sorted(d.source for d in target.kb.list()) == ALL
        assert report.added == [] and report.embedded == 0


def test_a_moved_folder_keeps_its_documents(kb: KnowledgeBase, docs: Path) -> None:
    kb.ingest(docs)
    moved = docs.parent / "renamed-docs"
    docs.rename(moved)
    report = kb.ingest(moved)
    assert sorted(d.source for d in kb.list()) == ALL  # no second copy under absolute names
    assert sorted(report.unchanged) == ALL and report.added == [] and report.removed == []
    assert kb.source_of_file(moved / "guide" / "install.md") == "guide/install.md"
    (moved / "cli.md").write_text("# CLI\n\nThe command line reference, moved.\n")
    assert kb.ingest(moved).updated == ["cli.md"]
    assert "moved" in kb.get("cli.md").text


def test_a_copied_folder_is_a_second_set_of_documents(kb: KnowledgeBase, docs: Path) -> None:
    kb.ingest(docs)
    copy = docs.parent / "copy-of-docs"
    shutil.copytree(docs, copy)
    kb.ingest(copy)
    sources = [d.source for d in kb.list()]
    assert len(sources) == 2 * len(ALL)
    assert str(copy / "cli.md") in sources and "cli.md" in sources
