"""Hostile repositories and arguments: nothing crashes, bad input gets a typed error."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from remembrances import Store
from remembrances.code import CodeIndexer
from remembrances.code.parsing.chunking import DEFAULT_CHUNK_CHARS
from remembrances.errors import InvalidInputError
from tests.code.repo_builder import write


def test_invalid_utf8_and_odd_file_names_are_indexed(store: Store, tmp_path: Path) -> None:
    root = tmp_path / "odd"
    root.mkdir()
    (root / "latin1.py").write_bytes(
        b"def caf\xe9_order():\n    return '\xff\xfe'\n\ndef plain():\n    pass\n"
    )
    write(root / "naïve file.py", "def naive_function():\n    return 1\n")
    write(root / "empty.py", "")
    write(root / "blank.py", "\n\n   \n")
    code = CodeIndexer(store)
    report = code.index(root)
    assert report.files_indexed == 4
    assert report.skipped == []
    assert [s.name for s in code.find_symbol("plain")] == ["plain"]
    assert code.find_symbol("naive_function")[0].path == "naïve file.py"
    assert code.outline("empty.py") == []
    names = [n.symbol.name for n in code.outline("latin1.py")]
    # tree-sitter skips the undecodable byte; the rest of the file is intact.
    assert len(names) == 2 and names[0].endswith("_order") and names[1] == "plain"
    assert any(h.path == "latin1.py" for h in code.search("order plain", limit=20))


def test_file_names_that_are_not_utf8_are_skipped(store: Store, tmp_path: Path) -> None:
    root = tmp_path / "names"
    write(root / "good.py", "def good():\n    pass\n")
    with open(os.path.join(os.fsencode(root), b"bad\xff.py"), "wb") as handle:
        handle.write(b"def bad():\n    pass\n")
    code = CodeIndexer(store)
    report = code.index(root)
    assert report.files_indexed == 1
    assert [(s.path, s.reason) for s in report.skipped] == [
        ("bad\ufffd.py", "file name is not valid UTF-8")
    ]
    with pytest.raises(InvalidInputError):
        code.index("\ud800")


def test_huge_single_line_file_is_split_into_bounded_chunks(store: Store, tmp_path: Path) -> None:
    root = tmp_path / "minified"
    line = 'var data="' + "0123456789abcdef" * 65_536 + '";'  # 1 MiB on one line
    write(root / "bundle.js", line)
    code = CodeIndexer(store)
    report = code.index(root, embed=False)
    assert report.files_indexed == 1
    chunks = store.get_source("code", "bundle.js")
    assert len(chunks) >= 1_048_576 // DEFAULT_CHUNK_CHARS
    assert all(len(c.text) - c.metadata["code_offset"] <= DEFAULT_CHUNK_CHARS for c in chunks)
    code_text = "".join(c.text[c.metadata["code_offset"] :] for c in chunks)
    assert code_text == line


def test_deep_nesting_does_not_overflow(store: Store, tmp_path: Path) -> None:
    root = tmp_path / "deep"
    depth = 200
    nested = "".join(f"function f{i}() {{\n" for i in range(depth)) + "}\n" * depth
    write(root / "nested.js", nested)
    write(root / "brackets.py", "x = " + "[" * 20_000 + "]" * 20_000 + "\n")
    write(root / "braces.c", "int main() " + "{" * 20_000 + "}" * 20_000 + "\n")
    code = CodeIndexer(store)
    report = code.index(root, embed=False)
    assert report.files_indexed == 3
    [deepest] = code.find_symbol(f"f{depth - 1}")
    assert deepest.qualified_name == ".".join(f"f{i}" for i in range(depth))
    assert [s.name for s in code.find_symbol("main")] == ["main"]


def test_hostile_queries(store: Store, tmp_path: Path) -> None:
    root = tmp_path / "q"
    write(root / "a.py", "def send_mail(to):\n    return to\n")
    code = CodeIndexer(store)
    code.index(root)
    for query in ['send" OR (NEAR*', "AND OR NOT", "'; DROP TABLE code_files; --", "?", "*", ""]:
        code.search(query)  # no FTS5 syntax error reaches the user
    assert code.search('send" OR (NEAR*')[0].name == "send_mail"
    with pytest.raises(InvalidInputError):
        code.search("send \ud800")
    with pytest.raises(InvalidInputError):
        code.search("x" * 200_000)
    assert code.find_symbol("send_mail'; --") == []
    assert code.references('send_mail"') == []


def test_index_rejects_bad_arguments(store: Store, tmp_path: Path) -> None:
    code = CodeIndexer(store)
    write(tmp_path / "file.py", "x = 1\n")
    with pytest.raises(InvalidInputError, match="not a directory"):
        code.index(tmp_path / "file.py")
    with pytest.raises(InvalidInputError, match="not a directory"):
        code.index(tmp_path / "missing")
    with pytest.raises(InvalidInputError):
        code.index(None)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="project name is empty"):
        code.index(tmp_path, project="  ")
    with pytest.raises(InvalidInputError, match="not valid Unicode"):
        code.index(tmp_path, project="bad\udc80")
    with pytest.raises(InvalidInputError, match="unknown language 'cobol'"):
        code.index(tmp_path, languages=["cobol"])
    assert code.projects() == []  # nothing was half-created by the refused calls


def test_file_that_turns_binary_is_removed(store: Store, tmp_path: Path) -> None:
    root = tmp_path / "b"
    write(root / "tool.py", "def tool():\n    pass\n")
    code = CodeIndexer(store)
    code.index(root)
    (root / "tool.py").write_bytes(b"\x00\x01\x02compiled")
    report = code.index(root)
    assert report.files_removed == 1
    assert [s.reason for s in report.skipped] == ["binary"]
    assert code.find_symbol("tool") == []
