"""Ingesting files and directories: incremental, scoped deletes, skips with reasons, watch."""

from __future__ import annotations

import os
import queue
import threading
from pathlib import Path

import pytest

from remembrances import InvalidInputError, NotFoundError, Store
from remembrances.embeddings import HashEmbedder
from remembrances.kb import IngestReport, KnowledgeBase

WAIT = 20.0  # generous: a watch pass is milliseconds, but CI machines stall


@pytest.fixture
def kb(store: Store) -> KnowledgeBase:
    return KnowledgeBase(store)


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def bump_mtime(path: Path) -> None:
    """Make a change visible even on file systems with coarse timestamps."""
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 2_000_000_000))


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    write(root / "guide.md", "# Guide\n\n## Install\n\nUse apt.\n\n## Usage\n\nRun it.\n")
    write(root / "todo.txt", "buy milk\n\ncall the plumber\n")
    write(root / "api.rst", "API\n===\n\nThe endpoints.\n")
    write(root / "book.adoc", "= Book\n\nChapter text.\n")
    write(root / "agenda.org", "* Monday\nStandup.\n")
    write(root / "deep" / "er" / "nested.markdown", "# Nested\n\nDeep note.\n")
    write(root / "data.csv", "a,b\n1,2\n")  # not a default format
    write(root / ".hidden.md", "hidden note")
    write(root / "node_modules" / "pkg" / "readme.md", "vendored")
    write(root / "build" / "out.md", "generated")
    write(root / "drafts" / "keep.md", "a kept draft")
    write(root / "drafts" / "wip.md", "work in progress")
    write(root / ".gitignore", "build/\n*.log.md\n")
    write(root / "drafts" / ".gitignore", "*.md\n!keep.md\n")
    write(root / "x.log.md", "ignored by pattern")
    return root


EXPECTED = [
    "agenda.org",
    "api.rst",
    "book.adoc",
    "deep/er/nested.markdown",
    "drafts/keep.md",
    "guide.md",
    "todo.txt",
]


def test_ingest_finds_text_formats_and_honours_gitignore(kb: KnowledgeBase, notes: Path) -> None:
    report = kb.ingest(notes)
    assert sorted(report.added) == EXPECTED
    assert report.updated == report.removed == report.skipped == []
    assert kb.count() == len(EXPECTED)
    doc = kb.get(str(notes / "api.rst"))
    assert (doc.title, doc.format, doc.path) == ("API", "rst", str(notes / "api.rst"))
    assert doc.metadata == {"path": "api.rst"}
    assert kb.get(str(notes / "todo.txt")).title == "todo.txt"  # no heading: the file name
    hit = kb.search("apt install", limit=1)[0]
    assert (hit.source, hit.title, hit.heading_path) == (
        "guide.md",  # named from the ingested folder
        "Guide",
        "Install",
    )


def test_patterns_choose_the_files(kb: KnowledgeBase, notes: Path) -> None:
    report = kb.ingest(notes, patterns=["*.csv", "deep/**"])
    assert sorted(report.added) == ["data.csv", "deep/er/nested.markdown"]
    # Re-ingesting with other patterns does not delete files that still exist.
    report = kb.ingest(notes, patterns=["*.org"])
    assert report.added == ["agenda.org"] and report.removed == []
    assert kb.count() == 3


def test_hidden_files_ingested_on_request_stay_until_their_files_go(
    kb: KnowledgeBase, notes: Path
) -> None:
    """A plain ingest after one with ``include_hidden`` removed the hidden documents,
    where other patterns keep the documents of files they do not select."""
    write(notes / ".private" / "keys.md", "# Keys\n\nThe vault key rotates monthly.\n")
    first = kb.ingest(notes, include_hidden=True)
    assert {".hidden.md", ".private/keys.md"} <= set(first.added)
    again = kb.ingest(notes)
    assert again.removed == [] and kb.count() == len(first.added)
    (notes / ".private" / "keys.md").unlink()
    gone = kb.ingest(notes)
    assert gone.removed == [".private/keys.md"]
    assert [d.source for d in kb.list() if d.source.startswith(".")] == [".hidden.md"]


def test_a_notes_title_comes_from_front_matter_and_wikilinks_read_as_words(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    """A vault names a note in its front matter; its first heading may hold links."""
    root = tmp_path / "vault"
    write(root / "m1.md", '---\ntitle: "Meeting: Pricing tiers"\ntags: [meeting]\n---\n'
          "# Pricing tiers with [[Anna Schmidt]]\n\nWe keep three tiers.\n")  # fmt: skip
    write(root / "m2.md", "# Budget 2027 with [[people/david|David Kim]]\n\nHiring freeze.\n")
    write(root / "m3.md", "---\ntags: [idea]\n---\n# Idea\n\nA note.\n")
    write(root / "m4.md", "---\ntitle: >\n  Folded\n  title\n---\n# Heading four\n\nText.\n")
    write(root / "m5.md", '---\r\ntitle: "CRLF quoted"\r\n---\r\n# Five\r\n\r\nText.\r\n')
    write(root / "m6.md", "---\ntitle: Plain # a comment\n---\nText.\n")
    write(root / "m7.md", '---\ntitle: "C# notes"\n---\nText.\n')
    kb.ingest(root)
    assert kb.get("m4.md").title == "Heading four"  # a block scalar: the heading serves
    assert kb.get("m5.md").title == "CRLF quoted"
    assert kb.get("m6.md").title == "Plain"  # a YAML comment is not the title's
    assert kb.get("m7.md").title == "C# notes"  # quoted: kept whole
    assert kb.get("m1.md").title == "Meeting: Pricing tiers"
    assert kb.get("m2.md").title == "Budget 2027 with David Kim"
    assert kb.get("m3.md").title == "Idea"
    hit = kb.search("three pricing tiers", limit=1)[0]
    assert hit.title == "Meeting: Pricing tiers"


def test_a_second_pass_costs_nothing(
    kb: KnowledgeBase, notes: Path, embedder: HashEmbedder
) -> None:
    kb.ingest(notes)
    calls = embedder.calls
    report = kb.ingest(notes)
    assert sorted(report.unchanged) == EXPECTED
    assert report.added == report.updated == report.removed == []
    assert (report.embedded, embedder.calls) == (0, calls)


def test_touched_but_unchanged_files_are_not_reembedded(
    kb: KnowledgeBase, notes: Path, embedder: HashEmbedder
) -> None:
    kb.ingest(notes)
    calls = embedder.calls
    bump_mtime(notes / "guide.md")
    report = kb.ingest(notes)
    assert "guide.md" in report.unchanged and embedder.calls == calls
    assert kb.ingest(notes).unchanged == report.unchanged  # and the new time is recorded


def test_a_changed_file_is_replaced_and_only_changed_chunks_embedded(
    kb: KnowledgeBase, notes: Path, embedder: HashEmbedder
) -> None:
    kb.ingest(notes)
    calls = embedder.calls
    guide = notes / "guide.md"
    write(guide, guide.read_text().replace("Run it.", "Run it with --fast."))
    bump_mtime(guide)
    report = kb.ingest(notes)
    assert report.updated == ["guide.md"]
    assert (report.embedded, report.cached) == (1, 1)  # Usage changed, Install did not
    assert embedder.calls == calls + 1
    assert "--fast" in kb.get(str(guide)).text


def test_text_added_by_hand_over_a_files_document_stays_that_files(
    kb: KnowledgeBase, notes: Path
) -> None:
    """The next ingest reads the file again into the same document, not a second copy
    under the file's absolute path; a name that was never a file's keeps its text."""
    kb.ingest(notes)
    kb.add("# Guide\n\nEdited by hand.", source="guide.md")
    kb.add("A note of my own.", source="mine.md")
    report = kb.ingest(notes)
    assert report.updated == ["guide.md"] and report.added == []
    sources = [d.source for d in kb.list()]
    assert sorted(sources) == sorted(set(sources)) and "mine.md" in sources
    assert "Run it." in kb.get("guide.md").text
    assert kb.ingest(notes).updated == []  # and then it is unchanged
    # a file that is gone leaves a hand-written text under its name alone
    (notes / "guide.md").unlink()
    kb.add("My own notes, to keep.", source="guide.md")
    assert kb.ingest(notes).removed == []
    assert kb.get("guide.md").text == "My own notes, to keep."


def test_deleted_files_are_removed_but_only_under_the_ingested_root(
    kb: KnowledgeBase, notes: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    write(other / "elsewhere.md", "# Elsewhere\n\nkept forever")
    kb.ingest(notes)
    kb.ingest(other)
    (notes / "todo.txt").unlink()
    (notes / "deep" / "er" / "nested.markdown").unlink()
    report = kb.ingest(notes)
    assert sorted(report.removed) == ["deep/er/nested.markdown", "todo.txt"]
    assert kb.count() == len(EXPECTED) - 2 + 1
    assert kb.get(str(other / "elsewhere.md")).text.endswith("kept forever")
    assert not kb.search("plumber", mode="text")
    # A sub-directory ingest removes nothing outside it.
    (notes / "guide.md").unlink()
    assert kb.ingest(notes / "deep").removed == []
    assert kb.ingest(notes).removed == ["guide.md"]


def test_newly_ignored_files_are_removed(kb: KnowledgeBase, notes: Path) -> None:
    kb.ingest(notes)
    write(notes / ".gitignore", "build/\n*.log.md\ntodo.txt\n")
    assert kb.ingest(notes).removed == ["todo.txt"]


def test_unreadable_files_are_skipped_with_reasons(kb: KnowledgeBase, tmp_path: Path) -> None:
    root = tmp_path / "mixed"
    write(root / "ok.md", "fine")
    write(root / "binary.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    write(root / "latin1.txt", "café".encode("latin-1"))
    write(root / "utf16.txt", "hello".encode("utf-16"))
    write(root / "empty.md", "")
    write(root / "blank.md", "  \n\n\t ")
    with open(root / "huge.md", "wb") as f:  # 50 MB, sparse: cheap to create
        f.truncate(50 * 1024 * 1024)
    report = kb.ingest(root)
    assert report.added == ["ok.md"]
    reasons = {s.path: s.reason for s in report.skipped}
    assert set(reasons) == {
        "binary.md",
        "latin1.txt",
        "utf16.txt",
        "empty.md",
        "blank.md",
        "huge.md",
    }
    assert "binary" in reasons["binary.md"]
    assert "UTF-8" in reasons["latin1.txt"] and "byte 4 is 0xe9" in reasons["latin1.txt"]
    assert "UTF-16" in reasons["utf16.txt"]
    assert "empty" in reasons["empty.md"]
    assert "whitespace" in reasons["blank.md"]
    assert reasons["huge.md"].startswith(
        "larger than the size limit: 52,428,800 bytes, the limit is 10,000,000;"
    )
    assert kb.count() == 1


def test_a_50_mb_text_file_is_skipped_as_too_long_for_one_document(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    path = write(tmp_path / "big" / "log.txt", ("line of text\n" * 4_033_000))
    assert path.stat().st_size > 50_000_000
    report = kb.ingest(path.parent, max_bytes=100_000_000)
    assert [s.path for s in report.skipped] == ["log.txt"]
    assert "limit" in report.skipped[0].reason
    assert kb.count() == 0


def test_a_file_that_turns_binary_loses_its_document(kb: KnowledgeBase, notes: Path) -> None:
    kb.ingest(notes)
    write(notes / "todo.txt", b"\x00\x01\x02")
    bump_mtime(notes / "todo.txt")
    report = kb.ingest(notes)
    assert report.removed == ["todo.txt"]
    assert [s.path for s in report.skipped] == ["todo.txt"]


def test_a_single_file_is_ingested_whatever_its_extension(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    path = write(tmp_path / "notes.log", "server restarted at noon")
    report = kb.ingest(path, collection="logs")
    assert report.added == ["notes.log"]
    assert kb.get(str(path), collection="logs").text == "server restarted at noon"
    assert kb.ingest(path, collection="logs").unchanged == ["notes.log"]
    assert kb.get(str(path), collection="logs").format == "text"


def test_bad_ingest_arguments(kb: KnowledgeBase, tmp_path: Path) -> None:
    with pytest.raises(NotFoundError, match="does not exist"):
        kb.ingest(tmp_path / "missing")
    with pytest.raises(InvalidInputError, match="patterns"):
        kb.ingest(tmp_path, patterns="*.md")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="max_bytes"):
        kb.ingest(tmp_path, max_bytes=0)
    with pytest.raises(InvalidInputError, match="path"):
        kb.ingest(42)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="interval"):
        kb.watch(tmp_path, interval=0)


def test_watch_keeps_a_directory_in_sync_until_stopped(kb: KnowledgeBase, tmp_path: Path) -> None:
    root = tmp_path / "watched"
    write(root / "first.md", "# First\n\nthe first note")
    reports: queue.Queue[IngestReport] = queue.Queue()
    stop = threading.Event()
    passes: list[int] = []
    thread = threading.Thread(
        target=lambda: passes.append(
            kb.watch(root, interval=0.02, stop_event=stop, on_change=reports.put)
        )
    )
    thread.start()
    try:
        assert reports.get(timeout=WAIT).added == ["first.md"]
        write(root / "second.md", "# Second\n\nthe second note")
        assert reports.get(timeout=WAIT).added == ["second.md"]
        (root / "first.md").unlink()
        assert reports.get(timeout=WAIT).removed == ["first.md"]
    finally:
        stop.set()
        thread.join(timeout=WAIT)
    assert not thread.is_alive()
    assert passes and passes[0] >= 3
    assert [d.source for d in kb.list()] == ["second.md"]


def test_ignore_files_of_the_enclosing_repository_apply(kb: KnowledgeBase, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    write(repo / ".gitignore", "*.secret.md\nbuild/\n")
    write(repo / "docs" / "guide.md", "the guide")
    write(repo / "docs" / "keys.secret.md", "do not index")
    write(repo / "build" / "generated.md", "generated docs")
    assert kb.ingest(repo / "docs").added == ["guide.md"]
    # A directory the repository ignores is still ingested when asked for by name.
    assert kb.ingest(repo / "build").added == ["generated.md"]


def test_ingest_metadata_is_checked_once_and_kept(kb: KnowledgeBase, notes: Path) -> None:
    with pytest.raises(InvalidInputError, match="metadata"):
        kb.ingest(notes, metadata={"bad": float("nan")})
    assert kb.count() == 0
    kb.ingest(notes, metadata={"team": "docs"})
    assert kb.get(str(notes / "todo.txt")).metadata == {"team": "docs", "path": "todo.txt"}
    assert kb.search("plumber", where={"team": "docs"}, mode="text")[0].source.endswith("todo.txt")
    assert kb.search("plumber", where={"team": "other"}) == []


def test_watch_waits_for_a_missing_directory_without_dropping_documents(
    kb: KnowledgeBase, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = tmp_path / "comes-and-goes"
    write(root / "note.md", "a note that stays")
    kb.ingest(root)
    moved = tmp_path / "elsewhere"
    root.rename(moved)
    reports: queue.Queue[IngestReport] = queue.Queue()
    stop = threading.Event()
    thread = threading.Thread(
        target=kb.watch,
        args=(root,),
        kwargs={"interval": 0.02, "stop_event": stop, "on_change": reports.put},
    )
    with caplog.at_level("WARNING", logger="remembrances.kb.ingest"):
        thread.start()
        try:
            waited = threading.Event()
            for _ in range(int(WAIT / 0.01)):  # until a pass has found the path missing
                if any("does not exist" in r.getMessage() for r in caplog.records):
                    break
                waited.wait(0.01)
            assert any("does not exist" in r.getMessage() for r in caplog.records)
            assert kb.count() == 1  # nothing dropped while it was gone
            moved.rename(root)
            write(root / "new.md", "a new note")
            assert reports.get(timeout=WAIT).added == ["new.md"]
        finally:
            stop.set()
            thread.join(timeout=WAIT)
    assert not thread.is_alive()
    assert kb.count() == 2


def test_hostile_markdown_is_ingested_not_fatal(kb: KnowledgeBase, tmp_path: Path) -> None:
    root = tmp_path / "hostile"
    write(root / "giant-heading.md", "# " + "H" * 2_000_000 + "\n\nbody\n")
    write(root / "operators.md", 'NEAR( "unbalanced AND OR NOT * ^ col:x -y')
    write(root / "surrogate-escaped.md", b"ok \xed\xa0\x80 bytes")  # CESU/WTF-8 surrogate
    report = kb.ingest(root)
    assert sorted(report.added) == ["giant-heading.md", "operators.md"]
    assert [s.path for s in report.skipped] == ["surrogate-escaped.md"]
    assert kb.search('NEAR( "unbalanced')[0].source.endswith("operators.md")


def test_symlinks_are_read_only_when_they_stay_inside_the_folder(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    outside = tmp_path / "private"
    write(outside / "secret.md", "the launch code is 0000")
    write(outside / "dir" / "more.md", "more secrets")
    root = tmp_path / "notes"
    write(root / "real.md", "a real note")
    (root / "alias.md").symlink_to(root / "real.md")
    (root / "leak.md").symlink_to(outside / "secret.md")
    (root / "leakdir").symlink_to(outside / "dir", target_is_directory=True)
    report = kb.ingest(root)
    assert sorted(report.added) == ["real.md"]  # the alias is a second copy of it
    reasons = {s.path: s.reason for s in report.skipped}
    assert reasons == {
        "alias.md": "symlink to a file already indexed",
        "leak.md": "symlink to a path outside the ingested folder",
        "leakdir": "symlink to a path outside the ingested folder",
    }
    assert kb.search("launch code", mode="text") == []
    assert kb.search("more secrets", mode="text") == []


def test_a_file_replaced_by_a_link_out_of_the_folder_loses_its_document(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    root = tmp_path / "notes"
    write(root / "plan.md", "the original plan")
    write(tmp_path / "elsewhere.md", "somebody else's plan")
    assert kb.ingest(root).added == ["plan.md"]
    (root / "plan.md").unlink()
    (root / "plan.md").symlink_to(tmp_path / "elsewhere.md")
    report = kb.ingest(root)
    assert report.removed == ["plan.md"]
    assert [s.path for s in report.skipped] == ["plan.md"]
    assert kb.count() == 0


@pytest.mark.parametrize(
    ("metadata", "text"),
    [
        ({"path": "release.md", "owner": "ana"}, "Release checklist, by hand.\n"),
        ({"path": "release.md"}, "Release checklist, by hand.\n"),  # not the file's text
        ({"path": ["docs", "release.md"]}, "Draft notes from the repo.\n"),  # not a string
    ],
)
def test_a_hand_added_document_is_not_taken_by_a_file_of_its_name(
    kb: KnowledgeBase, tmp_path: Path, metadata: dict[str, object], text: str
) -> None:
    # only a document that is what the ingest would store (the file's text, and the
    # ingest's metadata) is taken back by the file: an imported copy of it
    write(tmp_path / "repo" / "release.md", "Draft notes from the repo.\n")
    kb.add(text, source="release.md", metadata=metadata)
    kb.ingest(tmp_path / "repo")
    kept = kb.get("release.md")
    assert (kept.text, kept.metadata) == (text, metadata)
    (tmp_path / "repo" / "release.md").unlink()
    kb.ingest(tmp_path / "repo")  # the file is gone: its own document goes, not this one
    assert kb.get("release.md").text == text
    assert [d.source for d in kb.list()] == ["release.md"]


def test_two_folders_files_of_one_name_keep_their_own_imported_documents(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    write(tmp_path / "a" / "README.md", "# A\n\nProject A's readme.\n")
    write(tmp_path / "b" / "README.md", "# B\n\nProject B's readme.\n")
    # what an import of an export leaves: documents without their files' link
    kb.add("# A\n\nProject A's readme.\n", source="README.md", metadata={"path": "README.md"})
    kb.ingest(tmp_path / "b")  # B's readme is not A's document
    assert "Project A" in kb.get("README.md").text
    assert "Project B" in kb.get(str(tmp_path / "b" / "README.md")).text
