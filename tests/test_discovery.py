"""One file discovery for the knowledge base and the code index, on real files on disk.

Each rule of docs/discovery.md is checked through the shared walk and through
both layers' public entry points (``kb.ingest``, ``code.index``), so the two
cannot drift apart again.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from remembrances import Store
from remembrances.code import CodeIndexer
from remembrances.discovery import discover, one_copy_each
from remembrances.kb import KnowledgeBase


def write(path: Path, data: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data, encoding="utf-8")
    return path


def tree(repo: Path) -> Path:
    """A repository with the project one level down, and one note and one module per rule."""
    write(repo / ".git" / "config", "[core]\n")
    write(repo / ".git" / "info" / "exclude", "local_*\n")
    write(repo / ".gitignore", "*.tmp.*\nproject/drafts/\n")  # above the walked root
    root = repo / "project"
    for name in ("keep", "local_only", "plan.tmp", "drafts/wip", "sub/gen_x", "sub/gen_keep"):
        write(root / f"{name}.md", f"note {name.replace('/', ' ')}\n")
        write(root / f"{name}.py", f"def {name.replace('/', '_').replace('.', '_')}():\n    pass\n")
    write(root / "sub" / ".gitignore", "gen_*\n!gen_keep.*\n")  # nested, with a negation
    write(root / "node_modules" / "dep" / "readme.md", "a dependency\n")
    write(root / "node_modules" / "dep" / "index.py", "def dep():\n    pass\n")
    write(root / "build" / "notes.md", "about the build\n")
    write(root / "build" / "out.py", "def built():\n    pass\n")
    write(root / ".hidden" / "h.md", "hidden note\n")
    write(root / ".hidden" / "h.py", "def hidden():\n    pass\n")
    return root


KEPT = {"keep", "sub/gen_keep"}


def test_the_walk_applies_every_ignore_source(tmp_path: Path) -> None:
    root = tree(tmp_path / "repo")
    found = {f.relative for f in discover(root).files}
    # .git/info/exclude (local_*), the .gitignore above the root (*.tmp.*,
    # drafts/), the nested one and its negation (gen_keep), never-content
    # directories (node_modules, .git) all decide; build/ and hidden files are
    # the layers' choice
    assert found == {
        "keep.md",
        "keep.py",
        "sub/.gitignore",
        "sub/gen_keep.md",
        "sub/gen_keep.py",
        "build/notes.md",
        "build/out.py",
        ".hidden/h.md",
        ".hidden/h.py",
    }


FUNCTIONS = ("keep", "local_only", "plan_tmp", "drafts_wip", "sub_gen_x", "sub_gen_keep")


def test_both_layers_apply_the_same_ignore_rules(store: Store, tmp_path: Path) -> None:
    root = tree(tmp_path / "repo")
    report = KnowledgeBase(store).ingest(root)
    # notes may live in a folder named build/; hidden notes need include_hidden
    assert sorted(report.added) == ["build/notes.md", "keep.md", "sub/gen_keep.md"]
    code = CodeIndexer(store, workers=1)
    code.index(root, project="p", embed=False)
    indexed = {n for n in (*FUNCTIONS, "dep", "built", "hidden") if code.find_symbol(n)}
    # build output is left out of a code index; hidden code (.github/...) is code
    assert indexed == {"keep", "sub_gen_keep", "hidden"}


def test_an_ignore_line_that_is_no_glob_matches_nothing_as_in_git(tmp_path: Path) -> None:
    # git passes over "[z-a]" (a reversed range); the other lines still apply
    write(tmp_path / ".gitignore", "*.log\n[z-a]\n")
    write(tmp_path / ".git" / "info" / "exclude", "[z-a\nlocal_*\n")
    for name in ("app.py", "debug.log", "local_x.py", "[z-a]"):
        write(tmp_path / name, "x = 1\n")
    found = {f.relative for f in discover(tmp_path).files}
    assert found == {".gitignore", "app.py", "[z-a]"}


def test_a_folder_ignored_by_its_repository_is_walked_when_asked_for(tmp_path: Path) -> None:
    root = tree(tmp_path / "repo")
    drafts = discover(root / "drafts")
    assert sorted(f.relative for f in drafts.files) == ["wip.md", "wip.py"]


def test_rules_above_the_root_apply_only_inside_a_repository(tmp_path: Path) -> None:
    write(tmp_path / "outer" / ".gitignore", "*.md\n")
    write(tmp_path / "outer" / "inner" / "note.md", "a note\n")
    assert [f.relative for f in discover(tmp_path / "outer" / "inner").files] == ["note.md"]
    write(tmp_path / "outer" / ".git" / "HEAD", "ref: refs/heads/main\n")
    assert discover(tmp_path / "outer" / "inner").files == []


def test_hidden_files_are_a_choice_of_the_layer(tmp_path: Path) -> None:
    root = tree(tmp_path / "repo")
    assert not any(f.relative.startswith(".") for f in discover(root, hidden=False).files)
    assert any(f.relative == ".hidden/h.md" for f in discover(root, hidden=True).files)


def test_links_loops_and_odd_names_are_reported_with_reasons(tmp_path: Path) -> None:
    outside = write(tmp_path / "elsewhere" / "secret.md", "secret\n")
    root = tmp_path / "folder"
    write(root / "real" / "a.md", "a\n")
    os.symlink(outside, root / "leak.md")
    os.symlink(outside.parent, root / "leakdir")
    os.symlink(root / "missing.md", root / "dangling.md")
    os.symlink(root / "loop2.md", root / "loop1.md")  # two links that point at each other
    os.symlink(root / "loop1.md", root / "loop2.md")
    os.symlink("..", root / "real" / "loop")
    os.symlink(root / "real", root / "alias")
    os.symlink(root / "real" / "a.md", root / "inside.md")
    write(root / "drafts" / "b.md", "b\n")  # ignored, so its link is its one copy
    write(root / ".gitignore", "drafts/\n")
    os.symlink(root / "drafts" / "b.md", root / "b-link.md")
    os.symlink(root / "drafts" / "b.md", root / "b-link2.md")
    write(root / os.fsdecode(b"caf\xe9.md"), "latin-1 name\n")
    found = discover(root, outside="the folder")
    reasons = {s.path: s.reason for s in found.skipped}
    assert reasons == {
        "alias": "symlink to a directory already indexed",
        "caf\ufffd.md": "file name is not valid UTF-8",
        "dangling.md": "broken symlink",
        "leak.md": "symlink to a path outside the folder",
        "leakdir": "symlink to a path outside the folder",
        "loop1.md": "symlink loop",
        "loop2.md": "symlink loop",
        "real/loop": "symlink loop (points to a directory that contains it)",
    }
    assert [f.relative for f in found.files] == [
        ".gitignore",
        "b-link.md",
        "b-link2.md",
        "inside.md",
        "real/a.md",
    ]
    # a link to a file read under its own path (or an earlier link's) is a second copy
    # of every symbol and passage; one to a file that is not read (ignored) is its copy
    kept, copies = one_copy_each(found.files)
    assert [f.relative for f in kept] == [".gitignore", "b-link.md", "real/a.md"]
    assert [(s.path, s.reason) for s in copies] == [
        ("b-link2.md", "symlink to a file already indexed"),
        ("inside.md", "symlink to a file already indexed"),
    ]


def test_a_link_is_read_when_its_target_is_not(store: Store, tmp_path: Path) -> None:
    # the target walked but not selected (another extension, an unsupported file type):
    # the link is the one copy, not "already indexed" with its content lost
    write(tmp_path / "notes" / "raw" / "meeting.txt", "Decided to ship on Friday.\n")
    os.symlink(tmp_path / "notes" / "raw" / "meeting.txt", tmp_path / "notes" / "meeting.md")
    kb = KnowledgeBase(store)
    report = kb.ingest(tmp_path / "notes", patterns=["*.md"])
    assert report.added == ["meeting.md"] and report.skipped == []
    write(tmp_path / "repo" / "bin" / "deploy", "def deploy_release():\n    pass\n")
    os.symlink(tmp_path / "repo" / "bin" / "deploy", tmp_path / "repo" / "deploy.py")
    code = CodeIndexer(store, workers=1)
    indexed = code.index(tmp_path / "repo", project="repo", embed=False)
    assert [(s.path, s.reason) for s in indexed.skipped] == [
        ("bin/deploy", "unsupported file type")
    ]
    assert [s.path for s in code.find_symbol("deploy_release")] == ["deploy.py"]


def test_binary_oversized_and_unreadable_files_are_skipped_with_reasons(
    store: Store, tmp_path: Path
) -> None:
    root = tmp_path / "folder"
    write(root / "ok.md", "fine\n")
    write(root / "ok.py", "def ok():\n    pass\n")
    write(root / "blob.md", b"\x89PNG\r\n\x1a\n\x00\x00")
    write(root / "blob.py", b"\x7fELF\x00\x00\x01")
    write(root / "big.md", "x" * 2000)
    write(root / "big.py", "x = 1\n" * 400)
    kb = KnowledgeBase(store)
    report = kb.ingest(root, max_bytes=1000)
    kb_reasons = {s.path: s.reason for s in report.skipped}
    assert kb_reasons["blob.md"] == "binary file (contains NUL bytes)"
    assert kb_reasons["big.md"].startswith(
        "larger than the size limit: 2,000 bytes, the limit is 1,000;"
    )
    assert report.added == ["ok.md"]
    code = CodeIndexer(store, max_file_bytes=1000, workers=1)
    code_reasons = dict(
        (s.path, s.reason) for s in code.index(root, project="p", embed=False).skipped
    )
    assert code_reasons["blob.py"] == "binary"
    assert code_reasons["big.py"] == "larger than the size limit: 2,400 bytes, the limit is 1,000"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every directory")
def test_an_unreadable_directory_is_reported(tmp_path: Path) -> None:
    root = tmp_path / "folder"
    write(root / "locked" / "a.md", "a\n")
    (root / "locked").chmod(0)
    try:
        reasons = {s.path: s.reason for s in discover(root).skipped}
    finally:
        (root / "locked").chmod(0o755)
    assert reasons["locked"].startswith("unreadable directory")
